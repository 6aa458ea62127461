"""MLE-bench's splits as its papers and leaderboard name them, and which run rows they make.

Low is the lite split, then Medium and High; All is the 75 of the three together. dev and the
demo competition are reported on their own rows and never enter All.
"""

from __future__ import annotations

from dataclasses import dataclass

from mle_gym import competitions
from mle_gym.competitions import UnknownCompetition, get_competition

#: Our split name -> MLE-bench's row label, in the leaderboard's order.
MLEBENCH_SPLITS = {"lite": "Low", "medium": "Medium", "high": "High"}
ALL = "All"
#: `--split all` names the 75 competitions of lite + medium + high.
ALL_SPLIT = "all"


def split_of(competition_id: str) -> str:
    try:
        return get_competition(competition_id).split
    except UnknownCompetition:
        return "unknown"


def split_members(split: str) -> list[str]:
    """The competition ids of `split` ("all": lite + medium + high)."""
    return [c.id for c in competitions.all_competitions() if in_split(c.split, split)]


@dataclass(frozen=True)
class Scope:
    """A report row over several competitions: a split, All, or the whole run."""

    name: str
    #: The run's competitions in this scope.
    competitions: tuple[str, ...]
    #: How many competitions the split has in MLE-bench (None for the whole run).
    split_size: int | None


def scopes(competitions: list[str] | tuple[str, ...]) -> list[Scope]:
    """Low, Medium, High and All for the MLE-bench splits the run has competitions of; then
    one row per other split (dev, demo); then "overall", every competition of the run."""
    by_split: dict[str, list[str]] = {}
    for competition in competitions:
        by_split.setdefault(split_of(competition), []).append(competition)
    rows = [
        Scope(label, tuple(by_split[split]), len(split_members(split)))
        for split, label in MLEBENCH_SPLITS.items()
        if split in by_split
    ]
    if rows:
        members = tuple(c for split in MLEBENCH_SPLITS for c in by_split.get(split, ()))
        rows.append(Scope(ALL, members, len(split_members(ALL_SPLIT))))
    for split, members in by_split.items():
        if split not in MLEBENCH_SPLITS:
            rows.append(Scope(split, tuple(members), len(split_members(split)) or None))
    rows.append(Scope("overall", tuple(competitions), None))
    return rows


def in_split(competition_split: str, split: str) -> bool:
    """Whether a competition of `competition_split` belongs to `split` ("all": the 75)."""
    return competition_split == split or (
        split == ALL_SPLIT and competition_split in MLEBENCH_SPLITS
    )
