"""herbarium-2021-fgvc8: per-species split rules, renumbered test images, macro F1 grading."""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, grade_frame
from tests.fixtures.raw.herbarium_2021_fgvc8 import SIZES

COMP = get_competition("herbarium-2021-fgvc8")

#: Test images per category: none for one image, the last one for two to four, 20%
#: (rounded up by train_test_split) from five on.
HELD_OUT = {60492: 2, 1733: 0, 12: 1, 40000: 1, 518: 2, 64499: 1}


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "answers.csv")


def test_each_category_rule_holds_out_its_share(answers, dirs) -> None:
    assert dict(Counter(answers["Predicted"])) == {c: n for c, n in HELD_OUT.items() if n}
    train = json.loads((dirs.public / "train/metadata.json").read_text())
    assert Counter(a["category_id"] for a in train["annotations"]) == {
        c: SIZES[c] - HELD_OUT[c] for c in SIZES
    }
    assert {i["file_name"] for i in train["images"]} == {
        str(p.relative_to(dirs.public / "train"))
        for p in (dirs.public / "train/images").rglob("*.jpg")
    }


def test_public_test_metadata_holds_no_labels(answers, dirs) -> None:
    test = json.loads((dirs.public / "test/metadata.json").read_text())
    assert set(test) == {"images", "info", "licenses"}
    assert [i["id"] for i in test["images"]] == [str(n) for n in answers["Id"]]
    assert sorted(p.name for p in (dirs.public / "test/images/000").iterdir()) == sorted(
        f"{n}.jpg" for n in answers["Id"]
    )


CASES = {
    "missing rows": (lambda f: f.iloc[:-2], r"2 test id\(s\) have no row"),
    "duplicate row": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "empty label": (lambda f: f.assign(Predicted=""), r"'Predicted' has 7 empty"),
    "text label": (lambda f: f.assign(Predicted="n/a"), r"must hold integer class ids"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_scores_in_closed_form(answers, dirs, tmp_path) -> None:
    sample = pd.read_csv(dirs.public / "sample_submission.csv")
    assert grade_frame(COMP, dirs.private, sample, tmp_path).score == COMP.sample_score == 0.0
    # Every image called 60492: that class has precision 2/7, recall 1 -> F1 4/9; four
    # other classes score 0: the mean over five classes is 4/45.
    constant = answers.assign(Predicted=60492).sample(frac=1, random_state=1)
    assert grade_frame(COMP, dirs.private, constant, tmp_path).score == round(4 / 45, 5)
