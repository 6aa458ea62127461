"""`mle-gym report` on a real partial run: splits, MLE-bench's complete-seed rule and padding,
its own aggregation script on our export, the JSONL grading route, pass@k, published rows.

One run is made per test session by the real batch runner: sklearn-digits and
spaceship-titanic, scripted policy, seeds 0-2 complete; then seeds 3 and 4 are asked for and
the runner is stopped (SIGTERM) as spaceship-titanic's seed 3 starts, so that episode fails and
both seed-4 episodes never run. The scripted policy wins a medal on every graded episode
(sklearn-digits: bronze, spaceship-titanic: gold; checked below), which makes every figure
computable by hand.
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import mle_gym as mle_gym_package
from mle_gym.competitions import get_competition
from mle_gym.data import prepare
from tests.batch_support import _wait_for, mle_gym, mle_gym_env
from tests.conftest import SPACESHIP_RAW, require_bwrap
from tests.llm_server import Reply, ScriptedLLMServer, last_text, tool
from tests.prerequisites import require, require_shared

DIGITS, SPACESHIP = "sklearn-digits", "spaceship-titanic"
#: MLE-bench's per-competition report fields, in its order (mlebench/grade_helpers.py,
#: CompetitionReport.to_dict).
MLEBENCH_FIELDS = {
    "competition_id": str,
    "score": float,
    "gold_threshold": float,
    "silver_threshold": float,
    "bronze_threshold": float,
    "median_threshold": float,
    "any_medal": bool,
    "gold_medal": bool,
    "silver_medal": bool,
    "bronze_medal": bool,
    "above_median": bool,
    "submission_exists": bool,
    "valid_submission": bool,
    "is_lower_better": bool,
    "created_at": str,
    "submission_path": str,
}
#: Our figure -> the mean MLE-bench's script prints (as a percentage).
SCRIPT_METRICS = {
    "valid_submission": "valid_submissions_percentage",
    "above_median": "above_median_percentage",
    "gold_medal": "gold_medal_percentage",
    "silver_medal": "silver_medal_percentage",
    "bronze_medal": "bronze_medal_percentage",
    "any_medal": "any_medal_percentage",
}


@pytest.fixture(scope="session")
def report_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_shared("data", "spaceship-titanic", "raw")
    home = tmp_path_factory.mktemp("report-cache")
    prepare(get_competition(DIGITS), root=home)
    prepare(get_competition(SPACESHIP), SPACESHIP_RAW, root=home)
    return home


def _state(run_dir: Path, competition: str, seed: int) -> str | None:
    path = run_dir / "episodes" / competition / f"seed-{seed}" / "status.json"
    return json.loads(path.read_text())["state"] if path.is_file() else None


@pytest.fixture(scope="session")
def partial_run(report_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_bwrap()
    run_dir = tmp_path_factory.mktemp("report-run") / "run"
    common = [DIGITS, SPACESHIP, "--policy", "scripted", "--run-dir", str(run_dir)]
    mle_gym("run", *common, "--seeds", "3", "--workers", "2", home=report_home)
    runner = subprocess.Popen(
        ["mle-gym", "run", *common, "--seed", "3", "--seeds", "2", "--workers", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=mle_gym_env(report_home),
    )
    try:
        _wait_for(
            lambda: _state(run_dir, SPACESHIP, 3) == "running", 300, "spaceship seed 3 to start"
        )
        runner.send_signal(signal.SIGTERM)
        runner.wait(120)
    finally:
        if runner.poll() is None:
            runner.kill()
    states = {(c, s): _state(run_dir, c, s) for c in (DIGITS, SPACESHIP) for s in range(5)}
    assert states == {
        **{(c, s): "done" for c in (DIGITS, SPACESHIP) for s in range(3)},
        (DIGITS, 3): "done",
        (SPACESHIP, 3): "failed",
        (DIGITS, 4): None,
        (SPACESHIP, 4): None,
    }
    for competition, medal in ((DIGITS, "bronze_medal"), (SPACESHIP, "gold_medal")):
        for seed in range(4 if competition == DIGITS else 3):
            path = run_dir / "episodes" / competition / f"seed-{seed}" / "report.json"
            report = json.loads(path.read_text())
            assert report["valid_submission"] and report["above_median"] and report[medal]
    return run_dir


def _report(run_dir: Path, home: Path, *args: str) -> dict:
    return json.loads(mle_gym("report", str(run_dir), "--json", *args, home=home).stdout)


def _sem(values: list[float]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1) / len(values))


def _norm(run_dir: Path, competition: str) -> float:
    """The scripted policy's normalised score (the same on every seed)."""
    path = run_dir / "episodes" / competition / "seed-0" / "report.json"
    return json.loads(path.read_text())["normalized_score"]


def test_complete_seeds_and_padding_give_the_hand_computed_figures(
    partial_run: Path, report_home: Path
) -> None:
    strict = _report(partial_run, report_home)
    assert strict["rule"] == "complete-seeds"
    assert strict["episodes"] == {
        "done": 7,
        "failed": 1,
        "running": 0,
        "missing": 2,
        "competitions": 2,
    }
    # overall: seeds 0-2 complete (every figure 1 but silver), 3 and 4 dropped with reasons
    overall = strict["overall"]
    assert overall["seeds"] == 3 and overall["seed_accounting"] == {
        "complete": [0, 1, 2],
        "padded": {},
        "dropped": {"3": {SPACESHIP: "failed"}, "4": {DIGITS: "missing", SPACESHIP: "missing"}},
    }
    assert overall["any_medal"] == {"mean": 1.0, "sem": 0.0, "n": 3}
    assert overall["gold_medal"]["mean"] == pytest.approx(0.5)
    assert overall["silver_medal"]["mean"] == 0.0
    # the demo row (sklearn-digits) has 4 complete seeds, dev (spaceship-titanic) 3
    assert strict["splits"]["demo"]["seeds"] == 4
    assert strict["splits"]["dev"]["seeds"] == 3
    assert strict["splits"]["dev"]["split_size"] == 7
    assert strict["competitions"][SPACESHIP]["not_graded"] == {"failed": 1, "missing": 1}

    padded = _report(partial_run, report_home, "--pad-incomplete")
    assert padded["rule"] == "pad-incomplete"
    overall = padded["overall"]
    assert overall["seed_accounting"]["padded"] == strict["overall"]["seed_accounting"]["dropped"]
    # per seed any medal: 1, 1, 1, (1 + 0) / 2, 0 -> mean 0.7, sem 0.2
    assert overall["seeds"] == 5
    assert overall["any_medal"]["mean"] == pytest.approx(0.7)
    assert overall["any_medal"]["sem"] == pytest.approx(0.2)
    # gold is spaceship-titanic's: 0.5, 0.5, 0.5, 0, 0
    assert overall["gold_medal"]["mean"] == pytest.approx(0.3)
    assert overall["gold_medal"]["sem"] == pytest.approx(_sem([0.5, 0.5, 0.5, 0, 0]))
    assert padded["splits"]["dev"]["any_medal"]["mean"] == pytest.approx(0.6)
    assert padded["splits"]["demo"]["any_medal"]["mean"] == pytest.approx(0.8)
    norm = (_norm(partial_run, DIGITS) + _norm(partial_run, SPACESHIP)) / 2
    per_seed = [norm] * 3 + [_norm(partial_run, DIGITS) / 2, 0.0]
    assert overall["normalized_score"]["mean"] == pytest.approx(sum(per_seed) / 5)
    assert overall["normalized_score"]["sem"] == pytest.approx(_sem(per_seed))

    table = mle_gym("report", str(partial_run), home=report_home).stdout
    assert "rule: complete seeds only (MLE-bench's leaderboard rule)" in table
    assert (
        "overall: 3 complete seed(s), 2 dropped (seed 3: spaceship-titanic failed; "
        "seed 4: sklearn-digits missing, spaceship-titanic missing)"
    ) in " ".join(table.split())
    assert "dev (1 of 7 competitions, PARTIAL split)" in table
    table = mle_gym("report", str(partial_run), "--pad-incomplete", home=report_home).stdout
    assert "overall: 3 complete seed(s), 2 padded" in " ".join(table.split())


def _mlebench_script(report: Path, split_file: Path, *extra: str) -> dict:
    """MLE-bench's own aggregation, run from the user's copy of MLE-bench."""
    script = require_shared("mlebench", "experiments", "aggregate_grading_reports.py")
    out = subprocess.run(
        [
            sys.executable,
            str(script),
            "--grading-reports",
            str(report),
            "--split",
            str(split_file),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    return json.loads(out.split("Average metrics across seeds:", 1)[1])


@pytest.mark.parametrize("pad", [False, True], ids=["complete-seeds", "pad-incomplete"])
@pytest.mark.parametrize("split", [None, "dev", "demo"])
def test_mlebench_aggregation_script_gives_our_figures_from_our_export(
    partial_run: Path, report_home: Path, tmp_path: Path, split: str | None, pad: bool
) -> None:
    rule = ["--pad-incomplete"] if pad else []
    ours = _report(partial_run, report_home, *rule)
    row = ours["overall"] if split is None else ours["splits"][split]
    args = ["--format", "mlebench", *rule, *(["--split", split] if split else [])]
    export = mle_gym("report", str(partial_run), *args, home=report_home).stdout
    report = tmp_path / "grading_report.json"
    report.write_text(export)
    split_file = tmp_path / "split.txt"
    split_file.write_text("\n".join(row["competitions"]) + "\n")
    for script_args in ([], ["--pad-missing"]):  # the export has complete seeds: both agree
        theirs = _mlebench_script(report, split_file, *script_args)
        assert theirs["num_seeds_averaged"] == row["seeds"]
        assert theirs["num_competitions_per_seed"] == len(row["competitions"])
        for figure, metric in SCRIPT_METRICS.items():
            assert theirs["metrics"][metric]["mean"] == pytest.approx(100 * row[figure]["mean"])
            assert theirs["metrics"][metric]["standard_error"] == pytest.approx(
                100 * (row[figure]["sem"] or 0.0), abs=1e-9
            )


def test_export_has_mlebench_fields_and_the_jsonl_route_grades_the_same(
    partial_run: Path, report_home: Path, tmp_path: Path
) -> None:
    export = json.loads(
        mle_gym("report", str(partial_run), "--format", "mlebench", home=report_home).stdout
    )
    reports = export["competition_reports"]
    # complete seeds 0-2, seed by seed, every competition once per seed
    assert [(r["competition_id"], Path(r["submission_path"]).parent.name) for r in reports] == [
        (c, f"seed-{s}") for s in range(3) for c in (DIGITS, SPACESHIP)
    ]
    for report in reports:
        assert list(report) == list(MLEBENCH_FIELDS)
        for name, kind in MLEBENCH_FIELDS.items():
            assert isinstance(report[name], kind), name
    claim = export.pop("disclosure")  # the leaderboard's statement, from integrity records
    assert claim["ticked"] and claim["evidence"]["episodes"] == 6, claim
    assert {k: v for k, v in export.items() if k != "competition_reports"} == {
        "total_runs": 6,
        "total_runs_with_submissions": 6,
        "total_valid_submissions": 6,
        "total_medals": 6,
        "total_gold_medals": 3,
        "total_silver_medals": 0,
        "total_bronze_medals": 3,
        "total_above_median": 6,
    }

    submissions = tmp_path / "submissions.jsonl"
    submissions.write_text(
        "".join(
            json.dumps(
                {"competition_id": r["competition_id"], "submission_path": r["submission_path"]}
            )
            + "\n"
            for r in reports
        )
    )
    out = tmp_path / "graded"
    mle_gym("grade", "--submissions", str(submissions), "--output-dir", str(out), home=report_home)
    (written,) = out.glob("*_grading_report.json")
    graded = json.loads(written.read_text())

    def without_time(report: dict) -> dict:
        return {
            **report,
            "competition_reports": [
                {k: v for k, v in r.items() if k != "created_at"}
                for r in report["competition_reports"]
            ],
        }

    assert without_time(graded) == without_time(export)


def test_grade_submissions_takes_mlebench_input_rules_and_names_bad_lines(
    report_home: Path, tmp_path: Path
) -> None:
    sample = report_home / SPACESHIP / "public" / "sample_submission.csv"
    not_csv = tmp_path / "submission.txt"
    not_csv.write_text(sample.read_text())
    submissions = tmp_path / "submissions.jsonl"
    submissions.write_text(
        "# a comment line, skipped as MLE-bench skips it\n"
        + json.dumps({"competition_id": SPACESHIP, "submission_path": str(sample)})
        + "\n\n"
        + json.dumps({"competition_id": SPACESHIP, "submission_path": str(not_csv)})
        + "\n"
        + json.dumps({"competition_id": SPACESHIP, "submission_path": str(tmp_path / "none.csv")})
        + "\n"
    )
    out = tmp_path / "out"
    result = mle_gym(
        "grade",
        "--submissions",
        str(submissions),
        "--output-dir",
        str(out),
        "--json",
        home=report_home,
    )
    totals = json.loads(result.stdout)
    assert totals["total_runs"] == 3
    assert totals["total_runs_with_submissions"] == 1  # not a .csv, or absent: no submission
    assert totals["total_valid_submissions"] == 1 and totals["total_medals"] == 0
    (written,) = out.glob("*_grading_report.json")
    first = json.loads(written.read_text())["competition_reports"][0]
    assert first["score"] == pytest.approx(get_competition(SPACESHIP).sample_score)

    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"competition_id": SPACESHIP}) + "\n")
    result = mle_gym("grade", "--submissions", str(bad), home=report_home, ok=False)
    assert result.returncode == 2 and f"{bad}:1" in result.stderr
    assert "submission_path" in result.stderr


def test_pass_at_k_on_the_run_and_k_beyond_the_seeds(partial_run: Path, report_home: Path) -> None:
    data = _report(partial_run, report_home, "--pass-k", "1,2,4", "--pad-incomplete")
    table = data["pass_at_k"]
    assert table["k"] == [1, 2, 4]
    # padded: spaceship-titanic gold on 3 of 5 seeds, sklearn-digits bronze on 4 of 5
    spaceship, digits = table["competitions"][SPACESHIP], table["competitions"][DIGITS]
    assert [spaceship[str(k)]["gold_medal"] for k in (1, 2, 4)] == pytest.approx([0.6, 0.9, 1.0])
    assert [digits[str(k)]["bronze_medal"] for k in (1, 2, 4)] == pytest.approx([0.8, 1.0, 1.0])
    assert digits["1"]["gold_medal"] == 0.0
    assert spaceship["1"]["best_normalized_score"] == pytest.approx(
        0.6 * _norm(partial_run, SPACESHIP)
    )
    # best of 2 is 0 only when both draws are padded (1 pair of 10)
    assert spaceship["2"]["best_normalized_score"] == pytest.approx(
        0.9 * _norm(partial_run, SPACESHIP)
    )
    assert table["splits"]["overall"]["by_k"]["1"]["any_medal"] == pytest.approx(0.7)

    refused = mle_gym("report", str(partial_run), "--pass-k", "4", home=report_home, ok=False)
    assert refused.returncode == 2
    assert "spaceship-titanic has 3 counted episode(s)" in " ".join(refused.stderr.split())
    shown = mle_gym("report", str(partial_run), "--pass-k", "1,3", home=report_home).stdout
    assert "pass@k" in shown and "best-of-k" in shown


def test_compare_published_beside_the_run(partial_run: Path, report_home: Path) -> None:
    data = _report(partial_run, report_home, "--compare", "published")["published"]
    # the env's default budget, 24 h, as recorded: only the published 24 h rows are shown
    assert data["hours"] == 24.0 and data["run"] == {}
    assert {row["hours"] for row in data["published"]} == {24.0}
    assert "published rows with the run's budget of 24 h per episode" in data["notes"][0]
    assert any("no competition of MLE-bench's Low/Medium/High splits" in n for n in data["notes"])
    assert data["leaderboard"] == "507f92e"
    shown = " ".join(
        mle_gym(
            "report", str(partial_run), "--compare", "published", home=report_home
        ).stdout.split()
    )
    assert "this run beside MLE-bench's published rows" in shown
    assert "17.1 ± 0.6" in shown  # AIDE o1-preview on the leaderboard, All
    assert "AIBuildAI" in shown and "additional submissions" in shown
    assert "paused new leaderboard submissions on 2026-04-24" in shown
    old = _report(partial_run, report_home, "--compare", "published", "--leaderboard", "783b15a")
    assert {row["table"] for row in old["published"]["published"]} == {
        "paper-table-2",
        "leaderboard-783b15a",
    }


def test_cost_and_provenance_are_recorded_per_run_and_episode(
    partial_run: Path, report_home: Path
) -> None:
    data = _report(partial_run, report_home)
    cost = data["cost"]
    # every attempted episode (7 graded, 1 failed); the scripted policy calls no model
    assert cost["total"]["episodes"] == 8 and cost["total"]["model_calls"] == 0
    seconds = 0.0
    for path in partial_run.glob("episodes/*/seed-*/status.json"):
        result = path.parent / "result.json"
        if result.is_file():
            seconds += json.loads(result.read_text())["seconds"]
        else:
            status = json.loads(path.read_text())
            seconds += round(status["finished_at"] - status["started_at"], 3)
    assert cost["total"]["seconds"] == pytest.approx(seconds)
    assert cost["competitions"][DIGITS]["episodes"] == 4

    provenance = data["provenance"]
    invocations = provenance["invocations"]
    assert len(invocations) == 2  # the run, then the resume that was stopped
    last = invocations[-1]
    assert last["software"]["mle_gym"] == mle_gym_package.__version__
    assert last["software"]["python"] == platform.python_version()
    for name in ("pandas", "numpy", "scikit-learn", "pyarrow"):
        assert last["software"]["libraries"][name] == metadata.version(name)
    assert last["host"]["hostname"] == socket.gethostname()
    assert last["host"]["cpu_count"] == os.cpu_count()
    assert last["env"] == {
        "backend": "local",
        "time_limit": 24 * 3600.0,
        "max_steps": 1000,
        "step_timeout": 3600.0,
        "data": "test",
        "network": False,
        "network_policy": None,
        "reward_mode": "normalized",
    }
    assert last["policy"] == {"name": "scripted", "model": None, "endpoint_host": None}
    episodes = provenance["episodes"]
    assert episodes["recorded"] >= 7 and episodes["checksums_checked"] == episodes["recorded"]
    assert episodes["hosts"] == [socket.gethostname()] and episodes["images"] == []
    shown = " ".join(mle_gym("report", str(partial_run), home=report_home).stdout.split())
    assert f"provenance: mle_gym {mle_gym_package.__version__}" in shown
    assert f"prepared data checksums verified for {episodes['recorded']} of" in shown
    assert "cost (every episode attempted)" in shown


def _copy_then_submit(request: dict) -> Reply:
    """Copy the sample submission, then submit: two model calls per episode."""
    if len(request["messages"]) <= 2:
        return tool(
            "bash", command="cp /home/data/sample_submission.csv /home/submission/submission.csv"
        )
    return tool("submit")


def test_llm_run_sums_tokens_calls_and_cost_and_keeps_no_key(
    report_home: Path, tmp_path: Path
) -> None:
    require_bwrap()
    run_dir = tmp_path / "llm-run"
    secret = "sk-never-written-anywhere"
    with ScriptedLLMServer(_copy_then_submit, cost_per_call=0.25) as server:
        mle_gym(
            "run",
            DIGITS,
            "--policy",
            "llm",
            "--base-url",
            server.url,
            "--model",
            "scripted-model",
            "--api-key",
            secret,
            "--seeds",
            "2",
            "--run-dir",
            str(run_dir),
            home=report_home,
        )
    assert len(server.requests) == 4
    data = _report(run_dir, report_home)
    total = data["cost"]["total"]
    assert total["model_calls"] == 4 and total["cost_usd"] == pytest.approx(1.0)
    sent = sum(len(json.dumps(r["messages"])) // 4 for r in server.requests)
    assert total["prompt_tokens"] == sent and total["completion_tokens"] > 0
    episodes = data["cost"]["episodes"]
    assert sorted(episodes) == [f"{DIGITS}/seed-0", f"{DIGITS}/seed-1"]
    assert sum(e["prompt_tokens"] for e in episodes.values()) == sent
    assert data["provenance"]["episodes"]["models"] == [
        {"model": "scripted-model", "endpoint_host": "127.0.0.1"}
    ]
    assert data["provenance"]["invocations"][0]["policy"]["endpoint_host"] == "127.0.0.1"
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert secret not in path.read_text(errors="replace"), path
    shown = mle_gym("report", str(run_dir), home=report_home).stdout
    assert "scripted-model" in shown


def test_regrade_restores_the_installed_graders_verdict_and_keeps_the_old(
    partial_run: Path, report_home: Path, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(partial_run, run_dir)
    episode = run_dir / "episodes" / SPACESHIP / "seed-0"
    true = json.loads((episode / "report.json").read_text())
    # as an older grader might have written it: no medal, a lower score
    stale = {**true, "score": 0.5, "gold_medal": False, "any_medal": False}
    (episode / "report.json").write_text(json.dumps(stale))
    before = _report(run_dir, report_home)["competitions"][SPACESHIP]["any_medal"]["mean"]
    assert before == pytest.approx(2 / 3)

    shown = " ".join(mle_gym("regrade", str(run_dir), home=report_home).stdout.split())
    assert f"regraded {SPACESHIP}/seed-0: score 0.5 -> {true['score']!r}" in shown
    assert "gold_medal False -> True" in shown and "any_medal False -> True" in shown
    assert "regrade: 1 verdict(s) changed, 6 unchanged, 1 not regraded" in shown
    (kept,) = episode.glob("report.before-*.json")
    assert json.loads(kept.read_text()) == stale
    regraded = json.loads((episode / "report.json").read_text())
    assert {k: v for k, v in regraded.items() if k != "created_at"} == {
        k: v for k, v in true.items() if k != "created_at"
    }
    (log,) = run_dir.glob("regrade-*.json")
    assert json.loads(log.read_text())["skipped"] == {f"{SPACESHIP}/seed-3": "not graded (failed)"}
    after = json.loads((run_dir / "report.json").read_text())
    assert after["competitions"][SPACESHIP]["any_medal"]["mean"] == 1.0
    # a second regrade finds nothing to change; `report --regrade` still regrades, with a note
    old_way = mle_gym("report", str(run_dir), "--json", "--regrade", home=report_home)
    again = json.loads(old_way.stdout)["regrade"]
    assert again["changed"] == [] and again["unchanged"] == 7
    (note,) = old_way.stderr.splitlines()
    assert note.startswith("note: `mle-gym report --regrade` is deprecated"), note
    assert f"mle-gym regrade {run_dir}" in note, note


def _pixels_of(image: object, colour: str) -> int:
    import numpy as np

    rgb = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    return int((np.asarray(image)[:, :, :3] == rgb).all(axis=2).sum())


def test_html_report_is_one_page_that_renders_its_figures_offline_in_chromium(
    partial_run: Path, report_home: Path, tmp_path: Path
) -> None:
    from PIL import Image

    from mle_gym.analysis import html as page

    chromium = shutil.which("chromium")
    require(chromium is not None, "Chromium is not installed: bash .ci/setup.d/report.sh")
    out = tmp_path / "report.html"
    # the curves at 1 s (no episode had written its submission yet: each snapshot was
    # taken after the scripted policy's third step, seconds in) and at 1 h (the final files)
    mle_gym("report", str(partial_run), "--html", str(out), "--times", "1s,1h", home=report_home)
    text = out.read_text()
    # self-contained: no script, stylesheet, image or font is fetched from anywhere
    assert not re.search(r"<script|<link|<img|<iframe|src=|@import|url\((?!#)", text)
    assert [m for m in re.findall(r'id="([a-z-]+)"><figcaption', text)] == [
        "rates",
        "published",
        "scores",
        "pass-k",
        "over-time",
    ]
    assert text.count("<svg") == 5 and "All 17.1 ± 0.6" in text  # AIDE o1-preview, leaderboard
    assert "AIDE / o1-preview" in text and "provenance: mle_gym" in text
    assert "overall: 3 complete seed(s), 2 dropped" in text
    # over time, hand-computed: at 1 s every counted episode (3 complete seeds of both
    # competitions) has no submission: 0 medals, score 0; at 1 h each has its final one:
    # a medal each, and per seed the mean of the two competitions' normalised scores
    norm = (_norm(partial_run, DIGITS) + _norm(partial_run, SPACESHIP)) / 2
    cells = re.findall(r"<tr><td>([\d.e-]+)</td><th>overall</th><td>(\d+)</td><td>(.*?)</td>"
                       r"<td>(.*?)</td></tr>", text)  # fmt: skip
    assert cells == [
        (f"{1 / 3600:g}", "3", "0.0 ± 0.0", "0.000 ± 0.000"),
        ("1", "3", "100.0 ± 0.0", f"{norm:.3f} ± 0.000"),
    ]
    assert "have no snapshots" not in text
    integrity = text[text.index("<h2>Integrity</h2>") :]
    assert "7 of 7 finished episode(s) have a record" in integrity
    assert "score exposed during the episode: none" in integrity

    shot = tmp_path / "shot.png"
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--host-resolver-rules=MAP * ~NOTFOUND",  # no network: the page needs none
            "--window-size=1300,3200",
            f"--screenshot={shot}",
            out.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    image = Image.open(shot).convert("RGB")
    # each figure's own colour is on screen: the browser drew the bars, markers and curve
    assert _pixels_of(image, page.RATE_COLOURS["valid_submission"]) > 500  # medal-rate bars
    assert min(_pixels_of(image, c) for _, c, _ in page.SPLIT_MARKS.values()) > 30  # published
    assert _pixels_of(image, page.SCORE_COLOUR) > 30  # normalised-score markers
    assert _pixels_of(image, page.MEDAL_COLOURS["gold"]) > 30  # medal lines
    assert max(_pixels_of(image, c) for c in page.PASS_COLOURS[:3]) > 30  # pass@k curve
    assert min(_pixels_of(image, c) for c in page.TIME_COLOURS[:3]) > 30  # over-time curves


@pytest.mark.docker
@pytest.mark.timeout(600)
def test_docker_episodes_record_the_agent_images_id_and_digests(
    docker_engine, digits_home: Path, tmp_path: Path
) -> None:
    run_dir = tmp_path / "docker-run"
    mle_gym(
        "run",
        DIGITS,
        "--backend",
        "docker",
        "--seeds",
        "1",
        "--run-dir",
        str(run_dir),
        home=digits_home,
    )
    recorded = json.loads(
        (run_dir / "episodes" / DIGITS / "seed-0" / "provenance.json").read_text()
    )["image"]
    image = docker_engine.images.get(recorded["tag"])
    assert recorded["id"] == image.id and recorded["digests"] == image.attrs["RepoDigests"]
    data = _report(run_dir, digits_home)["provenance"]
    assert data["episodes"]["images"] == [image.id]
    assert data["invocations"][0]["env"]["backend"] == "docker"


def _judge(request: dict) -> Reply:
    """The scripted judge: a violation in the spaceship-titanic episodes (their steps name
    its target column), none in sklearn-digits'."""
    from mle_gym.analysis.rules import QUESTIONS

    text = last_text(request)
    answers = {k: {"answer": "no", "evidence": ""} for k in QUESTIONS}
    if "Transported" in text:
        answers["hand_labelled"] = {"answer": "yes", "evidence": "a test answer"}
    return Reply(content=json.dumps(answers))


def test_report_summarises_integrity_task_differences_and_audits(
    partial_run: Path, report_home: Path, tmp_path: Path
) -> None:
    from mle_gym.analysis.plagiarism import DolosUnavailable, check_dolos
    from tests.test_audit_plagiarism import INDEPENDENT

    run_dir = tmp_path / "run"
    shutil.copytree(partial_run, run_dir)
    before = _report(run_dir, report_home)["integrity"]
    # the scripted policy validates once and writes its submission at step 3, in every
    # episode; none ran with the network or hit a limit, nothing was graded mid-episode
    assert before == {
        "episodes": 7,
        "without_record": 0,
        "score_exposed": [],
        "validations": {"total": 7, "mean": 1.0, "max": 1},
        "metric_runs_for_validity": 0,
        "network": 0,
        "network_use": {},
        "hit_limit": [],
        "resumed": {},
        "last_write_step": {"min": 3, "max": 3},
        "no_submission_written": 0,
        "task_variants": {"default": 7},
        "data_variants": {"test": 7},
        "task_differences": {},  # neither competition differs from MLE-bench on purpose
        "audits": {},
    }
    table = " ".join(mle_gym("report", str(run_dir), home=report_home).stdout.split())
    assert (
        "validations asked: 7 (mean 1.0, max 1), metric runs for validity: 0; network on in 0"
        in table
    )
    assert "submission last written at step 3..3, never in 0; sandbox limit hit: none" in table
    assert "audits: none run" in table

    # the real audits: the rules judge (scripted server) flags spaceship-titanic's episodes;
    # Dolos flags sklearn-digits' (its notebooks hold a copy of the agent's script)
    with ScriptedLLMServer(_judge) as server:
        judged = mle_gym("audit", "rules", str(run_dir), "--model-endpoint", server.url,
                         "--model", "judge-1", home=report_home, ok=False)  # fmt: skip
    assert judged.returncode == 1, judged.stderr  # 1: an episode is flagged
    try:
        check_dolos()
        kernels = tmp_path / "kernels"
        (kernels / DIGITS).mkdir(parents=True)
        (kernels / SPACESHIP).mkdir()
        shutil.copy(run_dir / "episodes" / DIGITS / "seed-0" / "code" / "train.py",
                    kernels / DIGITS / "copied.py")  # fmt: skip
        (kernels / SPACESHIP / "independent.py").write_text(INDEPENDENT)
        audited = mle_gym("audit", "plagiarism", str(run_dir), "--kernels", str(kernels),
                          home=report_home, ok=False)  # fmt: skip
        assert audited.returncode == 1, audited.stderr
        dolos = True
    except DolosUnavailable:
        dolos = os.environ.get("CI") == "true"  # CI installs it: there it must run
        assert not dolos, "Dolos is not installed: bash .ci/setup.d/dolos.sh"
    data = _report(run_dir, report_home)
    spaceship = [f"{SPACESHIP}/seed-{s}" for s in range(3)]
    digits = [f"{DIGITS}/seed-{s}" for s in range(4)]
    audits = data["integrity"]["audits"]
    assert audits["rules"] == {"model": "judge-1", "episodes": 7, "flagged": spaceship,
                               "errors": []}  # fmt: skip
    table = " ".join(mle_gym("report", str(run_dir), home=report_home).stdout.split())
    assert f"rule audit (judge-1): 7 episode(s), flagged: {', '.join(spaceship)}" in table
    if dolos:
        plagiarism = audits["plagiarism"]
        assert plagiarism["episodes"] == 7 and plagiarism["flagged"] == digits
        assert plagiarism["highest"] == 1.0 and plagiarism["threshold"] == 0.6
        assert f"flagged: {', '.join(digits)}" in table


def test_two_runs_side_by_side_default_and_obfuscated_task(
    partial_run: Path, report_home: Path, tmp_path: Path
) -> None:
    """The obfuscation experiment's report: the partial run (mle_gym's own statement) beside
    one scripted spaceship-titanic episode given MLE-bench's obfuscated instructions."""
    checkout = require_shared("mlebench", "environment").parent
    other = tmp_path / "obfuscated"
    mle_gym("run", SPACESHIP, "--policy", "scripted", "--task", "mlebench-obfuscated",
            "--mlebench-dir", str(checkout), "--seeds", "1", "--run-dir", str(other),
            home=report_home)  # fmt: skip
    both = mle_gym("report", str(partial_run), str(other), "--json", home=report_home)
    data = json.loads(both.stdout)
    first, second = data["runs"]
    assert data["rule"] == "complete-seeds"
    assert (first["run_dir"], first["task_variant"]) == (str(partial_run), "default")
    assert (second["run_dir"], second["task_variant"]) == (str(other), "mlebench-obfuscated")
    # the scripted policy ignores the prompt: gold on spaceship-titanic either way; the
    # partial run's dev row has 3 complete seeds, the other 1 (so no standard error)
    assert first["splits"]["dev"]["any_medal"] == {"mean": 1.0, "sem": 0.0, "n": 3}
    assert second["splits"]["dev"]["any_medal"] == {"mean": 1.0, "sem": None, "n": 1}
    assert second["splits"]["dev"]["normalized_score"]["mean"] == pytest.approx(
        _norm(partial_run, SPACESHIP)
    )
    assert first["overall"]["any_medal"]["mean"] == 1.0 and "demo" not in second["splits"]
    # the episode itself recorded the variant it ran (its integrity record)
    assert _report(other, report_home)["integrity"]["task_variants"] == {"mlebench-obfuscated": 1}
    table = mle_gym("report", str(partial_run), str(other), home=report_home).stdout
    flat = " ".join(table.split())
    assert "obfuscated (mlebench-obfuscated): dev (1 of 7 competitions, PARTIAL split): 1 " \
        "complete seed(s)" in flat  # fmt: skip
    rows = [" ".join(line.strip("│┃ ").replace("│", " ").split()) for line in table.splitlines()]
    dev = rows.index("dev seeds 3 1")
    assert rows[dev + 3] == "any medal % 100.0 ± 0.0 100.0"
    # overall: the partial run's 3 complete seeds, the other's one episode
    norm = (_norm(partial_run, DIGITS) + _norm(partial_run, SPACESHIP)) / 2
    overall = rows.index("overall seeds 3 1")
    single = _norm(partial_run, SPACESHIP)
    assert rows[overall + 4] == f"normalised score {norm:.3f} ± 0.000 {single:.3f}"
    refused = mle_gym("report", str(partial_run), str(other), "--html", "x.html",
                      home=report_home, ok=False)  # fmt: skip
    assert refused.returncode != 0 and "--html: reads one run" in refused.stdout + refused.stderr


def test_parity_with_mlebench_harness_side_by_side(
    partial_run: Path, report_home: Path, tmp_path: Path
) -> None:
    """MLE-bench's run group (as its run_agent.py lays one out) holding the same submissions
    as ours: the three columns agree; a grade of MLE-bench's that differs is named."""
    group = tmp_path / "2026-01-01T00-00-00-GMT_run-group_dummy"
    runs = []
    for competition in (DIGITS, SPACESHIP):
        for seed in range(3):
            episode = partial_run / "episodes" / competition / f"seed-{seed}"
            kept = episode / json.loads((episode / "result.json").read_text())["submission"]
            name = f"{competition}_{seed:08x}"
            (group / name / "submission").mkdir(parents=True)
            shutil.copyfile(kept, group / name / "submission" / "submission.csv")
            runs.append(name)
    (group / "metadata.json").write_text(json.dumps({"runs": runs}))
    # MLE-bench's `mlebench grade` output, here written by our grade of the same JSONL, whose
    # format and figures equal MLE-bench's (test_export_has_mlebench_fields...)
    jsonl = group / "submission.jsonl"
    jsonl.write_text(
        "".join(
            json.dumps(
                {
                    "competition_id": name.split("_")[0],
                    "submission_path": str(group / name / "submission" / "submission.csv"),
                }
            )
            + "\n"
            for name in runs
        )
    )
    mle_gym("grade", "--submissions", str(jsonl), "--output-dir", str(group), home=report_home)
    data = _report(partial_run, report_home, "--compare-mlebench-run", str(group))
    parity = data["mlebench_parity"]
    assert parity["agreement"] == {"paired": 6, "agree": 6, "differing": []}
    for competition in (DIGITS, SPACESHIP):
        columns = parity["competitions"][competition]
        assert columns["mlebench_own"] == columns["mle_gym_theirs"]
        assert columns["mlebench_own"]["episodes"] == 3
        assert columns["mlebench_own"]["any_medal"]["mean"] == 1.0
    assert parity["all"]["mle_gym_theirs"]["episodes"] == 6

    (report_file,) = group.glob("*_grading_report.json")
    theirs = json.loads(report_file.read_text())
    theirs["competition_reports"][0]["score"] += 0.01
    report_file.write_text(json.dumps(theirs))
    shown = mle_gym(
        "report", str(partial_run), "--compare-mlebench-run", str(jsonl), home=report_home
    ).stdout
    flat = " ".join(shown.split())
    assert "parity with MLE-bench's harness" in flat
    assert "5 of 6 agree on score, validity and medals" in flat
    assert "differs:" in flat and "MLE-bench" in flat
