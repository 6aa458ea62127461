"""Parsing an agent's action into a tool call, or a clear message saying what is wrong.

A plain string is a bash command. A dict names its tool under "tool" and uses the argument
names of the text-editor convention shared by OpenHands and SWE-agent; what each tool takes
is in the table of tools (table.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mle_gym.tools.table import PLAIN_TOOL, TOOL_NAMES, TOOLS

#: Largest action accepted, in characters (commands and file contents alike).
MAX_ACTION_CHARS = 8_000_000


class ActionError(ValueError):
    """The action is malformed; the message goes back to the agent as the observation."""


#: Optional key of a dict action: the model's tool-call id, returned in a "messages" observation.
CALL_ID = "tool_call_id"


@dataclass(frozen=True)
class ToolCall:
    tool: str
    args: dict[str, Any]
    #: The id of the model's tool call this action answers (chat-message observations
    #: carry it back); None for plain actions.
    call_id: str | None = None


def _size(value: Any) -> int:
    return len(value) if isinstance(value, str) else 0


def parse_action(action: Any) -> ToolCall:
    """Turn a string or dict action into a `ToolCall`; raise `ActionError` if malformed."""
    if isinstance(action, str):
        action = {"tool": PLAIN_TOOL, "command": action}
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
    if not isinstance(tool, str) or tool not in TOOLS:
        raise ActionError(f"unknown tool {tool!r}; the tools are: {', '.join(TOOL_NAMES)}")
    schema = TOOLS[tool].args
    unknown = sorted(str(k) for k in action if k not in ("tool", CALL_ID) and k not in schema)
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
    for name, value in args.items():
        check = schema[name].check
        problem = check(value) if check is not None else None
        if problem is not None:
            raise ActionError(problem)
    call_id = action.get(CALL_ID)
    if call_id is not None and not isinstance(call_id, str):
        raise ActionError(f"{CALL_ID} must be a string, not {type(call_id).__name__}")
    return ToolCall(tool, args, call_id)
