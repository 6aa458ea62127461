"""The mle-gym command as a user runs it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import require_bwrap
from tests.prerequisites import SPACESHIP_RAW, require_shared


def mle_gym(*args: str, home: Path, ok: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(
        ["mle-gym", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={
            **__import__("os").environ,
            "MLE_GYM_HOME": str(home),
            "COLUMNS": "200",
            "KAGGLE_CONFIG_DIR": str(home / "no-kaggle"),
        },
    )
    if ok:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


def test_list_shows_competitions_and_prepared_state(tmp_path: Path) -> None:
    require_shared("data", "spaceship-titanic", "raw")
    out = mle_gym("list", home=tmp_path).stdout
    assert "spaceship-titanic" in out and "sklearn-digits" in out
    assert "0.82066" in out and "panel of 22 scikit-learn reference models" in out
    mle_gym("prepare", "spaceship-titanic", "--raw", str(SPACESHIP_RAW), home=tmp_path)
    row = next(
        line
        for line in mle_gym("list", "--split", "dev", home=tmp_path).stdout.splitlines()
        if "spaceship-titanic" in line
    )
    assert row.rstrip(" │").endswith("yes")


def test_prepare_without_credentials_explains_what_to_do(tmp_path: Path) -> None:
    result = mle_gym("prepare", "spaceship-titanic", home=tmp_path, ok=False)
    assert result.returncode == 2
    text = " ".join(result.stderr.split())
    assert "No Kaggle credentials" in text and "/rules" in text and "--raw" in text
    assert "mle-gym[kaggle]" in text


def test_prepare_then_grade_json(tmp_path: Path) -> None:
    require_shared("data", "spaceship-titanic", "raw")
    out = mle_gym(
        "prepare", "spaceship-titanic", "--raw", str(SPACESHIP_RAW), "--strict", home=tmp_path
    ).stdout
    assert "matches MLE-bench's checksums" in out
    # Prepare also builds the answer key, so the first grade only reads the submission.
    (key,) = (tmp_path / "spaceship-titanic" / "private" / ".answer-keys").glob("*.arrow")
    built = key.stat().st_mtime_ns
    sample = tmp_path / "spaceship-titanic" / "public" / "sample_submission.csv"
    report = json.loads(
        mle_gym("grade", "spaceship-titanic", str(sample), "--json", home=tmp_path).stdout
    )
    assert report["score"] == pytest.approx(0.50345) and report["normalized_score"] == 0.0
    assert key.stat().st_mtime_ns == built
    broken = tmp_path / "broken.csv"
    broken.write_text("PassengerId,Transported\n")
    result = mle_gym("grade", "spaceship-titanic", str(broken), "--json", home=tmp_path, ok=False)
    assert result.returncode == 1 and not json.loads(result.stdout)["valid_submission"]


def test_unknown_competition_is_a_clear_error(tmp_path: Path) -> None:
    result = mle_gym("grade", "nope", "x.csv", home=tmp_path, ok=False)
    assert result.returncode == 2 and "unknown competition 'nope'" in result.stderr


def test_demo_runs_offline_and_shows_steps_and_grade(tmp_path: Path) -> None:
    require_bwrap()
    out = mle_gym("demo", home=tmp_path).stdout
    for text in (
        "step 1: bash",
        "step 2: create",
        "step 5: submit",
        "The submission is valid.",
        "normalized_score",
        "reward (normalized):",
    ):
        assert text in out
    reward = float(out.rsplit("reward (normalized):", 1)[1].split()[0])
    assert reward > 0.5


def test_reference_panel_prints_the_shipped_thresholds(tmp_path: Path) -> None:
    out = " ".join(mle_gym("reference-panel", "sklearn-digits", home=tmp_path).stdout.split())
    assert "gold 0.98889 silver 0.98056 bronze 0.96944 median 0.94861" in out
    assert "sample submission 0.075" in out and "svc-rbf-raw" in out
