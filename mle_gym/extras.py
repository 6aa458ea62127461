"""Which extra installs each optional package some competitions need, for error messages.

Readers and metric libraries that only a few competitions use are extras (setup.cfg); a
prepare or a grade that meets one missing says which extra to install.
"""

from __future__ import annotations

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
