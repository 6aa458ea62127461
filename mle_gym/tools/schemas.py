"""The tools as OpenAI function schemas, and a model's tool call back into an env action.

Trainers and scaffolds hand these schemas to a model and feed its calls to `env.step`;
both are generated from the table of tools (`mle_gym.tools.table.TOOLS`), so they cannot
drift from what the env accepts.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from typing import Any

from mle_gym.tools.actions import CALL_ID, ActionError, parse_action
from mle_gym.tools.table import TOOLS, Arg


def _json_type(arg: Arg) -> dict[str, Any]:
    if arg.type is str:
        kind: dict[str, Any] = {"type": "string"}
    elif arg.type is int:
        kind = {"type": "integer"}
    else:  # view_range, the one list argument
        kind = {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2}
    return {**kind, "description": arg.description} if arg.description else kind


@lru_cache(maxsize=1)
def _schemas() -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": tool.description,
                "parameters": {
                    "type": "object",
                    "properties": {k: _json_type(a) for k, a in tool.args.items()},
                    "required": [k for k, a in tool.args.items() if a.required],
                    "additionalProperties": False,
                },
            },
        }
        for name, tool in TOOLS.items()
    ]


def tool_schemas() -> list[dict[str, Any]]:
    """The chat-completions `tools` list: one function per env tool (a fresh copy)."""
    return copy.deepcopy(_schemas())


def decode_json(text: str, what: str) -> Any:
    """`text` (JSON a model wrote) decoded, or `ActionError` saying why not. A model may
    write anything: besides syntax errors, Python's decoder raises RecursionError on deep
    nesting and ValueError on integers over its digit limit, and neither may end an episode."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ActionError(f"{what}: JSON nested too deeply to decode") from None
    except ValueError as exc:  # JSONDecodeError among them
        raise ActionError(f"{what}: not valid JSON ({exc})") from None


def action_from_tool_call(
    name: str, arguments: str | dict[str, Any] | None, call_id: str | None = None
) -> dict[str, Any]:
    """The env action for a model's call of tool `name` with `arguments` (the JSON text the
    model wrote, or already decoded). Raises `ActionError` with a message for the model when
    the call is malformed, the same one `env.step` would give. With `call_id` (the call's
    "id"), an env made with observation_format="messages" answers with that id."""
    if isinstance(arguments, str):
        arguments = decode_json(arguments or "{}", f"the arguments of tool {name!r}")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ActionError(f"the arguments of tool {name!r} must be a JSON object")
    for reserved in ("tool", CALL_ID):
        if reserved in arguments:
            raise ActionError(f"tool {name!r} has no argument {reserved!r}")
    action = {"tool": name, **arguments}
    if call_id is not None:
        action[CALL_ID] = call_id
    parse_action(action)  # raises ActionError naming what is wrong
    return action
