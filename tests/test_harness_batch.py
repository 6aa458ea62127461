"""`mle-gym run ID... --seeds N --harness CMD`: the harness mode as a batch, with the run
directory, resume and report of policy batches, each episode's model calls in its own
episode folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, require_bwrap
from tests.llm_server import ScriptedLLMServer, text

pytestmark = pytest.mark.timeout(600)

#: One model call through the relay (its answer kept), then the sample as the submission.
HARNESS = (
    'python3 -c "import os, json, urllib.request as r; '
    "q = r.Request(os.environ['OPENAI_BASE_URL'] + '/chat/completions', "
    "data=json.dumps({'model': 'm', 'messages': [{'role': 'user', 'content': 'hi'}]}).encode(), "
    "headers={'Content-Type': 'application/json'}); print(r.urlopen(q).read().decode())\" && "
    "cp /home/data/sample_submission.csv /home/submission/submission.csv"
)


def _run(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mle_gym.cli", "run", *args],
        capture_output=True,
        text=True,
        timeout=500,
        cwd=REPO,
        env={**os.environ, "MLE_GYM_HOME": str(home), "COLUMNS": "200"},
    )


def test_harness_batch_runs_resumes_and_reports(digits_home: Path, tmp_path: Path) -> None:
    require_bwrap()
    run_dir = tmp_path / "run"
    command = ["sklearn-digits", "--seeds", "2", "--harness", HARNESS, "--run-dir", str(run_dir)]
    command += ["--time-limit", "120", "--api-key", "sk-secret"]
    with ScriptedLLMServer([text("hello")] * 2) as server:
        done = _run([*command, "--model-endpoint", server.url], digits_home)
        assert done.returncode == 0, done.stdout + done.stderr
        assert len(server.requests) == 2
        for seed in (0, 1):
            episode = run_dir / "episodes" / "sklearn-digits" / f"seed-{seed}"
            calls = (episode / "harness" / "model_calls.jsonl").read_text().splitlines()
            assert len(calls) == 1 and json.loads(calls[0])["status"] == 200
            result = json.loads((episode / "result.json").read_text())
            assert result["valid_submission"] and result["harness"]["model_calls"] == 1
            assert result["harness"]["exit_code"] == 0
            assert json.loads((episode / "report.json").read_text())["valid_submission"]
        # the key reached the proxy's upstream calls but no file of the run directory
        assert all("sk-secret" not in p.read_text() for p in run_dir.rglob("*") if p.is_file())
        # run again: both episodes are done, nothing runs
        again = _run([*command, "--model-endpoint", server.url], digits_home)
        assert again.returncode == 0, again.stdout + again.stderr
        assert "0 episode(s) run, 2 already done" in again.stdout
        assert len(server.requests) == 2
    report = subprocess.run(
        [sys.executable, "-m", "mle_gym.cli", "report", str(run_dir), "--json"],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )  # fmt: skip
    assert report.returncode == 0, report.stderr
    assert "sklearn-digits" in report.stdout
