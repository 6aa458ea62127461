"""The env's tools as chat-completions function tools, and tool calls back into env actions."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


def _function(
    name: str, description: str, properties: dict[str, Any], required: tuple[str, ...] = ()
) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": list(required)},
        },
    }


_PATH = {"type": "string", "description": "absolute path inside the sandbox"}

#: One function per env tool; argument names are the env's own, so a call maps 1:1 to an action.
TOOLS: list[dict[str, Any]] = [
    _function(
        "bash",
        "Run a bash command in a persistent shell (cwd and variables carry over). "
        "Long output is cut to its head and tail.",
        {"command": {"type": "string"}},
        ("command",),
    ),
    _function(
        "view",
        "Show a file with line numbers, or list a directory.",
        {
            "path": _PATH,
            "view_range": {
                "type": "array",
                "items": {"type": "integer"},
                "description": "[start_line, end_line], end -1 = to the end (optional)",
            },
        },
        ("path",),
    ),
    _function(
        "create",
        "Create a new file with the given content.",
        {"path": _PATH, "file_text": {"type": "string"}},
        ("path", "file_text"),
    ),
    _function(
        "str_replace",
        "Replace text that occurs exactly once in a file.",
        {"path": _PATH, "old_str": {"type": "string"}, "new_str": {"type": "string"}},
        ("path", "old_str"),
    ),
    _function(
        "insert",
        "Insert text after line insert_line (0 = at the top).",
        {"path": _PATH, "insert_line": {"type": "integer"}, "new_str": {"type": "string"}},
        ("path", "insert_line", "new_str"),
    ),
    _function("validate", "Check the submission file's format (does not reveal a score).", {}),
    _function(
        "submit",
        "End the episode and grade the submission file. Call it once, when "
        "the submission is written and valid.",
        {},
    ),
]
TOOL_NAMES = frozenset(t["function"]["name"] for t in TOOLS)


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
        if name not in TOOL_NAMES:
            calls.append(
                Call(
                    call_id,
                    name,
                    None,
                    f"unknown tool {name!r}; tools: {', '.join(sorted(TOOL_NAMES))}",
                )
            )
            continue
        try:
            args = json.loads(function.get("arguments") or "{}")
        except json.JSONDecodeError as exc:
            calls.append(Call(call_id, name, None, f"arguments are not valid JSON: {exc}"))
            continue
        if not isinstance(args, dict):
            calls.append(Call(call_id, name, None, "arguments must be a JSON object"))
            continue
        calls.append(Call(call_id, name, {"tool": name, **args}))
    return calls
