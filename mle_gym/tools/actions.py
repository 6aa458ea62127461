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
    description: str = ""


@dataclass(frozen=True)
class Tool:
    description: str
    args: dict[str, Arg]


_PATH = "absolute path inside the sandbox"

#: The one definition of the agent's tools: parsing, the JSON schemas given to models
#: (`mle_gym.tool_schemas`) and the scaffolds' adapters all read it.
TOOLS: dict[str, Tool] = {
    "bash": Tool(
        "Run a bash command in a persistent shell (the working directory, variables and "
        "background jobs carry over). Each command has a time limit; long output is cut to "
        "its head and tail, and the whole output is kept in a log file.",
        {"command": Arg(str, description="the command line")},
    ),
    "view": Tool(
        "Show a file with line numbers, or list a directory.",
        {
            "path": Arg(str, description=_PATH),
            "view_range": Arg(
                (list, tuple),
                required=False,
                description="[start_line, end_line], end -1 = to the end (optional)",
            ),
        },
    ),
    "create": Tool(
        "Create a new file with the given content.",
        {"path": Arg(str, description=_PATH), "file_text": Arg(str, description="the content")},
    ),
    "str_replace": Tool(
        "Replace text that occurs exactly once in a file.",
        {
            "path": Arg(str, description=_PATH),
            "old_str": Arg(str, description="the text to replace, exactly as in the file"),
            "new_str": Arg(str, required=False, description="the new text (empty if omitted)"),
        },
    ),
    "insert": Tool(
        "Insert text after line insert_line (0 = at the top).",
        {
            "path": Arg(str, description=_PATH),
            "insert_line": Arg(int, description="the line after which to insert"),
            "new_str": Arg(str, description="the text to insert"),
        },
    ),
    "validate": Tool("Check the submission file's format (does not reveal a score).", {}),
    "submit": Tool(
        "End the episode and grade the submission file. Call it once, when the submission "
        "is written and valid.",
        {},
    ),
}
TOOL_NAMES = tuple(TOOLS)
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
    if tool == "bash" and "\x00" in args["command"]:
        raise ActionError("a bash command cannot contain NUL characters")
    if "view_range" in args:
        rng = args["view_range"]
        if len(rng) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in rng):
            raise ActionError("view_range must be [start_line, end_line] (end -1 = to the end)")
    call_id = action.get(CALL_ID)
    if call_id is not None and not isinstance(call_id, str):
        raise ActionError(f"{CALL_ID} must be a string, not {type(call_id).__name__}")
    return ToolCall(tool, args, call_id)
