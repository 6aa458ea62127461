"""The env's tools as chat-completions function tools, and tool calls back into env actions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mle_gym.tools.actions import ActionError
from mle_gym.tools.schemas import action_from_tool_call, tool_schemas

#: One function per env tool, from the env's own definition (`mle_gym.tool_schemas`).
TOOLS: list[dict[str, Any]] = tool_schemas()


@dataclass(frozen=True)
class Call:
    """One tool call of an assistant message: its id, and the env action or why there is none."""

    id: str
    name: str
    action: dict[str, Any] | None
    error: str | None = None


def parse_calls(message: dict[str, Any]) -> list[Call]:
    """The tool calls of an assistant message as env actions; malformed ones carry an error."""
    calls = []
    for raw in message.get("tool_calls") or []:
        function = raw.get("function") or {}
        name = function.get("name", "")
        call_id = raw.get("id") or f"call_{len(calls)}"
        try:
            action = action_from_tool_call(name, function.get("arguments"))
        except ActionError as exc:
            calls.append(Call(call_id, name, None, str(exc)))
            continue
        calls.append(Call(call_id, name, action))
    return calls
