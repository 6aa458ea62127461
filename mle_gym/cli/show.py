"""What the `mle-gym` command prints: tables that fit the terminal (or 80 columns when piped),
grading reports, and one episode's steps.

rich is imported here only, when something is printed, so `mle-gym --help` never pays for it.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from mle_gym.competitions import Competition
    from mle_gym.grading.report import GradeReport
    from mle_gym.runner import Step

_console: Console | None = None
_error_console: Console | None = None
#: Lines of a step's output shown live: head and tail, the rest is cut (and said so).
STEP_HEAD_LINES = 6
STEP_TAIL_LINES = 5


def console() -> Console:
    global _console
    if _console is None:
        from rich.console import Console

        _console = Console()
    return _console


def plain(text: object) -> str:
    """`text` as rich prints it literally: file names, reasons and commands come from
    agents, and `[/x]` in one would otherwise be read as markup (and raise)."""
    from rich.markup import escape

    return escape(str(text))


def log(message: str) -> None:
    console().print(message, style="dim", markup=False, highlight=False)


def say(message: str, style: str | None = None) -> None:
    console().print(message, style=style, markup=False, highlight=False)


def error(message: str) -> None:
    """A failure the user can act on: `error: ...` on stderr, as argparse says its own (the
    command then exits 2), so stdout keeps only what was asked for. Not wrapped by us: a
    path or command in it stays whole to copy (the terminal wraps for the eye)."""
    _stderr_line(f"error: {message}", "red")


def note(message: str) -> None:
    """Something the user should change in how they call us (a deprecated option): one
    `note: ...` line on stderr, so stdout keeps only what was asked for."""
    _stderr_line(f"note: {message}", "yellow")


def show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """`warnings.showwarning` for the command: one `warning: ...` line on stderr, without
    the file, line number and source line Python adds (they are mle_gym's, not the user's)."""
    _stderr_line(f"warning: {message}", "yellow")


def _stderr_line(text: str, style: str) -> None:
    global _error_console
    if _error_console is None:
        from rich.console import Console

        _error_console = Console(stderr=True)
    _error_console.print(text, style=style, markup=False, highlight=False, soft_wrap=True)


# -- competitions -----------------------------------------------------------------------------
#: Columns of `mle-gym list`, widest set first; narrower terminals get a shorter set.
LIST_COLUMNS = (
    ("id", "split", "metric", "teams", "gold", "silver", "bronze", "median", "sample", "prepared"),
    ("id", "split", "metric", "gold", "median", "prepared"),
    ("id", "metric", "prepared"),
)
#: Where even the last set does not fit (80 columns: ids run to 56 characters), each row is
#: its id with its metric on a second line, so nothing is cut or broken over lines.
STACKED = ("competition", "prepared")


def competition_cells(comp: Competition, prepared: bool, differs: bool = False) -> dict[str, str]:
    arrow = "↓" if comp.lower_is_better else "↑"
    t = comp.thresholds
    return {
        "id": comp.id,
        "split": comp.split,
        "metric": f"{comp.metric} {arrow}",
        "teams": f"{comp.num_teams}{'*' if comp.reference_panel is not None else ''}",
        "gold": f"{t.gold:g}",
        "silver": f"{t.silver:g}",
        "bronze": f"{t.bronze:g}",
        "median": f"{t.median:g}",
        "sample": f"{comp.sample_score:g}",
        "prepared": ("yes, differs!" if differs else "yes") if prepared else "no",
    }


def competitions_table(rows: Sequence[dict[str, str]], width: int | None = None) -> Any:
    """The widest column set whose cells fit `width` (the console's by default) unbroken;
    else ids with their metrics stacked."""
    from rich.measure import Measurement

    width = width or console().width
    options = console().options.update_width(10_000)  # the table's own width, unsqueezed
    for level, columns in enumerate(LIST_COLUMNS):
        table = _list_table(rows, columns, level)
        if Measurement.get(console(), options, table).maximum <= width:
            return table
    stacked = [
        {"competition": f"{row['id']}\n  {row['metric']}", "prepared": row["prepared"]}
        for row in rows
    ]
    return _list_table(stacked, STACKED, len(LIST_COLUMNS))


def _list_table(rows: Sequence[dict[str, str]], columns: Sequence[str], level: int) -> Any:
    from rich import box
    from rich.table import Table

    caption = None if level == 0 else "a wider terminal, or --json, shows every column"
    table = Table(
        title="mle_gym competitions (↑ higher is better, ↓ lower is better)",
        caption=caption,
        box=box.SIMPLE_HEAD if level else box.HEAVY_HEAD,
    )
    for column in columns:
        text = column in ("id", "competition", "split", "metric", "prepared")
        # Nothing wraps: ids are what one types next, and the set was chosen to fit.
        table.add_column(column, justify="left" if text else "right", no_wrap=True)
    for row in rows:
        table.add_row(*(row[c] for c in columns))
    return table


# -- grading ----------------------------------------------------------------------------------
def print_report(report: GradeReport) -> None:
    from rich.table import Table

    table = Table(title=f"grade: {report.competition_id}", show_header=False)
    table.add_column("field", no_wrap=True)
    table.add_column("value", overflow="fold")
    for key, value in report.to_dict().items():
        table.add_row(key, "" if value is None else plain(value))
    console().print(table)


# -- one episode, live ------------------------------------------------------------------------
def show_step(step: Step) -> None:
    action = step.action
    if isinstance(action, dict):
        label = action.get("tool", "?")
        detail = action.get("command") or action.get("path") or ""
    else:
        label, detail = "bash", str(action)
    info = step.info
    out = console()
    status = "" if info.get("exit_code") in (None, 0) else f" [red]exit {info['exit_code']}[/red]"
    out.rule(
        f"step {info.get('step')}: {plain(label)}{status}  (time left {info.get('time_left')} s)"
    )
    if detail:
        out.print(f"$ {detail.splitlines()[0][:200]}", style="cyan", markup=False, highlight=False)
    lines = step.observation.splitlines()
    if len(lines) <= STEP_HEAD_LINES + STEP_TAIL_LINES + 1:
        out.print("\n".join(lines), markup=False, highlight=False)
        return
    cut = len(lines) - STEP_HEAD_LINES - STEP_TAIL_LINES
    out.print("\n".join(lines[:STEP_HEAD_LINES]), markup=False, highlight=False)
    say(f"... {cut} line(s) cut here (the agent saw them all) ...", style="yellow")
    out.print("\n".join(lines[-STEP_TAIL_LINES:]), markup=False, highlight=False)


# -- what to type next -----------------------------------------------------------------------
#: Where a reason goes when it cannot sit beside its command.
_HINT_INDENT = "      "


def next_steps(hints: Sequence[tuple[str, str]], title: str = "next steps:") -> None:
    """Commands to type next, each with what it gives. Reasons line up beside the commands
    when every line fits the terminal, else each goes under its command; nothing is cut
    mid-command by the terminal's own wrapping."""
    import textwrap

    width = max(console().width, 40)
    column = max(len(command) for command, _ in hints) + 4
    beside = all(column + len(why) <= width for _, why in hints)
    lines = [title]
    for command, why in hints:
        if beside:
            lines.append(f"  {command.ljust(column - 2)}{why}")
            continue
        # a command's lines end in a backslash, so that copied whole it still runs
        wrapped = textwrap.wrap(
            command,
            width - 2,
            initial_indent="  ",
            subsequent_indent="    ",
            break_long_words=False,
            break_on_hyphens=False,
        )
        lines += [f"{line} \\" for line in wrapped[:-1]] + wrapped[-1:]
        lines += textwrap.wrap(
            why, width, initial_indent=_HINT_INDENT, subsequent_indent=_HINT_INDENT
        )
    console().print("\n".join(lines), style="dim", markup=False, highlight=False, soft_wrap=True)


def episode_hints(competition_id: str, policy: str, *, demo: bool) -> list[tuple[str, str]]:
    """After the demo, the README's next step: a Kaggle competition. After one episode, more
    of the same: a batch of seeds, and an LLM agent where a scripted policy ran."""
    if demo:
        return [
            ("mle-gym prepare spaceship-titanic", "a Kaggle competition"),
            ("mle-gym prepare spaceship-titanic --raw DIR", "or from files you have"),
            ("mle-gym list", "every competition"),
            ('gym.make("mle/spaceship-titanic-v0")', "from Python (README.md)"),
        ]
    as_policy = "" if policy == "scripted" else f" --policy {policy}"
    hints = [
        (
            f"mle-gym run {competition_id}{as_policy} --seeds 3 --workers 2",
            "a batch, then mle-gym report",
        )
    ]
    if policy == "scripted":
        hints.append((f"mle-gym run {competition_id} --policy llm", "an LLM agent: docs/agents.md"))
    hints.append(("mle-gym list", "every competition"))
    return hints


def batch_hints(run_dir: Path, resume: str, unfinished: int) -> list[tuple[str, str]]:
    """After a batch: its report, and the same command again when episodes are left to run
    (it resumes: graded episodes are kept, failed ones run again)."""
    where = shlex.quote(str(run_dir))
    report = (f"mle-gym report {where} --episodes", "per-episode rows; --json: all")
    if unfinished:
        return [(resume, f"run the {unfinished} episode(s) left; graded ones are kept"), report]
    return [report, (f"ls {where}/episodes/ID/seed-K", "each episode's files")]
