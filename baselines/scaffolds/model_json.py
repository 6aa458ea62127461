"""Scaffolds' own decoding of a model's tool calls, made to fail the way they handle.

litellm, mini-swe-agent and the OpenHands SDK decode a call's arguments with `json.loads`
and answer the model (or keep the call as it came) on JSONDecodeError. Arguments nested
deeply make Python's decoder raise RecursionError instead, which they let through: the
model call fails, is retried with the same conversation, and the scaffold dies without the
model ever learning why. `decode_errors_as_json_errors(module)` gives a module a `json`
whose `loads` raises JSONDecodeError there too, so the library's own handling applies.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any


class _Json:
    """The json module, except that `loads` raises JSONDecodeError on too deep nesting."""

    def __getattr__(self, name: str) -> Any:
        return getattr(json, name)

    @staticmethod
    def loads(text: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return json.loads(text, *args, **kwargs)
        except RecursionError:
            doc = text if isinstance(text, str) else ""
            raise json.JSONDecodeError("nested too deeply to decode", doc, 0) from None


_JSON = _Json()


def decode_errors_as_json_errors(*modules: ModuleType) -> None:
    """Make each module's `json.loads` raise JSONDecodeError on deep nesting (idempotent)."""
    for module in modules:
        module.json = _JSON  # type: ignore[attr-defined]
