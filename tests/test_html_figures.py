"""The HTML report's figures read as a reader needs: legends beside the marks, never over
them; one distinct colour per rate; every published row named on its line, and "this run"
listed only when it has a mark; a legend for every kind of mark; coinciding curves still
told apart. Checked on the matplotlib figures themselves (the page embeds them as drawn)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from mle_gym.analysis import html as page
from mle_gym.analysis.aggregate import aggregate
from mle_gym.analysis.published import compare_published
from mle_gym.runs.run import Run
from mle_gym.runs.store import EpisodeRecord

# real ids of MLE-bench's Low, Medium and High rows, and of a dev competition
LOW, MEDIUM, HIGH, DEV = (
    "aerial-cactus-identification",
    "AI4Code",
    "bms-molecular-translation",
    "sklearn-digits",
)


def _report(medal: str | None) -> dict[str, Any]:
    return {
        "valid_submission": True,
        "above_median": medal is not None,
        "any_medal": medal is not None,
        **{f"{m}_medal": m == medal for m in ("gold", "silver", "bronze")},
        "normalized_score": 1.0 if medal == "gold" else 0.4,
        "sample_score": 0.5,
        "gold_threshold": 0.9,
        "silver_threshold": 0.8,
        "bronze_threshold": 0.7,
        "is_lower_better": False,
    }


def _run(competitions: tuple[str, ...], medals: tuple[str | None, ...]) -> Run:
    records = tuple(
        EpisodeRecord(c, s, "done", 1, _report(medal), None, None)
        for c in competitions
        for s, medal in enumerate(medals)
    )
    settings = {"env_kwargs": {"time_limit": 24 * 3600}}
    return Run(Path("."), competitions, tuple(range(len(medals))), records, settings)


@pytest.fixture
def plt() -> Any:
    plt = page._pyplot()
    yield plt
    plt.close("all")


def _beside_the_axes(ax: Any) -> None:
    """The legend is drawn, and outside the area where the marks are."""
    ax.figure.canvas.draw()
    legend = ax.get_legend()
    assert legend is not None
    assert not legend.get_window_extent().overlaps(ax.get_window_extent())


def test_rates_have_a_colour_each_and_their_legend_beside_the_bars(plt: Any) -> None:
    run = _run((LOW, MEDIUM, HIGH), ("gold", None, "bronze"))
    ax = page.rates_axes(plt, aggregate(run))
    _beside_the_axes(ax)
    colours = [c.patches[0].get_facecolor()[:3] for c in ax.containers if hasattr(c, "patches")]
    assert len(colours) == len(page.RATES_SHOWN)
    for a, b in itertools.combinations(colours, 2):  # no two shades of one colour
        assert sum(abs(x - y) for x, y in zip(a, b, strict=True)) > 0.4, (a, b)


def test_published_rows_are_named_and_this_run_listed_only_with_a_mark(plt: Any) -> None:
    run = _run((LOW, MEDIUM), ("gold", None))
    published = compare_published(run, aggregate(run))
    ax = page.published_axes(plt, published)
    _beside_the_axes(ax)
    names = [label.get_text() for label in ax.get_yticklabels()]
    assert names[0] == "this run" and len(names) == len(published["published"]) + 1
    for row, name in zip(published["published"], names[1:], strict=True):
        assert name.startswith(f"{row['agent']} / ")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == list(page.SPLIT_MARKS)

    dev = _run((DEV,), ("gold", None))
    ax = page.published_axes(plt, compare_published(dev, aggregate(dev)))
    assert "this run" not in [label.get_text() for label in ax.get_yticklabels()]
    assert "this run has no competition" in ax.get_title()


def test_the_score_marks_have_a_legend(plt: Any) -> None:
    run = _run((LOW, MEDIUM), ("gold", None, "silver"))
    ax = page.scores_axes(plt, run, aggregate(run))
    _beside_the_axes(ax)
    texts = {t.get_text() for t in ax.get_legend().get_texts()}
    assert {"mean ± SEM over seeds", "one seed", "gold", "silver", "bronze"} <= texts


def test_coinciding_pass_at_k_curves_stay_apart(plt: Any) -> None:
    """Every row at 100 %: the curves differ in marker and line style, and are dodged."""
    run = _run((LOW, MEDIUM, HIGH), ("gold", "gold", "gold"))
    ax, ks = page.pass_k_axes(plt, run, aggregate(run))
    assert ks == [1, 2, 3]
    _beside_the_axes(ax)
    lines = [curve.lines[0] for curve in ax.containers]
    assert len(lines) >= 4  # Low, Medium, High, All, overall
    styles = [(line.get_marker(), line.get_linestyle(), line.get_markersize()) for line in lines]
    assert len(set(styles)) == len(styles)
    starts = [line.get_xdata()[0] for line in lines]
    assert len(set(starts)) == len(starts)
