"""What the scaffold adapters share: the task text they get, and their signal words."""

from __future__ import annotations

# The task and budget from reset()'s info, without the tool manual: a scaffold brings its
# own tools.
from mle_gym.integrations.episode import task_prompt

__all__ = ["VALIDATE_HINT", "VALIDATE_SIGNAL", "is_signal", "task_prompt"]

#: A bash-only scaffold checks the submission's format by running `echo MLE_GYM_VALIDATE`.
VALIDATE_SIGNAL = "MLE_GYM_VALIDATE"

VALIDATE_HINT = (
    f"To check the submission file's format (it does not reveal a score), run exactly "
    f"`echo {VALIDATE_SIGNAL}` as a command on its own."
)


def is_signal(command: str, word: str) -> bool:
    """True when `command` is only `echo WORD` (quoted or not)."""
    parts = command.strip().split()
    return len(parts) == 2 and parts[0] == "echo" and parts[1].strip("'\"") == word
