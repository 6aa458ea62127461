"""Observations as chat messages (observation_format="messages"), for RL trainers.

Trainers keep the episode as a chat conversation: reset gives the opening messages (the
tools' manual and budget as the system message, the task as the user message) and each step
gives the tool's result as one "tool" message, which they append as it is after the
assistant's call. Text stays the default observation.
"""

from __future__ import annotations

from typing import Any

from gymnasium.spaces import Space

OBSERVATION_FORMATS = ("text", "messages")


class ChatMessages(Space):
    """A chat message ({"role", "content", ...}) or a list of them."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        items = x if isinstance(x, list) else [x]
        return bool(items) and all(
            isinstance(m, dict)
            and isinstance(m.get("role"), str)
            and isinstance(m.get("content"), str)
            for m in items
        )

    def sample(self, mask: Any = None, probability: Any = None) -> dict[str, str]:
        return {"role": "tool", "content": ""}

    def __repr__(self) -> str:
        return "ChatMessages()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChatMessages)


def opening(manual: str, task: str) -> list[dict[str, str]]:
    """The reset observation: the system message (tools, budget) and the user's task."""
    return [{"role": "system", "content": manual}, {"role": "user", "content": task}]


def tool_result(content: str, tool: str, call_id: str | None) -> dict[str, str]:
    """One step's result; with the id of the model's tool call when the action carried one."""
    message = {"role": "tool", "name": tool, "content": content}
    if call_id is not None:
        message["tool_call_id"] = call_id
    return message
