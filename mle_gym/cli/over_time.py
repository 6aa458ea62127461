"""`mle-gym report RUN --over-time [--times 1h,2h]` and `--at 12h`: the options, kept apart
so any report command can take them (mle_gym.analysis.over_time computes the figures,
mle_gym.analysis.report_render prints them)."""

from __future__ import annotations

import argparse


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
