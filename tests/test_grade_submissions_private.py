"""`mle-gym grade --submissions` refuses a line whose path lies in a prepared competition's
private/ folder (the answers, which would score as gold), through a link too, unless the
user passes --allow-private-paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mle_gym.cli import main

DIGITS = "sklearn-digits"


@pytest.fixture
def home(digits_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    return digits_home


def _jsonl(folder: Path, paths: list[Path]) -> Path:
    lines = [json.dumps({"competition_id": DIGITS, "submission_path": str(p)}) for p in paths]
    target = folder / "submissions.jsonl"
    target.write_text("\n".join(lines) + "\n")
    return target


def test_paths_into_the_answers_are_refused_unless_allowed(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    answers = home / DIGITS / "private" / "test.csv"
    link = tmp_path / "submission.csv"
    link.symlink_to(answers)
    sample = home / DIGITS / "public" / "sample_submission.csv"
    out = tmp_path / "graded"
    for sneaked in (answers, link):
        submissions = _jsonl(tmp_path, [sample, sneaked])
        assert main(["grade", "--submissions", str(submissions), "--output-dir", str(out)]) == 2
        err = capsys.readouterr().err
        assert "private/ folder" in " ".join(err.split()) and "--allow-private-paths" in err
        assert not out.exists()  # nothing graded, nothing written

    code = main(["grade", "--submissions", str(submissions), "--output-dir", str(out),
                 "--allow-private-paths", "--json"])  # fmt: skip
    assert code == 0
    totals = json.loads(capsys.readouterr().out)
    assert totals["total_runs"] == 2 and totals["total_gold_medals"] == 1
