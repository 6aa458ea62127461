"""Several runs' split rows side by side (`mle-gym report RUN_A RUN_B`): the same agent on
two task variants (MLE-bench's prompt, plain vs obfuscated), two models, two budgets. Each run
is aggregated on its own by the same rule; the rows are only placed next to each other."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.markup import escape
from rich.table import Table

from mle_gym.analysis.aggregate import FIGURES, RunSummary
from mle_gym.analysis.render import NARROW_FIGURES, format_figure
from mle_gym.runs.run import Run


@dataclass(frozen=True)
class Column:
    """One run of the comparison: where it is, its task variant, and its summary."""

    run: Run
    summary: RunSummary

    @property
    def task_variant(self) -> str:
        return (self.run.settings.get("env_kwargs") or {}).get("task") or "default"

    @property
    def label(self) -> str:
        return f"{self.run.root.name} ({self.task_variant})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_dir": str(self.run.root),
            "task_variant": self.task_variant,
            **self.summary.to_dict(),
        }


def row_names(columns: list[Column]) -> list[str]:
    """The split rows of every run (and "overall", which every run has), in order."""
    names: dict[str, None] = {}
    for column in columns:
        names.update((row.name, None) for row in column.summary.splits[:-1])
    return [*names, "overall"]


def comparison_table(columns: list[Column]) -> Table:
    """One line per split row and figure, one column per run (mean ± SEM over seeds, and
    the seeds counted); a run without that row shows —."""
    table = Table(title=f"runs side by side ({columns[0].summary.rule})")
    table.add_column("row")
    table.add_column("figure")
    for column in columns:
        heading = escape(f"{column.run.root.name}\n({column.task_variant})")
        table.add_column(heading, justify="right", overflow="fold")
    labels = dict(FIGURES)
    for name in row_names(columns):
        rows = [{r.name: r for r in c.summary.splits}.get(name) for c in columns]
        table.add_row(name, "seeds", *("—" if r is None else str(r.seeds) for r in rows))
        for key in NARROW_FIGURES:
            cells = []
            for row in rows:
                figure = None if row is None else row.figures.get(key)
                percent = key != "normalized_score"
                cells.append("—" if figure is None else format_figure(figure, percent=percent))
            unit = "" if key == "normalized_score" else " %"
            table.add_row("", labels[key] + unit, *cells)
        table.add_section()
    return table
