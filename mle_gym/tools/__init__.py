"""The agent's actions, as functions over a sandbox."""

from mle_gym.tools.actions import TOOL_NAMES, ActionError, ToolCall, parse_action
from mle_gym.tools.files import FileToolError, copy_out
from mle_gym.tools.help import TOOL_HELP

__all__ = [
    "TOOL_HELP",
    "TOOL_NAMES",
    "ActionError",
    "FileToolError",
    "ToolCall",
    "copy_out",
    "parse_action",
]
