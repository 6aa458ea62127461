"""`mle-gym report RUN` and `mle-gym grade --submissions FILE.jsonl`: runs read as MLE-bench
reads them (splits, complete seeds, pass@k, published figures, its report format)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from mle_gym.analysis.published import LATEST, LEADERBOARDS
from mle_gym.cli.show import console, plain, say

#: `--split` of `report` -> the row it names.
ROW_OF_SPLIT = {"lite": "Low", "medium": "Medium", "high": "High", "all": "All"}


def add_report_parser(sub: Any, splits: tuple[str, ...]) -> None:
    p = sub.add_parser(
        "report",
        help="aggregate a batch run as MLE-bench does: per split (Low, Medium, High, All), "
        "complete seeds, mean ± standard error over seeds; pass@k; published figures",
    )
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the batch's --run-dir")
    p.add_argument(
        "other_runs",
        type=Path,
        nargs="*",
        metavar="RUN_DIR",
        help="more runs: their split rows side by side with the first's (e.g. the same agent "
        "with --task mlebench and --task mlebench-obfuscated)",
    )
    p.add_argument(
        "--episodes",
        action="store_true",
        help="also one row per episode (state, score, medal: gold, silver, bronze or none)",
    )
    p.add_argument(
        "--pad-incomplete",
        action="store_true",
        dest="pad_incomplete",
        help="count failed, running and missing episodes as 0 instead of dropping seeds that "
        "lack one (MLE-bench's leaderboard marks such entries as padded)",
    )
    p.add_argument(
        "--pass-k",
        dest="pass_k",
        metavar="K,K,...",
        help="pass@k (any medal, each medal, above median) and the expected best-of-k "
        "normalised score, per competition and split, e.g. 1,2,4,8",
    )
    p.add_argument(
        "--compare",
        choices=("published",),
        help="the run's any-medal rates beside MLE-bench's published rows (same time budget)",
    )
    p.add_argument(
        "--leaderboard",
        choices=LEADERBOARDS,
        default=LATEST,
        help=f"with --compare published: which version of MLE-bench's leaderboard (its commit; "
        f"default {LATEST}, the latest)",
    )
    p.add_argument(
        "--compare-mlebench-run",
        type=Path,
        dest="compare_mlebench_run",
        metavar="DIR_OR_JSONL",
        help="a parity run: the same agent run by MLE-bench's own harness (its run group "
        "folder, or its submissions JSONL with its grading report beside), graded by both "
        "sides beside this run, per competition (docs/harness.md, Parity)",
    )
    p.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="also write the report as one self-contained HTML page (figures need the "
        "'report' extra: pip install 'mle-gym[report]')",
    )
    p.add_argument(
        "--regrade",
        action="store_true",
        help="grade every kept submission again with the installed grader (after a grader "
        "fix); old reports are kept, and what changed is printed",
    )
    p.add_argument(
        "--split",
        choices=splits,
        help="with --format mlebench: export this split's row (default: every competition)",
    )
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print JSON")
    fmt.add_argument("--csv", action="store_true", help="print CSV (the summary rows)")
    fmt.add_argument(
        "--format",
        choices=("table", "json", "csv", "mlebench"),
        help="mlebench: the counted episodes as MLE-bench's grading report (for its "
        "aggregate_grading_reports.py or a leaderboard entry)",
    )
    from mle_gym.cli.over_time import add_options as add_over_time_options

    add_over_time_options(p)
    p.set_defaults(func=cmd_report)


def add_grade_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--submissions",
        type=Path,
        metavar="FILE.jsonl",
        help="grade a whole run made by another tool: MLE-bench's input, one JSON object a "
        "line with competition_id and submission_path",
    )
    parser.add_argument(
        "--output-dir",
        type=Path,
        dest="output_dir",
        default=Path("."),
        metavar="DIR",
        help="with --submissions: where <time>_grading_report.json is written (default .)",
    )
    parser.add_argument(
        "--allow-private-paths",
        action="store_true",
        help="with --submissions: grade paths inside a prepared competition's private/ folder "
        "(its answers) too; refused by default, since the answers would score as gold",
    )


def rule_of(args: argparse.Namespace) -> str:
    from mle_gym.analysis.aggregate import COMPLETE_SEEDS, PAD_INCOMPLETE

    return PAD_INCOMPLETE if getattr(args, "pad_incomplete", False) else COMPLETE_SEEDS


def write_run_report(run_dir: Path) -> Any:
    """Aggregate the run (default rule) and keep report.json and report.csv in it."""
    from mle_gym.analysis.aggregate import aggregate
    from mle_gym.analysis.integrity import run_integrity
    from mle_gym.analysis.provenance import provenance_summary
    from mle_gym.analysis.render import write_report_files
    from mle_gym.runs.run import read_run

    run = read_run(run_dir)
    summary = aggregate(run)
    extras = {"provenance": provenance_summary(run), "integrity": run_integrity(run)}
    write_report_files(summary, Path(run_dir), extras)
    return summary


def cmd_report(args: argparse.Namespace) -> int:
    from mle_gym.analysis.aggregate import aggregate
    from mle_gym.runs.run import read_run

    fmt = args.format or ("json" if args.json else "csv" if args.csv else "table")
    if args.split and fmt != "mlebench":
        command = shlex.join(
            ["mle-gym", "report", str(args.run_dir), "--format", "mlebench", "--split", args.split]
        )
        raise ValueError(
            f"--split chooses the row that --format mlebench exports; add --format mlebench: "
            f"{command}"
        )
    if args.other_runs:
        return _print_side_by_side(args, fmt)
    run = read_run(args.run_dir)
    regraded = None
    if args.regrade:
        from mle_gym.analysis.regrade import regrade_run

        regraded = regrade_run(run)
        run = read_run(args.run_dir)  # the new verdicts
        write_run_report(args.run_dir)
        if fmt == "table":
            _print_regrade(regraded)
    if args.over_time:
        from mle_gym.cli.over_time import print_over_time

        print_over_time(args, run, rule_of(args), as_json=fmt == "json")
        return 0
    if args.at is not None:  # the whole report as if every episode had stopped then
        from dataclasses import replace

        from mle_gym.analysis.over_time import records_at

        run = replace(run, records=tuple(records_at(run.records, run.root, args.at)))
    summary = aggregate(run, rule_of(args))
    if fmt == "mlebench":
        return _print_mlebench(run, summary, args.split)
    extras = _extras(run, summary, args)
    if regraded is not None:
        extras["regrade"] = regraded
    if args.html:
        _write_html(run, summary, extras, args.html, args)
    if fmt == "json":
        data = {**summary.to_dict(), **extras}
        if args.episodes:
            data["episode_rows"] = [_episode_json(r) for r in run.records]
        print(json.dumps(data, indent=2))
    elif fmt == "csv":
        from mle_gym.analysis.render import to_csv

        sys.stdout.write(to_csv(summary))
    else:
        _print_tables(run, summary, extras, args)
    return 0


#: Options that read one run only; refused when several runs are named.
ONE_RUN_OPTIONS = (
    "episodes",
    "pass_k",
    "compare",
    "compare_mlebench_run",
    "html",
    "regrade",
    "split",
    "over_time",
    "at",
)


def _print_side_by_side(args: argparse.Namespace, fmt: str) -> int:
    from mle_gym.analysis.aggregate import aggregate
    from mle_gym.analysis.compare_runs import Column, comparison_table
    from mle_gym.runs.run import read_run

    given = [f"--{name.replace('_', '-')}" for name in ONE_RUN_OPTIONS if getattr(args, name)]
    if given or fmt not in ("table", "json"):
        refused = ", ".join(given + ([f"--format {fmt}"] if fmt not in ("table", "json") else []))
        raise ValueError(f"{refused}: reads one run; name one RUN_DIR for it")
    rule = rule_of(args)
    columns = []
    for root in (args.run_dir, *args.other_runs):
        run = read_run(root)
        columns.append(Column(run, aggregate(run, rule)))
    if fmt == "json":
        print(json.dumps({"rule": rule, "runs": [c.to_dict() for c in columns]}, indent=2))
        return 0
    from mle_gym.analysis.render import header_lines

    say(header_lines(columns[0].summary)[0], style="dim")
    for column in columns:
        for line in header_lines(column.summary)[1:]:
            say(f"{column.label}: {line}", style="dim")
    console().print(comparison_table(columns))
    return 0


def _extras(run: Any, summary: Any, args: argparse.Namespace) -> dict[str, Any]:
    from mle_gym.analysis.integrity import run_integrity
    from mle_gym.analysis.provenance import provenance_summary

    extras: dict[str, Any] = {
        "provenance": provenance_summary(run),
        "integrity": run_integrity(run),
    }
    if args.pass_k:
        from mle_gym.analysis.passk import parse_ks, pass_table

        extras["pass_at_k"] = pass_table(run, summary, parse_ks(args.pass_k))
    if args.compare_mlebench_run is not None:
        from mle_gym.analysis.parity import parity, read_mlebench_run

        extras["mlebench_parity"] = parity(
            run, read_mlebench_run(args.compare_mlebench_run), private_dir
        )
    if args.compare == "published":
        from mle_gym.analysis.published import compare_published

        extras["published"] = compare_published(run, summary, args.leaderboard)
    return extras


def _print_tables(run: Any, summary: Any, extras: dict[str, Any], args: argparse.Namespace) -> None:
    """The rule and seed accounting, the figures, pass@k and published rows when asked,
    the episodes when asked, then cost, provenance and integrity."""
    from mle_gym.analysis.integrity import integrity_lines
    from mle_gym.analysis.provenance import provenance_lines
    from mle_gym.analysis.render import (
        cost_table,
        header_lines,
        pass_k_table,
        published_table,
        to_table,
    )

    for line in header_lines(summary):
        say(line, style="dim")
    title = f"report: {plain(args.run_dir)}"
    console().print(to_table(summary, title=title, width=console().width))
    if "pass_at_k" in extras:
        console().print(pass_k_table(extras["pass_at_k"]))
    if "published" in extras:
        table, notes = published_table(extras["published"])
        console().print(table)
        for note in notes:
            say(note, style="yellow")
    if "mlebench_parity" in extras:
        from mle_gym.analysis.render import parity_table

        table, notes = parity_table(extras["mlebench_parity"])
        console().print(table)
        for note in notes:
            say(note, style="yellow" if note.startswith("differs") else "dim")
    if args.episodes:
        from mle_gym.cli import show

        console().print(show.episodes_table(list(run.records)))
    costs = cost_table(summary)
    if costs is not None:
        console().print(costs)
    for line in provenance_lines(extras["provenance"]):
        say(line, style="dim")
    for line in integrity_lines(extras["integrity"]):
        say(line, style="yellow" if line.startswith(("task differs", "warning")) else "dim")


def _write_html(
    run: Any, summary: Any, extras: dict[str, Any], path: Path, args: argparse.Namespace
) -> None:
    from mle_gym.analysis.html import html_report
    from mle_gym.analysis.integrity import integrity_lines
    from mle_gym.analysis.over_time import over_time, run_budget, time_points
    from mle_gym.analysis.provenance import provenance_lines
    from mle_gym.analysis.published import compare_published

    published = extras.get("published") or compare_published(run, summary, args.leaderboard)
    times = time_points(args.times, run_budget(run.root))
    if args.at is not None:  # the run already stopped then
        times = [t for t in times if t <= args.at]
    page = html_report(
        run,
        summary,
        published,
        provenance_lines(extras["provenance"]),
        title=f"mle-gym report: {run.root}",
        integrity=integrity_lines(extras["integrity"]),
        points=over_time(run, times, summary.rule),
    )
    path.write_text(page, encoding="utf-8")
    print(f"HTML report written to {path}", file=sys.stderr)


def _print_regrade(regraded: dict[str, Any]) -> None:
    for episode in regraded["changed"]:
        changes = ", ".join(
            f"{name} {c['before']!r} -> {c['after']!r}" for name, c in episode["changes"].items()
        )
        say(f"regraded {episode['episode']}: {changes}", style="yellow")
    say(
        f"regrade: {len(regraded['changed'])} verdict(s) changed, {regraded['unchanged']} "
        f"unchanged, {len(regraded['skipped'])} not regraded (never graded, or no kept "
        f"submission); old reports kept as report.before-{regraded['regraded_at']}.json",
        style="dim",
    )


def _print_mlebench(run: Any, summary: Any, split: str | None) -> int:
    """MLE-bench's report on stdout, with the leaderboard's test-set disclosure (derived
    from the counted episodes' integrity records) under `disclosure`; the disclosure as a
    checkbox to paste on stderr."""
    from mle_gym.analysis.disclosure import disclosure, disclosure_lines
    from mle_gym.analysis.mlebench_format import counted_episodes, export_run

    row = ROW_OF_SPLIT.get(split, split) if split else "overall"
    counted = [
        r for _c, _s, r in counted_episodes(run, summary, row) if r is not None and run.graded(r)
    ]
    claim = disclosure(counted)
    print(json.dumps({**export_run(run, summary, row), "disclosure": claim}, indent=2))
    print("\n".join(disclosure_lines(claim)), file=sys.stderr)
    return 0


def private_dir(comp: Any) -> Path:
    """A prepared competition's answers, for grading submissions made elsewhere."""
    from mle_gym.data import require_prepared

    return require_prepared(comp.id, auto=False).private


def cmd_grade_submissions(args: argparse.Namespace) -> int:
    """Grade MLE-bench's JSONL of submissions and write its run-level grading report."""
    from mle_gym.analysis.mlebench_format import (
        grade_submissions,
        into_answers,
        read_submissions,
        report_file_name,
    )
    from mle_gym.data.cache import cache_root

    entries = read_submissions(args.submissions)
    inside = (
        [] if args.allow_private_paths else into_answers(entries, cache_root().glob("*/private"))
    )
    if inside:
        raise SystemExit(
            f"{args.submissions}: {len(inside)} submission path(s) lie in a prepared "
            f"competition's private/ folder (its answers), e.g. {inside[0]}; nothing was "
            "graded. Pass --allow-private-paths to grade them anyway"
        )
    report = grade_submissions(entries, private_dir)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    path = args.output_dir / report_file_name()
    path.write_text(json.dumps(report, indent=2))
    totals = {k: v for k, v in report.items() if k != "competition_reports"}
    if args.json:  # stdout holds the JSON only; where the report went is on stderr
        print(json.dumps(totals, indent=2))
        print(f"grading report written to {path}", file=sys.stderr)
        return 0
    for key, value in totals.items():
        say(f"{key}: {value}")
    say(f"grading report written to {path}", style="dim")
    return 0


def _episode_json(record: Any) -> dict[str, Any]:
    grade = record.grade
    keys = ("score", "valid_submission", "above_median", "any_medal", "normalized_score")
    return {
        "competition_id": record.competition_id,
        "seed": record.seed,
        "state": record.state,
        "attempt": record.attempt,
        **{key: grade[key] for key in keys},
        "medal": (grade["medal"] or "none") if record.report else None,
        "error": record.error or grade["error"],
    }
