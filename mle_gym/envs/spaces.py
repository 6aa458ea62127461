"""Spaces for text observations and tool actions.

Gymnasium's `Text` space only admits its charset (alphanumerics by default); real commands
and outputs hold any Unicode, so these spaces accept any string within the length bound.
Sampling still draws simple alphanumeric strings, which makes harmless random actions.
"""

from __future__ import annotations

from typing import Any

from gymnasium.spaces import Text

from mle_gym.tools.actions import MAX_ACTION_CHARS, ActionError, parse_action


class UnicodeText(Text):
    """Any `str` of at most `max_length` characters."""

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"


class ToolActionSpace(UnicodeText):
    """A bash command string, or a tool-call dict (see `mle_gym.tools.actions`)."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(max_length=MAX_ACTION_CHARS, min_length=0, seed=seed)

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        length = int(self.np_random.integers(1, 12))
        return super().sample(mask=(length, None))

    def contains(self, x: Any) -> bool:
        try:
            parse_action(x)
        except ActionError:
            return False
        return True

    def __repr__(self) -> str:
        return "ToolActionSpace()"
