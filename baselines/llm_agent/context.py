"""Keeping a long episode's conversation within the model's context.

The full transcript is kept; what is sent is a compacted view of it:
- the head (system prompt and task statement) is always sent whole;
- tool outputs and long tool-call arguments (file contents) older than the last few turns are
  cut to their head and tail, so the model still sees what it did and roughly what came back;
- if that is still over the character budget, the oldest turns are dropped whole (an assistant
  message with all its tool results, so every tool call keeps its answer) and a note says so.
"""

from __future__ import annotations

import json
from typing import Any

from mle_gym.tools.actions import ActionError
from mle_gym.tools.schemas import decode_json

Message = dict[str, Any]


def elide(text: str, keep: int) -> str:
    """`text` cut to `keep` characters of head and tail, saying how much went."""
    if len(text) <= keep:
        return text
    half = keep // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters elided ...]\n{text[-half:]}"


def _elide_arguments(arguments: str, keep: int) -> str:
    if len(arguments) <= keep:
        return arguments
    try:
        args = decode_json(arguments, "the arguments")
        if isinstance(args, dict):
            return json.dumps(
                {k: elide(v, keep) if isinstance(v, str) else v for k, v in args.items()}
            )
    except (ActionError, ValueError, RecursionError):  # whatever the model wrote: cut as text
        pass
    return elide(arguments, keep)


def _shorten(message: Message, keep: int) -> Message:
    if message.get("role") == "tool" and isinstance(message.get("content"), str):
        return {**message, "content": elide(message["content"], keep)}
    if message.get("role") == "assistant" and message.get("tool_calls"):
        calls = [
            {
                **c,
                "function": {
                    **c["function"],
                    "arguments": _elide_arguments(c["function"].get("arguments") or "", keep),
                },
            }
            for c in message["tool_calls"]
        ]
        return {**message, "tool_calls": calls}
    return message


def _turns(messages: list[Message]) -> list[list[Message]]:
    """Messages grouped into turns, each starting at an assistant message."""
    turns: list[list[Message]] = []
    for message in messages:
        if message.get("role") == "assistant" or not turns:
            turns.append([])
        turns[-1].append(message)
    return turns


def _size(messages: list[Message]) -> int:
    return sum(len(json.dumps(m)) for m in messages)


def compact(
    messages: list[Message],
    *,
    head: int = 2,
    recent_turns: int = 4,
    old_output_chars: int = 600,
    max_chars: int = 200_000,
) -> list[Message]:
    """The view of `messages` to send: old outputs shortened, oldest turns dropped to fit."""
    fixed, rest = messages[:head], messages[head:]
    turns = _turns(rest)
    cut = max(0, len(turns) - recent_turns)
    turns = [[_shorten(m, old_output_chars) for m in t] for t in turns[:cut]] + turns[cut:]
    dropped = 0
    budget = max_chars - _size(fixed) - 200  # room for the note
    while len(turns) > 1 and sum(_size(t) for t in turns) > budget:
        turns.pop(0)
        dropped += 1
    note = (
        [
            {
                "role": "user",
                "content": f"[{dropped} earlier turns were dropped to fit the "
                "context; files you wrote are still in the sandbox]",
            }
        ]
        if dropped
        else []
    )
    return fixed + note + [m for t in turns for m in t]
