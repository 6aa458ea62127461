"""A `RunReport` rendered: rich tables on a console, JSON, CSV, one HTML page, MLE-bench's
grading-report format; and the score-over-time and regrade views. Renderers only lay out
what `build_report` computed (the HTML page draws its own figures from it)."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.markup import escape

from mle_gym.analysis.report import RunReport

#: A split's name (`--split lite`) -> the row of the report it names.
ROW_OF_SPLIT = {"lite": "Low", "medium": "Medium", "high": "High", "all": "All"}


def _line(console: Console, text: str, style: str | None = None) -> None:
    """Text as it is (no markup, no highlighting): names and reasons come from agents."""
    console.print(text, style=style, markup=False, highlight=False)


def to_dict(report: RunReport) -> dict[str, Any]:
    """The report as JSON data: the summary, provenance and integrity, then each figure
    asked for; runs side by side are one summary each."""
    if report.side_by_side:
        return {"rule": report.summary.rule, "runs": [c.to_dict() for c in report.columns]}
    data: dict[str, Any] = {
        **report.summary.to_dict(),
        "provenance": report.provenance,
        "integrity": report.integrity,
    }
    optional = {
        "pass_at_k": report.pass_at_k,
        "mlebench_parity": report.mlebench_parity,
        "published": report.published,
        "regrade": report.regrade,
    }
    data.update({key: value for key, value in optional.items() if value is not None})
    if report.episode_rows is not None:
        data["episode_rows"] = list(report.episode_rows)
    return data


def to_json(report: RunReport) -> str:
    return json.dumps(to_dict(report), indent=2)


def to_csv(report: RunReport) -> str:
    """The summary rows (one per competition, then per split row)."""
    from mle_gym.analysis.render import to_csv as summary_csv

    return summary_csv(report.summary)


def to_html(report: RunReport) -> str:
    """One self-contained page (figures need the 'report' extra); it shows the published
    rows, compared with the report's leaderboard version when not asked, except for a run on
    a development variant, whose figures are never put beside them."""
    from mle_gym.analysis.html import html_report
    from mle_gym.analysis.integrity import data_variants, integrity_lines
    from mle_gym.analysis.provenance import provenance_lines
    from mle_gym.analysis.published import compare_published

    run, summary = report.run, report.summary
    published = report.published
    if published is None and "dev" not in data_variants(run):
        published = compare_published(run, summary, report.leaderboard)
    return html_report(
        run,
        summary,
        published,
        provenance_lines(report.provenance),
        title=f"mle-gym report: {run.root}",
        integrity=integrity_lines(report.integrity),
        points=report.points or (),
    )


def to_mlebench(report: RunReport, split: str | None = None) -> tuple[str, list[str]]:
    """MLE-bench's run-level grading report of the counted episodes of `split`'s row (a
    split name or a row name; default every competition), with the leaderboard's test-set
    disclosure (from those episodes' integrity records) under `disclosure`; and that
    disclosure as a checkbox to paste."""
    from mle_gym.analysis.disclosure import disclosure, disclosure_lines
    from mle_gym.analysis.integrity import check_one_variant
    from mle_gym.analysis.mlebench_format import counted_episodes, export_run

    run, summary = report.run, report.summary
    check_one_variant([run], published=True)  # MLE-bench's format is for its leaderboard
    row = ROW_OF_SPLIT.get(split, split) if split else "overall"
    counted = [
        r for _c, _s, r in counted_episodes(run, summary, row) if r is not None and run.graded(r)
    ]
    claim = disclosure(counted)
    text = json.dumps({**export_run(run, summary, row), "disclosure": claim}, indent=2)
    return text, disclosure_lines(claim)


def print_tables(report: RunReport, console: Console) -> None:
    """The rule and seed accounting, the figures, pass@k, published and parity rows when
    asked, the episodes when asked, then cost, provenance and integrity; runs side by side
    as one comparison table."""
    from mle_gym.analysis.integrity import integrity_lines
    from mle_gym.analysis.provenance import provenance_lines
    from mle_gym.analysis.render import (
        cost_table,
        episodes_table,
        header_lines,
        parity_table,
        pass_k_table,
        published_table,
        to_table,
    )

    if report.side_by_side:
        _print_side_by_side(report, console)
        return
    summary = report.summary
    for line in header_lines(summary):
        _line(console, line, "dim")
    title = f"report: {escape(str(report.run.root))}"
    console.print(to_table(summary, title=title, width=console.width))
    if report.pass_at_k is not None:
        console.print(pass_k_table(report.pass_at_k))
    if report.published is not None:
        table, notes = published_table(report.published)
        console.print(table)
        for note in notes:
            _line(console, note, "yellow")
    if report.mlebench_parity is not None:
        table, notes = parity_table(report.mlebench_parity)
        console.print(table)
        for note in notes:
            _line(console, note, "yellow" if note.startswith("differs") else "dim")
    if report.episode_rows is not None:
        console.print(episodes_table(list(report.run.records)))
    costs = cost_table(summary)
    if costs is not None:
        console.print(costs)
    for line in provenance_lines(report.provenance):
        _line(console, line, "dim")
    for line in integrity_lines(report.integrity):
        _line(console, line, "yellow" if line.startswith(("task differs", "warning")) else "dim")


def _print_side_by_side(report: RunReport, console: Console) -> None:
    from mle_gym.analysis.compare_runs import comparison_table
    from mle_gym.analysis.render import header_lines

    columns = list(report.columns)
    _line(console, header_lines(columns[0].summary)[0], "dim")
    for column in columns:
        for line in header_lines(column.summary)[1:]:
            _line(console, f"{column.label}: {line}", "dim")
    console.print(comparison_table(columns))


def over_time_json(report: RunReport) -> str:
    return json.dumps([p.to_dict() for p in report.points or ()], indent=2)


def print_over_time(report: RunReport, console: Console) -> None:
    """Per time and split row: seeds, any-medal rate and mean normalised score."""
    from rich.table import Table

    from mle_gym.analysis.aggregate import Estimate
    from mle_gym.analysis.render import format_figure

    def cell(figure: tuple[float, float | None], seeds: int, percent: bool) -> str:
        return format_figure(Estimate(*figure, n=seeds), percent=percent)

    points = report.points or ()
    table = Table(title=f"score over time: {report.run.root}")
    for name in ("elapsed", "scope", "seeds", "any medal %", "normalised score"):
        table.add_column(name, justify="left" if name == "scope" else "right")
    for p in points:
        medal, norm = p.figures["any_medal"], p.figures["normalized_score"]
        table.add_row(
            f"{p.seconds / 3600:g} h",
            p.scope,
            str(p.seeds),
            cell(medal, p.seeds, percent=True),
            cell(norm, p.seeds, percent=False),
        )
    console.print(table)
    unknown = points[0].unknown_times if points else 0
    if unknown:
        console.print(f"{unknown} episode(s) have no snapshots: counted with their final grade")


def print_regrade(regraded: dict[str, Any], console: Console) -> None:
    """Each verdict a regrade changed, then what it left alone and where the old reports
    are kept."""
    for episode in regraded["changed"]:
        changes = ", ".join(
            f"{name} {c['before']!r} -> {c['after']!r}" for name, c in episode["changes"].items()
        )
        _line(console, f"regraded {episode['episode']}: {changes}", "yellow")
    _line(
        console,
        f"regrade: {len(regraded['changed'])} verdict(s) changed, {regraded['unchanged']} "
        f"unchanged, {len(regraded['skipped'])} not regraded (never graded, or no kept "
        f"submission); old reports kept as report.before-{regraded['regraded_at']}.json",
        "dim",
    )
