"""`CompetitionEnv`: one Kaggle competition as a Gymnasium environment.

reset() starts a fresh sandbox with the public data; each step runs one tool; the episode
ends at `submit` (terminated) or when the step or wall-clock budget is spent (truncated).
At the end the submission is copied out of the sandbox and graded on the host, where the
private answers stay.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import numbers
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym

from mle_gym.competitions import get_competition
from mle_gym.data.cache import NotPrepared as NotPrepared  # mle_gym.envs exports it
from mle_gym.data.gate import require_prepared
from mle_gym.envs import shared_text  # noqa: F401  (UnicodeText in async vector envs)
from mle_gym.envs.egress_setup import (
    NETWORK_LOG,
    EgressSetup,
    not_started_summary,
    policy_for,
)
from mle_gym.envs.info_values import optional, optional_numbers
from mle_gym.envs.integrity import IntegrityLog
from mle_gym.envs.kept_code import CodeBounds, keep_code
from mle_gym.envs.messages import OBSERVATION_FORMATS, ChatMessages, opening, tool_result
from mle_gym.envs.mlebench_setup import MLEBenchSetup, hardware
from mle_gym.envs.mlebench_task import (
    TASKS,
    VALIDATION_MODES,
    MLEBenchTask,
    fill_placeholders,
    find_mlebench_dir,
    mlebench_variables,
)
from mle_gym.envs.render import reset_glance, step_glance
from mle_gym.envs.snapshots import SnapshotKeeper, elapsed_since
from mle_gym.envs.spaces import ToolActionSpace, UnicodeText
from mle_gym.grading.bounded import (
    GradingLimits,
    check_bounded,
    grade_bounded,
    grade_within,
    warm_up,
)
from mle_gym.grading.budget import DEFAULT_GRADING_CPU_BUDGET, GradingBudget, GradingBudgetSpent
from mle_gym.grading.outcome import outcome
from mle_gym.grading.report import GradeReport
from mle_gym.grading.rewards import REWARD_MODES
from mle_gym.grading.submission_cap import submission_cap
from mle_gym.sandbox.base import ReadOnlyBind, Sandbox, SandboxError, SandboxLost, SandboxSpec
from mle_gym.sandbox.egress_policy import EgressPolicy
from mle_gym.sandbox.factory import BACKENDS, check_options, make_sandbox
from mle_gym.sandbox.host_limits import MIB, concurrency, episode_limits
from mle_gym.sandbox.scratch import discard, owned_dir
from mle_gym.sandbox.teardown import attempt
from mle_gym.tools import (
    TOOLS,
    ActionError,
    FileToolError,
    ToolContext,
    copy_out,
    parse_action,
    tools_manual,
)
from mle_gym.tools.actions import CALL_ID
from mle_gym.tools.runtime import runtime_versions

log = logging.getLogger(__name__)


class CompetitionEnv(gym.Env):
    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(
        self,
        competition_id: str,
        backend: str = "local",
        time_limit: float = 24 * 3600.0,
        max_steps: int = 1000,
        step_timeout: float = 3600.0,
        max_output_chars: int = 20_000,
        reward_mode: str = "normalized",
        network: bool | str = False,
        network_policy: str | dict[str, Any] | None = None,
        sandbox_options: dict[str, Any] | None = None,
        render_mode: str | None = None,
        observation_format: str = "text",
        concurrent_episodes: int | None = None,
        task: str = "mle_gym",
        mlebench_dir: str | Path | None = None,
        snapshots: bool | dict[str, int] = True,
        malformed_action_costs_step: bool = True,
        grading_cpu_budget: float = DEFAULT_GRADING_CPU_BUDGET,
        mlebench_validation: str = "format",
    ) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"unknown reward_mode {reward_mode!r}; choose one of {REWARD_MODES}")
        if observation_format not in OBSERVATION_FORMATS:
            raise ValueError(
                f"observation_format must be one of {', '.join(OBSERVATION_FORMATS)}, "
                f"got {observation_format!r}"
            )
        if task not in TASKS:
            raise ValueError(f"task must be one of {', '.join(TASKS)}, got {task!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        for name, value in (
            ("time_limit", time_limit),
            ("step_timeout", step_timeout),
            ("max_steps", max_steps),
            ("max_output_chars", max_output_chars),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{name} must be a number, got {value!r}")
            if value <= 0:
                raise ValueError(f"{name} must be positive, got {value}")
        if isinstance(max_steps, bool) or not isinstance(max_steps, numbers.Integral):
            raise TypeError(f"max_steps must be a whole number, got {max_steps!r}")
        if not isinstance(network, bool) and network != "proxy":
            raise TypeError(f"network must be False, True or 'proxy', got {network!r}")
        if network_policy is not None and network != "proxy":
            raise ValueError("network_policy governs network='proxy'; pass both")
        if not isinstance(malformed_action_costs_step, bool):
            raise TypeError(
                f"malformed_action_costs_step must be True or False, got "
                f"{malformed_action_costs_step!r}"
            )
        if sandbox_options is not None and not isinstance(sandbox_options, dict):
            raise TypeError(
                "sandbox_options must be a dict of options, e.g. {'memory': '4g'}, got "
                f"{sandbox_options!r}"
            )
        check_options(backend, sandbox_options or {})
        if mlebench_validation not in VALIDATION_MODES:
            raise ValueError(
                f"mlebench_validation must be one of {', '.join(VALIDATION_MODES)}, "
                f"got {mlebench_validation!r}"
            )
        if mlebench_validation != "format" and task == "mle_gym":
            raise ValueError(
                "mlebench_validation chooses how MLE-bench's /validate answers: it needs "
                "task='mlebench' or 'mlebench-obfuscated'"
            )
        #: Host CPU seconds for all of an episode's grades (grading/budget.py).
        self.grading_cpu_budget = GradingBudget(grading_cpu_budget).seconds
        #: How MLE-bench's /validate decides: the format check, or the metric as its server.
        self.mlebench_validation = mlebench_validation
        self._snapshot_bounds = _snapshot_bounds(snapshots)
        self.competition = get_competition(competition_id)
        #: "mle_gym" (our statement), or MLE-bench's own task read from the user's checkout.
        self.task = task
        self.mlebench: MLEBenchTask | None = None
        if task != "mle_gym":
            root = find_mlebench_dir(mlebench_dir)
            self.mlebench = MLEBenchTask.load(
                root, self.competition.id, obfuscated=task == "mlebench-obfuscated"
            )
        #: network="proxy": what the episode's egress proxy judges by (read now: a bad
        #: policy fails at gym.make, not at the first step).
        self.network_policy: EgressPolicy | None = None
        if network == "proxy":
            self.network_policy = policy_for(network_policy, self.competition.id, mlebench_dir)
        self.dirs = require_prepared(self.competition.id)
        self.backend = backend
        self.time_limit = float(time_limit)
        self.max_steps = int(max_steps)
        self.step_timeout = float(step_timeout)
        self.max_output_chars = int(max_output_chars)
        self.reward_mode = reward_mode
        self.network = network
        #: Whether an action that does not parse (ActionError) counts against max_steps, as
        #: any step does; False gives RL trainers the adapters' rule, where it spends none.
        self.malformed_action_costs_step = malformed_action_costs_step
        self.render_mode = render_mode
        # Memory defaults are this episode's share of the host (host_limits.py), with
        # `concurrent_episodes` (make_vec's num_envs, the batch runner's workers) sharing it.
        limits = episode_limits(concurrency(concurrent_episodes))
        self._sandbox_options = dict(sandbox_options or {})
        if self._sandbox_options.get("memory", "auto") == "auto":
            self._sandbox_options["memory"] = f"{limits.sandbox_memory // MIB}m"
        self._statement_cache: str | None = None
        self.action_space = ToolActionSpace()
        self.observation_format = observation_format
        self.observation_space = (
            ChatMessages()
            if observation_format == "messages"
            else UnicodeText(max_length=max(self.max_output_chars, 20_000) + 80_000, min_length=0)
        )
        # Built now, started on the first step: what would fail at start (no Docker engine,
        # no bubblewrap, a bad option) fails here, and reset() stays cheap.
        self.sandbox: Sandbox = make_sandbox(self.backend, **self._sandbox_options)
        self._pending: SandboxSpec | None = None
        self._mlebench_setup: MLEBenchSetup | None = None
        self._egress: EgressSetup | None = None
        #: The Python and library versions the agent's code runs with (tools/runtime.py).
        self._runtime: dict[str, str] = {}
        self._host_dir: Path | None = None
        self._snapshots: SnapshotKeeper | None = None
        self._cap: int | None = None
        self._integrity = IntegrityLog(network=network)
        self._budget = GradingBudget(self.grading_cpu_budget)
        self._ending = False
        self._steps = 0
        self._started: float | None = None
        self._done = True
        self._last_observation = ""
        self.episode_seed: int | None = None
        self.grading_limits = GradingLimits(memory=limits.grader_memory, memory_added=True)
        self._call_lock = threading.Lock()
        self._worker: ThreadPoolExecutor | None = None

    # -- episode ------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self._teardown()
        # gym.make(..., max_episode_steps=N) asks for N steps: the episode is graded then.
        requested = _time_limit_above()
        if requested:
            self.max_steps = min(self.max_steps, requested)
        self.episode_seed = seed if seed is not None else int(self.np_random.integers(2**31 - 1))
        self._pending = SandboxSpec(
            public_dir=self.dirs.public,
            env={
                "MLE_GYM_SEED": str(self.episode_seed),
                "MLE_GYM_COMPETITION": self.competition.id,
                **(self.mlebench_variables() if self.mlebench else {}),
            },
            network=self.network is True,
        )
        self._steps = 0
        self._started = None
        self._done = False
        self._integrity = IntegrityLog(network=self.network)
        self._budget = GradingBudget(self.grading_cpu_budget)
        self._ending = False
        task, tools, budget = self._task(), self._tools_manual(), self._budget_text()
        manual = f"{tools}\n## Budget\n{budget}"
        self._last_observation = f"{task}\n{manual}"
        first = opening(manual, task) if self.observation_format == "messages" else None
        info = self._info(exit_code=None, timed_out=False)
        info["task"] = task
        info["tools_manual"] = tools
        info["budget"] = {
            "max_steps": self.max_steps,
            "time_limit": self.time_limit,
            "step_timeout": self.step_timeout,
            "text": budget,
        }
        return first or self._last_observation, info

    def start(self, binds: Sequence[ReadOnlyBind] = (), writable_home: bool = False) -> None:
        """Start the episode's sandbox now, rather than on the first step (a no-op once
        started). The wall-clock budget counts from here. `binds`: host directories the
        sandbox also sees, read-only (a harness and its model route: mle_gym.harness).
        `writable_home`: /home is the agent's, as in MLE-bench's container, and MLE-bench's
        instructions there are the agent's own copies (task="mlebench...")."""
        if self._pending is None:
            return
        spec, self._pending = self._pending, None
        spec = replace(spec, binds=(*spec.binds, *binds), writable_home=writable_home)
        self._host_dir = owned_dir("host")
        warm_up()  # the grader's imports, before the clock: not the agent's time
        if self.network_policy is not None:
            self._egress = EgressSetup(self.network_policy, self._host_dir / NETWORK_LOG)
            spec = replace(
                spec,
                binds=(*spec.binds, self._egress.start()),
                env={**spec.env, **self._egress.variables()},
            )
        if self.mlebench is not None:
            self._mlebench_setup = MLEBenchSetup(
                self.mlebench, {"check_file": self.check_file, "max_bytes": self._submission_cap()}
            )
            more_binds, files = self._mlebench_setup.mounts(
                self.sandbox.paths.data, copy_home=writable_home
            )
            spec = replace(spec, binds=(*spec.binds, *more_binds), files=(*spec.files, *files))
        if self._snapshot_bounds is not None:
            suffix = Path(self.competition.submission.filename).suffix
            self._snapshots = SnapshotKeeper(
                self._host_dir / "snapshots", suffix=suffix, **self._snapshot_bounds
            )
        self.sandbox.start(spec)
        self._runtime = runtime_versions(self.sandbox)
        if self._mlebench_setup is not None:
            self._mlebench_setup.connect(self.sandbox)
        if self._egress is not None:
            self._egress.connect(self.sandbox)
        self._started = time.monotonic()

    @property
    def started(self) -> bool:
        """Whether this episode's sandbox runs (reset() leaves it to the first step)."""
        return self._started is not None

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """One tool call. Total: whatever the action or the agent's files do, the step
        returns, and the last step always carries a graded report."""
        call_id = action.get(CALL_ID) if isinstance(action, dict) else None
        call_id = call_id if isinstance(call_id, str) else None
        if self._done:
            observation = "The episode is over; call reset() to start a new one."
            return (
                self._observe(observation, "none", call_id), 0.0, True, False,
                self._info(exit_code=None, timed_out=False),
            )  # fmt: skip
        if self._pending is not None:
            try:
                self.start()
            except Exception as exc:  # the infrastructure's failure, not the agent's: no grade
                self._teardown()
                self._done = True
                raise SandboxError(
                    f"the sandbox could not start: {type(exc).__name__}: {exc}. Nothing was "
                    "graded (the agent had no step); fix the cause and call reset()"
                ) from exc
        self._steps += 1
        exit_code: int | None = None
        timed_out = False
        terminated = False
        tool = "invalid"
        try:
            call = parse_action(action)
            tool = call.tool
            done = TOOLS[call.tool].run(self._tool_context(), **call.args)
            observation, exit_code, timed_out = done.observation, done.exit_code, done.timed_out
            terminated = done.ends_episode
        except ActionError as exc:
            observation = f"Invalid action: {exc}"
            if not self.malformed_action_costs_step:
                self._steps -= 1  # answered, not counted (the wall clock still runs)
        except FileToolError as exc:
            observation = f"Error: {exc}"
        except Exception as exc:  # a sandbox failure must not end the episode ungraded
            self._raise_if_lost(exc)
            observation = f"Error: the {tool} step failed: {type(exc).__name__}: {exc}"
        self._snapshot(force=False)
        truncated = not terminated and (self._steps >= self.max_steps or self._time_left() <= 0)
        reward = 0.0
        info = self._info(exit_code=exit_code, timed_out=timed_out, tool=tool)
        if terminated or truncated:
            self._ending = True
            report = self._grade()
            reward = outcome(report, self.reward_mode)["reward"]
            info["report"] = optional_numbers(report.to_dict())
            graded = self._host_dir / self.competition.submission.filename
            if graded.is_file():
                # the very file that was graded, on the host, until the next reset() or close()
                info["graded_submission"] = str(graded)
            if self._snapshots is not None:
                if graded.is_file():
                    self._snapshots.offer_file(
                        graded, self._steps, elapsed_since(self._started), final=True
                    )
                # ungraded copies, on the host until the next reset() or close():
                # mle_gym.evaluate_snapshots grades them, with what is left of the budget
                info["snapshots"] = {
                    **self._snapshots.to_dict(),
                    "grading_budget": self._budget.to_dict(),
                }
            info["integrity"] = self._integrity.record(
                info.get("snapshots"),
                self._budget.to_dict(),
                info["network"] if self._egress is not None else None,
            )
            if truncated:
                observation += (
                    "\n[The episode's budget is spent; the current submission was graded.]"
                )
            self._done = True
        return self._observe(observation, tool, call_id), float(reward), terminated, truncated, info

    def _tool_context(self) -> ToolContext:
        """What this step's tool may use of the episode (tools/table.py)."""
        return ToolContext(
            sandbox=self.sandbox,
            max_output_chars=self.max_output_chars,
            command_timeout=self._command_timeout(),
            log_name=f"step-{self._steps:05d}.log",
            check_submission=self.check_submission,
            note_limits=self._integrity.note_limits,
            shell_restarted=self._reconnect,
        )

    def _reconnect(self) -> str:
        """After a new shell: MLE-bench's endpoint and the egress proxy admit it again."""
        note = ""
        if self._mlebench_setup is not None:
            note += self._mlebench_setup.reconnect(self.sandbox)
        if self._egress is not None:
            note += self._egress.reconnect(self.sandbox)
        return note

    def interrupted_step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """What a step cut short on the host (Ctrl-C) returns where a step must return
        something (a vector env's worker): nothing graded, the episode goes on, and the next
        command starts in a clean shell (shell.py)."""
        call_id = action.get(CALL_ID) if isinstance(action, dict) else None
        text = "[The step was interrupted on the host (Ctrl-C); its command was cut short.]"
        observation = self._observe(text, "none", call_id if isinstance(call_id, str) else None)
        return observation, 0.0, False, False, self._info(exit_code=None, timed_out=False)

    # -- async --------------------------------------------------------------------------------
    async def areset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[Any, dict]:
        """`reset` that leaves the event loop free (it may stop the previous sandbox)."""
        return await self._in_own_thread(self.reset, seed=seed, options=options)

    async def astep(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """`step` in this env's own worker thread, so the event loop runs on while the
        command does. Each env has its own thread (a shared pool would make the ninth env
        wait for one of the first eight), so any number of envs step at once; one env takes
        one call at a time."""
        return await self._in_own_thread(self.step, action)

    async def aclose(self) -> None:
        """`close` in this env's own worker thread (after any call it is running), so that
        many envs stop their sandboxes at once: a stop mostly waits for processes to end."""
        await self._in_own_thread(self._teardown)
        self.close()

    async def _in_own_thread(self, call: Any, *args: Any, **kwargs: Any) -> Any:
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mle-gym-env")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._worker, functools.partial(self._serially, call, *args, **kwargs)
        )

    def _serially(self, call: Any, *args: Any, **kwargs: Any) -> Any:
        with self._call_lock:
            return call(*args, **kwargs)

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return self._last_observation
        if self.render_mode == "human":
            if self._steps:
                print(step_glance(self._steps, self._last_observation))
            elif self._last_observation:  # after reset(), before the first step
                print(reset_glance(self.competition.id, self._last_observation))
        return None

    def close(self) -> None:
        self._teardown()
        self._done = True
        if self._worker is not None:
            self._worker.shutdown(wait=False)
            self._worker = None

    # -- helpers ------------------------------------------------------------------------------
    def _raise_if_lost(self, exc: Exception) -> None:
        """A sandbox destroyed from outside ends the episode ungraded, with an exception
        rather than an observation: the agent's work is gone through no fault of its own,
        so no reward may be recorded as its result. The env is then not started, like one
        whose sandbox never started (a batch runs such an episode again)."""
        if not self.sandbox.lost():
            return
        self._teardown()
        self._done = True
        raise SandboxLost(
            f"the episode's sandbox is gone (removed from outside the env: {type(exc).__name__}: "
            f"{exc}); the episode cannot go on and was not graded: call reset() to start a new one"
        ) from exc

    def _teardown(self) -> None:
        """Total, so that reset() and close() never fail on what the agent left."""
        self._pending = None
        self._started = None
        self._runtime = {}
        self._snapshots = None
        attempt("stopping the sandbox", self.sandbox.stop)
        if self._mlebench_setup is not None:
            attempt("closing MLE-bench's endpoint", self._mlebench_setup.close)
            self._mlebench_setup = None
        if self._egress is not None:
            attempt("closing the network proxy", self._egress.close)
            self._egress = None
        if self._host_dir is not None:
            discard(self._host_dir)
            self._host_dir = None

    def _time_left(self) -> float:
        if self._started is None:
            return self.time_limit
        return self.time_limit - (time.monotonic() - self._started)

    def _command_timeout(self) -> float:
        return max(1.0, min(self.step_timeout, self._time_left()))

    def _task(self) -> str:
        return self.statement()

    def statement(self) -> str:
        """The task as the agent first reads it: mle_gym's statement of the competition, or
        (task="mlebench...") MLE-bench's instructions, which point to
        /home/data/description.md, with the placeholders its runner fills filled."""
        if self.mlebench is not None:
            return fill_placeholders(self.mlebench.instructions, self.mlebench_variables())
        p = self.sandbox.paths
        return self.competition.render_statement(p.data, p.code, p.submission)

    def mlebench_variables(self) -> dict[str, str]:
        """The variables MLE-bench's agents expect, from this env's budget and sandbox."""
        p = self.sandbox.paths
        return mlebench_variables(
            self.competition.id,
            time_limit=self.time_limit,
            max_steps=self.max_steps,
            hardware=hardware(self._sandbox_options.get("gpus")),
            agent_dir="/home/agent" if self.backend == "docker" else "/tmp",
            submission_dir=p.submission,
            logs_dir=p.logs,
            code_dir=p.code,
        )

    def _tools_manual(self) -> str:
        """The tools' manual with this episode's paths (reset()'s info["tools_manual"])."""
        return tools_manual(self.sandbox.paths.logs, self._submission_path())

    def _budget_text(self) -> str:
        """The budget as the agent reads it (reset()'s info["budget"]["text"])."""
        per_command = min(self.step_timeout, self.time_limit)
        return (
            f"At most {self.max_steps} steps and {self.time_limit:,.0f} seconds; each "
            f"command may run for at most {per_command:,.0f} seconds. "
            f"{self._network_note()}\n"
        )

    def _network_note(self) -> str:
        if self.network_policy is not None:
            return (
                "The network is reachable through an HTTP(S) proxy only ($HTTPS_PROXY, already "
                f"set), under the policy {self.network_policy.name!r}; every request is logged "
                "and a refused one gets a 403 naming the rule."
            )
        return "The network is available." if self.network else "There is no network access."

    def _observe(self, text: str, tool: str, call_id: str | None) -> str | dict[str, str]:
        self._last_observation = text
        if self.observation_format == "messages":
            return tool_result(text, tool, call_id)
        return text

    def _submission_path(self) -> str:
        return f"{self.sandbox.paths.submission}/{self.competition.submission.filename}"

    def _submission_cap(self) -> int:
        """The copy-out cap, read once per env (it reads the answers' sizes)."""
        if self._cap is None:
            self._cap = submission_cap(self.dirs.private)
        return self._cap

    def _fetch_submission(self) -> Path | None:
        assert self._host_dir is not None
        dest = self._host_dir / self.competition.submission.filename
        dest.unlink(missing_ok=True)
        cap = self._submission_cap()
        copied = copy_out(self.sandbox, self._submission_path(), dest, cap)
        if not copied:  # nothing at the path: leave no empty file to pass for a submission
            dest.unlink(missing_ok=True)
        return dest if copied else None

    def check_submission(self) -> tuple[bool, str]:
        """The validate tool's answer: whether the current submission file is valid, and
        the message saying so or why not (never its score). Also serves harnesses
        (mle_gym.harness), which have no steps."""
        self._integrity.validations += 1
        self._snapshot(force=True)
        path = self._fetch_submission()
        if path is None:
            return False, (
                f"No submission yet: write {self.sandbox.paths.submission}/"
                f"{self.competition.submission.filename}."
            )
        try:
            reason = self._format_check(path)
        except GradingBudgetSpent as exc:
            return False, f"The submission was not checked: {exc}."
        if reason is None:
            return True, "The submission is valid."
        return False, f"The submission is invalid: {reason}"

    def _format_check(self, path: Path) -> str | None:
        """Validity only: no metric runs during the episode, so no score exists to leak.
        Checks spend the grading budget down to the final grade's share; past it they
        raise GradingBudgetSpent, unrun."""
        return check_bounded(
            self.competition.id,
            path,
            self.dirs.private,
            shown_path=self._submission_path(),
            limits=self.grading_limits,
            budget=self._budget,
            keep=self._final_share(),
        )

    def _final_share(self) -> float:
        return self._budget.final_share(self.grading_limits.cpu_seconds)

    def keep_code(self, dest: Path, bounds: CodeBounds | None = None) -> dict[str, Any] | None:
        """Copy the episode's code folder to `dest` on the host, bounded (envs/kept_code.py),
        after the episode ended and before the next reset() or close(); None when it never
        started. Returns the index written beside `dest` (code.json)."""
        if not self.started:
            return None
        return keep_code(self.sandbox, self.sandbox.paths.code, dest, bounds or CodeBounds())

    def _snapshot(self, *, force: bool) -> None:
        """Keep the submission if it changed (never graded here: see envs/snapshots.py)."""
        if self._snapshots is None or not self.started:
            return
        try:
            self._snapshots.offer(
                self.sandbox,
                self._submission_path(),
                self._submission_cap(),
                self._steps,
                elapsed_since(self._started),
                force=force,
            )
        except Exception as exc:  # a record must never break the step it follows
            log.warning("submission snapshot skipped: %s: %s", type(exc).__name__, exc)

    def check_file(self, path: Path) -> tuple[bool, str]:
        """MLE-bench's validation answer for a submission file on the host (its grading
        server's words), never its score: for the endpoint of task="mlebench". By default
        the answer is the format check's, as the validate tool's; with
        mlebench_validation="metric" the metric runs for the verdict, as in MLE-bench's
        server, counted apart (`metric_runs_for_validity`): its score is not shown."""
        self._integrity.validations += 1
        try:
            if self.mlebench_validation == "metric":
                error = self._metric_for_validity(path)
            else:
                error = self._format_check(path)
        except GradingBudgetSpent as exc:
            error = f"the submission was not checked: {exc}"
        if error is None:
            return True, "Submission is valid."
        return False, (
            "Submission invalid! The attempt to grade the submission has resulted in the "
            f"following error message:\n{error}"
        )

    def _metric_for_validity(self, path: Path) -> str | None:
        """The error of a full grade of `path` (None when valid); the score goes nowhere."""
        report = grade_within(
            self.competition.id,
            path,
            self.dirs.private,
            self._budget,
            shown_path=self._submission_path(),
            limits=self.grading_limits,
            keep=self._final_share(),
        )
        self._integrity.metric_runs_for_validity += 1
        return report.error

    def _grade_file(self, path: Path | None) -> GradeReport:
        if not self._ending:
            self._integrity.grades_before_end += 1
        return grade_bounded(
            self.competition.id,
            path,
            self.dirs.private,
            shown_path=self._submission_path(),
            limits=self.grading_limits,
            budget=self._budget,
        )

    def _grade(self) -> GradeReport:
        """The report of the current submission, whatever state the sandbox is in."""
        try:
            path = self._fetch_submission()
        except Exception as exc:  # an unreadable file is an invalid submission, with why
            self._raise_if_lost(exc)
            report = self._grade_file(None)
            reason = str(exc) if isinstance(exc, FileToolError) else f"{type(exc).__name__}: {exc}"
            return replace(
                report, error=f"the submission could not be read: {reason}", submission_exists=True
            )
        return self._grade_file(path)

    def _info(self, *, exit_code: int | None, timed_out: bool, tool: str | None = None) -> dict:
        info: dict[str, Any] = {
            "competition_id": self.competition.id,
            "step": self._steps,
            # whole seconds, so two runs with the same seed and actions give equal infos
            "time_left": optional(
                math.ceil(max(0.0, self._time_left())) if self._started else None
            ),
            "steps_left": self.max_steps - self._steps,
            "exit_code": optional(exit_code),
            "timed_out": timed_out,
            "seed": self.episode_seed,
        }
        if tool is not None:
            info["tool"] = tool
        info["sandbox"] = optional_numbers(
            {**self.sandbox.describe(), "started": self.started, "runtime": dict(self._runtime)}
        )
        info["network"] = self._network_info()
        p = self.sandbox.paths
        info["paths"] = {
            "data": p.data,
            "code": p.code,
            "submission": p.submission,
            "submission_file": self._submission_path(),
            "logs": p.logs,
        }
        return info

    def _network_info(self) -> dict[str, Any]:
        """The network mode and, through the proxy, what the episode reached so far."""
        if self.network_policy is None:
            return {"mode": "open" if self.network else "off"}
        if self._egress is not None:
            return self._egress.summary()
        return not_started_summary(self.network_policy)


def _snapshot_bounds(snapshots: bool | dict[str, int]) -> dict[str, int] | None:
    """The keeper's bounds from the env's `snapshots` argument (None: keep none)."""
    if snapshots is True:
        return {}
    if snapshots is False:
        return None
    if not isinstance(snapshots, dict) or not set(snapshots) <= {"max_count", "max_bytes"}:
        raise ValueError(
            "snapshots must be True, False or a dict with max_count and/or max_bytes, "
            f"got {snapshots!r}"
        )
    for name, value in snapshots.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"snapshots[{name!r}] must be a positive integer, got {value!r}")
    return dict(snapshots)


def _time_limit_above() -> int | None:
    """The step limit of a Gymnasium `TimeLimit` wrapping this env, if one is calling.

    `gym.make(id, max_episode_steps=N)` wraps the env in `TimeLimit`, which would cut the
    episode at step N without the grading our own budget does, and Gymnasium hides N from
    the env it wraps (its spec says None). The wrapper is on the call stack of `reset()`,
    so the env reads N there and makes it its own graded step budget.
    """
    frame = sys._getframe(2)
    for _ in range(16):
        if frame is None:
            return None
        caller = frame.f_locals.get("self")
        if isinstance(caller, gym.wrappers.TimeLimit):
            return int(caller._max_episode_steps)
        frame = frame.f_back
    return None
