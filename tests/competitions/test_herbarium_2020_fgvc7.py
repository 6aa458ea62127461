"""herbarium-2020-fgvc7: per-species split rules, renumbered test images, macro F1 grading."""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, grade_frame
from tests.fixtures.raw.herbarium_2020_fgvc7 import SIZES

COMP = get_competition("herbarium-2020-fgvc7")

#: Test images per category: none for one image, the last one for two to four, 20%
#: (rounded up by train_test_split) from five on.
HELD_OUT = {15672: 3, 3: 0, 204: 1, 1001: 1, 5: 1, 77: 1, 31999: 2}


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "answers.csv")


def test_each_category_rule_holds_out_its_share(answers, dirs) -> None:
    assert dict(Counter(answers["Predicted"])) == {c: n for c, n in HELD_OUT.items() if n}
    train = json.loads((dirs.public / "nybg2020/train/metadata.json").read_text())
    in_train = Counter(a["category_id"] for a in train["annotations"])
    assert in_train == {c: SIZES[c] - HELD_OUT[c] for c in SIZES}
    assert list(answers["Id"]) == list(range(len(answers)))


def test_test_images_are_renumbered_and_unlabelled(dirs, tmp_path) -> None:
    test = json.loads((dirs.public / "nybg2020/test/metadata.json").read_text())
    assert set(test) == {"images", "info", "licenses"}
    names = [image["file_name"] for image in test["images"]]
    assert names == [f"images/000/{n}.jpg" for n in range(9)]
    assert all((dirs.public / "nybg2020/test" / name).is_file() for name in names)
    train_files = {p.read_bytes() for p in (dirs.public / "nybg2020/train/images").rglob("*.jpg")}
    test_files = {p.read_bytes() for p in (dirs.public / "nybg2020/test/images").rglob("*.jpg")}
    assert len(train_files) == 25 and len(test_files) == 9 and not train_files & test_files


def test_non_ascii_metadata_is_escaped_as_mlebench_reads_it(dirs) -> None:
    text = (dirs.public / "nybg2020/train/metadata.json").read_text(encoding="ascii")
    assert "fa\\u00c3\\u00a7onn\\u00c3\\u00a9e" in text  # UTF-8 bytes read as Latin-1


CASES = {
    "missing rows": (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
    "unknown id": (lambda f: f.assign(Id=f["Id"] + 100), r"ids that are not in the test set"),
    "species name": (lambda f: f.assign(Predicted="Abies alba"), r"integer class ids"),
    "fractional id": (lambda f: f.assign(Predicted=0.5), r"integer class ids; found '0.5'"),
    "no Predicted": (lambda f: f.rename(columns={"Predicted": "category_id"}), r"'Predicted'"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_scores_in_closed_form(answers, dirs, tmp_path) -> None:
    sample = pd.read_csv(dirs.public / "sample_submission.csv")
    assert (sample["Predicted"] == 0).all() and COMP.sample_score == 0.0
    assert grade_frame(COMP, dirs.private, sample, tmp_path).score == 0.0
    shuffled = answers.sample(frac=1, random_state=0)
    assert grade_frame(COMP, dirs.private, shuffled, tmp_path).score == 1.0
    # One image of category 31999 (two in test) called 15672 (three in test):
    # 31999 F1 = 2/3, 15672 precision 3/4 recall 1 -> 6/7, four more categories at 1.
    first = answers.index[answers["Predicted"] == 31999][0]
    wrong = answers.assign(Predicted=answers["Predicted"].where(answers.index != first, 15672))
    expected = round((2 / 3 + 6 / 7 + 4) / 6, 5)
    assert grade_frame(COMP, dirs.private, wrong, tmp_path).score == expected
