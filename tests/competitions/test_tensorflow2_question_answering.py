"""tensorflow2-question-answering: chunked split, rejected submissions, MLE-bench's micro F1."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.catalog.tensorflow2_question_answering import PUBLIC_TEST_KEYS
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("tensorflow2-question-answering")


def _jsonl(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def test_examples(dirs) -> list[dict]:
    return _jsonl(dirs.private / "test.jsonl")


@pytest.fixture
def gold(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "gold_submission.csv", dtype=str, keep_default_na=False)


def test_split_takes_ten_percent_of_each_thousand_lines(dirs, test_examples) -> None:
    train = _jsonl(dirs.public / "simplified-nq-train.jsonl")
    public_test = _jsonl(dirs.public / "simplified-nq-test.jsonl")
    assert (len(train), len(test_examples)) == (945, 105)  # 900 + 45 and 100 + 5
    assert [list(e) for e in public_test] == [PUBLIC_TEST_KEYS] * 105
    assert [e["example_id"] for e in public_test] == [e["example_id"] for e in test_examples]
    assert all(isinstance(e["example_id"], str) for e in train + test_examples)
    assert not {e["example_id"] for e in train} & {e["example_id"] for e in test_examples}


def test_gold_and_sample_have_short_then_long_rows(dirs, gold, test_examples) -> None:
    sample = pd.read_csv(dirs.public / "sample_submission.csv", keep_default_na=False)
    expected = [f"{e['example_id']}_{part}" for e in test_examples for part in ("short", "long")]
    assert list(gold["example_id"]) == list(sample["example_id"]) == expected
    assert set(sample["PredictionString"]) == {""}


def _with_first(frame: pd.DataFrame, value: str) -> pd.DataFrame:
    return frame.assign(PredictionString=[value, *frame["PredictionString"][1:]])


CASES = {
    "missing rows": (lambda f: f.iloc[2:], r"2 test id\(s\) have no row"),
    "only long rows": (
        lambda f: f[f["example_id"].str.endswith("_long")],
        r"105 test id\(s\) have no row, e\.g\. '.*_short'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "target missing": (
        lambda f: f.drop(columns="PredictionString"),
        r"missing column\(s\) 'PredictionString'",
    ),
    "lower-case yes": (lambda f: _with_first(f, "yes"), r"unreadable answer 'yes'"),
    "span of words": (lambda f: _with_first(f, "a:b"), r"unreadable answer 'a:b'"),
    "three numbers": (lambda f: _with_first(f, "1:2:3"), r"unreadable answer '1:2:3'"),
    "padded NA": (lambda f: _with_first(f, " NA"), r"unreadable answer ' NA'"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, gold, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(gold), tmp_path), reason)


def _has_answer(example: dict, part: str) -> bool:
    note = example["annotations"][0]
    if part == "long":
        return note["long_answer"]["start_token"] != -1
    return bool(note["short_answers"]) or note["yes_no_answer"] != "NONE"


def test_blank_rows_score_the_share_of_unanswerable_rows(dirs, test_examples, tmp_path) -> None:
    rows = [(e, part) for e in test_examples for part in ("short", "long")]
    blank_right = sum(not _has_answer(e, part) for e, part in rows) / len(rows)
    sample = pd.read_csv(dirs.public / "sample_submission.csv", keep_default_na=False)
    for blank in ("", "NA", "None"):
        frame = sample.assign(PredictionString=blank)
        assert grade_frame(COMP, dirs.private, frame, tmp_path).score == round(blank_right, 5)


def test_any_accepted_short_answer_counts(dirs, gold, test_examples, tmp_path) -> None:
    # the fixture gives some examples two short spans; the gold names the first one
    second = {}
    for example in test_examples:
        spans = example["annotations"][0]["short_answers"]
        if len(spans) == 2:
            second[f"{example['example_id']}_short"] = "{start_token}:{end_token}".format(
                **spans[1]
            )
    assert second
    answers = gold["example_id"].map(second).fillna(gold["PredictionString"])
    frame = gold.assign(PredictionString=" " + answers.str.replace(":", " : ") + " ")
    assert grade_frame(COMP, dirs.private, frame.iloc[::-1], tmp_path).score == 1.0


def test_wrong_answers_and_missed_answers_both_count_against(dirs, gold, tmp_path) -> None:
    answered = gold["PredictionString"] != ""
    # every answered row wrong, every blank row claimed: nothing is right
    frame = gold.assign(PredictionString=gold["PredictionString"].where(~answered, "0:1"))
    frame.loc[~answered, "PredictionString"] = "999:1000"
    assert grade_frame(COMP, dirs.private, frame, tmp_path).score == 0.0
