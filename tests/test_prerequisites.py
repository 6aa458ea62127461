"""The one rule for missing prerequisites: skip with a reason outside CI, fail under CI=true."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests import prerequisites


def test_missing_piece_skips_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prerequisites, "IN_CI", False)
    with pytest.raises(pytest.skip.Exception, match="the thing is missing"):
        prerequisites.require(False, "the thing is missing")
    prerequisites.require(True, "never said")


def test_missing_piece_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prerequisites, "IN_CI", True)
    with pytest.raises(pytest.fail.Exception, match="CI=true but the thing is missing"):
        prerequisites.require(False, "the thing is missing")


def test_shared_data_reason_names_the_path(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setattr(prerequisites, "IN_CI", False)
    monkeypatch.setattr(prerequisites, "SHARED", tmp_path / "shared")
    with pytest.raises(pytest.skip.Exception, match=r"shared/specs/competitions.csv is missing"):
        prerequisites.require_shared("specs", "competitions.csv")


def test_a_clone_without_shared_collects_and_skips(tmp_path: Path) -> None:
    """A test module that reads ../shared at import is skipped, not a collection error."""
    clone = tmp_path / "clone"
    (clone / "tests").mkdir(parents=True)
    repo = Path(prerequisites.__file__).resolve().parents[1]
    (clone / "tests" / "__init__.py").write_text("")
    (clone / "tests" / "prerequisites.py").write_text(
        (repo / "tests" / "prerequisites.py").read_text()
    )
    (clone / "tests" / "test_needs_shared.py").write_text(
        "from tests.prerequisites import require_shared\n"
        "BOARD = require_shared('leaderboards', module=True)\n"
        "def test_board():\n    assert BOARD\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    run = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests"]
    outside = subprocess.run(run, cwd=clone, capture_output=True, text=True, env=env)
    assert outside.returncode in (0, 5), outside.stdout  # 5: every test skipped
    assert "1 skipped" in outside.stdout and "leaderboards is missing" in outside.stdout
    inside = subprocess.run(
        run, cwd=clone, capture_output=True, text=True, env={**env, "CI": "true"}
    )
    assert inside.returncode != 0 and "CI=true but" in inside.stdout
