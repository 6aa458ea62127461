"""Parsing an agent's action into a tool call, or a clear message saying what is wrong.

A plain string is a bash command. A dict names its tool under "tool" and uses the argument
names of the text-editor convention shared by OpenHands and SWE-agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Largest action accepted, in characters (commands and file contents alike).
MAX_ACTION_CHARS = 8_000_000


class ActionError(ValueError):
    """The action is malformed; the message goes back to the agent as the observation."""


@dataclass(frozen=True)
class Arg:
    type: type | tuple[type, ...]
    required: bool = True


_SCHEMAS: dict[str, dict[str, Arg]] = {
    "bash": {"command": Arg(str)},
    "view": {"path": Arg(str), "view_range": Arg((list, tuple), required=False)},
    "create": {"path": Arg(str), "file_text": Arg(str)},
    "str_replace": {"path": Arg(str), "old_str": Arg(str), "new_str": Arg(str, required=False)},
    "insert": {"path": Arg(str), "insert_line": Arg(int), "new_str": Arg(str)},
    "validate": {},
    "submit": {},
}
TOOL_NAMES = tuple(_SCHEMAS)


@dataclass(frozen=True)
class ToolCall:
    tool: str
    args: dict[str, Any]


def _size(value: Any) -> int:
    return len(value) if isinstance(value, str) else 0


def parse_action(action: Any) -> ToolCall:
    """Turn a string or dict action into a `ToolCall`; raise `ActionError` if malformed."""
    if isinstance(action, str):
        action = {"tool": "bash", "command": action}
    if not isinstance(action, dict):
        raise ActionError(
            f"an action must be a string (a bash command) or a dict with a 'tool' key, "
            f"not {type(action).__name__}"
        )
    if "tool" not in action:
        raise ActionError(
            f"the action has no 'tool' key; name one of: {', '.join(TOOL_NAMES)} "
            "(e.g. {'tool': 'bash', 'command': 'ls'}), or give a bash command as a plain string"
        )
    tool = action.get("tool")
    if tool not in _SCHEMAS:
        raise ActionError(f"unknown tool {tool!r}; the tools are: {', '.join(TOOL_NAMES)}")
    schema = _SCHEMAS[tool]
    unknown = sorted(str(k) for k in action if k != "tool" and k not in schema)
    if unknown:
        raise ActionError(
            f"tool {tool!r} takes {', '.join(schema) or 'no arguments'}; "
            f"unexpected: {', '.join(unknown)}"
        )
    args: dict[str, Any] = {}
    for name, arg in schema.items():
        if name not in action or action[name] is None:
            if arg.required:
                raise ActionError(f"tool {tool!r} needs the argument {name!r}")
            continue
        value = action[name]
        if isinstance(value, bool) or not isinstance(value, arg.type):
            expected = arg.type.__name__ if isinstance(arg.type, type) else "list of 2 integers"
            raise ActionError(
                f"argument {name!r} of tool {tool!r} must be a {expected}, "
                f"not {type(value).__name__}"
            )
        args[name] = value
    total = sum(_size(v) for v in args.values())
    if total > MAX_ACTION_CHARS:
        raise ActionError(
            f"the action is {total:,} characters long; the limit is {MAX_ACTION_CHARS:,}. "
            "Write large files from a script instead."
        )
    if tool == "bash" and "\x00" in args["command"]:
        raise ActionError("a bash command cannot contain NUL characters")
    if "view_range" in args:
        rng = args["view_range"]
        if len(rng) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in rng):
            raise ActionError("view_range must be [start_line, end_line] (end -1 = to the end)")
    return ToolCall(tool, args)
