"""Grading a submission file off the env: what a trainer that ran the episode elsewhere calls.

It gives the same reward and report as an episode that ends with that file (both go through
`mle_gym.grading.outcome.outcome`). It changes nothing: the submission and the answers are
only read (the answers' parsed key may be cached beside them, see
`mle_gym.grading.answer_keys`), and grading runs in a bounded child process. It sits above
the grading and data layers because it finds the answers in the data cache.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mle_gym.competitions import get_competition
from mle_gym.data.dev_variant import require_dev_variant
from mle_gym.data.gate import require_prepared
from mle_gym.grading.bounded import GradingLimits, grade_bounded
from mle_gym.grading.budget import GradingBudget
from mle_gym.grading.outcome import outcome
from mle_gym.grading.rewards import DEV_ONLY_REWARD_MODES, REWARD_MODES
from mle_gym.runs.layout import SNAPSHOT_INDEX


def evaluate(
    competition_id: str,
    submission_path: str | os.PathLike,
    reward_mode: str = "normalized",
    *,
    root: str | os.PathLike | None = None,
    limits: GradingLimits | None = None,
    budget: GradingBudget | None = None,
    data: str = "test",
) -> dict[str, Any]:
    """Grade `submission_path` for `competition_id` as an episode ending with it would be.

    Returns {"reward", "score", "valid", "any_medal", "medal", "above_median",
    "normalized_score", "error", "reward_mode", "report"}. A missing or malformed file is an
    invalid submission (reward 0 in the default mode), never an exception; an unknown
    competition, an unknown reward mode or an unprepared competition raise. A `budget`
    (grading/budget.py) bounds the grade's CPU time; spent, the grade is not run and the
    submission is invalid with that reason. `data="dev"` grades on the competition's
    development variant's answers (`EnvConfig.data`), as an episode on it does.
    """
    if reward_mode not in REWARD_MODES:
        raise ValueError(f"unknown reward_mode {reward_mode!r}; choose one of {REWARD_MODES}")
    if reward_mode in DEV_ONLY_REWARD_MODES and data != "dev":
        raise ValueError(
            f"reward_mode={reward_mode!r} grades a development variant: pass data='dev'"
        )
    comp = get_competition(competition_id)
    dirs = require_prepared(comp.id, auto=False, root=Path(root) if root is not None else None)
    if data == "dev":
        dirs = require_dev_variant(comp, dirs.root.parent)
    elif data != "test":
        raise ValueError(f"data must be test or dev, got {data!r}")
    path = Path(submission_path)
    report = grade_bounded(
        comp.id, path if path.is_file() else None, dirs.private, limits=limits, budget=budget
    )
    return outcome(report, reward_mode)


def evaluate_snapshots(
    competition_id: str,
    snapshots: dict[str, Any] | str | os.PathLike,
    reward_mode: str = "normalized",
    *,
    root: str | os.PathLike | None = None,
    limits: GradingLimits | None = None,
) -> list[dict[str, Any]]:
    """Grade an episode's submission snapshots, after the episode (the env never grades them).

    `snapshots` is the final step's `info["snapshots"]`, or a folder holding their
    snapshots.json (a batch episode's `snapshots/`). Returns one dict per snapshot, oldest
    first: its step, elapsed seconds, sha256, bytes and `final`, its `path`, and what
    `evaluate` gives for it (reward, score, medals, report). The grades spend what the
    episode left of its host grading budget (the index's `grading_budget`); a snapshot
    graded past it is not run and reads invalid, with that reason. They are graded on the
    data the episode ran on (the index's `data_variant`): a development variant's episode
    on its development answers, never on the test set's.
    """
    if isinstance(snapshots, dict):
        index, folder = snapshots, Path(snapshots["dir"])
    else:
        folder = Path(snapshots)
        index = json.loads((folder / SNAPSHOT_INDEX).read_text())
    left = index.get("grading_budget")
    budget = GradingBudget.from_dict(left) if left else None
    graded = []
    for entry in index["kept"]:
        path = folder / Path(entry["file"]).name
        result = evaluate(
            competition_id, path, reward_mode, root=root, limits=limits, budget=budget,
            data=index.get("data_variant", "test"),
        )  # fmt: skip
        graded.append({**entry, "path": str(path), **result})
    return graded
