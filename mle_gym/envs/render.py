"""What `render_mode="human"` prints: a glance at the last observation, not the page.

A reset's observation is the task statement and the tools' manual, pages long; a person
watching an episode, or gymnasium's `check_env` trying each declared render mode, wants a
line for it, and the head and tail of a long command output. `render_mode="ansi"` still
returns the observation whole, and observations themselves are never cut here.
"""

from __future__ import annotations

HEAD_LINES = 8
TAIL_LINES = 4
#: A longer line (a minified JSON, a progress bar's carriage returns) is cut at this width.
LINE_CHARS = 200


def reset_glance(competition_id: str, observation: str) -> str:
    """One line for the statement a reset gave."""
    return (
        f"[{competition_id}] reset: the task statement and the tools' manual "
        f"({len(observation.splitlines())} lines; render_mode='ansi' returns them whole)"
    )


def step_glance(step: int, observation: str) -> str:
    """A step's output: its first and last lines when long, each line at most LINE_CHARS."""
    lines = observation.splitlines()
    if len(lines) > HEAD_LINES + TAIL_LINES + 1:
        hidden = len(lines) - HEAD_LINES - TAIL_LINES
        lines = [
            *lines[:HEAD_LINES],
            f"... {hidden} line(s) not shown (render_mode='ansi' returns them) ...",
            *lines[-TAIL_LINES:],
        ]
    cut = [line if len(line) <= LINE_CHARS else f"{line[:LINE_CHARS]} ..." for line in lines]
    return "\n".join([f"[step {step}]", *cut])


def render(mode: str | None, competition_id: str, step: int, observation: str) -> str | None:
    """An env's `render()`: "ansi" returns the last observation whole, "human" prints a
    glance at it (a line for the statement after a reset)."""
    if mode == "ansi":
        return observation
    if mode == "human":
        if step:
            print(step_glance(step, observation))
        elif observation:  # after reset(), before the first step
            print(reset_glance(competition_id, observation))
    return None
