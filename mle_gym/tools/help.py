"""The short manual of the agent's tools, shown at the start of every episode, written from
the table of tools: one entry per tool, its call example built from its arguments."""

from __future__ import annotations

import textwrap

from mle_gym.tools.table import PLAIN_TOOL, TOOLS, Tool

#: The manual's heading; adapters read the manual from reset()'s info, never by this heading.
HEADING = "## Tools"
_WIDTH = 92


def _call_example(tool: Tool) -> str:
    args = "".join(f', "{name}": {arg.example}' for name, arg in tool.args.items())
    example = f'{{"tool": "{tool.name}"{args}}}'
    return f"a plain string, or {example}" if tool.name == PLAIN_TOOL else example


def _entry(tool: Tool) -> str:
    return textwrap.fill(
        f"{_call_example(tool)}: {tool.manual}",
        width=_WIDTH,
        initial_indent="- ",
        subsequent_indent="  ",
        break_long_words=False,
        break_on_hyphens=False,
    )


def _manual() -> str:
    entries = "\n".join(_entry(tool) for tool in TOOLS.values())
    ending = textwrap.fill(
        "The episode also ends when the step or time budget runs out; the submission present "
        "then is graded.",
        width=_WIDTH,
    )
    return f"{HEADING}\nEvery step is one action:\n{entries}\n{ending}\n"


#: The manual with the placeholders {logs_dir} and {submission_path}, which `tools_manual`
#: fills with an episode's paths.
TOOL_HELP = _manual()


def tools_manual(logs_dir: str, submission_path: str) -> str:
    """The manual as an episode shows it: with its logs folder and submission file."""
    return TOOL_HELP.replace("{logs_dir}", logs_dir).replace("{submission_path}", submission_path)
