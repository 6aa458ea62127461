"""AI4Code: the family-aware split, broken submissions with their reason, and pooled
Kendall tau values known in closed form (exact 1, reversed -1, the sample by pair counts)."""

from __future__ import annotations

import json
from itertools import combinations

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from mle_gym.grading.validation import read_as_text
from tests.competitions.support import assert_invalid, grade_frame
from tests.fixtures.raw.ai4code import (
    EARLY_FAMILY,
    LATE_FAMILY,
    NOTEBOOKS,
    ancestors,
    notebook_ids,
)

COMP = get_competition("AI4Code")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return read_as_text(dirs.private / "test_orders.csv")


def test_split_keeps_fork_families_whole(dirs, answers) -> None:
    test_ids = set(answers["id"])
    assert len(test_ids) == 20_000
    assert {p.stem for p in (dirs.public / "test").iterdir()} == test_ids
    train = read_as_text(dirs.public / "train_orders.csv")
    assert {p.stem for p in (dirs.public / "train").iterdir()} == set(train["id"])
    public_ancestors = read_as_text(dirs.public / "train_ancestors.csv")
    assert set(public_ancestors["id"]) == set(train["id"]) and len(train) == NOTEBOOKS - 20_000

    families = ancestors(notebook_ids()).groupby("ancestor_id")["id"]
    sides = families.agg(lambda ids: {i in test_ids for i in ids})
    assert (sides.map(len) == 1).all()
    sizes = families.size()
    assert sorted(sizes[sizes > 1]) == [len(EARLY_FAMILY), len(LATE_FAMILY)]
    late = sizes.index[sizes == len(LATE_FAMILY)][0]
    early = sizes.index[sizes == len(EARLY_FAMILY)][0]
    assert sides[late] == {False} and sides[early] == {True}


def test_sample_lists_cells_in_json_order(dirs) -> None:
    sample = read_as_text(dirs.public / "sample_submission.csv")
    for notebook, order in zip(sample["id"][:50], sample["cell_order"][:50], strict=True):
        cells = json.loads((dirs.public / "test" / f"{notebook}.json").read_text())["cell_type"]
        assert order.split() == list(cells)


def _with_first_row(frame: pd.DataFrame, order: str) -> pd.DataFrame:
    changed = frame.copy()
    changed.loc[0, "cell_order"] = order
    return changed


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
        (lambda f: f.rename(columns={"cell_order": "order"}), r"missing column\(s\) 'cell_order'"),
        (lambda f: _with_first_row(f, f.cell_order[0] + " 0badcafe"), r"found \d+ item\(s\)$"),
        (
            lambda f: _with_first_row(f, " ".join(["0badcafe", *f.cell_order[0].split()[1:]])),
            r"found unknown item\(s\) 0badcafe",
        ),
        (
            lambda f: _with_first_row(
                f, " ".join([f.cell_order[0].split()[1], *f.cell_order[0].split()[1:]])
            ),
            r"exactly once; found a repeated item",
        ),
    ],
)
def test_broken_submission_is_invalid_with_reason(answers, dirs, tmp_path, change, reason) -> None:
    assert_invalid(grade_frame(COMP, dirs.private, change(answers), tmp_path), reason)


def test_exact_and_reversed_orders(dirs, answers, tmp_path) -> None:
    assert grade_frame(COMP, dirs.private, answers, tmp_path).score == 1.0
    reversed_ = answers.assign(cell_order=[" ".join(o.split()[::-1]) for o in answers.cell_order])
    assert grade_frame(COMP, dirs.private, reversed_, tmp_path).score == -1.0


def test_sample_score_by_counting_discordant_pairs(dirs, answers) -> None:
    sample = read_as_text(dirs.public / "sample_submission.csv").set_index("id")["cell_order"]
    discordant = total = 0
    for notebook, truth in zip(answers["id"], answers["cell_order"], strict=True):
        rank = {cell: i for i, cell in enumerate(truth.split())}
        guessed = [rank[cell] for cell in sample[notebook].split()]
        discordant += sum(a > b for a, b in combinations(guessed, 2))
        total += len(guessed) * (len(guessed) - 1)
    expected = round(1 - 4 * discordant / total, 5)
    assert grade(COMP, dirs.public / "sample_submission.csv", dirs.private).score == expected
    assert COMP.sample_score == 0.39187
