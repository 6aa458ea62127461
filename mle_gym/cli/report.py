"""`mle-gym report RUN`, `mle-gym regrade RUN` and `mle-gym grade --submissions FILE.jsonl`:
runs read as MLE-bench reads them (splits, complete seeds, pass@k, published figures, its
report format). The report itself is `mle_gym.analysis.report.build_report`; here are only
its options and the choice of renderer (`mle_gym.analysis.report_render`)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from mle_gym.analysis.published import LATEST, LEADERBOARDS
from mle_gym.cli.show import console, note, say


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
        help="deprecated, goes in the next release: `mle-gym regrade RUN_DIR` first (it "
        "rewrites the run), then the report",
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


def add_regrade_parser(sub: Any) -> None:
    p = sub.add_parser(
        "regrade",
        help="grade every kept submission of a batch run again with the installed grader "
        "(after a grader fix): rewrites the run's verdicts and report, keeps the old reports, "
        "and prints what changed",
    )
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the batch's --run-dir")
    p.add_argument("--json", action="store_true", help="print what changed as JSON")
    p.set_defaults(func=cmd_regrade)


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


def cmd_report(args: argparse.Namespace) -> int:
    from mle_gym.analysis import report_render as render
    from mle_gym.analysis.report import build_report

    fmt = args.format or ("json" if args.json else "csv" if args.csv else "table")
    if args.split and fmt != "mlebench":
        command = shlex.join(
            ["mle-gym", "report", str(args.run_dir), "--format", "mlebench", "--split", args.split]
        )
        raise ValueError(
            f"--split chooses the row that --format mlebench exports; add --format mlebench: "
            f"{command}"
        )
    rule = rule_of(args)
    if args.other_runs:
        return _side_by_side(args, fmt, rule)
    regraded = None
    if args.regrade:
        note(
            "`mle-gym report --regrade` is deprecated and goes in the next release: run "
            f"`mle-gym regrade {shlex.quote(str(args.run_dir))}`, then the report"
        )
        regraded = _regrade(args.run_dir)
        if fmt == "table":
            render.print_regrade(regraded, console())
    if args.over_time:  # the whole run's curve (--at applies to the other views)
        report = build_report(args.run_dir, rule=rule, over_time=True, times=args.times)
        if fmt == "json":
            print(render.over_time_json(report))
        else:
            render.print_over_time(report, console())
        return 0
    if fmt == "mlebench":
        text, lines = render.to_mlebench(
            build_report(args.run_dir, rule=rule, at=args.at), args.split
        )
        print(text)
        print("\n".join(lines), file=sys.stderr)
        return 0
    report = build_report(
        args.run_dir,
        rule=rule,
        at=args.at,
        pass_k=_ks(args.pass_k),
        published=args.compare == "published",
        leaderboard=args.leaderboard,
        mlebench_run=args.compare_mlebench_run,
        over_time=args.html is not None,  # the page's curves
        times=args.times,
        episodes=args.episodes,
    )
    if regraded is not None:
        from dataclasses import replace

        report = replace(report, regrade=regraded)
    if args.html:
        args.html.write_text(render.to_html(report), encoding="utf-8")
        print(f"HTML report written to {args.html}", file=sys.stderr)
    if fmt == "json":
        print(render.to_json(report))
    elif fmt == "csv":
        sys.stdout.write(render.to_csv(report))
    else:
        render.print_tables(report, console())
    return 0


def _side_by_side(args: argparse.Namespace, fmt: str, rule: str) -> int:
    """Several runs' summaries in one table (or JSON); options of one run are refused."""
    from mle_gym.analysis import report_render as render
    from mle_gym.analysis.report import build_report

    given = [f"--{name.replace('_', '-')}" for name in ONE_RUN_OPTIONS if getattr(args, name)]
    if given or fmt not in ("table", "json"):
        wrong = [f"--format {fmt}"] if fmt not in ("table", "json") else []
        raise ValueError(f"{', '.join(given + wrong)}: reads one run; name one RUN_DIR for it")
    report = build_report([args.run_dir, *args.other_runs], rule=rule)
    if fmt == "json":
        print(render.to_json(report))
    else:
        render.print_tables(report, console())
    return 0


def _ks(text: str | None) -> list[int] | None:
    from mle_gym.analysis.passk import parse_ks

    return parse_ks(text) if text else None


def cmd_regrade(args: argparse.Namespace) -> int:
    from mle_gym.analysis.report_render import print_regrade
    from mle_gym.cli.show import next_steps

    regraded = _regrade(args.run_dir)
    if args.json:
        print(json.dumps(regraded, indent=2))
        return 0
    print_regrade(regraded, console())
    report = f"mle-gym report {shlex.quote(str(args.run_dir))}"
    next_steps([(report, "the run's report with the new verdicts")])
    return 0


def _regrade(run_dir: Path) -> dict[str, Any]:
    """Regrade the run's kept submissions, then rewrite its report files; what changed."""
    from mle_gym.analysis.regrade import regrade_run
    from mle_gym.analysis.report import write_run_report
    from mle_gym.runs.run import read_run

    regraded = regrade_run(read_run(run_dir))
    write_run_report(run_dir)
    return regraded


def cmd_grade_submissions(args: argparse.Namespace) -> int:
    """Grade MLE-bench's JSONL of submissions and write its run-level grading report."""
    from mle_gym.analysis.mlebench_format import (
        grade_submissions,
        into_answers,
        private_dir,
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
