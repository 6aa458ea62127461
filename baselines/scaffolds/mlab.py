"""MLAB: MLAgentBench's ResearchAgent (Huang et al. 2024, snap-stanford/MLAgentBench), MLE-bench's
third scaffold, driving an mle_gym env.

MLAgentBench has no installable distribution (it is not on PyPI), so this module implements
the ResearchAgent's loop in its own code, following its published design:
- one text prompt per step: the tools, the research problem, the standing instructions, then
  the last few steps (older observations collapsed to `<Done>`), answered in a fixed format of
  entries: Reflection / Research Plan and Status / Fact Check / Thought / Action / Action Input
  (a JSON object); an answer without every entry or with an unknown action is asked again;
- its high-level actions, each mapped onto env steps: List Files (`bash ls`), Copy File
  (`bash cp`), Inspect Script Lines (`view`), Execute Script (`bash python`), Edit Script (AI)
  (read the file, have the LLM rewrite it, `create` the result), Undo Edit Script (`create`
  the previous text), Understand File (read it, have the LLM answer), Reflection (the LLM
  only), Final Answer (`submit`); plus Validate Submission (the env's `validate`), which MLE-bench
  gives its agents as a script;
- long observations (over 5,000 characters) summarised by the LLM in 10,000-character blocks.
Not carried over: the retrieval research log (off by default in MLAgentBench too).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, replace
from typing import Any

from mle_gym_baselines.llm_agent.client import ChatClient
from mle_gym_baselines.llm_agent.endpoint import Endpoint
from mle_gym_baselines.llm_agent.retry import RetryPolicy
from mle_gym_baselines.llm_agent.usage import CallRecord, Usage
from mle_gym_baselines.scaffolds.common import task_prompt
from mle_gym.inversion import Bridge, InvertedPolicy

ENTRIES: dict[str, str] = {
    "Reflection": "What does the observation mean? If there is an error, what caused it and how "
    "would you debug it?",
    "Research Plan and Status": "The full high-level plan, with the status and confirmed results "
    "of each step. Only progress confirmed by earlier observations. Mark updates **like this**; "
    "with no update, repeat the previous one. Keep the previous plan unless you revise it.",
    "Fact Check": "Each objective statement of the update, and whether it is guessed or "
    "confirmed by the observation above. Performance numbers are confirmed only by running code.",
    "Thought": "What you are doing now, which action you take and why.",
    "Action": "The action to take: exactly one of the tool names.",
    "Action Input": "The input of the action, as a valid JSON object.",
}


@dataclass(frozen=True)
class Tool:
    """One ResearchAgent action: what it does and its input fields."""

    description: str
    fields: dict[str, str]
    observation: str


TOOLS: dict[str, Tool] = {
    "List Files": Tool(
        "List the files in a directory.",
        {"dir_path": "a directory path, relative to the work directory or absolute"},
        "the files and directories, directories marked with a trailing /",
    ),
    "Copy File": Tool(
        "Copy a file.",
        {"source": "the file to copy", "destination": "where to copy it"},
        "whether the copy succeeded",
    ),
    "Undo Edit Script": Tool(
        "Undo the last Edit Script (AI) of a file.",
        {"script_name": "the file whose last edit to undo"},
        "the file's content after the undo",
    ),
    "Execute Script": Tool(
        "Run a Python script in the work directory and return its output.",
        {"script_name": "the script to run"},
        "the output of the script (stdout and stderr)",
    ),
    "Final Answer": Tool(
        "Submit the submission file as it is now; this ends the task, so only when it is "
        "written and valid.",
        {"final_answer": "a short description of the solution"},
        "none: the task ends",
    ),
    "Understand File": Tool(
        "Read a whole file and answer what to look for in it.",
        {"file_name": "the file to read", "things_to_look_for": "what to find or summarise"},
        "what was found, with line references where they help",
    ),
    "Inspect Script Lines": Tool(
        "Show lines of a file (at most 100).",
        {
            "script_name": "the file",
            "start_line_number": "the first line, from 1",
            "end_line_number": "the last line",
        },
        "those lines",
    ),
    "Edit Script (AI)": Tool(
        "Have an AI edit a script by an instruction and save the result; a file that does "
        "not exist is written from the instruction. Check the result afterwards.",
        {
            "script_name": "the script to edit (or to create)",
            "edit_instruction": "a detailed, step-by-step description of the edit",
            "save_name": "where to save the edited script",
        },
        "the edited script's content",
    ),
    "Reflection": Tool(
        "Reflect on the research so far.",
        {"things_to_reflect_on": "what to reflect on"},
        "the reflection",
    ),
    "Validate Submission": Tool(
        "Check the submission file's format (never a score).",
        {},
        "whether the submission is valid, and why not",
    ),
}

INSTRUCTIONS = """\
You do not know anything about this problem so far.

Follow these instructions and do not forget them:
- First, come up with a high-level plan from your understanding of the problem and the tools, \
and record it in the Research Plan and Status. You can revise it later.
- The Research Plan and Status keeps, well organised and short: 1) the high-level plan, 2) which \
steps are done and which in progress, 3) short results and conclusions of each done step.
- It records only progress made by previous steps, never results the observations did not \
confirm. Performance numbers are confirmed only by running code and reading its output.
- Design a good experiment and, where it applies, measure a baseline before improving on it.
- Follow the plan and reach the goal as directly as possible.
- Give the supporting results and reasoning before a conclusion.
- Do not install new packages.
- When you believe the problem is solved, submit with the Final Answer action. You can submit \
only once: check the goal is reached first."""

#: MLAgentBench's defaults (its run options): steps kept in the prompt, and of those, how many
#: show their observation; answers asked again on a bad format; observation length summarised.
STEPS_IN_CONTEXT = 3
OBSERVATIONS_IN_CONTEXT = 3
SUMMARY_THRESHOLD = 5000
SUMMARY_BLOCK = 10000
_CODE_BLOCK = re.compile(r"```(?:[A-Za-z0-9_+-]*)\n(.*?)```", re.S)


class ResponseError(ValueError):
    """An answer that is not in the ResearchAgent's format."""


def tools_prompt() -> str:
    """The tool list as the ResearchAgent shows it: description, then an example call."""
    parts = []
    for name, tool in TOOLS.items():
        fields = ",\n".join(f'    "{k}": [{v}]' for k, v in tool.fields.items())
        parts.append(
            f"- {name}:\n    {tool.description}\n    Usage:\n    ```\n    Action: {name}\n"
            f"    Action Input: {{\n{fields}\n    }}\n"
            f"    Observation: [{tool.observation}]\n    ```"
        )
    return "\n".join(parts)


def format_prompt() -> str:
    return "\n".join(f"{k}: {v}" for k, v in ENTRIES.items())


def parse_response(text: str) -> dict[str, str]:
    """The entries of an answer, by name; raises ResponseError when one is missing."""
    names = "|".join(re.escape(n) for n in ENTRIES)
    marks = list(re.finditer(rf"^\s*\**({names})\**\s*:", text, re.M))
    entries: dict[str, str] = {}
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(text)
        entries.setdefault(mark.group(1), text[mark.end() : end].strip())
    missing = [n for n in ENTRIES if n not in entries]
    if missing:
        raise ResponseError(f"missing entries: {', '.join(missing)}")
    action = entries["Action"].strip().strip("`*").strip()
    if action not in TOOLS:
        raise ResponseError(f"unknown action {action!r}")
    entries["Action"] = action
    # the observation the model may have imagined after its input is not part of the input
    entries["Action Input"] = entries["Action Input"].split("\nObservation:", 1)[0].strip()
    return entries


def parse_input(raw: str, action: str) -> dict[str, Any]:
    """The action's input as a JSON object with the tool's fields; ValueError says why not."""
    text = raw.strip()
    block = _CODE_BLOCK.search(text)
    if block:
        text = block.group(1).strip()
    try:
        value = json.loads(text) if text else {}
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    missing = [k for k in TOOLS[action].fields if k not in value]
    if missing:
        raise ValueError(f"missing fields: {', '.join(missing)}")
    return value


def usage_hint(action: str) -> str:
    fields = ",\n".join(f'    "{k}": [{v}]' for k, v in TOOLS[action].fields.items())
    return (
        f"The input of {action} must be a valid JSON object with these fields (no triple "
        f"quotes, commas between entries):\n{{\n{fields}\n}}"
    )


class MlabPolicy(InvertedPolicy):
    """The ResearchAgent's loop on an OpenAI-compatible endpoint, every action env steps.

    `max_agent_steps` bounds its actions (MLAgentBench's `agent_max_steps`); `max_retries`
    its tries for a well-formed answer; `steps_in_context`/`observations_in_context` how
    much history each prompt shows; `max_tokens` caps each answer. MLE-bench ran it with
    `max_agent_steps=2000, max_retries=10, max_tokens=16384` (its agents/mlagentbench config).
    `history` is the last run's steps.
    """

    name = "mlab"

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        max_agent_steps: int = 50,
        max_retries: int = 5,
        steps_in_context: int = STEPS_IN_CONTEXT,
        observations_in_context: int = OBSERVATIONS_IN_CONTEXT,
        max_tokens: int | None = None,
        endpoint_retries: int | None = None,
        request_timeout: float = 600.0,
        act_timeout: float = 1800.0,
    ) -> None:
        super().__init__(self._run, act_timeout=act_timeout)
        self.endpoint = Endpoint.resolve(base_url, model, api_key)
        retry = RetryPolicy.from_environment()  # the shared bound (--llm-retries)
        if endpoint_retries is not None:
            retry = replace(retry, max_retries=endpoint_retries)
        self.client = ChatClient(self.endpoint, retry=retry, request_timeout=request_timeout)
        self.max_agent_steps = max_agent_steps
        self.max_retries = max_retries
        self.params = {"max_tokens": max_tokens} if max_tokens else {}
        self.steps_in_context = steps_in_context
        self.observations_in_context = observations_in_context
        self.history: list[dict[str, Any]] = []
        self._usage = Usage()

    @property
    def usage(self) -> dict[str, Any]:
        return self._usage.to_dict()

    def trajectory(self) -> list[dict[str, Any]]:
        return list(self.history)

    # -- the LLM --------------------------------------------------------------------------------
    def complete(self, prompt: str) -> str:
        """One completion of a text prompt (sent as one user message), counted."""
        messages = [{"role": "user", "content": prompt}]
        answer = self.client.complete(messages, **self.params)
        self._usage.add(
            CallRecord(
                index=self._usage.calls,
                prompt_tokens=answer.prompt_tokens,
                completion_tokens=answer.completion_tokens,
                cost_usd=answer.cost or 0.0,
                seconds=answer.seconds,
                attempts=answer.attempts,
                sent_messages=1,
                sent_chars=len(prompt),
            )
        )
        return str(answer.message.get("content") or "")

    # -- the loop -------------------------------------------------------------------------------
    def _run(self, bridge: Bridge) -> None:
        self.history = []
        self._usage = Usage()
        actions = _Actions(bridge, self)
        head = (
            "You are a helpful research assistant. You have access to the following tools:\n"
            f"{tools_prompt()}\n\nResearch Problem: {task_prompt(bridge.first.info)}"
            f"\n\nYour work directory is {actions.code}.\n\n{INSTRUCTIONS}\n\n"
            f"Always respond in this format exactly:\n{format_prompt()}\nObservation: \n```\n"
            "the result of the action\n```\n\n"
        )
        while len(self.history) < self.max_agent_steps:
            entries = self._next_entries(head)
            if entries is None:
                return  # no well-formed answer: the submission present is graded
            action = entries["Action"]
            try:
                arguments = parse_input(entries["Action Input"], action)
            except ValueError as exc:
                observation = f"ActionInputParsingError: {exc}\n{usage_hint(action)}"
            else:
                if action == "Final Answer":
                    self.history.append({"entries": entries, "observation": "submitted"})
                    bridge.step({"tool": "submit"})
                    return
                observation = actions.run(action, arguments)
            if len(observation) > SUMMARY_THRESHOLD:
                observation = self._summarize(_shown(entries), observation)
            if not observation.startswith("ActionInputParsingError"):
                self.history = [
                    h
                    for h in self.history
                    if not h["observation"].startswith("ActionInputParsingError")
                ]
            self.history.append({"entries": entries, "observation": observation})

    def _prompt(self, head: str) -> str:
        prompt = head + "\nNow let's start!\n\n"
        current = len(self.history)
        for index in range(max(current - self.steps_in_context, 0), current):
            step = self.history[index]
            prompt += f"{_shown(step['entries'])}\nObservation:"
            if current - index > self.observations_in_context:
                prompt += "<Done>\n\n"
            else:
                prompt += f"\n```\n{step['observation']}\n```\n\n"
        return prompt

    def _next_entries(self, head: str) -> dict[str, str] | None:
        prompt = self._prompt(head)
        for _ in range(self.max_retries):
            try:
                return parse_response(self.complete(prompt))
            except ResponseError as exc:
                prompt += (
                    f"\n\nYour response was in incorrect format ({exc}). Please provide a valid "
                    f"response with all entries: {', '.join(ENTRIES)}\n\n"
                )
        return None

    def _summarize(self, action: str, observation: str) -> str:
        blocks = [
            observation[i : i + SUMMARY_BLOCK] for i in range(0, len(observation), SUMMARY_BLOCK)
        ]
        ask = (
            "Summarize the observation concisely in this format:\n[Observation]: all relevant "
            "details of the observation, objectively. Nothing guessed, no suggestions."
        )
        parts = [
            self.complete(
                f"{action}\n\nThe full observation is too long. Given this part of it (characters "
                f"{i * SUMMARY_BLOCK + 1} to {i * SUMMARY_BLOCK + len(b)}):\n```\n{b}\n```\n{ask}"
            )
            for i, b in enumerate(blocks)
        ]
        summary = parts[0]
        if len(parts) > 1:
            joined = "\n\n".join(f"Segment {i}:\n\n{p}" for i, p in enumerate(parts))
            summary = self.complete(
                f"{action}\n\nThe full observation is too long. Given summaries of each of its "
                f"segments, write one cohesive description of it:\n{joined}\n\n{ask}"
            )
        return summary.split("[Observation]:", 1)[-1].strip()


def _shown(entries: dict[str, str]) -> str:
    return "\n".join(f"{k}: {entries[k]}" for k in ENTRIES if k in entries)


class _Actions:
    """The ResearchAgent's actions as env steps, in the sandbox's code directory."""

    def __init__(self, bridge: Bridge, policy: MlabPolicy) -> None:
        self.bridge = bridge
        self.policy = policy
        self.code = bridge.first.info["paths"]["code"]
        self.backups: dict[str, list[str]] = {}

    def _path(self, name: Any) -> str:
        name = str(name)
        return name if name.startswith("/") else f"{self.code}/{name}"

    def _bash(self, command: str) -> str:
        return self.bridge.step({"tool": "bash", "command": command}).observation

    def _read(self, path: str) -> tuple[bool, str]:
        answer = self.bridge.step({"tool": "bash", "command": f"cat -- {shlex.quote(path)}"})
        return answer.info.get("exit_code") == 0, answer.observation

    def run(self, action: str, args: dict[str, Any]) -> str:
        q = shlex.quote
        if action == "List Files":
            return self._bash(f"ls -F -- {q(self._path(args['dir_path']))}")
        if action == "Copy File":
            source, target = self._path(args["source"]), self._path(args["destination"])
            return self._bash(
                f"cp -- {q(source)} {q(target)} && echo 'File {source} copied to {target}'"
            )
        if action == "Execute Script":
            path = self._path(args["script_name"])
            return self._bash(f"cd {q(self.code)} && python {q(path)}")
        if action == "Inspect Script Lines":
            start = int(args["start_line_number"])
            end = min(int(args["end_line_number"]), start + 99)
            call = {
                "tool": "view",
                "path": self._path(args["script_name"]),
                "view_range": [start, end],
            }
            return self.bridge.step(call).observation
        if action == "Validate Submission":
            return self.bridge.step({"tool": "validate"}).observation
        if action == "Reflection":
            return self.policy.complete(
                f"Reflect on this, given the research so far:\n{args['things_to_reflect_on']}"
            )
        if action == "Understand File":
            found, text = self._read(self._path(args["file_name"]))
            if not found:
                return text
            return self.policy.complete(
                f"Given this file:\n```\n{text}\n```\nLook for: {args['things_to_look_for']}\n"
                "Answer with what you found, objectively, referring to lines where it helps."
            )
        if action == "Edit Script (AI)":
            return self._edit(args)
        if action == "Undo Edit Script":
            path = self._path(args["script_name"])
            if not self.backups.get(path):
                return f"There is no edit of {path} to undo."
            error = self._write(path, self.backups[path].pop(), exists=True)
            return error or self._read(path)[1]
        raise AssertionError(f"unmapped action {action}")  # parse_response admits only TOOLS

    def _write(self, path: str, text: str, exists: bool) -> str | None:
        """Write a whole file (`create` does not overwrite, so an existing one goes first)."""
        if exists:
            self._bash(f"rm -f -- {shlex.quote(path)}")
        saved = self.bridge.step({"tool": "create", "path": path, "file_text": text})
        return saved.observation if saved.observation.startswith(("Error", "Invalid")) else None

    def _edit(self, args: dict[str, Any]) -> str:
        source, target = self._path(args["script_name"]), self._path(args["save_name"])
        found, before = self._read(source)
        answer = self.policy.complete(
            f"Given this python script:\n```python\n{before if found else ''}\n```\nEdit the "
            f"script by following the instruction:\n{args['edit_instruction']}\nProvide the full "
            "code after the edit, making no other changes, as one ```python code block."
        )
        block = _CODE_BLOCK.search(answer)
        if block is None:
            return "EnvError: the edit produced no code block; nothing was saved."
        exists, previous = (found, before) if target == source else self._read(target)
        if exists:
            self.backups.setdefault(target, []).append(previous)
        error = self._write(target, block.group(1), exists)
        if error:
            return error
        return f"The edited file is saved to {target}. Its content:\n{block.group(1)}"
