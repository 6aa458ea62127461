"""tensorflow-speech-recognition-challenge: MLE-bench's split streamed from train.7z, no way
back from a clip to its original name, exact-match accuracy of the raw labels."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pandas as pd
import pytest
from sklearn.model_selection import train_test_split

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, assert_scores_like_the_sample, grade_frame
from tests.competitions.test_archive_streams import unpacked
from tests.fixtures.raw import generator_for

COMP = get_competition("tensorflow-speech-recognition-challenge")
FIXTURE = generator_for(COMP)


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


@pytest.fixture(scope="module")
def raw_wavs(dirs) -> dict[str, bytes]:
    return {
        name: data
        for name, data in unpacked(dirs.raw / "train.7z").items()
        if name.startswith("train/audio/") and name.endswith(".wav")
    }


def _expected_split(raw_wavs: dict[str, bytes]) -> tuple[list[str], list[str]]:
    """MLE-bench's rule, restated: sort by `<label>_<file>`, hold out 10% with seed 0."""
    listed = sorted(raw_wavs, key=lambda m: "_".join(m.split("/")[-2:]))
    return train_test_split(listed, test_size=0.1, random_state=0)


def test_split_is_mlebench_ten_percent_of_sorted_wavs(answers, dirs, raw_wavs) -> None:
    train, test = _expected_split(raw_wavs)
    assert len(test) == 5 and len(train) == 38
    assert list(answers["fname"]) == [f"clip_{i:08d}.wav" for i in range(len(test))]
    assert list(answers["label"]) == [m.split("/")[-2] for m in test]
    for clip, member in zip(answers["fname"], test, strict=True):
        assert (dirs.public / "test" / "audio" / clip).read_bytes() == raw_wavs[member]
    public_train = {
        str(p.relative_to(dirs.public)) for p in (dirs.public / "train").rglob("*") if p.is_file()
    }
    assert public_train == set(train)
    for member in train:
        assert (dirs.public / member).read_bytes() == raw_wavs[member]


def test_public_holds_only_wavs_and_the_sample(dirs) -> None:
    files = [p.relative_to(dirs.public) for p in dirs.public.rglob("*") if p.is_file()]
    assert {p.suffix for p in files} == {".wav", ".csv"}
    assert [str(p) for p in files if p.suffix == ".csv"] == ["sample_submission.csv"]
    assert sorted(os.listdir(dirs.public)) == ["sample_submission.csv", "test", "train"]
    assert os.listdir(dirs.public / "test") == ["audio"]
    assert sorted(os.listdir(dirs.private)) == ["clip_sources.csv", "test.csv"]


def test_each_clip_origin_is_recorded_on_the_host_side(dirs, raw_wavs) -> None:
    """private/clip_sources.csv names each clip's recording as `<label>/<file>`, the form a
    development split's clean-split check compares."""
    _, test = _expected_split(raw_wavs)
    sources = pd.read_csv(dirs.private / "clip_sources.csv")
    assert list(sources["fname"]) == [f"clip_{i:08d}.wav" for i in range(len(test))]
    assert list(sources["source"]) == ["/".join(m.split("/")[-2:]) for m in test]


def test_no_public_name_points_back_to_a_held_out_recording(dirs, raw_wavs) -> None:
    """A speaker says several words, so a held-out file name may also name a training file
    in another folder; what must not exist is the held-out recording's own path."""
    _, test = _expected_split(raw_wavs)
    for member in test:
        assert not (dirs.public / member).exists()
    clips = {p.name for p in (dirs.public / "test" / "audio").iterdir()}
    assert all(PurePosixPath(n).stem.startswith("clip_") for n in clips)
    assert len(clips) == len(test)


def test_clips_are_written_after_training_files_in_clip_order(answers, dirs) -> None:
    """Their times follow clip order, not the label-sorted order of the archive."""
    clips = [dirs.public / "test" / "audio" / n for n in answers["fname"]]
    times = [c.stat().st_mtime_ns for c in clips]
    assert times == sorted(times)
    trained = max(p.stat().st_mtime_ns for p in (dirs.public / "train").rglob("*.wav"))
    assert min(times) >= trained


def test_sample_says_silence_for_every_clip(answers, dirs) -> None:
    sample = pd.read_csv(dirs.public / "sample_submission.csv")
    assert list(sample["fname"]) == list(answers["fname"])
    assert set(sample["label"]) == {"silence"}


CASES = {
    "missing rows": (lambda f: f.iloc[2:], r"2 test id\(s\) have no row"),
    "training file": (
        lambda f: pd.concat([f, f.iloc[:1].assign(fname="0a7c2a8d_nohash_0.wav")]),
        r"ids that are not in the test set: '0a7c2a8d_nohash_0.wav'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "label missing": (lambda f: f.drop(columns="label"), r"missing column\(s\) 'label'"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_kaggle_classes_never_match_like_the_sample(answers, dirs, tmp_path: Path) -> None:
    unknown = answers.assign(label="unknown").sample(frac=1, random_state=0)
    assert_scores_like_the_sample(
        COMP, dirs, unknown, tmp_path, sample_file="sample_submission.csv", score=0.0
    )


def test_labels_compare_exactly_and_empty_is_wrong(answers, dirs, tmp_path: Path) -> None:
    labels = list(answers["label"])
    mixed = answers.assign(label=[labels[0].upper(), labels[1] + " ", None, *labels[3:]])
    report = grade_frame(COMP, dirs.private, mixed.sample(frac=1, random_state=1), tmp_path)
    assert report.valid_submission, report.error
    assert report.score == (len(labels) - 3) / len(labels)
