"""What the scaffold adapters share: the task text they get, and their signal words."""

from __future__ import annotations

#: A bash-only scaffold checks the submission's format by running `echo MLE_GYM_VALIDATE`.
VALIDATE_SIGNAL = "MLE_GYM_VALIDATE"

VALIDATE_HINT = (
    f"To check the submission file's format (it does not reveal a score), run exactly "
    f"`echo {VALIDATE_SIGNAL}` as a command on its own."
)


def task_statement(observation: str) -> str:
    """The env's first observation without its tool manual: a scaffold brings its own tools."""
    head, found, rest = observation.partition("\n## Tools\n")
    if not found:
        return observation
    _, found, budget = rest.partition("\n## Budget\n")
    return f"{head.rstrip()}\n\n## Budget\n{budget}" if found else head.rstrip()


def is_signal(command: str, word: str) -> bool:
    """True when `command` is only `echo WORD` (quoted or not)."""
    parts = command.strip().split()
    return len(parts) == 2 and parts[0] == "echo" and parts[1].strip("'\"") == word
