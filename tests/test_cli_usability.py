"""What a new user of `mle-gym` runs into: help, version, bad arguments, empty splits,
typos, narrow terminals and pipes, JSON output, per-episode reports, gc without Docker."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

import mle_gym
from mle_gym import cli
from mle_gym.cli import show as cli_show
from mle_gym.competitions import all_competitions
from mle_gym.data import prepare
from mle_gym.runner import Step


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`mle-gym` with its output piped, as in a script (no COLUMNS: rich uses 80)."""
    base = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run(
        ["mle-gym", *args], capture_output=True, text=True, timeout=300, env={**base, **(env or {})}
    )


def test_no_command_prints_help_and_version_is_there(capsys) -> None:
    assert cli.main([]) == 0
    out = capsys.readouterr().out
    assert "usage: mle-gym" in out and "COMMAND" in out and "demo" in out
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"mle-gym {mle_gym.__version__}"


def test_every_option_has_help_and_policy_lists_its_choices() -> None:
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    for name, sub in commands.items():
        for action in sub._actions:
            assert action.help, f"mle-gym {name} {action.option_strings or action.dest}: no help"
    run_help = commands["run"].format_help()
    # the policy registry's names, sorted, however the help is wrapped
    assert "one of aide, llm, mini-swe-agent, mlab, openhands, scripted" in " ".join(
        run_help.split()
    )
    assert "in seconds" in run_help and "default" in run_help


@pytest.mark.parametrize(
    "args, message",
    [
        (["--seeds", "0"], "argument --seeds: must be at least 1, got 0"),
        (["--seeds", "-1"], "argument --seeds: must be at least 1, got -1"),
        (["--workers", "0"], "argument --workers: must be at least 1, got 0"),
        (["--seeds", "two"], "argument --seeds: expected a whole number, got 'two'"),
    ],
)
def test_bad_batch_numbers_are_refused(args, message, capsys) -> None:
    with pytest.raises(SystemExit) as refused:
        cli.main(["run", "sklearn-digits", *args])
    assert refused.value.code == 2
    assert message in capsys.readouterr().err


@pytest.fixture
def only_lite(monkeypatch: pytest.MonkeyPatch) -> None:
    """A catalog without medium/high competitions, as before they existed."""
    lite = [c for c in all_competitions() if c.split in ("lite", "demo")]
    monkeypatch.setattr("mle_gym.competitions.all_competitions", lambda: lite)


@pytest.mark.parametrize("command", [["prepare"], ["run"], ["list"]])
def test_an_empty_split_says_it_is_empty_and_what_exists(command, only_lite, capsys) -> None:
    assert cli.main([*command, "--split", "high"]) == 2
    message = " ".join(capsys.readouterr().err.split())
    assert "the 'high' split has no competitions in mle_gym yet" in message
    assert re.search(r"splits with competitions: lite \(\d+\), demo \(1\)", message)
    assert "name competition ids" not in message


def test_no_ids_and_no_split_names_both_ways(capsys) -> None:
    assert cli.main(["prepare"]) == 2
    message = capsys.readouterr().err
    assert "name a competition id, or --split lite|medium|high|all|dev|demo" in message


def test_grade_with_a_typo_suggests_the_id(capsys) -> None:
    assert cli.main(["grade", "spaceship-titanc", "x.csv"]) == 2
    out = " ".join(capsys.readouterr().err.split())
    assert "did you mean 'spaceship-titanic'?" in out
    assert cli.main(["grade", "aptos", "x.csv"]) == 2
    out = " ".join(capsys.readouterr().err.split())
    assert "did you mean 'aptos2019-blindness-detection'?" in out


def _whole_on_80_and_more(lines: list[str], width: int) -> None:
    """Every line within `width`; every id, metric name and column header whole on a line."""
    assert max(len(line) for line in lines) <= width
    assert any("prepared" in line.strip(" ┃").split() for line in lines), lines[:5]
    for comp in all_competitions():
        arrow = "↓" if comp.lower_is_better else "↑"
        assert any(comp.id in line.split() for line in lines), comp.id
        assert any(f"{comp.metric} {arrow}" in line for line in lines), (width, comp.metric)


def test_list_is_readable_at_80_columns_when_piped() -> None:
    result = run_cli("list")
    assert result.returncode == 0, result.stderr
    _whole_on_80_and_more(result.stdout.splitlines(), 80)


@pytest.mark.parametrize("width", [100, 120, 160, 200])
def test_list_breaks_nothing_at_any_width(width: int) -> None:
    from rich.console import Console

    rows = [cli_show.competition_cells(c, prepared=True, differs=True) for c in all_competitions()]
    out = Console(width=width, record=True, file=io.StringIO())
    out.print(cli_show.competitions_table(rows, width=width))
    _whole_on_80_and_more(out.export_text().splitlines(), width)


def test_list_json_has_every_competition_and_field() -> None:
    rows = json.loads(run_cli("list", "--json").stdout)
    assert [r["id"] for r in rows] == [c.id for c in all_competitions()]
    digits = next(r for r in rows if r["id"] == "sklearn-digits")
    assert digits["env_id"] == "mle/sklearn-digits-v0" and set(digits["thresholds"]) == {
        "gold",
        "silver",
        "bronze",
        "median",
    }


def _run_dir(tmp_path: Path) -> Path:
    """A batch run directory as the runner leaves it: two graded episodes, one failed."""
    run = tmp_path / "run"
    for seed, (state, score) in enumerate([("done", 0.97), ("done", None), ("failed", None)]):
        folder = run / "episodes" / "sklearn-digits" / f"seed-{seed}"
        folder.mkdir(parents=True)
        (folder / "status.json").write_text(json.dumps({"state": state, "attempt": 1}))
        if state == "done":
            report = {
                "score": score,
                "valid_submission": score is not None,
                "bronze_medal": score is not None,
                "normalized_score": 0.9 if score else None,
            }
            (folder / "report.json").write_text(json.dumps(report))
    return run


def test_report_shows_one_row_per_episode(tmp_path: Path, capsys) -> None:
    run = _run_dir(tmp_path)
    assert cli.main(["report", str(run), "--episodes"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if "sklearn-digits" in line and "│" in line]
    assert any("0.97" in r and "bronze" in r and "0.900" in r for r in rows), out
    assert any("invalid" in r for r in rows) and any("failed" in r for r in rows), out
    assert cli.main(["report", str(run), "--episodes", "--json"]) == 0
    episodes = json.loads(capsys.readouterr().out)["episode_rows"]
    assert [(e["seed"], e["state"]) for e in episodes] == [(0, "done"), (1, "done"), (2, "failed")]


def test_report_is_readable_at_80_columns_when_piped(tmp_path: Path) -> None:
    result = run_cli("report", str(_run_dir(tmp_path)), "--episodes")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert any("sklearn-digits" in line and "50.0 ± 50.0" in line for line in lines), lines
    assert "--json or --csv has every figure" in " ".join(result.stdout.split())


def test_a_long_step_output_says_it_was_cut(capsys) -> None:
    observation = "\n".join(f"line {i}" for i in range(100))
    cli_show.show_step(Step("seq 100", observation, 0.0, False, False, {"step": 1}))
    out = capsys.readouterr().out
    assert "line 0" in out and "line 99" in out and "line 50" not in out
    assert "89 line(s) cut here" in out


def test_episode_ends_with_next_steps(capsys) -> None:
    cli_show.next_steps(cli_show.episode_hints("sklearn-digits", "scripted", demo=False))
    out = capsys.readouterr().out
    assert "next steps:" in out and "mle-gym run sklearn-digits --policy llm" in out


def test_gc_without_docker_still_sweeps_scratch_folders(tmp_path: Path) -> None:
    orphan = tmp_path / "mle-gym-local-orphan"
    orphan.mkdir()
    (orphan / "owner").write_text("999999999:1")
    result = run_cli(
        "gc", env={"TMPDIR": str(tmp_path), "DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock"}
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert not orphan.exists()
    assert "removed 1 scratch folder(s)" in result.stdout
    assert "no Docker engine reachable" in result.stdout and ".ci/" not in result.stdout


def test_prepare_raw_from_an_empty_folder_names_every_missing_file(tmp_path: Path) -> None:
    comp = next(c for c in all_competitions() if len(c.raw_files) >= 2)
    empty = tmp_path / "empty"
    empty.mkdir()
    home = tmp_path / "home"
    with pytest.raises(FileNotFoundError) as missing:
        prepare(comp, empty, root=home)
    for name in comp.raw_files:
        assert name in str(missing.value)
    assert f"{len(comp.raw_files)} of the {len(comp.raw_files)} raw file(s)" in str(missing.value)
    assert not (home / comp.id).exists()  # no empty <id>/ left behind
