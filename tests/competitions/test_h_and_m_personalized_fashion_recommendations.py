"""h-and-m: the date split (streamed), hard links, who is scored, and MAP@12 by hand."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.catalog import h_and_m_personalized_fashion_recommendations as hm
from tests.competitions.support import assert_invalid, grade_frame
from tests.fixtures.raw.h_and_m_personalized_fashion_recommendations import make_raw

COMP = get_competition("h-and-m-personalized-fashion-recommendations")


@pytest.fixture(scope="module")
def sample(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.public / "sample_submission.csv", dtype=str)


@pytest.fixture(scope="module")
def bought(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "answers.csv", dtype=str)


def test_last_eight_days_are_held_out(dirs, bought) -> None:
    train = pd.read_csv(dirs.public / "transactions_train.csv", dtype=str)
    assert train["t_dat"].max() == "2020-09-14"
    assert train["article_id"].str.startswith("0").sum() == 0  # written as integers
    assert bought["customer_id"].is_monotonic_increasing
    assert len(bought) < len(pd.read_csv(dirs.public / "sample_submission.csv"))


def test_unchanged_files_are_hard_links(dirs) -> None:
    for name in ("articles.csv", "customers.csv", "sample_submission.csv"):
        assert os.stat(dirs.public / name).st_nlink >= 2
    images = [p for p in (dirs.public / "images").rglob("*.jpg")]
    assert len(images) == 5 and all(os.stat(p).st_nlink >= 2 for p in images)


def test_chunks_write_the_bytes_of_one_read(tmp_path, monkeypatch) -> None:
    raw, whole, chunked = (tmp_path / name for name in ("raw", "whole", "chunked"))
    for folder in (raw, whole, chunked):
        folder.mkdir()
    make_raw(raw)
    source = raw / "transactions_train.csv"
    held_whole = hm.split_transactions(source, whole / "t.csv")
    monkeypatch.setattr(hm, "CHUNK_ROWS", 50)
    held_chunked = hm.split_transactions(source, chunked / "t.csv")
    assert (whole / "t.csv").read_bytes() == (chunked / "t.csv").read_bytes()
    pd.testing.assert_frame_equal(held_whole, held_chunked)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda s: s.iloc[1:], "test id\\(s\\) have no row"),
        (lambda s: pd.concat([s, s.iloc[:1].assign(customer_id="00ff")]), "not in the test set"),
        (lambda s: pd.concat([s, s.iloc[:1]]), "duplicate row"),
        (lambda s: s.rename(columns={"prediction": "articles"}), "missing column"),
        (lambda s: s.assign(rank="1"), "unexpected column\\(s\\) 'rank'"),
    ],
)
def test_invalid_submissions_are_rejected(dirs, sample, tmp_path, change, reason) -> None:
    assert_invalid(grade_frame(COMP, dirs.private, change(sample.copy()), tmp_path), reason)


def test_sample_with_leading_zeros_scores_zero(dirs, sample, bought, tmp_path) -> None:
    """Kaggle's sample writes ids with a leading zero; the answers have none (as MLE-bench)."""
    padded = bought.assign(
        prediction=bought["prediction"].str.replace(r"(\d+)", r"0\1", regex=True)
    )
    everyone = sample.drop(columns="prediction").merge(padded, how="left").fillna("")
    assert grade_frame(COMP, dirs.private, sample, tmp_path).score == 0.0 == COMP.sample_score
    assert grade_frame(COMP, dirs.private, everyone, tmp_path).score == 0.0


def test_only_buyers_are_scored_by_hand_computed_map(dirs, sample, bought, tmp_path) -> None:
    """Buyer 1 gets its first article at rank 2 (AP = 0.5 / min(m, 12)); all others get
    nothing, and non-buyers' rows, whatever they hold, do not count."""
    first = bought.iloc[0]
    articles = first["prediction"].split(" ")
    guess = sample.assign(prediction="1")
    guess.loc[guess["customer_id"] == first["customer_id"], "prediction"] = f"9 {articles[0]}"
    non_buyers = ~guess["customer_id"].isin(bought["customer_id"])
    guess.loc[non_buyers, "prediction"] = articles[0]
    expected = 0.5 / min(len(set(articles)), 12) / len(bought)
    report = grade_frame(COMP, dirs.private, guess.sample(frac=1, random_state=0), tmp_path)
    assert report.score == round(expected, 5)
