"""The env's tools as chat-completions function tools, and tool calls back into env actions."""

from __future__ import annotations

import json
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
    #: The arguments as the model wrote them, to send back in the transcript.
    arguments: str = "{}"


def parse_calls(message: dict[str, Any]) -> list[Call]:
    """The tool calls of an assistant message as env actions; malformed ones, whatever their
    shape, carry an error for the model rather than raising."""
    calls = []
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raw_calls = [raw_calls]
    for raw in raw_calls:
        raw = raw if isinstance(raw, dict) else {}
        function = raw.get("function") if isinstance(raw.get("function"), dict) else {}
        name = function.get("name")
        name = name if isinstance(name, str) else ""
        call_id = raw.get("id") if isinstance(raw.get("id"), str) else f"call_{len(calls)}"
        arguments = function.get("arguments")
        text = (arguments or "{}") if isinstance(arguments, str) else _as_text(arguments)
        try:
            action = action_from_tool_call(name, arguments)
        except ActionError as exc:
            calls.append(Call(call_id, name, None, str(exc), text))
            continue
        calls.append(Call(call_id, name, action, arguments=text))
    return calls


def _as_text(arguments: Any) -> str:
    """Arguments a server gave already decoded, as the JSON text the transcript holds."""
    if arguments is None:
        return "{}"
    try:
        return json.dumps(arguments)
    except (TypeError, ValueError, RecursionError):
        return "{}"
