"""The run-level summary of the episodes' integrity records."""

from __future__ import annotations

import json
from pathlib import Path

from mle_gym.analysis.integrity import integrity_lines, integrity_summary, run_integrity
from mle_gym.runs.run import read_run
from mle_gym.runs.store import EpisodeRecord


def _record(seed: int, integrity: dict | None, state: str = "done") -> EpisodeRecord:
    result = {"integrity": integrity} if integrity is not None else {}
    return EpisodeRecord("sklearn-digits", seed, state, 1, {}, result, None)


def test_the_summary_counts_what_each_record_says() -> None:
    use = {"policy": "package-index", "requests": 3, "denied": 1, "distinct_hosts": 1,
           "hosts": ["pypi.org"]}  # fmt: skip
    clean = {
        "validations": 2,
        "score_exposed_during_episode": False,
        "network": False,
        "hit_limit": False,
        "last_submission_write_step": 5,
        "task_variant": "default",
    }
    summary = integrity_summary([
        _record(0, clean),
        _record(1, {**clean, "validations": 7, "network": True, "hit_limit": True,
                    "metric_runs_for_validity": 7}),
        _record(2, {**clean, "score_exposed_during_episode": True,
                    "last_submission_write_step": None, "task_variant": "lite-hints"}),
        _record(3, None),
        _record(4, clean, state="failed"),
        _record(5, {**clean, "network": "proxy", "network_use": use}),
    ])  # fmt: skip
    assert summary == {
        "episodes": 5,
        "without_record": 1,
        "score_exposed": ["sklearn-digits/seed-2"],
        "validations": {"total": 13, "mean": 13 / 4, "max": 7},
        "metric_runs_for_validity": 7,
        "network": 2,
        "network_use": {"sklearn-digits/seed-5": use},
        "hit_limit": ["sklearn-digits/seed-1"],
        "resumed": {},
        "last_write_step": {"min": 5, "max": 5},
        "no_submission_written": 1,
        "task_variants": {"default": 3, "lite-hints": 1},
        "data_variants": {"test": 4},  # records older than the data variant ran on test
    }
    lines = "\n".join(integrity_lines({**summary, "task_differences": {}, "audits": {}}))
    assert (
        "internet through the proxy (package-index): sklearn-digits/seed-5: 3 request(s), "
        "1 refused, 1 host(s) reached: pypi.org"
    ) in lines


def _episode(root: Path, competition: str, seed: int, integrity: dict) -> None:
    directory = root / "episodes" / competition / f"seed-{seed}"
    directory.mkdir(parents=True)
    (directory / "status.json").write_text(json.dumps({"state": "done", "attempt": 1}))
    (directory / "result.json").write_text(json.dumps({"integrity": integrity}))


def test_the_run_summary_joins_task_differences_and_the_kept_audits(tmp_path: Path) -> None:
    """A run of a competition whose task differs from MLE-bench's on purpose
    (task_differences.csv), with both audits' files as `mle-gym audit` writes them."""
    record = {"validations": 3, "network": False, "last_submission_write_step": 9,
              "hit_limit": False, "task_variant": "mlebench-obfuscated"}  # fmt: skip
    _episode(tmp_path, "invasive-species-monitoring", 0, record)
    _episode(tmp_path, "invasive-species-monitoring", 1, {**record, "validations": 0})
    _episode(tmp_path, "sklearn-digits", 0, {**record, "last_submission_write_step": 2})
    audits = tmp_path / "audits"
    audits.mkdir()
    finding = {"competition_id": "sklearn-digits", "seed": 0, "agent_files": 1, "notebooks": 2,
               "similarity": 0.82, "agent_file": "train.py", "notebook": "k.py",
               "flagged": True, "note": None}  # fmt: skip
    clean = {**finding, "competition_id": "invasive-species-monitoring", "similarity": 0.31,
             "flagged": False}  # fmt: skip
    unread = {**clean, "seed": 1, "similarity": None, "note": "no kept code (.py, .ipynb)"}
    (audits / "plagiarism.json").write_text(
        json.dumps({"threshold": 0.6, "episodes": [finding, clean, unread]})
    )
    verdicts = [
        {"competition_id": "sklearn-digits", "seed": 0, "flagged": False, "error": None},
        {"competition_id": "invasive-species-monitoring", "seed": 0, "flagged": True,
         "error": None},
        {"competition_id": "invasive-species-monitoring", "seed": 1, "flagged": False,
         "error": "ConnectionError: refused"},
    ]  # fmt: skip
    (audits / "rules.json").write_text(json.dumps({"model": "judge-1", "episodes": verdicts}))

    data = run_integrity(read_run(tmp_path))
    assert data["validations"] == {"total": 6, "mean": 2.0, "max": 3}
    assert data["last_write_step"] == {"min": 2, "max": 9}
    assert data["task_variants"] == {"mlebench-obfuscated": 3}
    assert list(data["task_differences"]) == ["invasive-species-monitoring"]
    assert data["task_differences"]["invasive-species-monitoring"]["kind"] == "public files fixed"
    assert data["audits"] == {
        "plagiarism": {
            "threshold": 0.6,
            "episodes": 3,
            "highest": 0.82,
            "flagged": ["sklearn-digits/seed-0"],
        },
        "rules": {
            "model": "judge-1",
            "episodes": 3,
            "flagged": ["invasive-species-monitoring/seed-0"],
            "errors": ["invasive-species-monitoring/seed-1"],
        },
    }
    lines = integrity_lines(data)
    assert lines[0] == (
        "integrity: 3 of 3 finished episode(s) have a record; score exposed during the "
        "episode: none"
    )
    assert (
        "task differs from MLE-bench: invasive-species-monitoring: public files fixed" in (lines[3])
    )
    assert lines[-2:] == [
        "plagiarism audit (Dolos, threshold 0.6): 3 episode(s), highest similarity 0.820, "
        "flagged: sklearn-digits/seed-0",
        "rule audit (judge-1): 3 episode(s), flagged: invasive-species-monitoring/seed-0; "
        "no verdict for invasive-species-monitoring/seed-1",
    ]
