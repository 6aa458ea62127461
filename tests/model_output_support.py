"""What the hostile-model-output tests share: tool-call text no decoder can take, and a
scripted server that sends it as a model would."""

from __future__ import annotations

import json
from typing import Any

from tests.llm_server import Plan, Reply, ScriptedLLMServer

#: Nesting far past Python's recursion limit: its JSON decoder raises RecursionError here.
DEPTH = 100_000
NESTED_ARRAYS = "[" * DEPTH + "]" * DEPTH
NESTED_OBJECTS = '{"a":' * DEPTH + "1" + "}" * DEPTH
COPY = "cp /home/data/sample_submission.csv /home/submission/submission.csv"
#: A tool call's arguments sent as this text, not as JSON of a dict (see RawArgumentsServer).
RAW = "__raw_arguments__"


class RawArgumentsServer(ScriptedLLMServer):
    """The scripted server, except that a call whose arguments are `{RAW: text}` is sent
    with `text` itself as its arguments: what a model writes need not be JSON at all."""

    def completion(self, request: dict[str, Any], index: int, reply: Reply) -> dict[str, Any]:
        body = super().completion(request, index, reply)
        for call in body["choices"][0]["message"].get("tool_calls") or []:
            arguments = json.loads(call["function"]["arguments"])
            if set(arguments) == {RAW}:
                call["function"]["arguments"] = arguments[RAW]
        return body


def stubborn_plan(tool_name: str, answer: str, first: Reply, last: Reply) -> Plan:
    """A model that sends `first`, then a `tool_name` call with arguments nested DEPTH
    levels deep until two answers in its conversation contain `answer`, then `last`. A
    scaffold that retries a failed model call with the same conversation never gets past
    the nested call."""
    nested = Reply(tool_calls=[(tool_name, {RAW: '{"command": ' + NESTED_ARRAYS + "}"})])

    def plan(request: dict[str, Any]) -> Reply:
        messages = request["messages"]
        if not any(m.get("role") == "tool" for m in messages):
            return first
        answered = sum(answer in str(m.get("content")) for m in messages)
        return nested if answered < 2 else last

    return plan
