"""`mle-gym report RUN --html FILE`: the report as one self-contained page.

Figures are drawn with matplotlib (the `report` extra) as inline SVG, text as paths, so the
page loads nothing from anywhere: per-split medal rates with SEM error bars, the any-medal
rate beside each published row (named on its line), each competition's normalised score
against its bronze/silver/gold lines, the pass@k curve, the score-over-time curves
(any-medal rate and mean normalised score per split at elapsed times, from the graded
submission snapshots), then the tables, the rule's seed accounting, the provenance block and
the integrity record.
"""

from __future__ import annotations

import html
import io
from collections.abc import Sequence
from typing import Any

from mle_gym.analysis.aggregate import FIGURES, Estimate, Row, RunSummary, competition_values
from mle_gym.analysis.over_time import Point
from mle_gym.analysis.passk import pass_table
from mle_gym.analysis.published import COLUMNS
from mle_gym.analysis.render import format_figure, header_lines, shown_splits
from mle_gym.grading import normalized_score
from mle_gym.runs.run import Run

#: Colours of the page's marks (matplotlib's palette), one per kind of mark.
RUN_COLOUR = "#1f77b4"
PUBLISHED_COLOUR = "#ff7f0e"
SCORE_COLOUR = "#2ca02c"
PASS_COLOURS = ("#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
TIME_COLOURS = ("#d62728", "#008b8b", "#1a55a3", "#6b8e23", "#b8860b")
MEDAL_COLOURS = {"gold": "#d4af37", "silver": "#8a8a8a", "bronze": "#cd7f32"}
RATES_SHOWN = ("valid_submission", "above_median", "any_medal", "gold_medal")
#: One distinct colour per rate (shades of one hue read as one series).
RATE_COLOURS = {
    "valid_submission": "#7f7f7f",
    "above_median": RUN_COLOUR,
    "any_medal": "#2ca02c",
    "gold_medal": MEDAL_COLOURS["gold"],
}
#: The published rows' figures per MLE-bench row: a marker shape, colour and size each, the
#: sizes decreasing so that equal figures show as nested marks.
SPLIT_MARKS = {
    "Low": ("o", "#1f77b4", 8),
    "Medium": ("s", "#ff7f0e", 6.5),
    "High": ("^", "#d62728", 5),
    "All": ("D", "#222222", 3.5),
}
#: A published row's name is cut to this many characters on its line (the list below the
#: figures has it whole).
LABEL_CHARS = 60
#: Curves that may coincide (pass@k of several rows, scores over time) differ in line style,
#: marker and marker size, drawn widest first, and are dodged a little along x: each stays
#: visible where the values are equal.
CURVE_STYLES = (("-", "s", 11), ("--", "o", 8), (":", "^", 6), ("-.", "D", 5), ("-", "v", 4))
DODGE = 0.04
#: Legends go right of the axes, never over the marks.
LEGEND = {"fontsize": 7, "loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "borderaxespad": 0}


def _pyplot() -> Any:
    try:
        import matplotlib
    except ModuleNotFoundError:
        raise RuntimeError(
            "the HTML report draws its figures with matplotlib: pip install 'mle-gym[report]'"
        ) from None
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.fonttype"] = "path"  # no font to fetch when viewed
    matplotlib.rcParams["svg.hashsalt"] = "mle-gym"  # the same run gives the same page
    import matplotlib.pyplot as plt

    return plt


def _svg(fig: Any) -> str:
    out = io.StringIO()
    fig.savefig(out, format="svg", bbox_inches="tight")
    fig.clear()
    text = out.getvalue()
    return text[text.index("<svg") :]


def rates_figure(plt: Any, summary: RunSummary) -> str:
    """Each split row's rates (mean ± SEM over seeds), one colour per rate."""
    return _svg(rates_axes(plt, summary).figure)


def rates_axes(plt: Any, summary: RunSummary) -> Any:
    rows = [r for r in shown_splits(summary) if r.figures]
    _, ax = plt.subplots(figsize=(6, 3.6))
    width = 0.8 / len(RATES_SHOWN)
    for i, key in enumerate(RATES_SHOWN):
        ax.bar(
            [j + i * width for j in range(len(rows))],
            [100 * r.figures[key].mean for r in rows],
            width,
            yerr=[100 * (r.figures[key].sem or 0.0) for r in rows],
            capsize=3,
            label=dict(FIGURES)[key],
            color=RATE_COLOURS[key],
        )
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(rows))], [r.name for r in rows])
    ax.set_ylabel("% of episodes (mean ± SEM over seeds)")
    ax.set_ylim(0, 105)
    ax.set_title(f"this run ({summary.rule})")
    ax.legend(**LEGEND)
    return ax


def published_figure(plt: Any, published: dict[str, Any]) -> str:
    """The any-medal rate of each published row, named on its line, beside this run's."""
    return _svg(published_axes(plt, published).figure)


def published_axes(plt: Any, published: dict[str, Any]) -> Any:
    """One line per published row (and this run's first, where it has a Low/Medium/High/All
    figure), its any-medal % (mean ± SEM) per MLE-bench row as a marker of that row's shape."""
    ours = {n: v for n, v in published["run"].items() if v.get("mean") is not None}
    entries = (
        [("this run", {n: (v["mean"], v.get("sem")) for n, v in ours.items()})] if ours else []
    )
    for row in published["published"]:
        source = row["table"].split("-")[0]
        figures = {n: (f["mean"], f["sem"]) for n, f in row["any_medal"].items()}
        name = f"{row['agent']} / {row['llm']}"
        name = name if len(name) <= LABEL_CHARS else name[: LABEL_CHARS - 1] + "…"
        entries.append((f"{name} ({source})", figures))
    _, ax = plt.subplots(figsize=(7, 0.25 * len(entries) + 1.2))
    for z, (name, (marker, colour, size)) in enumerate(SPLIT_MARKS.items()):
        shown = [(y, f[name]) for y, (_, f) in enumerate(entries) if name in f]
        ax.errorbar(
            [m for _, (m, _) in shown],
            [y for y, _ in shown],
            xerr=[s or 0.0 for _, (_, s) in shown],
            fmt=marker,
            color=colour,
            markersize=size,
            capsize=2,
            label=name,
            zorder=2 + z,
            clip_on=False,  # a figure of 0 or 100 % is drawn whole
        )
    ax.set_yticks(range(len(entries)), [name for name, _ in entries], fontsize=7)
    if ours:
        ax.get_yticklabels()[0].set_color(RUN_COLOUR)
        ax.get_yticklabels()[0].set_fontweight("bold")
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(title="MLE-bench row", **LEGEND)
    ax.set_xlabel("any medal % (mean ± SEM)")
    ax.set_title(
        "beside MLE-bench's published rows"
        + ("" if ours else "\n(this run has no competition of their Low/Medium/High rows)")
    )
    return ax


def _normalised_thresholds(report: dict[str, Any]) -> dict[str, float]:
    """Bronze, silver and gold on the normalised scale (gold is 1 by definition)."""
    return {
        name: normalized_score(
            report[f"{name}_threshold"],
            report["sample_score"],
            report["gold_threshold"],
            report["is_lower_better"],
        )
        for name in MEDAL_COLOURS
    }


def scores_figure(plt: Any, run: Run, summary: RunSummary) -> str:
    return _svg(scores_axes(plt, run, summary).figure)


def scores_axes(plt: Any, run: Run, summary: RunSummary) -> Any:
    """Each competition's normalised score (mean ± SEM; each counted seed a dot) and its
    bronze, silver and gold thresholds on the same scale."""
    rows = [r for r in summary.competitions if r.figures]
    _, ax = plt.subplots(figsize=(max(5.0, 1.2 * len(rows) + 2), 3.6))
    for j, row in enumerate(rows):
        figure = row.figures["normalized_score"]
        ax.errorbar(
            [j],
            [figure.mean],
            yerr=[figure.sem or 0.0],
            fmt="s",
            markersize=10,
            color=SCORE_COLOUR,
            capsize=4,
            label="mean ± SEM over seeds" if j == 0 else None,
        )
        seeds = competition_values(run, row.name, summary.rule)
        ax.plot(
            [j + 0.15] * len(seeds),
            [v["normalized_score"] for v in seeds.values()],
            ".",
            color=SCORE_COLOUR,
            alpha=0.6,
            label="one seed" if j == 0 else None,
        )
        report = next(
            (r.report for r in run.records if r.competition_id == row.name and run.graded(r)),
            None,
        )
        if report is None:
            continue
        for name, level in _normalised_thresholds(report).items():
            ax.hlines(
                level,
                j - 0.35,
                j + 0.35,
                colors=MEDAL_COLOURS[name],
                linewidth=2,
                label=name if j == 0 else None,
            )
    ax.set_xticks(range(len(rows)), [r.name for r in rows], rotation=20, ha="right")
    ax.set_ylabel("normalised score (0 sample, 1 gold)")
    ax.set_title("normalised score per competition, against its medal lines")
    ax.legend(**LEGEND)
    return ax


def pass_k_figure(plt: Any, run: Run, summary: RunSummary) -> tuple[str, list[int]]:
    """pass@k of any medal for k = 1 .. the fewest counted episodes of a competition."""
    ax, ks = pass_k_axes(plt, run, summary)
    return (_svg(ax.figure), ks) if ax is not None else ("", [])


def pass_k_axes(plt: Any, run: Run, summary: RunSummary) -> tuple[Any, list[int]]:
    counts = [len(competition_values(run, r.name, summary.rule)) for r in summary.competitions]
    counts = [n for n in counts if n]
    if not counts:
        return None, []
    ks = list(range(1, min(counts) + 1))
    table = pass_table(run, summary, ks)
    _, ax = plt.subplots(figsize=(6, 3.6))
    splits = list(table["splits"].items())
    for i, (name, split) in enumerate(splits):
        _curve(ax, i, len(splits), PASS_COLOURS, name)(
            ks, [100 * split["by_k"][k]["any_medal"] for k in ks]
        )
    ax.set_xticks(ks)
    ax.set_xlabel("k (tries per competition)")
    ax.set_ylabel("pass@k, any medal %")
    ax.set_ylim(0, 105)
    ax.set_title("pass@k (unbiased estimate over seeds)")
    ax.legend(**LEGEND)
    return ax, ks


def _curve(ax: Any, i: int, count: int, colours: Sequence[str], label: str) -> Any:
    """A function drawing curve `i` of `count` (x, y[, yerr]) in its own style, dodged."""
    line, marker, size = CURVE_STYLES[i % len(CURVE_STYLES)]
    dodge = (i - (count - 1) / 2) * DODGE

    def draw(xs: Sequence[float], ys: Sequence[float], errors: Any = None) -> None:
        ax.errorbar(
            [x + dodge for x in xs],
            ys,
            yerr=errors,
            linestyle=line,
            marker=marker,
            markersize=size,
            linewidth=2,
            capsize=3,
            color=colours[i % len(colours)],
            label=label,
            zorder=2 + i,  # later (smaller) marks on top of earlier (larger) ones
        )

    return draw


def over_time_figure(plt: Any, points: list[Point]) -> str:
    """Per scope (each split row), the any-medal rate and the mean normalised score (mean ±
    SEM over seeds) against elapsed hours, as MLE-bench's scaling figure draws them."""
    scopes = list(dict.fromkeys(p.scope for p in points))
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.6))
    panels = (("any_medal", 100.0, "any medal %"), ("normalized_score", 1.0, "normalised score"))
    for ax, (key, scale, label) in zip(axes, panels, strict=True):
        for i, scope in enumerate(scopes):
            mine = [p for p in points if p.scope == scope]
            _curve(ax, i, len(scopes), TIME_COLOURS, scope)(
                [p.seconds / 3600 for p in mine],
                [scale * p.figures[key][0] for p in mine],
                [scale * (p.figures[key][1] or 0.0) for p in mine],
            )
        ax.set_xlabel("elapsed hours (each episode as if stopped then)")
        ax.set_ylabel(f"{label} (mean ± SEM over seeds)")
        if key == "any_medal":
            ax.set_ylim(0, 105)
        ax.set_title(f"{label} over time")
    axes[-1].legend(**LEGEND)  # both panels draw the same rows; between them it would cover one
    return _svg(fig)


def _time_table(points: list[Point]) -> str:
    body = "".join(
        f"<tr><td>{p.seconds / 3600:g}</td><th>{html.escape(p.scope)}</th><td>{p.seeds}</td>"
        f"<td>{_point_text(p, 'any_medal')}</td><td>{_point_text(p, 'normalized_score')}</td>"
        "</tr>"
        for p in points
    )
    unknown = points[0].unknown_times if points else 0
    note = (
        f"<p class=note>{unknown} episode(s) have no snapshots: counted with their final "
        "grade at every time</p>"
        if unknown
        else ""
    )
    return (
        "<table><tr><th>hours</th><th>row</th><th>seeds</th><th>any medal %</th>"
        f"<th>normalised score</th></tr>{body}</table>{note}"
    )


def _point_text(point: Point, key: str) -> str:
    mean, sem = point.figures[key]
    return format_figure(Estimate(mean, sem, point.seeds), percent=key != "normalized_score")


def _table(row_list: list[Row]) -> str:
    heads = "".join(f"<th>{html.escape(label)}</th>" for _, label in FIGURES)
    body = []
    for row in row_list:
        cells = []
        for key, _ in FIGURES:
            figure = row.figures.get(key)
            if figure is None:
                cells.append("<td>—</td>")
                continue
            scale, digits = (1.0, 3) if key == "normalized_score" else (100.0, 1)
            text = f"{figure.mean * scale:.{digits}f}"
            if figure.sem is not None:
                text += f" ± {figure.sem * scale:.{digits}f}"
            cells.append(f"<td>{text}</td>")
        body.append(
            f"<tr><th>{html.escape(row.name)}</th><td>{row.seeds}</td>{''.join(cells)}</tr>"
        )
    return (
        f"<table><tr><th>row</th><th>seeds</th>{heads}</tr>{''.join(body)}</table>"
        "<p class=note>rates in %, normalised score 0 = sample submission, 1 = gold</p>"
    )


def _published_list(published: dict[str, Any]) -> str:
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in published["notes"])
    page = f"<ul class=notes>{notes}</ul>{_published_rows(published['published'])}"
    if published.get("additional"):
        page += (
            f"<h3>Additional submissions</h3><p>{html.escape(published['additional_note'])}</p>"
            + _published_rows(published["additional"])
        )
    return page


def _published_rows(rows: list[dict[str, Any]]) -> str:
    items = []
    for row in rows:
        figures = ", ".join(
            f"{n} {row['any_medal'][n]['mean']:.1f} ± {row['any_medal'][n]['sem']:.1f}"
            for n in COLUMNS
        )
        flags = (" (padded)" if row["padded"] else "") + (
            " (test feedback)" if row["test_feedback"] else ""
        )
        items.append(
            f"<li>{html.escape(row['agent'])} / {html.escape(row['llm'])}{flags}: {figures}; "
            f"{row['hours']:g} h; {html.escape(row['table'])}, {html.escape(row['date'])}, "
            f'<a href="{html.escape(row["source"])}">source</a></li>'
        )
    return f"<ul>{''.join(items)}</ul>"


STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th:first-child { text-align: left; }
figure { margin: 1.5em 0; }
figure svg { max-width: 100%; height: auto; }
pre { background: #f6f6f6; padding: 0.8em; white-space: pre-wrap; }
.note, .notes { color: #555; font-size: 0.9em; }
"""


def html_report(
    run: Run,
    summary: RunSummary,
    published: dict[str, Any] | None,
    provenance: list[str],
    title: str,
    integrity: Sequence[str] = (),
    points: Sequence[Point] = (),
) -> str:
    """The whole page, as text; `points` are the score-over-time figures (`over_time`)."""
    plt = _pyplot()
    figures = [("rates", "Medal rates per split", rates_figure(plt, summary))]
    if published:
        figures.append(
            ("published", "Beside MLE-bench's published rows", published_figure(plt, published))
        )
    figures.append(("scores", "Normalised score per competition", scores_figure(plt, run, summary)))
    curve, ks = pass_k_figure(plt, run, summary)
    if curve:
        figures.append(("pass-k", f"pass@k for k = 1..{ks[-1]}", curve))
    if points:
        figures.append(("over-time", "Score over time", over_time_figure(plt, list(points))))
    plt.close("all")
    sections = "".join(
        f'<figure class="plot" id="{name}"><figcaption>{html.escape(caption)}</figcaption>'
        f"{svg}</figure>"
        for name, caption, svg in figures
    )
    header = "".join(f"<li>{html.escape(line)}</li>" for line in header_lines(summary))
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><ul class=notes>{header}</ul>"
        f"{sections}"
        f"<h2>Per split</h2>{_table(shown_splits(summary))}"
        f"<h2>Per competition</h2>{_table(summary.competitions)}"
        + (f"<h2>Published rows</h2>{_published_list(published)}" if published else "")
        + (f"<h2>Score over time</h2>{_time_table(list(points))}" if points else "")
        + f"<h2>Provenance</h2><pre>{html.escape(chr(10).join(provenance))}</pre>"
        + f"<h2>Integrity</h2><pre>{html.escape(chr(10).join(integrity))}</pre>"
        "</body></html>"
    )
