"""`mle-gym report RUN --over-time [--times 1h,2h]` and `--at 12h`: the options and what
they print, kept apart so any report command can take them (mle_gym.analysis.over_time)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from mle_gym.cli.show import console


def _duration(text: str) -> float:
    from mle_gym.analysis.over_time import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _durations(text: str) -> list[float]:
    return [_duration(part) for part in text.split(",") if part.strip()]


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--over-time",
        action="store_true",
        dest="over_time",
        help="any-medal rate and mean normalised score per split at elapsed times (each "
        "episode counted with its last graded submission snapshot by then)",
    )
    parser.add_argument(
        "--times",
        type=_durations,
        metavar="T,T,...",
        help="the times for --over-time and the HTML report's curves, e.g. 30m,1h,6h "
        "(default 1,2,4,8,12,24 h, clipped to the run's budget)",
    )
    parser.add_argument(
        "--at",
        type=_duration,
        metavar="T",
        help="the whole report as if every episode had stopped at T (e.g. 12h)",
    )


def print_over_time(args: argparse.Namespace, run: Any, rule: str, as_json: bool) -> None:
    from rich.table import Table

    from mle_gym.analysis.over_time import over_time, run_budget, time_points

    root = run.root
    points = over_time(run, time_points(args.times, run_budget(root)), rule)
    if as_json:
        print(json.dumps([p.to_dict() for p in points], indent=2))
        return
    table = Table(title=f"score over time: {root}")
    for name in ("elapsed", "scope", "seeds", "any medal %", "normalised score"):
        table.add_column(name, justify="left" if name == "scope" else "right")
    for p in points:
        medal, norm = p.figures["any_medal"], p.figures["normalized_score"]
        table.add_row(
            f"{p.seconds / 3600:g} h",
            p.scope,
            str(p.seeds),
            _cell(medal, p.seeds, percent=True),
            _cell(norm, p.seeds, percent=False),
        )
    console().print(table)
    unknown = points[0].unknown_times if points else 0
    if unknown:
        console().print(f"{unknown} episode(s) have no snapshots: counted with their final grade")


def _cell(figure: tuple[float, float | None], seeds: int, percent: bool) -> str:
    from mle_gym.analysis.aggregate import Estimate
    from mle_gym.analysis.render import format_figure

    return format_figure(Estimate(*figure, n=seeds), percent=percent)
