"""Strings an agent chose (kept file names, grading reasons quoting its file, commands,
episode errors) are printed as written, never read as rich markup: `[/x]` in one used to
raise MarkupError and leave the table unprinted."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from mle_gym.cli import main
from tests.test_audit_plagiarism import KERNELS, _copied_then_edited, _run_dir, dolos  # noqa: F401

HOSTILE = "[/x]"


def test_a_kept_file_named_like_markup_prints_in_the_plagiarism_table(
    dolos: None,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
) -> None:
    """`[/x].py` is the file `x].py` in a folder named `[`."""
    run = _run_dir(tmp_path / "run", {0: {}})
    kept = run / "episodes" / "spaceship-titanic" / "seed-0" / "code" / f"{HOSTILE}.py"
    kept.parent.mkdir()
    kept.write_text(_copied_then_edited())
    assert main(["audit", "plagiarism", str(run), "--kernels", str(KERNELS)]) == 1
    captured = capsys.readouterr()
    assert f"{HOSTILE}.py" in captured.out and "FLAGGED" in captured.out, captured.err


def test_a_grade_report_quoting_the_file_prints(
    spaceship_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """`mle-gym grade`: the report's reason names the submission's own columns."""
    submission = tmp_path / "submission.csv"
    submission.write_text(f"PassengerId,{HOSTILE}\n0013_01,True\n")
    assert main(["grade", "spaceship-titanic", str(submission)]) == 1
    out = capsys.readouterr().out
    assert f"found PassengerId,{HOSTILE}" in out.replace("\n", "").replace("│", "")


def test_a_step_and_a_batch_line_print_agent_text_as_written(
    capsys: pytest.CaptureFixture,
) -> None:
    """`mle-gym run`'s live steps and a batch's finished lines."""
    from mle_gym.batch.progress import BatchProgress
    from mle_gym.batch.spec import EpisodeTask
    from mle_gym.cli import show
    from mle_gym.runner import Step

    info = {"step": 1, "exit_code": 1, "time_left": 10}
    show.show_step(Step({"tool": HOSTILE, "command": "[bold]"}, f"{HOSTILE} [red]", 0, False,
                        False, info))  # fmt: skip
    out = capsys.readouterr().out
    assert f"step 1: {HOSTILE}" in out and "$ [bold]" in out and f"{HOSTILE} [red]" in out

    console = Console(record=True, width=200)
    progress = BatchProgress(console, 2, "run")
    task = EpisodeTask("sklearn-digits", 0, "scripted")
    progress.finished(task, {"state": "done"}, {"error": f"missing column(s) '{HOSTILE}'"})
    progress.finished(task, {"state": "failed", "error": f"Traceback\nValueError: {HOSTILE}"}, None)
    text = console.export_text()
    assert f"no valid submission (missing column(s) '{HOSTILE}')" in text
    assert "sklearn-digits/seed-0 failed" in text and f"ValueError: {HOSTILE}" in text
