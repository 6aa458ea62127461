"""The tools as Python methods, for frameworks that read a tool from a method's signature
and docstring (verifiers' MCP tools, TRL's environment classes).

Each method is written from the table of tools, so an adapter lists no tool or argument of
its own; it forwards the call to one method of the adapter that runs any tool.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from mle_gym.tools.table import Arg, Tool


def python_type(arg: Arg) -> Any:
    """The argument's type as a framework reads it from an annotation."""
    kind = arg.type if isinstance(arg.type, type) else list[int]  # view_range: [start, end]
    return kind if arg.required else kind | None


def tool_method(
    tool: Tool,
    forward: Callable[[Any, str, dict[str, Any]], Any],
    *,
    annotate: Callable[[Arg], Any] = python_type,
    doc: str | None = None,
) -> Callable[..., Any]:
    """A method named after `tool`, with its arguments as parameters (optional ones default
    to None), that calls `forward(self, tool_name, arguments)` with the arguments given."""
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += [
        inspect.Parameter(
            name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            annotation=annotate(arg),
            default=inspect.Parameter.empty if arg.required else None,
        )
        for name, arg in tool.args.items()
    ]
    signature = inspect.Signature(params, return_annotation=str)

    def method(*args: Any, **kwargs: Any) -> Any:
        arguments = dict(signature.bind(*args, **kwargs).arguments)
        return forward(arguments.pop("self"), tool.name, arguments)

    method.__signature__ = signature  # type: ignore[attr-defined]
    method.__annotations__ = {p.name: p.annotation for p in params[1:]} | {"return": str}
    method.__name__ = method.__qualname__ = tool.name
    method.__doc__ = tool.description if doc is None else doc
    return method
