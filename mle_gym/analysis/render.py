"""A run's summary as a rich table, JSON or CSV, its header, the report's other tables
(pass@k, published, parity, episodes, cost), and the report files of a run."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from mle_gym.analysis.aggregate import FIGURES, RULES, Estimate, Row, RunSummary
from mle_gym.runs.jsonfile import write_json
from mle_gym.runs.store import EpisodeRecord

REPORT_JSON = "report.json"
REPORT_CSV = "report.csv"


def to_json(summary: RunSummary) -> str:
    return json.dumps(summary.to_dict(), indent=2)


def to_csv(summary: RunSummary) -> str:
    """One row per competition, then one per split row and "overall"; rates as fractions,
    sem empty for n=1."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        ["scope", "seeds", *(f"{k}_{part}" for k, _ in FIGURES for part in ("mean", "sem"))]
    )
    for row in [*summary.competitions, *summary.splits]:
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


def shown_splits(summary: RunSummary) -> list[Row]:
    """The split rows, and "overall" only where it is not the same as the All row."""
    rows = summary.splits[:-1]
    if not any(r.competitions == summary.overall.competitions for r in rows):
        rows = [*rows, summary.overall]
    return rows


def to_table(summary: RunSummary, title: str, width: int | None = None) -> Table:
    """The summary; at `width` below FULL_WIDTH (80 when piped) only the main figures, so
    that every cell stays readable."""
    from rich import box

    narrow = width is not None and width < FULL_WIDTH
    shown = [(k, label) for k, label in FIGURES if not narrow or k in NARROW_FIGURES]
    caption = _caption(summary) + ("; --json or --csv has every figure" if narrow else "")
    table = Table(title=title, caption=caption, box=box.SIMPLE_HEAD if narrow else box.HEAVY_HEAD)
    table.add_column("competition / split", overflow="fold")
    table.add_column("seeds", justify="right")
    for key, label in shown:
        heading = label if key == "normalized_score" else f"{label} %"
        table.add_column(NARROW_FIGURES[key] if narrow else heading, justify="right")
    keys = [key for key, _ in shown]
    for row in summary.competitions:
        table.add_row(*_cells(row, keys))
    if summary.competitions:
        table.add_section()
        for row in shown_splits(summary):
            table.add_row(*_cells(row, keys), style="bold")
    return table


def header_lines(summary: RunSummary) -> list[str]:
    """The rule, and for each split row how many seeds were complete, padded or dropped, and
    why; a row over part of a split says so (it is not comparable with a published figure)."""
    lines = [f"rule: {RULES[summary.rule]}"]
    for row in shown_splits(summary):
        account = row.account
        assert account is not None
        size = (
            ""
            if row.split_size is None
            else f" ({len(row.competitions)} of {row.split_size} competitions"
            + (", PARTIAL split)" if len(row.competitions) < row.split_size else ")")
        )
        text = f"{row.name}{size}: {len(account.complete)} complete seed(s)"
        if account.padded:
            text += f", {len(account.padded)} padded ({_reasons(account.padded)})"
        if account.dropped:
            text += f", {len(account.dropped)} dropped ({_reasons(account.dropped)})"
        lines.append(text)
    return lines


def _reasons(seeds: dict[int, dict[str, str]]) -> str:
    return "; ".join(
        f"seed {seed}: " + ", ".join(f"{c} {state}" for c, state in why.items())
        for seed, why in sorted(seeds.items())
    )


def write_report_files(
    summary: RunSummary, run_dir: Path, extras: dict[str, Any] | None = None
) -> None:
    """report.json (what `mle-gym report --json` prints) and report.csv."""
    write_json(run_dir / REPORT_JSON, {**summary.to_dict(), **(extras or {})})
    (run_dir / REPORT_CSV).write_text(to_csv(summary))


def _cells(row: Row, keys: list[str] | None = None) -> list[str]:
    cells = [row.name, str(row.seeds)]
    for key in keys or [k for k, _ in FIGURES]:
        figure = row.figures.get(key)
        cells.append(
            "—" if figure is None else format_figure(figure, percent=key != "normalized_score")
        )
    return cells


def format_figure(figure: Estimate, *, percent: bool) -> str:
    scale, digits = (100.0, 1) if percent else (1.0, 3)
    mean = f"{figure.mean * scale:.{digits}f}"
    return mean if figure.sem is None else f"{mean} ± {figure.sem * scale:.{digits}f}"


def _caption(summary: RunSummary) -> str:
    e = summary.episodes
    text = (
        f"{e['done']} graded episode(s) over {e['competitions']} competition(s); "
        "mean ± standard error over seeds"
    )
    others = {k: v for k, v in e.items() if k not in ("done", "competitions") and v}
    if others:
        text += (
            "; not graded: "
            + ", ".join(f"{v} {k}" for k, v in others.items())
            + " (`mle-gym run` again retries failed and unfinished ones)"
        )
    return text


#: pass@k figures as the table heads them.
PASS_LABELS = {
    "any_medal": "any medal",
    "gold_medal": "gold",
    "silver_medal": "silver",
    "bronze_medal": "bronze",
    "above_median": ">median",
    "best_normalized_score": "best-of-k norm.",
}


def pass_k_table(table_data: dict) -> Table:
    """One row per (competition or split row, k): pass@k % and the best-of-k score."""
    table = Table(
        title="pass@k (unbiased estimate over each competition's seeds; splits: mean over "
        "their competitions)"
    )
    table.add_column("competition / split", overflow="fold")
    table.add_column("k", justify="right")
    for label in PASS_LABELS.values():
        table.add_column(label if label.startswith("best") else f"{label} %", justify="right")

    def add(name: str, by_k: dict, style: str | None = None) -> None:
        for k, figures in by_k.items():
            table.add_row(
                name,
                str(k),
                *(
                    f"{figures[key]:.3f}" if key.startswith("best") else f"{100 * figures[key]:.1f}"
                    for key in PASS_LABELS
                ),
                style=style,
            )

    for name, by_k in table_data["competitions"].items():
        add(name, by_k)
    table.add_section()
    for name, split in table_data["splits"].items():
        add(name, split["by_k"], "bold")
    return table


def published_table(data: dict) -> tuple[Table, list[str]]:
    """The run's any-medal % per MLE-bench row above the published rows; and the notes."""
    names = ("Low", "Medium", "High", "All")
    table = Table(title=f"any medal %: this run beside MLE-bench's published rows ({data['rule']})")
    for head in ("who", "source", "hours", *names):
        table.add_column(head, justify="left" if head in ("who", "source") else "right")

    def cell(figure: dict | None) -> str:
        if not figure or figure.get("mean") is None:
            return "—"
        sem = figure.get("sem")
        return f"{figure['mean']:.1f}" + ("" if sem is None else f" ± {sem:.1f}")

    hours = "—" if data["hours"] is None else f"{data['hours']:g}"
    table.add_row("this run", "", hours, *(cell(data["run"].get(n)) for n in names), style="bold")

    def add(row: dict) -> None:
        marks = ("" if not row["padded"] else " (padded)") + (
            "" if not row["test_feedback"] else " (test feedback)"
        )
        table.add_row(
            escape(f"{row['agent']} / {row['llm']}{marks}"),
            f"{row['table']}, {row['date']}",
            f"{row['hours']:g}",
            *(cell(row["any_medal"][n]) for n in names),
        )

    table.add_section()
    for row in data["published"]:
        add(row)
    notes = list(data["notes"])
    if data.get("additional"):
        table.add_section()
        table.add_row("additional submissions", style="italic")
        for row in data["additional"]:
            add(row)
        notes.append(data["additional_note"])
    return table, notes


def parity_table(data: dict) -> tuple[Table, list[str]]:
    """The parity run's three columns per competition and over all; and its notes."""
    from mle_gym.analysis.parity import COLUMNS

    table = Table(title="parity with MLE-bench's harness: any medal % and mean score, ± SEM (n)")
    table.add_column("competition", overflow="fold")
    for _key, head in COLUMNS:
        table.add_column(head, justify="right")

    def cell(figures: dict) -> str:
        medal, score = figures["any_medal"], figures["score"]
        if medal is None:
            return "—"
        sem = "" if medal["sem"] is None else f" ± {100 * medal['sem']:.1f}"
        text = f"{100 * medal['mean']:.1f}{sem} ({figures['episodes']})"
        if score is not None:
            ssem = "" if score["sem"] is None else f" ± {score['sem']:.4g}"
            text += f"\nscore {score['mean']:.4g}{ssem}"
        return text

    for competition, columns in data["competitions"].items():
        table.add_row(escape(competition), *(cell(columns[key]) for key, _ in COLUMNS))
    table.add_section()
    table.add_row("all", *(cell(data["all"][key]) for key, _ in COLUMNS), style="bold")
    agreement = data["agreement"]
    notes = []
    if not data["mlebench_report_found"]:
        notes.append(
            f"no MLE-bench grading report beside {data['source']}: run `mlebench grade` on its "
            "submissions for the first column"
        )
    else:
        notes.append(
            f"the two graders on MLE-bench's own submissions: {agreement['agree']} of "
            f"{agreement['paired']} agree on score, validity and medals"
        )
        for item in agreement["differing"][:10]:
            notes.append(
                f"differs: {item['submission_path']}: MLE-bench {item['mlebench']!r}, "
                f"mle_gym {item['mle_gym']!r}"
            )
    return table, notes


def episodes_table(records: Sequence[EpisodeRecord]) -> Table:
    """One row per attempted episode: its state, score, medal (gold, silver, bronze or none)
    and normalised score."""
    from mle_gym.grading.report import medal_name

    table = Table(title="episodes")
    table.add_column("competition", overflow="fold")
    for name in ("seed", "state", "score", "medal", "normalised"):
        table.add_column(name, justify="right" if name != "state" else "left")
    for record in records:
        report = record.report or {}
        score = report.get("score")
        normalised = report.get("normalized_score")
        medal = medal_name(report) if record.state == "done" else ""
        state = record.state if record.state != "done" or score is not None else "invalid"
        table.add_row(
            record.competition_id,
            str(record.seed),
            state,
            "" if score is None else f"{score:g}",
            medal,
            "" if normalised is None else f"{normalised:.3f}",
        )
    return table


def cost_table(summary: RunSummary) -> Table | None:
    """Model calls, tokens, cost and wall time per competition and for the run (every
    episode attempted, graded or not); None for a run without episodes."""
    cost = summary.cost
    if not cost.get("episodes"):
        return None
    table = Table(title="cost (every episode attempted)")
    heads = ("episodes", "model calls", "tokens in", "tokens out", "cost $", "wall time")
    table.add_column("competition", overflow="fold")
    for head in heads:
        table.add_column(head, justify="right")

    def cells(name: str, c: dict) -> list[str]:
        return [
            name,
            f"{c['episodes']:,}",
            f"{c['model_calls']:,}",
            f"{c['prompt_tokens']:,}",
            f"{c['completion_tokens']:,}",
            f"{c['cost_usd']:.4f}",
            _duration(c["seconds"]),
        ]

    for name, c in cost["competitions"].items():
        table.add_row(*cells(name, c))
    table.add_section()
    table.add_row(*cells("run", cost["total"]), style="bold")
    return table


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"
