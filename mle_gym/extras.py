"""Which extra installs each optional package some competitions need, for error messages.

Readers and metric libraries that only a few competitions use are extras (setup.cfg); a
prepare or a grade that meets one missing says which extra to install.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from typing import Any

#: Top-level module -> the extra of mle-gym that installs it.
EXTRAS = {
    "PIL": "images",
    "py7zr": "archives",
    "bson": "archives",
    "pycocotools": "detection",
    "shapely": "detection",
}


def install_hint(exc: ModuleNotFoundError) -> str | None:
    """`pip install 'mle-gym[extra]'` for a missing optional package; None for any other."""
    extra = EXTRAS.get((exc.name or "").partition(".")[0])
    return f"pip install 'mle-gym[{extra}]'" if extra else None


def needed_extras(competitions: Iterable[Any]) -> dict[str, list[str]]:
    """Each extra the competitions need (their specs' `extras`), with the ids needing it."""
    needed: dict[str, list[str]] = {}
    for comp in competitions:
        for extra in comp.extras:
            needed.setdefault(extra, []).append(comp.id)
    return dict(sorted(needed.items()))


def missing_extras(extras: Iterable[str]) -> list[str]:
    """The extras of `extras` some of whose packages this Python cannot import."""
    modules: dict[str, list[str]] = {}
    for module, extra in EXTRAS.items():
        modules.setdefault(extra, []).append(module)
    return [
        extra
        for extra in extras
        if any(importlib.util.find_spec(m) is None for m in modules.get(extra, []))
    ]
