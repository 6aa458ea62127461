"""The table of tools is the one definition: the text manual, the JSON schemas and the env's
dispatch are all derived from it, and the manual reads as it always did."""

from __future__ import annotations

import inspect
from dataclasses import replace
from pathlib import Path

import gymnasium as gym
import pytest

import mle_gym
from mle_gym.tools import TOOL_HELP, TOOLS, ToolContext, ToolOutcome
from mle_gym.tools.help import tools_manual
from mle_gym.tools.signatures import tool_method
from tests.conftest import require_bwrap

#: The manual as agents have read it in every first observation so far (captured once):
#: deriving it from the table must not change a byte.
MANUAL = """\
## Tools
Every step is one action:
- a plain string, or {"tool": "bash", "command": "..."}: run a bash command in a persistent
  shell (working directory, variables and background jobs carry over between steps). Each
  command has a time limit; long output is cut to its head and tail, and the whole output is
  kept in a log file under {logs_dir}.
- {"tool": "view", "path": "/abs/path", "view_range": [start, end]}: show a file with line
  numbers (view_range optional, end -1 = to the end), or list a directory.
- {"tool": "create", "path": "/abs/path", "file_text": "..."}: create a new file.
- {"tool": "str_replace", "path": "/abs/path", "old_str": "...", "new_str": "..."}: replace
  text that occurs exactly once in a file.
- {"tool": "insert", "path": "/abs/path", "insert_line": N, "new_str": "..."}: insert text
  after line N (0 = at the top).
- {"tool": "validate"}: check the format of {submission_path} (it does not reveal a score).
- {"tool": "submit"}: end the episode and grade {submission_path}.
The episode also ends when the step or time budget runs out; the submission present then is
graded.
"""


def test_the_derived_manual_is_the_one_agents_read() -> None:
    assert TOOL_HELP == MANUAL


def test_every_tool_shows_in_the_manual_with_its_arguments() -> None:
    for name, tool in TOOLS.items():
        entry = next(line for line in TOOL_HELP.splitlines() if f'"tool": "{name}"' in line)
        for arg in tool.args:
            assert f'"{arg}": ' in entry, (name, arg)
    schemas = {s["function"]["name"]: s["function"] for s in mle_gym.tool_schemas()}
    assert list(schemas) == list(TOOLS)
    for name, tool in TOOLS.items():
        assert schemas[name]["description"] == tool.description
        assert list(schemas[name]["parameters"]["properties"]) == list(tool.args)


def test_a_new_entry_in_the_table_is_in_the_manual_and_the_schemas(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The manual and the schemas are written from the table, not kept beside it."""
    from mle_gym.tools import help as manual_module
    from mle_gym.tools import schemas

    extra = replace(TOOLS["submit"], name="note", description="Keep a note.", manual="note it.")
    monkeypatch.setitem(TOOLS, "note", extra)
    schemas._schemas.cache_clear()
    try:
        assert '- {"tool": "note"}: note it.' in manual_module._manual()
        assert mle_gym.tool_schemas()[-1]["function"]["name"] == "note"
    finally:
        schemas._schemas.cache_clear()


def test_tools_manual_fills_the_episode_paths() -> None:
    text = tools_manual("/logs", "/sub/submission.csv")
    assert "{" + "logs_dir}" not in text and "under /logs." in text
    assert "grade /sub/submission.csv." in text


def test_the_env_steps_through_the_table(
    digits_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step calls the named tool's `run` with the episode's context and reports what it
    returns: the env has no dispatch of its own."""
    require_bwrap()
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    seen: list[tuple[ToolContext, dict]] = []

    def run(ctx: ToolContext, **args: object) -> ToolOutcome:
        seen.append((ctx, args))
        return ToolOutcome("from the table", exit_code=3, timed_out=True)

    monkeypatch.setitem(TOOLS, "view", replace(TOOLS["view"], run=run))
    with gym.make("mle/sklearn-digits-v0", max_steps=5, step_timeout=30) as env:
        env.reset(seed=0)
        observation, _, terminated, _, info = env.step({"tool": "view", "path": "/home"})
        assert observation == "from the table" and not terminated
        assert info["tool"] == "view" and info["exit_code"] == 3 and info["timed_out"]
        ((ctx, args),) = seen
        assert args == {"path": "/home"}
        assert ctx.log_name == "step-00001.log" and 1 <= ctx.command_timeout <= 30
        assert ctx.max_output_chars == env.unwrapped.max_output_chars
        assert ctx.check_submission()[1].startswith("No submission yet")
        observation, *_ = env.step("echo hi")  # the other tools run as before
        assert observation == "hi"


def test_tool_methods_take_the_tables_arguments() -> None:
    """The methods verifiers and TRL read tools from have the table's parameters and
    forward what they are given, positionally or by name."""

    class Adapter:
        pass

    calls = []
    for name, tool in TOOLS.items():
        method = tool_method(tool, lambda *call: calls.append(call))
        setattr(Adapter, name, method)
        params = inspect.signature(method).parameters
        assert list(params) == ["self", *tool.args]
        assert [p for p in params if params[p].default is inspect.Parameter.empty] == [
            "self",
            *(a for a, spec in tool.args.items() if spec.required),
        ]
    adapter = Adapter()
    adapter.view("/home", view_range=[1, 2])
    adapter.insert("/a", 0, new_str="x")
    adapter.submit()
    assert [c[1:] for c in calls] == [
        ("view", {"path": "/home", "view_range": [1, 2]}),
        ("insert", {"path": "/a", "insert_line": 0, "new_str": "x"}),
        ("submit", {}),
    ]
    assert all(c[0] is adapter for c in calls)
    with pytest.raises(TypeError):
        adapter.bash()
