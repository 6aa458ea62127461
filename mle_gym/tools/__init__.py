"""The agent's actions: one table of tools (table.py), each run over a sandbox."""

from mle_gym.tools.actions import ActionError, ToolCall, parse_action
from mle_gym.tools.files import FileToolError, copy_out
from mle_gym.tools.help import TOOL_HELP, tools_manual
from mle_gym.tools.table import TOOL_NAMES, TOOLS, ToolContext, ToolOutcome

__all__ = [
    "TOOLS",
    "TOOL_HELP",
    "TOOL_NAMES",
    "ActionError",
    "FileToolError",
    "ToolCall",
    "ToolContext",
    "ToolOutcome",
    "copy_out",
    "parse_action",
    "tools_manual",
]
