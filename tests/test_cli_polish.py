"""What a new user meets first (issue 30, item 10): warnings said once, medals named, hints
that fit the terminal, the test setup's caches under $MLE_GYM_HOME, one error format, and
gymnasium's checker kept short."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from mle_gym import cli
from mle_gym.analysis.plagiarism import dolos_dir
from mle_gym.batch.progress import BatchProgress
from mle_gym.batch.spec import EpisodeTask
from tests.batch_support import mle_gym_env
from tests.conftest import REPO, require_bwrap

ENV_ID = "mle/spaceship-titanic-v0"
#: A few episodes, each a sandbox start: enough for a once-per-process warning to repeat.
STARTS = """
import gymnasium as gym
import mle_gym  # noqa: F401

for seed in range(3):
    env = gym.make(
        "mle/sklearn-digits-v0",
        max_steps=2,
        sandbox_options={"isolation": "none", "runtime": "host"},
    )
    env.reset(seed=seed)
    env.step("echo hi")
    env.close()
"""


def path_without_bwrap(tmp_path: Path) -> str:
    """A PATH holding everything this one does except `bwrap`: a machine without
    bubblewrap, as far as mle_gym can tell."""
    farm = tmp_path / "bin-without-bwrap"
    farm.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            link = farm / name
            if name != "bwrap" and not os.path.lexists(link):
                link.symlink_to(os.path.join(folder, name))
    return f"{Path(sys.executable).parent}{os.pathsep}{farm}"


def run_without_bwrap(tmp_path: Path, home: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PATH": path_without_bwrap(tmp_path),
        "MLE_GYM_HOME": str(home),
        "PYTHONPATH": str(REPO),
        "COLUMNS": "80",
    }
    return subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path
    )


def test_unisolated_warning_is_said_once_however_many_sandboxes_start(
    tmp_path: Path, digits_home: Path
) -> None:
    result = run_without_bwrap(tmp_path, digits_home, "-c", STARTS)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("NOT ISOLATED") == 1, result.stderr


def test_demo_without_bwrap_says_so_once(tmp_path: Path, digits_home: Path) -> None:
    result = run_without_bwrap(tmp_path, digits_home, "-m", "mle_gym.cli", "demo")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert output.count("bubblewrap is not installed") == 1, output
    assert "NOT ISOLATED" not in output, output


# -- episode rows name the medal --------------------------------------------------------------
#: seed -> (state, the report's medal booleans); seed 2 is valid without a medal, 3 invalid.
EPISODES = {
    0: ("done", {"gold_medal": True, "silver_medal": False, "bronze_medal": False}),
    1: ("done", {"gold_medal": False, "silver_medal": True, "bronze_medal": False}),
    2: ("done", {"gold_medal": False, "silver_medal": False, "bronze_medal": False}),
    3: ("done", None),
    4: ("failed", None),
}


def _run_with_every_medal(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    for seed, (state, medals) in EPISODES.items():
        folder = run / "episodes" / "sklearn-digits" / f"seed-{seed}"
        folder.mkdir(parents=True)
        (folder / "status.json").write_text(json.dumps({"state": state, "attempt": 1}))
        if state == "done":
            valid = medals is not None
            report = {
                "score": 0.9 - seed / 10 if valid else None,
                "valid_submission": valid,
                "any_medal": valid and any(medals.values()),
                **(medals or {}),
                "normalized_score": 1.0 - seed / 10 if valid else None,
            }
            (folder / "report.json").write_text(json.dumps(report))
    return run


def test_report_episode_rows_name_the_medal(tmp_path: Path, capsys) -> None:
    run = _run_with_every_medal(tmp_path)
    assert cli.main(["report", str(run), "--episodes"]) == 0
    rows = {}
    for line in capsys.readouterr().out.splitlines():
        cells = [c.strip() for c in line.split("│") if c.strip()]
        if cells and cells[0] == "sklearn-digits":
            rows[int(cells[1])] = cells
    assert rows[0][4] == "gold" and rows[1][4] == "silver" and rows[2][4] == "none", rows
    assert "medal" not in " ".join(rows[4]) and rows[4][2] == "failed", rows
    assert cli.main(["report", str(run), "--episodes", "--json"]) == 0
    medals = [e["medal"] for e in json.loads(capsys.readouterr().out)["episode_rows"]]
    assert medals == ["gold", "silver", "none", "none", None]


def _finished_line(result: dict[str, Any]) -> str:
    out = io.StringIO()
    progress = BatchProgress(Console(file=out, width=200), 1, "a batch")
    progress.finished(EpisodeTask("sklearn-digits", 0, "scripted"), {"state": "done"}, result)
    return out.getvalue()


def test_batch_progress_lines_name_the_medal() -> None:
    graded = {"valid_submission": True, "score": 0.97, "steps": 5}
    assert "score 0.97, silver medal, 5 steps" in _finished_line({**graded, "silver_medal": True})
    assert "score 0.97, no medal, 5 steps" in _finished_line(graded)


# -- what to type next ------------------------------------------------------------------------
def mle_gym_80(
    *args: str, home: Path, ok: bool = True, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    """`mle-gym ARGS` with its output piped, in a terminal 80 columns wide."""
    env = {**mle_gym_env(home), "COLUMNS": "80"}
    result = subprocess.run(
        ["mle-gym", *args], capture_output=True, text=True, timeout=600, env=env, cwd=cwd
    )
    assert result.returncode == 0 or not ok, result.stdout + result.stderr
    return result


def _hint(output: str) -> list[str]:
    """The lines of the next-steps hint, which ends the output."""
    lines = output.splitlines()
    return lines[lines.index("next steps:") + 1 :]


def _fits_80_columns(output: str) -> None:
    too_wide = [line for line in output.splitlines() if len(line) > 80]
    assert not too_wide, output
    # and the hint was laid out as such, not cut by the terminal: every line indented
    assert all(line.startswith("  ") for line in _hint(output)), output


def test_demo_ends_with_the_readmes_next_step_in_80_columns(mle_home: Path) -> None:
    require_bwrap()
    result = mle_gym_80("demo", home=mle_home)
    _fits_80_columns(result.stdout)
    hint = "\n".join(_hint(result.stdout))
    assert "(medal: bronze)" in result.stdout, result.stdout
    assert "mle-gym prepare spaceship-titanic" in hint and "gym.make(" in hint, hint


def test_batch_ends_with_its_report_command_in_80_columns(
    digits_home: Path, tmp_path: Path
) -> None:
    """Run where a user would, into the default run directory (runs/POLICY-ID)."""
    require_bwrap()
    result = mle_gym_80("run", "sklearn-digits", "--seeds", "1", home=digits_home, cwd=tmp_path)
    _fits_80_columns(result.stdout)
    assert "✓ sklearn-digits/seed-0: score 0.975, bronze medal" in result.stdout, result.stdout
    report, files = (line for line in _hint(result.stdout) if not line.startswith("      "))
    assert report.split()[:4] == ["mle-gym", "report", "runs/scripted-sklearn-digits", "--episodes"]
    assert files.split()[:2] == ["ls", "runs/scripted-sklearn-digits/episodes/ID/seed-K"]


def test_failed_batch_ends_with_its_resume_command_in_80_columns(
    digits_home: Path, tmp_path: Path, docker_engine: Any
) -> None:
    """A sandbox the engine refuses (memory under its minimum) fails the episode: the hint
    is the same command, which runs it again."""
    argv = ["run", "sklearn-digits", "--backend", "docker", "--memory-per-episode", "4m"]
    argv += ["--run-dir", str(tmp_path / "run")]
    result = mle_gym_80(*argv, home=digits_home, ok=False)
    assert result.returncode == 1, result.stdout + result.stderr
    _fits_80_columns(result.stdout)
    hint = _hint(result.stdout)
    reason = next(i for i, line in enumerate(hint) if line.startswith("      "))
    command = " ".join(line.strip().removesuffix("\\") for line in hint[:reason]).split()
    assert command == ["mle-gym", *argv], hint
    assert "run the 1 episode(s) left" in hint[reason], hint


# -- where the test setup's caches go ---------------------------------------------------------
def test_the_setup_caches_follow_mle_gym_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tests/run.sh sources .ci/cache-dirs.sh before the setup scripts and pytest, each setup
    script sources it too (run alone, it installs where the tests look), and that puts every
    cache a setup script reads a variable for under $MLE_GYM_HOME; the plagiarism audit
    looks for Dolos there too (a dry check: nothing is installed)."""
    run_sh = (REPO / "tests" / "run.sh").read_text()
    assert run_sh.index("source .ci/cache-dirs.sh") < run_sh.index(".ci/setup.d/*.sh")
    home = tmp_path / "big-disk"
    printed = subprocess.run(
        ["bash", "-c", "source .ci/cache-dirs.sh && env"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"HOME": str(tmp_path / "home"), "MLE_GYM_HOME": str(home), "PATH": os.defpath},
        check=True,
    ).stdout
    exported = dict(line.split("=", 1) for line in printed.splitlines() if "=" in line)
    read = set()
    for script in (REPO / ".ci" / "setup.d").glob("*.sh"):
        text = script.read_text()
        used = set(re.findall(r"\$\{?(MLE_GYM_\w+_(?:VENV|DIR))\b", text))
        if used:
            assert re.search(r"^source .*cache-dirs\.sh", text, re.MULTILINE), script.name
            assert ".cache/mle-gym" not in text, script.name  # no default of its own
        read |= used
    assert read >= {"MLE_GYM_OPENHANDS_VENV", "MLE_GYM_DOLOS_DIR"}, read
    for name in read:
        assert Path(exported[name]).parent == home, (name, exported.get(name))
    monkeypatch.setenv("MLE_GYM_HOME", str(home))
    monkeypatch.delenv("MLE_GYM_DOLOS_DIR", raising=False)
    assert dolos_dir() == Path(exported["MLE_GYM_DOLOS_DIR"])


# -- one error format ---------------------------------------------------------------------------
#: Bad invocations of every verb: argparse's refusals and our own, each with words the error
#: must carry. RUN is a run directory that does not exist; TMP a scratch folder.
BAD_INVOCATIONS = [
    (["frobnicate"], "invalid choice"),
    (["list", "--split", "huge"], "invalid choice"),
    (["prepare"], "name a competition id"),
    (["prepare", "nope"], "unknown competition 'nope'"),
    (["prepare", "sklearn-digits", "spaceship-titanic", "--raw", "TMP"], "exactly one id"),
    (["prepare", "spaceship-titanic", "--raw", "TMP/missing"], "missing"),
    (["grade"], "name a competition id and a submission file"),
    (["grade", "spaceship-titanc", "x.csv"], "did you mean 'spaceship-titanic'?"),
    (["grade", "sklearn-digits", "x.csv"], "x.csv: no such file"),
    (["grade", "sklearn-digits", "TMP"], "not prepared"),
    (["grade", "sklearn-digits", "x.csv", "--submissions", "s.jsonl"], "not both"),
    (["grade", "--submissions", "TMP/missing.jsonl"], "missing.jsonl"),
    (["demo", "--backend", "vm"], "invalid choice"),
    (["run"], "name a competition id"),
    (["run", "nope"], "unknown competition 'nope'"),
    (["run", "sklearn-digits", "--seeds", "0"], "must be at least 1"),
    (["run", "sklearn-digits", "--max-steps", "2.5"], "expected a whole number"),
    (["run", "sklearn-digits", "--time-limit", "-1"], "must be more than 0"),
    (["run", "sklearn-digits", "--split", "huge"], "invalid choice"),
    (["run", "sklearn-digits", "--ray", "auto", "--gpus", "0"], "--gpus-per-episode"),
    (["run", "sklearn-digits", "--run-dir", "RUN", "--gpus-per-episode", "1.5"], "whole number"),
    (["run", "sklearn-digits", "--memory-per-episode", "lots"], "not a size: 'lots'"),
    (["run", "sklearn-digits", "--harness", "nope"], "--model-endpoint"),
    (["report", "RUN"], "RUN"),
    (["report", "RUN", "RUN", "--episodes"], "reads one run"),
    (
        ["report", "RUN", "--split", "dev"],
        "add --format mlebench: mle-gym report RUN --format mlebench --split dev",
    ),
    (["audit", "plagiarism", "RUN", "--kernels", "TMP/missing"], "not a folder"),
    (["audit", "rules", "RUN", "--model-endpoint", "http://127.0.0.1:9/v1"], "RUN"),
    (["export", "harbor", "--out", "TMP/tasks"], "name competition ids"),
    (["export", "harbor", "nope", "--out", "TMP/tasks"], "unknown competition 'nope'"),
    (["gc", "--everything"], "unrecognized arguments"),
    (["build-image", "--tag"], "expected one argument"),
]


@pytest.mark.parametrize(
    "argv, words", BAD_INVOCATIONS, ids=[" ".join(a) for a, _ in BAD_INVOCATIONS]
)
def test_every_cli_error_is_one_error_line_on_stderr_and_exit_2(
    argv: list[str], words: str, mle_home: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)  # --harness then has no endpoint
    run_dir = str(tmp_path / "no-such-run")
    argv = [a.replace("RUN", run_dir).replace("TMP", str(tmp_path)) for a in argv]
    words = words.replace("RUN", run_dir)
    try:
        code = cli.main(argv)  # an exception of ours would fail the test: a traceback
    except SystemExit as exc:  # argparse's refusals exit from parse_args
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert "error: " in err and words in " ".join(err.split()), err
    assert "error:" not in out, out


# -- gymnasium's checker stays short ----------------------------------------------------------
def test_check_env_passes_without_printing_the_statement(spaceship_home: Path, capsys) -> None:
    """check_env makes the env in each declared render mode, resets it and renders: "human"
    printed the whole statement and manual (62 lines); now one line says what it was."""
    import warnings

    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env

    env = gym.make(ENV_ID, step_timeout=10, sandbox_options={"runtime": "host"})
    statement = env.reset(seed=0)[0]
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(env.unwrapped)
    finally:
        env.close()
    out, err = capsys.readouterr()
    said = out + err + "\n".join(str(w.message) for w in caught)
    assert len(statement) > 2000 and len(said) < 600, said
    assert "reset: the task statement" in out, out
    assert not any(line in said for line in statement.splitlines() if len(line) > 40), said


def test_human_render_shows_a_long_output_by_its_ends(spaceship_home: Path, capsys) -> None:
    import gymnasium as gym

    require_bwrap()
    with gym.make(
        ENV_ID, render_mode="human", step_timeout=10, sandbox_options={"runtime": "host"}
    ) as env:
        env.reset(seed=0)
        observation = env.step("seq 1 100")[0]
        env.render()
    shown = capsys.readouterr().out.splitlines()
    assert observation.split() == [str(i) for i in range(1, 101)]  # the observation is whole
    assert shown[0] == "[step 1]" and shown[1:3] == ["1", "2"] and shown[-1] == "100", shown
    assert "88 line(s) not shown" in shown[9] and "50" not in shown, shown
