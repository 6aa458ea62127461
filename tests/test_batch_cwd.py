"""Batch workers import the installed mle_gym whatever the current directory holds."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.batch_support import mle_gym_env
from tests.conftest import require_bwrap


def test_a_folder_named_mle_gym_in_the_cwd_does_not_shadow_the_package(
    digits_home: Path, tmp_path: Path
) -> None:
    require_bwrap()
    clone = tmp_path / "mle_gym"  # what a `git clone` next to the run looks like: no __init__
    clone.mkdir()
    (clone / "README.md").write_text("a clone of the repository\n")
    result = subprocess.run(
        ["mle-gym", "run", "sklearn-digits", "--seeds", "2", "--workers", "2", "--run-dir", "run"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=mle_gym_env(digits_home),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 episode(s) run, 0 already done, 0 failed" in result.stdout
    assert "NamespaceNotFound" not in result.stdout
    assert (tmp_path / "run" / "episodes" / "sklearn-digits" / "seed-1").is_dir()
