"""The agent's tools, defined once: each with its arguments, its descriptions and its `run`.

Parsing (`actions.parse_action`), the text manual of the first observation (`help.py`), the
JSON schemas given to models (`schemas.py`), the verifiers adapter's tool signatures and the
env's step all read this table, so adding or changing a tool is one entry here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mle_gym.sandbox.base import Sandbox
from mle_gym.tools.bash import describe_result, run_bash
from mle_gym.tools.editor import create, insert, str_replace, view

#: The tool a plain-string action calls.
PLAIN_TOOL = "bash"


@dataclass(frozen=True)
class Arg:
    """One argument of a tool: its Python type, whether it is required, the description
    models read in the JSON schema, and how the text manual shows a value."""

    type: type | tuple[type, ...]
    required: bool = True
    description: str = ""
    example: str = '"..."'
    #: A check beyond the type: returns what is wrong with a value, or None.
    check: Callable[[Any], str | None] | None = None


@dataclass(frozen=True)
class ToolContext:
    """What a tool's `run` may use of the episode it runs in, given by the env per step."""

    sandbox: Sandbox
    max_output_chars: int
    #: Seconds this command may run (the step timeout, bounded by the time left).
    command_timeout: float
    #: The file name the full output of a bash command is kept under, in the logs folder.
    log_name: str
    #: The validate tool's answer: (valid, message), never a score.
    check_submission: Callable[[], tuple[bool, str]]
    #: Records a command's timeout and limit notes in the episode's integrity record.
    note_limits: Callable[[bool, list[str]], None]
    #: Called after a command that restarted the shell: reconnects what the episode runs
    #: beside the shell (MLE-bench's endpoint, the egress proxy) and returns a note for the
    #: agent, empty when there is nothing to say.
    shell_restarted: Callable[[], str]


@dataclass(frozen=True)
class ToolOutcome:
    """What one tool call gives the step: the observation text and what `info` reports."""

    observation: str
    exit_code: int | None = None
    timed_out: bool = False
    #: True for submit: the episode ends and is graded.
    ends_episode: bool = False


@dataclass(frozen=True)
class Tool:
    name: str
    #: What the tool does, for models reading the JSON schema.
    description: str
    args: dict[str, Arg]
    #: What the tool does, for the text manual after its call example; it may name the
    #: placeholders {logs_dir} and {submission_path}.
    manual: str
    run: Callable[..., ToolOutcome]


def _no_nul(command: str) -> str | None:
    return "a bash command cannot contain NUL characters" if "\x00" in command else None


def _line_range(value: list[Any] | tuple[Any, ...]) -> str | None:
    if len(value) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return None
    return "view_range must be [start_line, end_line] (end -1 = to the end)"


def _bash(ctx: ToolContext, command: str) -> ToolOutcome:
    result = run_bash(
        ctx.sandbox, command, ctx.command_timeout, ctx.max_output_chars, log_name=ctx.log_name
    )
    ctx.note_limits(result.timed_out, result.notes)
    observation = describe_result(result)
    if result.shell_restarted:
        observation += ctx.shell_restarted()
    return ToolOutcome(observation, result.exit_code, result.timed_out)


def _view(ctx: ToolContext, **args: Any) -> ToolOutcome:
    return ToolOutcome(view(ctx.sandbox, **args, max_chars=ctx.max_output_chars))


def _create(ctx: ToolContext, **args: Any) -> ToolOutcome:
    return ToolOutcome(create(ctx.sandbox, **args))


def _str_replace(ctx: ToolContext, **args: Any) -> ToolOutcome:
    return ToolOutcome(str_replace(ctx.sandbox, **args))


def _insert(ctx: ToolContext, **args: Any) -> ToolOutcome:
    return ToolOutcome(insert(ctx.sandbox, **args))


def _validate(ctx: ToolContext) -> ToolOutcome:
    return ToolOutcome(ctx.check_submission()[1])


def _submit(ctx: ToolContext) -> ToolOutcome:
    return ToolOutcome("Submitted.", ends_episode=True)


_PATH = "absolute path inside the sandbox"
_ABS = '"/abs/path"'

_TOOLS = (
    Tool(
        "bash",
        "Run a bash command in a persistent shell (the working directory, variables and "
        "background jobs carry over). Each command has a time limit; long output is cut to "
        "its head and tail, and the whole output is kept in a log file.",
        {"command": Arg(str, description="the command line", check=_no_nul)},
        "run a bash command in a persistent shell (working directory, variables and "
        "background jobs carry over between steps). Each command has a time limit; long "
        "output is cut to its head and tail, and the whole output is kept in a log file "
        "under {logs_dir}.",
        _bash,
    ),
    Tool(
        "view",
        "Show a file with line numbers, or list a directory.",
        {
            "path": Arg(str, description=_PATH, example=_ABS),
            "view_range": Arg(
                (list, tuple),
                required=False,
                description="[start_line, end_line], end -1 = to the end (optional)",
                example="[start, end]",
                check=_line_range,
            ),
        },
        "show a file with line numbers (view_range optional, end -1 = to the end), or list "
        "a directory.",
        _view,
    ),
    Tool(
        "create",
        "Create a new file with the given content.",
        {
            "path": Arg(str, description=_PATH, example=_ABS),
            "file_text": Arg(str, description="the content"),
        },
        "create a new file.",
        _create,
    ),
    Tool(
        "str_replace",
        "Replace text that occurs exactly once in a file.",
        {
            "path": Arg(str, description=_PATH, example=_ABS),
            "old_str": Arg(str, description="the text to replace, exactly as in the file"),
            "new_str": Arg(str, required=False, description="the new text (empty if omitted)"),
        },
        "replace text that occurs exactly once in a file.",
        _str_replace,
    ),
    Tool(
        "insert",
        "Insert text after line insert_line (0 = at the top).",
        {
            "path": Arg(str, description=_PATH, example=_ABS),
            "insert_line": Arg(int, description="the line after which to insert", example="N"),
            "new_str": Arg(str, description="the text to insert"),
        },
        "insert text after line N (0 = at the top).",
        _insert,
    ),
    Tool(
        "validate",
        "Check the submission file's format (does not reveal a score).",
        {},
        "check the format of {submission_path} (it does not reveal a score).",
        _validate,
    ),
    Tool(
        "submit",
        "End the episode and grade the submission file. Call it once, when the submission "
        "is written and valid.",
        {},
        "end the episode and grade {submission_path}.",
        _submit,
    ),
)

#: The tools by name, in the order the manual and the schemas list them.
TOOLS: dict[str, Tool] = {tool.name: tool for tool in _TOOLS}
TOOL_NAMES = tuple(TOOLS)
