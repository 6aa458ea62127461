"""A run's summary as a rich table, JSON or CSV, and the report files kept in the run dir."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from rich.table import Table

from mle_gym.batch.aggregate import FIGURES, Estimate, Row, RunSummary
from mle_gym.batch.store import write_json

REPORT_JSON = "report.json"
REPORT_CSV = "report.csv"


def to_json(summary: RunSummary) -> str:
    return json.dumps(summary.to_dict(), indent=2)


def to_csv(summary: RunSummary) -> str:
    """One row per competition and one "overall" row; rates as fractions, sem empty for n=1."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        ["scope", "seeds", *(f"{k}_{part}" for k, _ in FIGURES for part in ("mean", "sem"))]
    )
    for row in [*summary.competitions, summary.overall]:
        cells: list[object] = [row.name, row.seeds]
        for key, _ in FIGURES:
            figure = row.figures.get(key)
            cells += (
                ["", ""]
                if figure is None
                else [repr(figure.mean), "" if figure.sem is None else repr(figure.sem)]
            )
        writer.writerow(cells)
    return out.getvalue()


#: Figures shown when the terminal is narrow, with short labels (the rest stay in --json
#: and --csv).
NARROW_FIGURES = {
    "valid_submission": "valid %",
    "above_median": ">median %",
    "any_medal": "medal %",
    "normalized_score": "norm.",
}
#: Below this many columns the table shows NARROW_FIGURES only.
FULL_WIDTH = 140


def to_table(summary: RunSummary, title: str, width: int | None = None) -> Table:
    """The summary; at `width` below FULL_WIDTH (80 when piped) only the main figures, so
    that every cell stays readable."""
    from rich import box

    narrow = width is not None and width < FULL_WIDTH
    shown = [(k, label) for k, label in FIGURES if not narrow or k in NARROW_FIGURES]
    caption = _caption(summary) + ("; --json or --csv has every figure" if narrow else "")
    table = Table(title=title, caption=caption, box=box.SIMPLE_HEAD if narrow else box.HEAVY_HEAD)
    table.add_column("competition", overflow="fold")
    table.add_column("seeds", justify="right")
    for key, label in shown:
        heading = label if key == "normalized_score" else f"{label} %"
        table.add_column(NARROW_FIGURES[key] if narrow else heading, justify="right")
    keys = [key for key, _ in shown]
    for row in summary.competitions:
        table.add_row(*_cells(row, keys))
    if summary.competitions:
        table.add_section()
        table.add_row(*_cells(summary.overall, keys), style="bold")
    return table


def write_report_files(summary: RunSummary, run_dir: Path) -> None:
    write_json(run_dir / REPORT_JSON, summary.to_dict())
    (run_dir / REPORT_CSV).write_text(to_csv(summary))


def _cells(row: Row, keys: list[str] | None = None) -> list[str]:
    cells = [row.name, str(row.seeds)]
    for key in keys or [k for k, _ in FIGURES]:
        figure = row.figures.get(key)
        cells.append("—" if figure is None else _format(figure, percent=key != "normalized_score"))
    return cells


def _format(figure: Estimate, *, percent: bool) -> str:
    scale, digits = (100.0, 1) if percent else (1.0, 3)
    mean = f"{figure.mean * scale:.{digits}f}"
    return mean if figure.sem is None else f"{mean} ± {figure.sem * scale:.{digits}f}"


def _caption(summary: RunSummary) -> str:
    e = summary.episodes
    text = (
        f"{e['done']} graded episode(s) over {e['competitions']} competition(s); "
        "mean ± standard error over seeds"
    )
    if e["failed"] or e["running"]:
        text += (
            f"; not counted: {e['failed']} failed, {e['running']} unfinished "
            "(`mle-gym run` again retries them)"
        )
    return text
