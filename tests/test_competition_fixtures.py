"""Every competition with a raw-file fixture: prepare, grade, no leaks, one env episode.

The fixtures copy the real raw layout at a tiny size (the real data cannot be downloaded
here); the spaceship-titanic checks on real data live in test_spaceship_titanic.py.
"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pandas as pd
import pytest

import mle_gym  # noqa: F401  (registers the envs)
from mle_gym.competitions import Competition, all_competitions
from mle_gym.grading import grade
from mle_gym.grading.validation import read_as_text
from tests.fixtures.prepared import prepared_fixture
from tests.fixtures.raw import generator_for

WITH_FIXTURES = [c for c in all_competitions() if generator_for(c) is not None]


def _answers(comp: Competition, private: Path) -> pd.DataFrame:
    if comp.submission.load_answers is not None:
        return comp.submission.load_answers(private)
    return read_as_text(private / comp.submission.answers_file)


@pytest.fixture(params=WITH_FIXTURES, ids=lambda c: c.id)
def prepared(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    comp = request.param
    return comp, prepared_fixture(comp, tmp_path_factory)


def test_prepare_writes_mlebench_file_names(prepared) -> None:
    comp, dirs = prepared
    for name in comp.checksums.public:
        assert (dirs.public / name).exists(), f"public/{name} missing"
    for name in comp.checksums.private:
        assert (dirs.private / name).exists(), f"private/{name} missing"
    assert (dirs.public / comp.submission.sample_file).is_file()


def test_sample_submission_is_valid_without_medal(prepared) -> None:
    comp, dirs = prepared
    report = grade(comp, dirs.public / comp.submission.sample_file, dirs.private)
    assert report.valid_submission, report.error
    assert not report.any_medal


def test_answers_as_submission_reach_gold(prepared, tmp_path: Path) -> None:
    comp, dirs = prepared
    module = generator_for(comp)
    if hasattr(module, "perfect_submission"):
        perfect = module.perfect_submission(dirs.private)
    else:
        perfect = _answers(comp, dirs.private)[
            [comp.submission.id_column, *comp.submission.target_names]
        ]
    path = tmp_path / "perfect.csv"
    perfect.to_csv(path, index=False)
    report = grade(comp, path, dirs.private)
    assert report.valid_submission, report.error
    assert report.gold_medal


def test_no_test_id_or_answer_file_in_public(prepared) -> None:
    comp, dirs = prepared
    answers = _answers(comp, dirs.private)
    # Some splits number train and test ids from 1 each: shared ids then mean nothing.
    renumbered = getattr(generator_for(comp), "IDS_RENUMBERED_PER_SPLIT", False)
    test_ids = set() if renumbered else set(answers[comp.submission.id_column])
    private_bytes = {p.read_bytes() for p in dirs.private.rglob("*") if p.is_file()}
    for path in dirs.public.rglob("*"):
        if not path.is_file():
            continue
        assert path.read_bytes() not in private_bytes, f"{path.name} equals a private file"
        if path.suffix != ".csv" or "test" in path.name or "sample" in path.name.lower():
            continue
        frame = read_as_text(path)
        if comp.submission.id_column in frame.columns:
            leaked = test_ids & set(frame[comp.submission.id_column])
            assert not leaked, f"test ids in public {path.name}: {sorted(leaked)[:3]}"


def test_env_episode_on_fixture(prepared, monkeypatch: pytest.MonkeyPatch) -> None:
    comp, dirs = prepared
    monkeypatch.setenv("MLE_GYM_HOME", str(dirs.root.parent))
    with gym.make(comp.env_id, step_timeout=60, max_steps=5) as env:
        observation, _ = env.reset(seed=0)
        assert comp.name in observation
        sample = f"/home/data/{comp.submission.sample_file}"
        observation, *_ = env.step(f"cp {sample} /home/submission/submission.csv")
        observation, _reward, terminated, truncated, info = env.step({"tool": "submit"})
    assert terminated and not truncated
    assert info["report"]["valid_submission"], info["report"]["error"]
    assert info["report"]["submission_path"] == "/home/submission/submission.csv"
