"""facebook-recruiting-iii: the streamed split equals the in-memory one at any chunk and
block size, broken submissions are rejected with a reason, and F1 values worked out by hand
(unknown tags ignored, as MLE-bench does)."""

from __future__ import annotations

import hashlib
import zipfile

import pandas as pd
import pytest
from sklearn.model_selection import train_test_split

import mle_gym.competitions.catalog.facebook_recruiting_iii_keyword_extraction as module
from mle_gym.competitions import get_competition
from mle_gym.grading.validation import read_as_text
from tests.competitions.support import assert_invalid, grade_frame
from tests.fixtures.raw.facebook_recruiting_iii_keyword_extraction import make_raw

COMP = get_competition("facebook-recruiting-iii-keyword-extraction")
FILES = ("public/train.csv", "public/test.csv", "public/sample_submission.csv", "private/test.csv")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return read_as_text(dirs.private / "test.csv")


def _md5s(root) -> dict[str, str]:
    return {name: hashlib.md5((root / name).read_bytes()).hexdigest() for name in FILES}


def test_split_matches_train_test_split_of_the_whole_table(dirs, tmp_path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    make_raw(raw)
    with zipfile.ZipFile(raw / "Train.zip") as zf:
        whole = pd.read_csv(zf.open("Train.csv"), dtype=str)
    train, test = train_test_split(whole, test_size=0.1, random_state=0)
    train.to_csv(tmp_path / "train.csv", index=False)
    test.to_csv(tmp_path / "test.csv", index=False)
    assert (tmp_path / "train.csv").read_bytes() == (dirs.public / "train.csv").read_bytes()
    assert (tmp_path / "test.csv").read_bytes() == (dirs.private / "test.csv").read_bytes()
    public_test = read_as_text(dirs.public / "test.csv")
    assert list(public_test.columns) == ["Id", "Title", "Body"]
    assert (public_test["Body"].str.contains("\n")).all()


def test_small_chunks_and_blocks_write_the_same_bytes(dirs, tmp_path, monkeypatch) -> None:
    """7-row chunks and 11-row output blocks: many scattered pieces, same files."""
    raw = tmp_path / "raw"
    raw.mkdir()
    make_raw(raw)
    monkeypatch.setattr(module, "CHUNK_ROWS", 7)
    monkeypatch.setattr(module, "OUTPUT_BLOCK_ROWS", 11)
    for side in ("public", "private"):
        (tmp_path / side).mkdir()
    module.prepare(raw, tmp_path / "public", tmp_path / "private")
    assert _md5s(tmp_path) == _md5s(dirs.root)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["private", "public", "raw"]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda f: f.iloc[2:], r"2 test id\(s\) have no row"),
        (lambda f: pd.concat([f, f.iloc[:1].assign(Id="999999")]), r"not in the test set"),
        (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
        (lambda f: f.rename(columns={"Tags": "tags"}), r"missing column\(s\) 'Tags'"),
    ],
)
def test_broken_submission_is_invalid_with_reason(answers, dirs, tmp_path, change, reason) -> None:
    submission = answers[["Id", "Tags"]]
    assert_invalid(grade_frame(COMP, dirs.private, change(submission), tmp_path), reason)


def _f1(truth: list[set[str]], predicted: list[set[str]]) -> float:
    hits = sum(len(t & p) for t, p in zip(truth, predicted, strict=True))
    return 2 * hits / (sum(map(len, truth)) + sum(map(len, predicted)))


def test_scores_by_hand(dirs, answers, tmp_path) -> None:
    """Exact tags (in any order, plus unknown tags) score 1; first tag only scores the
    pooled F1 of those sets; the `null` answer holds no tag."""
    truth = [set() if t == "null" else set(t.split()) for t in answers.Tags]
    assert set() in truth
    shuffled = answers.assign(Tags=[" ".join(sorted(t, reverse=True)) + " zzz" for t in truth])
    assert grade_frame(COMP, dirs.private, shuffled[["Id", "Tags"]], tmp_path).score == 1.0
    first = [set(sorted(t)[:1]) for t in truth]
    partial = answers.assign(Tags=[" ".join(t) for t in first])[["Id", "Tags"]]
    score = grade_frame(COMP, dirs.private, partial, tmp_path).score
    assert score == pytest.approx(round(_f1(truth, first), 5)) and 0 < score < 1


def test_sample_scores_the_f1_of_its_five_tags(dirs, answers, tmp_path) -> None:
    truth = [set() if t == "null" else set(t.split()) for t in answers.Tags]
    known = set().union(*truth)
    predicted = [set(module.SAMPLE_TAGS.split()) & known] * len(truth)
    expected = round(_f1(truth, predicted), 5)
    constant = answers[["Id"]].assign(Tags="php java c# javascript python nosuchtag")
    report = grade_frame(COMP, dirs.private, constant, tmp_path)
    assert report.score == expected
    sample = read_as_text(dirs.public / "sample_submission.csv")
    assert list(sample.columns) == ["Id", "Title", "Body", "Tags"]
    assert grade_frame(COMP, dirs.private, sample, tmp_path).score == expected
    assert COMP.sample_score == 0.07645
