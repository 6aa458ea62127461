"""The report as a library call: `mle_gym.analysis.build_report` and its renderers give what
`mle-gym report` prints, without the CLI, on a run directory written by hand."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mle_gym.cli import main

H = 3600.0
DIGITS, SPACESHIP = "sklearn-digits", "spaceship-titanic"


def _grade(competition: str, norm: float | None, medal: bool = False) -> dict:
    return {
        "competition_id": competition,
        "score": norm,
        "valid_submission": norm is not None,
        "above_median": medal,
        "any_medal": medal,
        "gold_medal": medal,
        "silver_medal": False,
        "bronze_medal": False,
        "normalized_score": norm,
    }


def _episode(root: Path, competition: str, seed: int, snapshots: list[tuple[float, dict]]) -> None:
    directory = root / "episodes" / competition / f"seed-{seed}"
    directory.mkdir(parents=True)
    state = "done" if snapshots else "failed"
    (directory / "status.json").write_text(json.dumps({"state": state, "attempt": 1}))
    if snapshots:
        (directory / "report.json").write_text(json.dumps(snapshots[-1][1]))
        graded = [{"elapsed": t, "step": i, "report": r} for i, (t, r) in enumerate(snapshots)]
        (directory / "snapshots.json").write_text(json.dumps(graded))


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """Two competitions, three seeds, 12 h; one episode failed, some improve over time."""
    root = tmp_path / "run"
    root.mkdir()
    settings = {"policy": "scripted", "policy_options": {}, "env_kwargs": {"time_limit": 12 * H}}
    (root / "batch.json").write_text(
        json.dumps({"settings": settings, "competitions": [DIGITS, SPACESHIP], "seeds": [0, 1, 2]})
    )
    _episode(root, DIGITS, 0, [(1800, _grade(DIGITS, 0.2)), (30000, _grade(DIGITS, 1.2, True))])
    _episode(root, DIGITS, 1, [(7000, _grade(DIGITS, None)), (20000, _grade(DIGITS, 0.4))])
    _episode(root, DIGITS, 2, [(600, _grade(DIGITS, 0.9, True))])
    _episode(root, SPACESHIP, 0, [(100, _grade(SPACESHIP, 0.3))])
    _episode(root, SPACESHIP, 1, [(100, _grade(SPACESHIP, 0.7, True))])
    _episode(root, SPACESHIP, 2, [])
    return root


#: Builds the report through the library alone, prints its JSON and CSV, then which CLI
#: modules that loaded (none should).
LIBRARY = """
import json, sys
from mle_gym.analysis import build_report
from mle_gym.analysis.report_render import to_csv, to_json

report = build_report(
    sys.argv[1], rule="pad-incomplete", at=float(sys.argv[2]), pass_k=[1, 2], published=True,
    episodes=True,
)
print(json.dumps({"json": json.loads(to_json(report)), "csv": to_csv(report),
                  "cli": sorted(m for m in sys.modules if m.startswith("mle_gym.cli"))}))
"""


def test_the_library_builds_the_report_the_cli_prints(
    run_dir: Path, capsys: pytest.CaptureFixture
) -> None:
    options = ["--pad-incomplete", "--at", "8h", "--pass-k", "1,2", "--compare", "published"]
    assert main(["report", str(run_dir), *options, "--episodes", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert main(["report", str(run_dir), *options, "--csv"]) == 0
    printed_csv = capsys.readouterr().out
    done = subprocess.run(
        [sys.executable, "-c", LIBRARY, str(run_dir), str(8 * H)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    built = json.loads(done.stdout)
    assert built["cli"] == []
    assert built["json"] == printed and built["csv"] == printed_csv
    # the options reached the figures: padding, the time cut, pass@k, published rows, episodes
    assert printed["rule"] == "pad-incomplete" and printed["episodes"]["failed"] == 1
    digits = printed["competitions"][DIGITS]["normalized_score"]["mean"]
    assert digits == pytest.approx((0.2 + 0.4 + 0.9) / 3)  # as of 8 h: seed 0's 1.2 is later
    assert set(printed["pass_at_k"]["competitions"][DIGITS]) == {"1", "2"}
    assert printed["published"]["published"]
    assert [(r["competition_id"], r["seed"]) for r in printed["episode_rows"]][-1] == (SPACESHIP, 2)


def test_runs_side_by_side_through_the_library(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from mle_gym.analysis import build_report
    from mle_gym.analysis.report_render import to_dict

    other = tmp_path / "other"
    other.mkdir()
    settings = {"env_kwargs": {"task": "mlebench"}}
    (other / "batch.json").write_text(json.dumps({"settings": settings, "seeds": [0]}))
    _episode(other, DIGITS, 0, [(60, _grade(DIGITS, 0.5, True))])
    assert main(["report", str(run_dir), str(other), "--json"]) == 0
    report = build_report([run_dir, other])
    assert json.loads(json.dumps(to_dict(report))) == json.loads(capsys.readouterr().out)
    assert [c.task_variant for c in report.columns] == ["default", "mlebench"]
    with pytest.raises(ValueError, match="pass_k: read one run"):
        build_report([run_dir, other], pass_k=[1])
