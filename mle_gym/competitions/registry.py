"""Finds every competition module in `mle_gym.competitions.catalog`.

A competition is added by dropping one module that defines `COMPETITION` into the
catalog package; nothing else needs to change.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from functools import lru_cache

from mle_gym.competitions import catalog
from mle_gym.competitions.spec import Competition


class UnknownCompetition(KeyError):
    """Raised for an id that no catalog module defines."""

    def __str__(self) -> str:
        return str(self.args[0])


@lru_cache(maxsize=1)
def _load() -> dict[str, Competition]:
    found: dict[str, Competition] = {}
    for module_info in pkgutil.iter_modules(catalog.__path__):
        module = importlib.import_module(f"{catalog.__name__}.{module_info.name}")
        comp = getattr(module, "COMPETITION", None)
        if not isinstance(comp, Competition):
            continue
        if comp.id in found:
            raise RuntimeError(f"competition id {comp.id!r} is defined twice")
        found[comp.id] = comp
    return dict(sorted(found.items()))


def all_competitions() -> list[Competition]:
    return list(_load().values())


def get_competition(competition_id: str) -> Competition:
    known = _load()
    try:
        return known[competition_id]
    except KeyError:
        contains = [k for k in known if competition_id and competition_id.lower() in k]
        close = (contains or difflib.get_close_matches(competition_id, known, n=3, cutoff=0.6))[:3]
        hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
        raise UnknownCompetition(
            f"unknown competition {competition_id!r}; {hint}`mle-gym list` shows the known ids"
        ) from None
