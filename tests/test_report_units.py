"""The report's arithmetic on small hand-made cases: split rows and the complete-seed rule,
pass@k and best-of-k (against hand-computed values and brute-force enumeration), and the
published results shipped as data."""

from __future__ import annotations

import csv
import itertools
import math
import random
import sys
from pathlib import Path

import pytest

from mle_gym.analysis.aggregate import PAD_INCOMPLETE, aggregate
from mle_gym.analysis.passk import best_of_k, parse_ks, pass_at_k, pass_table
from mle_gym.analysis.published import compare_published, published_rows, task_differences
from mle_gym.analysis.render import published_table
from mle_gym.analysis.splits import split_members
from mle_gym.runs.run import Run
from mle_gym.runs.store import EpisodeRecord
from tests.prerequisites import require_shared

# Real ids of each split (no data needed: only their split is read).
LOW = ("aerial-cactus-identification", "spooky-author-identification")
MEDIUM = ("AI4Code",)
HIGH = ("bms-molecular-translation",)


def _report(medal: str | None = None, norm: float = 0.5) -> dict:
    flags = {f"{m}_medal": m == medal for m in ("gold", "silver", "bronze")}
    return {
        "valid_submission": True,
        "above_median": medal is not None,
        "any_medal": medal is not None,
        "normalized_score": norm,
        **flags,
    }


def _run(episodes: dict[tuple[str, int], dict | str], seeds: range, **settings) -> Run:
    """A run from (competition, seed) -> report (graded) or a state ("failed", "running")."""
    records = tuple(
        EpisodeRecord(c, s, "done", 1, value, None, None)
        if isinstance(value, dict)
        else EpisodeRecord(c, s, value, 1, None, None, "boom")
        for (c, s), value in episodes.items()
    )
    competitions = tuple(sorted({c for c, _ in episodes}))
    return Run(Path("."), competitions, tuple(seeds), records, settings)


def test_split_rows_follow_mlebench_names_and_the_complete_seed_rule() -> None:
    episodes: dict = {}
    for seed in range(3):
        episodes[(LOW[0], seed)] = _report("gold")
        episodes[(LOW[1], seed)] = _report(None)
        episodes[(MEDIUM[0], seed)] = _report("bronze" if seed == 0 else None)
        episodes[(HIGH[0], seed)] = _report(None)
    episodes[(LOW[1], 2)] = "failed"
    del episodes[(HIGH[0], 1)]  # never ran
    run = _run(episodes, range(3))
    summary = aggregate(run)
    rows = {row.name: row for row in summary.splits}
    assert list(rows) == ["Low", "Medium", "High", "All", "overall"]
    assert rows["Low"].split_size == 22 and rows["Medium"].split_size == 38
    assert rows["High"].split_size == 15 and rows["All"].split_size == 75
    assert rows["Low"].competitions == LOW
    # Low: seeds 0, 1 complete (seed 2: spooky failed); any medal 1/2 on each
    assert rows["Low"].seeds == 2 and rows["Low"].figures["any_medal"].mean == 0.5
    assert rows["Low"].account.dropped == {2: {LOW[1]: "failed"}}
    # Medium: 3 seeds, medal 1, 0, 0
    medium = rows["Medium"].figures["any_medal"]
    assert (medium.mean, medium.n) == (pytest.approx(1 / 3), 3)
    assert medium.sem == pytest.approx(1 / 3)  # sqrt(var 1/3 over 3 seeds)
    # High: seed 1 missing
    assert rows["High"].account.dropped == {1: {HIGH[0]: "missing"}}
    # All: only seed 0 complete: (1 + 0 + 1 + 0) / 4
    assert rows["All"].account.complete == (0,) and rows["All"].seeds == 1
    assert (
        rows["All"].figures["any_medal"].mean == 0.5
        and rows["All"].figures["any_medal"].sem is None
    )

    padded = {row.name: row for row in aggregate(run, PAD_INCOMPLETE).splits}
    # All padded: seed 0 -> 2/4, seed 1 -> 1/4 (high missing = 0), seed 2 -> 1/4 (spooky failed)
    per_seed = [0.5, 0.25, 0.25]
    figure = padded["All"].figures["any_medal"]
    assert figure.mean == pytest.approx(sum(per_seed) / 3)
    mean = sum(per_seed) / 3
    sem = math.sqrt(sum((v - mean) ** 2 for v in per_seed) / 2 / 3)
    assert figure.sem == pytest.approx(sem)
    assert padded["All"].account.padded == {1: {HIGH[0]: "missing"}, 2: {LOW[1]: "failed"}}


def test_split_all_is_the_75_of_lite_medium_and_high() -> None:
    members = split_members("all")
    assert len(members) == 75
    assert set(members) == set(split_members("lite")) | set(split_members("medium")) | set(
        split_members("high")
    )
    assert not set(members) & set(split_members("dev"))


def test_pass_at_k_hand_computed() -> None:
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)  # C(3,2) / C(5,2)
    assert pass_at_k(5, 2, 4) == pytest.approx(1.0)  # 4 tries out of 5 always hit one of 2
    assert pass_at_k(4, 0, 3) == 0.0 and pass_at_k(4, 4, 1) == 1.0
    assert best_of_k([0.0, 0.2, 0.9], 1) == pytest.approx(1.1 / 3)
    assert best_of_k([0.0, 0.2, 0.9], 2) == pytest.approx((0.2 + 0.9 + 0.9) / 3)
    assert best_of_k([0.0, 0.2, 0.9], 3) == pytest.approx(0.9)
    with pytest.raises(ValueError, match=r"n=3, c=1, k=4"):
        pass_at_k(3, 1, 4)
    assert parse_ks("8, 1,2,2") == [1, 2, 8]
    with pytest.raises(ValueError, match="at least 1"):
        parse_ks("0,1")


def test_pass_at_k_and_best_of_k_equal_enumerating_every_subset() -> None:
    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(1, 8)
        wins = [rng.random() < 0.3 for _ in range(n)]
        scores = [round(rng.random(), 3) for _ in range(n)]
        for k in range(1, n + 1):
            subsets = list(itertools.combinations(range(n), k))
            hit = sum(any(wins[i] for i in s) for s in subsets) / len(subsets)
            best = sum(max(scores[i] for i in s) for s in subsets) / len(subsets)
            assert pass_at_k(n, sum(wins), k) == pytest.approx(hit)
            assert best_of_k(scores, k) == pytest.approx(best)


def test_pass_table_per_competition_and_split_and_too_large_k() -> None:
    episodes = {(LOW[0], s): _report("gold" if s < 2 else None, norm=s / 4) for s in range(4)}
    episodes.update({(LOW[1], s): _report(None, norm=0.1) for s in range(3)})
    episodes[(LOW[1], 3)] = "failed"
    run = _run(episodes, range(4))
    table = pass_table(run, aggregate(run), [1, 3])
    first = table["competitions"][LOW[0]]
    assert first[1]["any_medal"] == pytest.approx(0.5)
    assert first[3]["any_medal"] == pytest.approx(1.0)  # C(2,3) = 0
    assert first[3]["best_normalized_score"] == pytest.approx(
        sum(max(c) for c in itertools.combinations([0, 0.25, 0.5, 0.75], 3)) / 4
    )
    assert table["competitions"][LOW[1]][3]["any_medal"] == 0.0
    assert table["splits"]["Low"]["by_k"][1]["any_medal"] == pytest.approx(0.25)
    with pytest.raises(ValueError, match=f"{LOW[1]} has 3 counted episode"):
        pass_table(run, aggregate(run), [4])
    padded = pass_table(run, aggregate(run, PAD_INCOMPLETE), [4])  # the failed one counts as 0
    assert padded["competitions"][LOW[1]][4]["any_medal"] == 0.0


def test_published_rows_carry_the_shared_figures_with_source_and_date() -> None:
    """Every row of both shared leaderboard files (783b15a as history, 507f92e with its
    section), the paper's rows once, in the shared files' order."""
    expected = []
    for name in ("mlebench_published_results.csv", "mlebench_published_results_507f92e.csv"):
        with open(require_shared("specs", name), newline="") as handle:
            expected += [{"section": "main", **r} for r in csv.DictReader(handle)]
    rows = published_rows()
    assert len(rows) == len(expected)
    for row, want in zip(rows, expected, strict=True):
        assert (row.table, row.agent, row.llm, row.date, row.source, row.section) == (
            want["table"],
            want["agent"],
            want["llm"],
            want["date"],
            want["source"],
            want["section"],
        )
        for name, column in (
            ("Low", "low"),
            ("Medium", "medium"),
            ("High", "high"),
            ("All", "all"),
        ):
            assert row.any_medal[name] == (float(want[column]), float(want[f"{column}_sem"]))
        assert row.hours == float(want["hours"])
        assert row.test_feedback == (want["test_feedback"] == "yes")
        assert row.source.startswith("https://github.com/openai/mle-bench/blob/")
        assert len(row.date) == 10 and row.hours > 0
    aide = [r for r in rows if r.agent == "AIDE" and r.llm == "o1-preview"]
    assert [r.any_medal["All"] for r in aide] == [(16.9, 1.1), (17.12, 0.61), (17.12, 0.61)]


def test_compare_published_follows_the_latest_leaderboard_with_additional_rows_apart() -> None:
    run = _run({(LOW[0], 0): _report("gold")}, range(1), env_kwargs={"time_limit": 24 * 3600})
    latest = compare_published(run, aggregate(run))
    assert latest["leaderboard"] == "507f92e"
    tables = {r["table"] for r in latest["published"]}
    assert tables == {"paper-table-2", "leaderboard-507f92e"}
    agents = {r["agent"] for r in latest["published"]}
    assert {"Famou-Agent 2.0", "AIBuildAI", "CAIR MARS+", "CAIR MARS"} <= agents
    assert not agents & {"Disarray", "LoongFlow"}
    assert {r["agent"] for r in latest["additional"]} == {"Disarray", "LoongFlow"}
    assert all(r["test_feedback"] for r in latest["additional"])
    assert "test set" in latest["additional_note"]
    assert any("paused new leaderboard submissions on 2026-04-24" in n for n in latest["notes"])
    table, notes = published_table(latest)
    shown = _rendered(table)
    assert "additional submissions" in shown and "Disarray" in shown
    assert latest["additional_note"] in notes
    old = compare_published(run, aggregate(run), "783b15a")
    assert {r["table"] for r in old["published"]} == {"paper-table-2", "leaderboard-783b15a"}
    assert "Disarray" in {r["agent"] for r in old["published"]} and not old["additional"]
    assert "AIBuildAI" not in {r["agent"] for r in old["published"]}
    with pytest.raises(ValueError, match="choose one of 507f92e, 783b15a"):
        compare_published(run, aggregate(run), "abc1234")


def test_compare_published_filters_by_budget_and_flags_deliberate_differences() -> None:
    assert "siim-isic-melanoma-classification" in task_differences()
    leak = "siim-isic-melanoma-classification"
    run = _run(
        {(LOW[0], 0): _report("gold"), (leak, 0): _report(None)},
        range(1),
        env_kwargs={"time_limit": 12 * 3600},
    )
    data = compare_published(run, aggregate(run))
    assert {r["hours"] for r in data["published"]} == {12.0}
    assert data["run"]["Low"]["mean"] == 50.0 and data["run"]["Low"]["competitions"] == 2
    assert leak in data["task_differences"]
    assert any(note.startswith(f"{leak}: answer leak fixed") for note in data["notes"])
    assert any("2 of the split's 22 competitions" in note for note in data["notes"])
    odd = _run({(LOW[0], 0): _report("gold")}, range(1), env_kwargs={"time_limit": 3600})
    data = compare_published(odd, aggregate(odd))
    board = [r for r in published_rows() if r.table in ("paper-table-2", "leaderboard-507f92e")]
    assert len(data["published"]) + len(data["additional"]) == len(board)
    assert "no published row has the run's budget of 1 h" in data["notes"][0]


def test_html_report_without_matplotlib_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from mle_gym.analysis import html

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the extra were not installed
    with pytest.raises(RuntimeError, match=r"pip install 'mle-gym\[report\]'"):
        html._pyplot()


def test_split_all_is_accepted_where_a_split_is(capsys: pytest.CaptureFixture) -> None:
    import json

    from mle_gym import cli

    assert cli.main(["list", "--split", "all", "--json"]) == 0
    listed = [c["id"] for c in json.loads(capsys.readouterr().out)]
    assert sorted(listed) == sorted(split_members("all"))
    for command in (["prepare"], ["run"], ["export", "harbor", "--out", "x"], ["report", "RUN"]):
        args = cli.build_parser().parse_args([*command, "--split", "all"])
        assert args.split == "all"


def _rendered(table: object) -> str:
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(table)
    return console.export_text()


def _integrity(**fields: object) -> dict:
    record = {"validations": 3, "grades_before_end": 0, "metric_runs_for_validity": 0}
    return {"integrity": {**record, "network": False, **fields}}


def test_disclosure_is_ticked_for_a_clean_run_and_not_for_a_grade_before_the_end() -> None:
    from mle_gym.analysis.disclosure import disclosure, disclosure_lines

    def record(seed: int, result: dict | None) -> EpisodeRecord:
        return EpisodeRecord(LOW[0], seed, "done", 1, _report("gold"), result, None)

    clean = disclosure([record(0, _integrity()), record(1, _integrity())])
    assert clean["ticked"] and clean["reasons"] == []
    assert clean["evidence"]["format_validations"] == 6
    lines = disclosure_lines(clean)
    assert lines[0] == (
        "- [x] The scaffold/harness used in this leaderboard submission does not expose to the "
        "agent signals derived from the held-out test set during rollouts."
    )
    assert "  Internet: off in every episode." in lines

    dirty = disclosure([record(0, _integrity()), record(1, _integrity(grades_before_end=2))])
    assert not dirty["ticked"]
    assert dirty["reasons"] == [
        f"1 episode(s) were graded before their end (a score could reach the agent): "
        f"{LOW[0]}/seed-1"
    ]
    lines = disclosure_lines(dirty)
    assert lines[0].startswith("- [ ] The scaffold/harness")
    assert any(line.startswith("  Not ticked: 1 episode(s) were graded before") for line in lines)

    checked = disclosure([record(0, _integrity(metric_runs_for_validity=27, validations=27))])
    assert not checked["ticked"] and "running the metric" in checked["reasons"][0]
    online = disclosure(
        [
            record(
                0,
                _integrity(
                    network="proxy",
                    network_use={"policy": "package-index", "requests": 4, "hosts": ["pypi.org"]},
                ),
            )
        ]
    )
    assert online["ticked"]  # internet use is disclosed beside the statement, not hidden
    assert any("Internet: on in 1 episode(s)" in line for line in disclosure_lines(online))
    assert any("hosts reached: pypi.org" in line for line in disclosure_lines(online))
    unrecorded = disclosure([record(0, None)])
    assert not unrecorded["ticked"] and "no integrity record" in unrecorded["reasons"][0]
    assert not disclosure([])["ticked"]
