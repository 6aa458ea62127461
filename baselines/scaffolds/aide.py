"""AIDE (aideml 0.2.2) driving an mle_gym env: its own draft/debug/improve tree search, with
every code execution an `env.step` instead of AIDE's in-process interpreter.

The seams:
- `Agent.step(exec_callback)`: AIDE hands each node's code to `exec_callback(code,
  reset_session) -> ExecutionResult`; here that writes the code into the sandbox (one
  `create` step) and runs it there (one `bash` step), in a directory of its own per node
  with AIDE's layout (`./input` = the competition's data, `./working` for outputs).
- `Agent.update_data_preview`: AIDE previews the data from a host directory; a subclass
  takes the preview from the sandbox instead (one `bash` step).
- The LLM: AIDE 0.2.2 sends models not named like OpenAI/Anthropic/Gemini ones to the
  chat-completions client it builds once per process from OPENAI_BASE_URL/OPENAI_API_KEY
  (`aide.backend.backend_openai._custom_client`). The adapter puts a router in that place
  which sends each scaffold thread's calls to its own endpoint's client, bounds AIDE's
  endless retry (a dead endpoint becomes an error), stops the calls of an ended episode
  and counts tokens. Model names AIDE routes elsewhere (`gpt-*`, `o1*`, `claude-*`,
  `gemini-*`) ignore any base URL there, so they are refused.

After each node, when it is the best one so far, its `working/submission.csv` is copied to
where the env grades it; after the last node the submission is validated and submitted.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import openai
import shutup
from aide.agent import Agent
from aide.backend import backend_openai
from aide.interpreter import ExecutionResult
from aide.journal import Journal, Node
from omegaconf import OmegaConf

from mle_gym_baselines.llm_agent.client import EndpointError, unreachable
from mle_gym_baselines.llm_agent.endpoint import Endpoint
from mle_gym_baselines.llm_agent.retry import RetryPolicy
from mle_gym_baselines.llm_agent.usage import CallRecord, Usage
from mle_gym_baselines.scaffolds.common import task_prompt
from mle_gym.inversion import Bridge, EpisodeEnded, InvertedPolicy
from mle_gym.tools.actions import ActionError
from mle_gym.tools.schemas import decode_json

# Importing AIDE mutes every warning of the whole process (its config module replaces
# `warnings.warn`); give the host its warnings back, e.g. "the sandbox is NOT ISOLATED".
shutup.unmute_warnings()
# One line per retry of AIDE's backoff is noise: the shared bound ends it with one error.
logging.getLogger("backoff").setLevel(logging.WARNING)

#: Model names AIDE sends to its own provider clients, whatever the base URL.
PROVIDER_MODELS = re.compile(r"^(gpt-.*|o\d+(-.*)?|codex-mini-latest|claude-.*|gemini-.*)$")
AIDE_CONFIG = Path(backend_openai.__file__).parents[1] / "utils" / "config.yaml"
_EXCEPTION_LINE = re.compile(r"^(\w+(?:\.\w+)*(?:Error|Exception|Interrupt|Exit))\b", re.M)


class _EndpointCalls:
    """One episode's chat-completions calls: its endpoint, retry bound and accounting."""

    def __init__(
        self, endpoint: Endpoint, bridge: Bridge, retry: RetryPolicy, request_timeout: float
    ) -> None:
        self.client = openai.OpenAI(
            base_url=endpoint.base_url,
            api_key=endpoint.api_key,
            max_retries=0,
            timeout=request_timeout,
        )
        self.url = endpoint.chat_url
        self.bridge = bridge
        self.retry = retry
        self.failures = 0
        self._failing_since = 0.0
        self.usage = Usage()

    def _give_up(self) -> bool:
        """One more failure: past the shared bound (in retries or seconds since the first)?"""
        self.failures += 1
        if self.failures == 1:
            self._failing_since = time.monotonic()
        spent = time.monotonic() - self._failing_since
        return self.failures > self.retry.max_retries or spent >= self.retry.max_seconds

    def create(self, **kwargs: Any) -> Any:
        if self.bridge.closed:
            raise EpisodeEnded("the episode is over")
        started = time.monotonic()
        try:
            response = self.client.chat.completions.create(**kwargs)
        except backend_openai.OPENAI_TIMEOUT_EXCEPTIONS as exc:
            reason = unreachable(exc)
            if reason is not None:  # nothing listens: no retry can help
                raise EndpointError(f"{self.url}: {reason}") from exc
            if self._give_up():
                raise EndpointError(
                    f"{self.url}: no answer after {self.failures} attempts; "
                    f"last error: {type(exc).__name__}: {exc}"
                ) from exc
            raise  # AIDE's backoff waits and calls again
        usage = response.usage
        self.usage.add(
            CallRecord(
                index=self.usage.calls,
                prompt_tokens=usage.prompt_tokens if usage else 0,
                completion_tokens=usage.completion_tokens if usage else 0,
                cost_usd=0.0,
                seconds=time.monotonic() - started,
                attempts=self.failures + 1,
                sent_messages=len(kwargs.get("messages", [])),
                sent_chars=sum(len(str(m.get("content"))) for m in kwargs.get("messages", [])),
            )
        )
        undecodable = _undecodable_call(response)
        if undecodable is None:
            self.failures = 0
            return response
        # AIDE stops at a function call (a review) it cannot decode and has no way to tell
        # the model: ask again, within the same bound as for an unanswered call.
        if self._give_up():
            raise EndpointError(
                f"{self.url}: no usable answer after {self.failures} attempts: {undecodable}"
            )
        return self.create(**kwargs)


def _undecodable_call(response: Any) -> str | None:
    """Why a function call of `response` cannot be decoded, or None when all can."""
    for choice in response.choices or []:
        for call in choice.message.tool_calls or []:
            try:
                decode_json(call.function.arguments or "", "the arguments of the function call")
            except ActionError as exc:
                return str(exc)
    return None


class _Router:
    """Stands where AIDE keeps its chat client; routes each thread's calls to its episode."""

    def __init__(self) -> None:
        self._local = threading.local()
        self.chat = self  # AIDE calls client.chat.completions.create(...)
        self.completions = self

    def bind(self, calls: _EndpointCalls) -> None:
        self._local.calls = calls

    def create(self, **kwargs: Any) -> Any:
        calls = getattr(self._local, "calls", None)
        if calls is None:
            raise RuntimeError("AIDE called its LLM outside an mle_gym episode")
        return calls.create(**kwargs)


_ROUTER = _Router()
_INSTALL_LOCK = threading.Lock()


def _install_router(endpoint: Endpoint) -> None:
    """Make AIDE send non-provider models to the router (once per process)."""
    with _INSTALL_LOCK:
        os.environ.setdefault("OPENAI_BASE_URL", endpoint.base_url)  # AIDE's switch to chat API
        os.environ.setdefault("OPENAI_API_KEY", endpoint.api_key)  # its default client needs one
        backend_openai._setup_custom_client()  # AIDE's once-only setup, done before ours
        backend_openai._custom_client = _ROUTER


class _GymAgent(Agent):
    """AIDE's agent, previewing the data inside the sandbox rather than on the host."""

    def __init__(self, *args: Any, preview: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._preview = preview

    def update_data_preview(self) -> None:
        self.data_preview = self._preview()


class AidePolicy(InvertedPolicy):
    """AIDE's tree search on an OpenAI-compatible endpoint, every execution an env step.

    `steps` is AIDE's number of nodes (its `agent.steps`); `config` is merged into AIDE's
    default config (e.g. `{"agent": {"search": {"num_drafts": 2}}}`). `journal` is the last
    run's solution tree and `usage` its LLM accounting.
    """

    name = "aide"

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        steps: int | None = None,
        config: dict[str, Any] | None = None,
        max_retries: int | None = None,
        request_timeout: float = 600.0,
        act_timeout: float = 3600.0,
    ) -> None:
        super().__init__(self._run, act_timeout=act_timeout)
        self.endpoint = Endpoint.resolve(base_url, model, api_key)
        if PROVIDER_MODELS.match(self.endpoint.model):
            raise ValueError(
                f"AIDE sends the model {self.endpoint.model!r} to its own provider client and "
                "ignores the base URL; name the model as your endpoint serves it under a name "
                "AIDE does not route (e.g. 'openai/gpt-4o' through a proxy)"
            )
        self.cfg = OmegaConf.merge(OmegaConf.load(AIDE_CONFIG), config or {})
        self.cfg.agent.code.model = self.cfg.agent.feedback.model = self.endpoint.model
        self.cfg.generate_report = False
        if steps is not None:
            self.cfg.agent.steps = steps
        retry = RetryPolicy.from_environment()
        self.retry = retry if max_retries is None else replace(retry, max_retries=max_retries)
        self.request_timeout = request_timeout
        self.journal = Journal()
        self._calls: _EndpointCalls | None = None

    @property
    def usage(self) -> dict[str, Any]:
        return self._calls.usage.to_dict() if self._calls else Usage().to_dict()

    def trajectory(self) -> list[dict[str, Any]]:
        """AIDE's solution tree: one entry per node, in the order they were run."""
        return [
            {
                "step": n.step,
                "stage": n.stage_name,
                "parent": n.parent.step if n.parent else None,
                "plan": n.plan,
                "code": n.code,
                "is_buggy": n.is_buggy,
                "metric": n.metric.value if n.metric else None,
                "analysis": n.analysis,
            }
            for n in self.journal.nodes
        ]

    def _run(self, bridge: Bridge) -> None:
        _install_router(self.endpoint)
        self._calls = _EndpointCalls(self.endpoint, bridge, self.retry, self.request_timeout)
        _ROUTER.bind(self._calls)
        self.journal = Journal()
        run = _Episode(bridge, self.cfg)
        agent = _GymAgent(
            task_desc=run.task, cfg=self.cfg, journal=self.journal, preview=run.preview
        )
        for _ in range(self.cfg.agent.steps):
            agent.step(exec_callback=run.execute)
            run.keep_if_best(self.journal)
        bridge.step({"tool": "validate"})


class _Episode:
    """One AIDE run's side of the env: where nodes run, and moving the best submission."""

    def __init__(self, bridge: Bridge, cfg: Any) -> None:
        self.bridge = bridge
        paths = bridge.first.info["paths"]
        self.data, self.submission = paths["data"], paths["submission_file"]
        self.root = f"{paths['code']}/aide"
        self.runs = 0
        self.file_name = cfg.exec.agent_file_name
        self.task = (
            f"{task_prompt(bridge.first.info)}\n\n"
            "In this run your code reads the data from ./input and writes the submission to "
            "./working/submission.csv; the best solution's file is then submitted for you."
        )

    def _node_dir(self, index: int) -> str:
        return f"{self.root}/{index}"

    def preview(self) -> str:
        answer = self.bridge.step(
            f"cd {shlex.quote(self.data)} && ls -la && head -n 4 *.csv 2>/dev/null | cut -c 1-300"
        )
        return answer.observation

    def execute(self, code: str, reset_session: bool = True) -> ExecutionResult:
        """AIDE's exec_callback: write the node's code in its own directory and run it."""
        self.runs += 1
        where = self._node_dir(self.runs)
        self.bridge.step({"tool": "create", "path": f"{where}/{self.file_name}", "file_text": code})
        started = time.monotonic()
        answer = self.bridge.step(
            f"cd {shlex.quote(where)} && mkdir -p working && ln -sfn {shlex.quote(self.data)} "
            f"input && python {self.file_name}"
        )
        seconds = time.monotonic() - started
        info = answer.info
        if info.get("timed_out"):
            exc_type: str | None = "TimeoutError"
        elif info.get("exit_code") == 0:
            exc_type = None
        else:
            names = _EXCEPTION_LINE.findall(answer.observation)
            exc_type = names[-1].rsplit(".", 1)[-1] if names else "RuntimeError"
        return ExecutionResult(term_out=[answer.observation], exec_time=seconds, exc_type=exc_type)

    def keep_if_best(self, journal: Journal) -> None:
        """Copy the newest node's submission where the env grades it, if it is the best."""
        node: Node = journal.nodes[-1]
        if journal.get_best_node(only_good=True) is node:
            made = f"{self._node_dir(self.runs)}/working/submission.csv"
            self.bridge.step(f"cp {shlex.quote(made)} {shlex.quote(self.submission)}")
