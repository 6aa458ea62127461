"""mle_gym as a verifiers (v1, `verifiers>=0.4`) taskset: every rollout is one graded episode.

verifiers 0.4 composes a rollout from a taskset (tasks, tools, scoring), a harness (the chat
program the model runs in) and a runtime. Here:

- `MLEGymTaskset` yields one task per seed: its prompt is the task statement and budget
  from `env.reset()`'s info (lazy, so building tasks starts no sandbox); the tools come as
  MCP tools, not as the text manual.
- `MLEGymToolset` is a per-rollout MCP tool server (`Task.toolsets`) that owns that rollout's
  own env: its tools are the env's tools (their names, descriptions and signatures come
  from mle_gym's table of tools), each call goes through
  `mle_gym.action_from_tool_call` to `env.step`. At submit (or when the step/time budget is
  spent) the grade goes into the rollout's shared `MLEGymState` and the env is closed; a
  `@vf.stop` then ends the rollout before the next model call.
- The task's reward is the env's reward; valid / above_median / any_medal / gold_medal and
  the step count are metrics (verifiers records metrics apart from the reward, weight 0).
- `MLEGymHarness` is verifiers' own tool-calling chat loop (the `null` harness program) run
  with this interpreter, which has every package the program needs: the built-in harnesses
  build a uv environment from the network first.

verifiers finds tasksets and harnesses by top-level module name, so importing this module
registers it as `mle_gym_verifiers` (the taskset id).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import signal
import sys
from typing import Annotated, Any

import gymnasium as gym
from pydantic import Field

try:
    import verifiers.v1 as vf
    from verifiers.v1 import graph as vf_graph
    from verifiers.v1.dialects.chat import message_to_wire
    from verifiers.v1.harnesses.utils.launch import CHAT_PROGRAM_SOURCE
except ImportError as exc:  # verifiers < 0.4 has no v1 API
    raise ImportError(
        "mle_gym.integrations.verifiers needs verifiers 0.4 (its v1 API): "
        "pip install verifiers==0.4.0"
    ) from exc

import mle_gym
from mle_gym.integrations.episode import EPISODE_OVER, task_prompt
from mle_gym.tools.actions import ActionError
from mle_gym.tools.signatures import python_type, tool_method
from mle_gym.tools.table import TOOLS, Arg

#: The id verifiers loads this taskset (and its harness) by.
TASKSET_ID = "mle_gym_verifiers"
sys.modules.setdefault(TASKSET_ID, sys.modules[__name__])

# -- a model's tool-call text must not end the rollout ----------------------------------------
# verifiers 0.4 decodes a model's tool-call arguments on the host (to hash the call) and in
# its chat program, catching only JSONDecodeError: arguments nested deeply make Python's
# decoder raise RecursionError, the model call fails, and after its retries the rollout ends
# with a harness error, ungraded. Both sites fall back as verifiers does for invalid JSON:
# the host hashes the text, and the program answers the model "invalid JSON".
# (verifiers' tool gate, used only with request interceptors, which this taskset has none
# of, decodes them too.)
_canonical_arguments = vf_graph._canonical_tool_arguments


def _canonical_tool_arguments(arguments: str) -> str:
    try:
        return _canonical_arguments(arguments)
    except RecursionError:
        return arguments


vf_graph._canonical_tool_arguments = _canonical_tool_arguments

#: verifiers' chat program, whose decoding of a model's tool-call arguments also catches
#: RecursionError and ValueError (over-long integers).
CHAT_PROGRAM = CHAT_PROGRAM_SOURCE.replace(
    "except json.JSONDecodeError as e:\n                content = ",
    "except (ValueError, RecursionError) as e:\n                content = ",
)


class MLEGymData(vf.TaskData):
    """One episode to play: which competition, which seed, and how to make its env."""

    competition_id: str
    seed: int = 0
    backend: str = "local"
    env_kwargs: dict[str, Any] = Field(default_factory=dict)


class MLEGymState(vf.State):
    """The episode's outcome, written by the tool server and read by scoring."""

    done: bool = False
    steps: int = 0
    reward: float = 0.0
    report: dict[str, Any] | None = None


def make_env(data: MLEGymData) -> gym.Env:
    """The env of one task, as `gym.make` builds it for a user."""
    return gym.make(f"mle/{data.competition_id}-v0", backend=data.backend, **data.env_kwargs)


class MLEGymToolset(vf.Toolset[vf.ToolsetConfig, MLEGymState]):
    """The env's tools for one rollout, over that rollout's own env."""

    TOOL_PREFIX = None  # the tools keep the env's names: bash, view, create, ...

    def __init__(self, config: vf.ToolsetConfig) -> None:
        super().__init__(config)
        self._env: gym.Env | None = None
        self._lock = asyncio.Lock()

    async def setup(self) -> None:
        # The runtime stops this server with SIGTERM: exit through Python, so the env is
        # closed (its sandbox removed) even when the model never submitted.
        signal.signal(signal.SIGTERM, _exit)
        self._exit_stack.callback(self._close)

    async def setup_task(self, task: MLEGymData) -> None:
        self._env = await asyncio.to_thread(make_env, task)
        await asyncio.to_thread(self._env.reset, seed=task.seed)

    def _close(self) -> None:
        env, self._env = self._env, None
        if env is not None:
            env.close()

    async def _act(self, tool: str, **arguments: Any) -> str:
        async with self._lock:  # one step at a time, even for parallel tool calls
            if self._env is None or self.state.done:
                return EPISODE_OVER
            try:
                action = mle_gym.action_from_tool_call(
                    tool, {k: v for k, v in arguments.items() if v is not None}
                )
            except ActionError as exc:
                return str(exc)
            obs, reward, terminated, truncated, info = await asyncio.to_thread(
                self._env.step, action
            )
            self.state.steps += 1
            self.state.reward += float(reward)  # dense rewards add up to the final score
            if terminated or truncated:
                self.state.done = True
                self.state.report = json.loads(json.dumps(info.get("report"), default=str))
                await asyncio.to_thread(self._close)
            return str(obs)


def _described(arg: Arg) -> Any:
    """An argument's type with its description, which MCP puts in the tool's schema."""
    return Annotated[python_type(arg), Field(description=arg.description)]


async def _forward(toolset: MLEGymToolset, tool: str, arguments: dict[str, Any]) -> str:
    return await toolset._act(tool, **arguments)


# The toolset's MCP tools: verifiers advertises each by its method's name, signature and
# docstring, all written from mle_gym's table of tools.
for _tool in TOOLS.values():
    setattr(MLEGymToolset, _tool.name, vf.tool(tool_method(_tool, _forward, annotate=_described)))


def _exit(*_args: object) -> None:
    raise SystemExit(0)


class MLEGymTaskConfig(vf.TaskConfig):
    tools: vf.ToolsetConfig = vf.ToolsetConfig()
    """Where each rollout's tool server (and so its env) runs: a host subprocess by default."""


class MLEGymTask(vf.Task[MLEGymData, MLEGymState, MLEGymTaskConfig]):
    """One episode: the env's tools, ended by the env, scored by the env."""

    @property
    def key(self) -> str:
        return f"{self.data.competition_id}/{self.data.seed}"

    @classmethod
    def toolsets(cls, config: MLEGymTaskConfig) -> list[vf.Toolset]:
        return [MLEGymToolset(config.tools)]

    @vf.stop
    async def episode_over(self, trace: vf.Trace) -> bool:
        return trace.state.done

    @vf.reward
    async def mle_gym_reward(self, trace: vf.Trace) -> float:
        """The env's rewards summed: its terminal reward (0 when the rollout ended before the
        episode did), or with reward_mode="dense" the changes paid and the rest at the end."""
        return trace.state.reward

    @vf.metric
    async def grade(self, trace: vf.Trace) -> dict[str, float]:
        report = trace.state.report or {}
        return {
            "valid": float(bool(report.get("valid_submission"))),
            "above_median": float(bool(report.get("above_median"))),
            "any_medal": float(bool(report.get("any_medal"))),
            "gold_medal": float(bool(report.get("gold_medal"))),
            "episode_done": float(trace.state.done),
            "steps": float(trace.state.steps),
        }


class MLEGymTasksetConfig(vf.TasksetConfig):
    id: str = TASKSET_ID
    competition_id: str = "sklearn-digits"
    """An MLE-bench competition id (`mle-gym list`)."""
    backend: str = "local"
    """The env's sandbox: "local" (bubblewrap) or "docker"."""
    num_examples: int = 1
    """How many tasks: seeds 0..num_examples-1 of the competition."""
    env_kwargs: dict[str, Any] = Field(default_factory=dict)
    """More `gym.make` options (JSON values): max_steps, time_limit, reward_mode, ..."""
    task: MLEGymTaskConfig = MLEGymTaskConfig()


class MLEGymTaskset(vf.Taskset[MLEGymTask, MLEGymTasksetConfig]):
    """Seeds of one competition; each task's prompt is the env's task statement."""

    def load(self) -> list[MLEGymTask]:
        cfg = self.config
        rows = [
            MLEGymData(
                idx=seed,
                name=f"{cfg.competition_id}/{seed}",
                competition_id=cfg.competition_id,
                seed=seed,
                backend=cfg.backend,
                env_kwargs=cfg.env_kwargs,
            )
            for seed in range(cfg.num_examples)
        ]
        if not rows:
            return []
        with make_env(rows[0]) as env:  # reset is lazy: no sandbox starts here
            prompts = [task_prompt(env.reset(seed=row.seed)[1]) for row in rows]
        return [
            MLEGymTask(row.model_copy(update={"prompt": prompt}), cfg.task)
            for row, prompt in zip(rows, prompts, strict=True)
        ]


class MLEGymHarnessConfig(vf.HarnessConfig):
    id: str = TASKSET_ID


class MLEGymHarness(vf.Harness[MLEGymHarnessConfig]):
    """verifiers' tool-calling chat loop on this interpreter; tools come over MCP."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_MCP = True
    SUPPORTS_RESUME = True
    SUPPORTS_TOOL_INTERCEPTION = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        tool_interception_url: str | None = None,
    ) -> vf.ProgramResult:
        system_prompt, prompt = self.resolve_prompt(data)
        program = f".vf-mle-gym-chat-{hashlib.sha256(CHAT_PROGRAM.encode()).hexdigest()}.py"
        await runtime.write(program, CHAT_PROGRAM.encode())
        args = [f"--base-url={endpoint}", f"--api-key={secret}", f"--model={ctx.model}"]
        if tool_interception_url:
            args.append(f"--tool-interception-url={tool_interception_url}")
        if system_prompt:
            args.append(f"--system-prompt={system_prompt}")
        if mcp_urls:
            servers = {
                n: {"url": u, "timeout": self.config.tool_timeout} for n, u in mcp_urls.items()
            }
            args.append("--mcp-config=" + json.dumps({"mcpServers": servers}))
        if isinstance(prompt, str):
            args.append(f"--prompt={prompt}")
        elif prompt is not None:
            path = f".vf-initial-messages-{trace.id}.json"
            wire = [message_to_wire(message) for message in prompt]
            await runtime.write(path, json.dumps(wire).encode())
            args.append(f"--initial-messages-file={path}")
        return await runtime.run_program(
            [sys.executable, program, *args], dict(self.config.resolved_env)
        )


def load_environment(
    competition_id: str = "sklearn-digits",
    backend: str = "local",
    num_examples: int = 1,
    **env_kwargs: Any,
) -> vf.Env:
    """A verifiers env whose rollouts are mle_gym episodes of `competition_id`.

    `env_kwargs` go to `gym.make` (max_steps, time_limit, reward_mode, ...). The agent runs
    this module's harness in a host subprocess; its tools' env sandbox is `backend`."""
    taskset = MLEGymTasksetConfig(
        competition_id=competition_id,
        backend=backend,
        num_examples=num_examples,
        env_kwargs=env_kwargs,
    )
    agent = vf.AgentConfig(harness=MLEGymHarnessConfig(), runtime=vf.SubprocessConfig())
    return vf.load_environment(vf.SingleAgentEnvConfig(taskset=taskset, agent=agent))


__all__ = [
    "TASKSET_ID",
    "MLEGymData",
    "MLEGymHarness",
    "MLEGymState",
    "MLEGymTask",
    "MLEGymTaskset",
    "MLEGymToolset",
    "load_environment",
]

if __name__ == "__main__":  # how verifiers starts a rollout's tool server
    MLEGymToolset.run()
