"""The live display of a batch run: episodes done, running, medals so far, time left."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markup import escape
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from mle_gym.batch.spec import EpisodeTask
from mle_gym.grading.report import MEDALS, medal_name
from mle_gym.runs.layout import TRAJECTORY_FILE


@dataclass
class _Running:
    task: EpisodeTask
    trajectory: Path
    started: float
    offset: int = 0
    lines: int = 0

    def steps(self) -> int | None:
        """Steps written so far (None before the trajectory exists, e.g. on Ray)."""
        try:
            with open(self.trajectory, "rb") as handle:
                handle.seek(self.offset)
                chunk = handle.read()
        except FileNotFoundError:
            return None
        self.offset += len(chunk)
        self.lines += chunk.count(b"\n")
        return max(0, self.lines - 1)  # the first line is the reset


class BatchProgress:
    """A `Listener` for `run_batch` that draws itself with rich, and logs each finished
    episode as a line (so a log file or CI output keeps the story too)."""

    def __init__(self, console: Console, total: int, title: str) -> None:
        self.console = console
        self.total = total
        self.title = title
        self.skipped_count = 0
        self.done = 0
        self.failed = 0
        self.valid = 0
        self.medals: Counter[str] = Counter()
        self.running: dict[str, _Running] = {}
        self.began = time.monotonic()
        self._live = Live(console=console, auto_refresh=False, transient=False)

    def __enter__(self) -> BatchProgress:
        self._live.start()
        self.tick()
        return self

    def __exit__(self, *exc: object) -> None:
        self.tick()
        self._live.stop()
        if not self.console.is_terminal:  # rich ends the last frame with a newline only on a tty
            self.console.line()

    # -- the Listener interface -------------------------------------------------------------
    def skipped(self, task: EpisodeTask, result: dict[str, Any] | None) -> None:
        self.skipped_count += 1
        self._tally(result)

    def started(self, task: EpisodeTask, directory: Path) -> None:
        self.running[task.key] = _Running(task, directory / TRAJECTORY_FILE, time.monotonic())

    def finished(
        self, task: EpisodeTask, status: dict[str, Any], result: dict[str, Any] | None
    ) -> None:
        run = self.running.pop(task.key, None)
        seconds = time.monotonic() - run.started if run else 0.0
        if status["state"] == "done":
            self.done += 1
            self._tally(result)
            self.console.print(
                f"[green]✓[/green] {escape(f'{task.key}: {_describe(result)}')} "
                f"({_clock(seconds)})",
                highlight=False,
            )
        else:
            self.failed += 1
            reason = (status.get("error") or "").strip().splitlines()
            self.console.print(
                f"[red]✗[/red] {escape(task.key)} failed ({_clock(seconds)}): "
                f"{escape(reason[-1]) if reason else 'no reason given'}",
                highlight=False,
                markup=True,
            )

    def tick(self) -> None:
        self._live.update(self._render(), refresh=True)

    # -- drawing ----------------------------------------------------------------------------
    def _tally(self, result: dict[str, Any] | None) -> None:
        if not result:
            return
        self.valid += bool(result.get("valid_submission"))
        for medal in MEDALS:
            self.medals[medal] += bool(result.get(f"{medal}_medal"))

    def time_left(self) -> float | None:
        """Remaining episodes at the pace of this run so far (None before the first ends)."""
        ended = self.done + self.failed
        if not ended:
            return None
        remaining = self.total - self.skipped_count - ended
        return remaining * (time.monotonic() - self.began) / ended

    def _render(self) -> RenderableType:
        finished = self.skipped_count + self.done
        left = self.time_left()
        bar = Table.grid(padding=(0, 1))
        bar.add_row(
            ProgressBar(total=max(1, self.total), completed=finished, width=40),
            f"{finished}/{self.total} episodes",
            f"elapsed {_clock(time.monotonic() - self.began)}",
            f"time left {'—' if left is None else '~' + _clock(left)}",
        )
        graded = self.skipped_count + self.done
        stats = Text.assemble(
            (f"running {len(self.running)}", "cyan"),
            " · ",
            (f"failed {self.failed}", "red" if self.failed else ""),
            " · ",
            f"already done {self.skipped_count}",
            " · ",
            f"valid {self.valid}/{graded}",
            " · medals ",
            ("gold ", "bold yellow"),
            str(self.medals["gold"]),
            " ",
            ("silver ", "bold white"),
            str(self.medals["silver"]),
            " ",
            ("bronze ", "bold dark_orange3"),
            str(self.medals["bronze"]),
        )
        parts: list[RenderableType] = [Text(self.title, style="bold"), bar, stats]
        if self.running:
            table = Table(show_edge=False, box=None, padding=(0, 2))
            for column in ("running episode", "step", "for"):
                table.add_column(column, style="dim")
            for run in self.running.values():
                steps = run.steps()
                table.add_row(
                    run.task.key,
                    "—" if steps is None else str(steps),
                    _clock(time.monotonic() - run.started),
                )
            parts.append(table)
        return Group(*parts)


def _describe(result: dict[str, Any] | None) -> str:
    if not result:
        return "finished"
    error = result.get("episode_error")
    ended = f"; ended by an error: {error.splitlines()[0][:200]}" if error else ""
    if not result.get("valid_submission"):
        return f"no valid submission ({result.get('error') or 'invalid'}){ended}"
    medal = medal_name(result)
    score = result.get("score")
    text = f"score {score:.5g}" if isinstance(score, (int, float)) else "valid"
    return f"{text}, {'no' if medal == 'none' else medal} medal, {result.get('steps')} steps{ended}"


def _clock(seconds: float) -> str:
    return str(timedelta(seconds=int(max(0.0, seconds))))
