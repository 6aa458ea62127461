"""`Episode`: one competition's episodes in one sandbox, with no Gymnasium in its API.

It owns the sandbox's lifecycle (built at once, started on the first step or by `start`),
the step and wall-clock budget, the tools a step runs, the submission's fetch, validation
and grade (the answers stay on the host), snapshots, the integrity record and the kept code.
On a development variant, its feedback (validate's score, the dense reward) is a
`DevFeedback` (envs/dev_feedback.py) over the episode's grades.
`CompetitionEnv` wraps it as a `gym.Env`; a harness (mle_gym.harness) drives it directly,
since a harness has no steps but the final one.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mle_gym.competitions import get_competition
from mle_gym.competitions.spec import Competition
from mle_gym.data.cache import CompetitionDirs
from mle_gym.data.dev_variant import DevDirs, check_offered, require_dev_variant, variant_record
from mle_gym.data.gate import require_prepared
from mle_gym.envs.config import EnvConfig, snapshot_bounds
from mle_gym.envs.dev_feedback import DEV_BUDGET_NOTE, DEV_NOTE, DevFeedback
from mle_gym.envs.egress_setup import NETWORK_LOG, EgressSetup, not_started_summary, policy_for
from mle_gym.envs.episode_checkpoint import checked_meta, resume_into, write_checkpoint
from mle_gym.envs.info_values import optional, optional_numbers
from mle_gym.envs.integrity import IntegrityLog
from mle_gym.envs.kept_code import CodeBounds, keep_code
from mle_gym.envs.snapshots import SnapshotKeeper, elapsed_since
from mle_gym.envs.task import Service, Setting, Task, make_task
from mle_gym.grading.bounded import (
    GradingLimits,
    check_bounded,
    grade_bounded,
    grade_within,
    warm_up,
)
from mle_gym.grading.budget import GradingBudget, GradingBudgetSpent
from mle_gym.grading.outcome import outcome
from mle_gym.grading.report import GradeReport
from mle_gym.grading.submission_cap import submission_cap
from mle_gym.sandbox.base import ReadOnlyBind, Sandbox, SandboxError, SandboxLost, SandboxSpec
from mle_gym.sandbox.egress_policy import EgressPolicy
from mle_gym.sandbox.factory import make_sandbox
from mle_gym.sandbox.host_limits import MIB, concurrency, episode_limits
from mle_gym.sandbox.scratch import discard, owned_dir
from mle_gym.sandbox.teardown import attempt
from mle_gym.tools import (
    TOOLS,
    ActionError,
    FileToolError,
    ToolContext,
    ToolOutcome,
    copy_out,
    parse_action,
    tools_manual,
)
from mle_gym.tools.actions import ToolCall
from mle_gym.tools.runtime import runtime_versions

log = logging.getLogger(__name__)

#: What a step after the end answers.
EPISODE_OVER = "The episode is over; call reset() to start a new one."
#: Added to the last observation when the budget, not `submit`, ended the episode.
BUDGET_SPENT = "\n[The episode's budget is spent; the current submission was graded.]"


@dataclass(frozen=True)
class Opening:
    """What the agent is given at reset: the task, the tools' manual and the budget."""

    task: str
    #: The "## Tools" section of the first observation.
    tools_manual: str
    #: The budget paragraph after "## Budget" (the network note included).
    budget_text: str
    max_steps: int
    time_limit: float
    #: The longest one command may run (never past the wall clock).
    step_timeout: float

    @property
    def manual(self) -> str:
        """The tools' manual and the budget, as the first observation shows them."""
        return f"{self.tools_manual}\n## Budget\n{self.budget_text}\n"

    @property
    def observation(self) -> str:
        return f"{self.task}\n{self.manual}"

    def budget(self) -> dict[str, Any]:
        return {
            "max_steps": self.max_steps,
            "time_limit": self.time_limit,
            "step_timeout": self.step_timeout,
            "text": self.budget_text,
        }


@dataclass(frozen=True)
class Outcome:
    """One step's result, before the env shapes the observation."""

    observation: str
    #: The tool that ran ("invalid" for an action that did not parse, "none" for no step).
    tool: str
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]


class Episode:
    """Episodes of one competition in one sandbox (see the module's docstring). `reset`
    begins one, `step` runs a tool call and ends it with a grade, `close` ends them all."""

    def __init__(
        self,
        competition: Competition,
        config: EnvConfig,
        task: Task,
        dirs: CompetitionDirs,
        network_policy: EgressPolicy | None,
    ) -> None:
        self.competition = competition
        self.config = config
        self.task = task
        self.dirs = dirs
        #: network="proxy": what the episode's egress proxy judges by.
        self.network_policy = network_policy
        # Memory defaults are this episode's share of the host (host_limits.py), with
        # `concurrent_episodes` (make_vec's num_envs, the batch runner's workers) sharing it.
        limits = episode_limits(concurrency(config.concurrent_episodes))
        self.sandbox_options = dict(config.sandbox_options or {})
        if self.sandbox_options.get("memory", "auto") == "auto":
            self.sandbox_options["memory"] = f"{limits.sandbox_memory // MIB}m"
        # Built now, started on the first step: what would fail at start (no Docker engine,
        # no bubblewrap, a bad option) fails here, and reset() stays cheap.
        self.sandbox: Sandbox = make_sandbox(config.backend, **self.sandbox_options)
        self.grading_limits = GradingLimits(memory=limits.grader_memory, memory_added=True)
        #: The step budget of the current episode (a `TimeLimit` wrapper's may be smaller).
        self.max_steps = config.max_steps
        self.seed: int | None = None
        self.steps = 0
        #: Whether the episode ended (graded) or never began.
        self.done = True
        self._snapshot_bounds = snapshot_bounds(config.snapshots)
        self._pending: SandboxSpec | None = None
        self._task_service: Service | None = None
        self._egress: EgressSetup | None = None
        #: The Python and library versions the agent's code runs with (tools/runtime.py).
        self._runtime: dict[str, str] = {}
        self._host_dir: Path | None = None
        self._snapshots: SnapshotKeeper | None = None
        self._cap: int | None = None
        self._integrity = IntegrityLog(network=config.network)
        self._budget = GradingBudget(config.grading_cpu_budget)
        self._ending = False
        self._started: float | None = None
        #: The checkpoint this episode resumed from, with its own lineage (None: from the start).
        self.resumed_from: dict[str, Any] | None = None
        #: data="dev": which carving of the variant the episode runs on (its manifest's md5
        #: and content digest), so that a receipt can tell it from one carved later.
        self.variant = variant_record(DevDirs(dirs.root)) if config.data == "dev" else None
        #: The development score on validate and the dense reward (data="dev" only).
        self.feedback = DevFeedback(self._dev_grade) if config.data == "dev" else None

    @classmethod
    def open(cls, competition_id: str, config: EnvConfig) -> Episode:
        """The episode of `competition_id` under `config`: the task read, the network
        policy read and the data prepared now, so that each fails here with its reason."""
        competition = get_competition(competition_id)
        task = make_task(competition, config)
        policy = None
        if config.network == "proxy":
            policy = policy_for(config.network_policy, competition.id, config.mlebench_dir)
        if config.data == "dev":
            check_offered(competition)
        dirs = require_prepared(competition.id)
        if config.data == "dev":  # from here on the real private/ is never opened
            dirs = require_dev_variant(competition, dirs.root.parent)
        return cls(competition, config, task, dirs, policy)

    # -- lifecycle ----------------------------------------------------------------------------
    def reset(self, seed: int, max_steps: int | None = None) -> Opening:
        """End any episode running and begin a new one (its sandbox starts later); `max_steps`
        lowers the step budget for this episode."""
        self.teardown()
        self.max_steps = min(self.config.max_steps, max_steps or self.config.max_steps)
        self.seed = seed
        self._pending = SandboxSpec(
            public_dir=self.dirs.public,
            env={
                "MLE_GYM_SEED": str(seed),
                "MLE_GYM_COMPETITION": self.competition.id,
                **self.task.variables(self._setting()),
            },
            network=self.config.network is True,
        )
        self.steps = 0
        self._started = None
        self.done = False
        self._integrity = IntegrityLog(network=self.config.network)
        self._budget = GradingBudget(self.config.grading_cpu_budget)
        self._ending = False
        self.resumed_from = None
        if self.feedback is not None:
            self.feedback.reset()
        return self.opening()

    def checkpoint(self, directory: Path | None = None) -> Path:
        """Write a checkpoint of the running episode (envs/episode_checkpoint.py) into the
        store at `directory` (default: `$MLE_GYM_HOME/checkpoints`); its folder."""
        return write_checkpoint(self, directory)

    def resume(self, checkpoint: Path, max_steps: int | None = None) -> Opening:
        """End any episode running and go on with the one checkpointed in `checkpoint`, in a
        fresh sandbox, with what was left of its budgets; the opening says what was not
        restored. ValueError (nothing ended) for a checkpoint of another competition or
        configuration; CheckpointError for a damaged one."""
        meta = checked_meta(self, Path(checkpoint))
        opening = self.reset(meta["seed"], min(meta["max_steps"], max_steps or meta["max_steps"]))
        try:
            resumed = resume_into(self, Path(checkpoint), meta)
        except BaseException:
            self.close()
            raise
        return replace(opening, budget_text=f"{opening.budget_text}\n\n{resumed.note(self)}")

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
        mounts = self.task.mounts(
            self.sandbox.paths.data, writable_home, self.check_file, self._submission_cap()
        )
        self._task_service = mounts.service
        spec = replace(spec, binds=(*spec.binds, *mounts.binds), files=(*spec.files, *mounts.files))
        if self._snapshot_bounds is not None:
            suffix = Path(self.competition.submission.filename).suffix
            self._snapshots = SnapshotKeeper(
                self._host_dir / "snapshots", suffix=suffix, **self._snapshot_bounds
            )
        self.sandbox.start(spec)
        self._runtime = runtime_versions(self.sandbox)
        for service in self._services():
            service.connect(self.sandbox)
        self._started = time.monotonic()

    @property
    def started(self) -> bool:
        """Whether this episode's sandbox runs (reset() leaves it to the first step)."""
        return self._started is not None

    @property
    def time_limit(self) -> float:
        return self.config.time_limit

    def teardown(self) -> None:
        """Stop the sandbox and what runs beside it. Total, so that reset() and close()
        never fail on what the agent left."""
        self._pending = None
        self._started = None
        self._runtime = {}
        self._snapshots = None
        attempt("stopping the sandbox", self.sandbox.stop)
        if self._task_service is not None:
            attempt("closing the task's endpoint", self._task_service.close)
            self._task_service = None
        if self._egress is not None:
            attempt("closing the network proxy", self._egress.close)
            self._egress = None
        if self._host_dir is not None:
            discard(self._host_dir)
            self._host_dir = None

    def close(self) -> None:
        self.teardown()
        self.done = True

    def stop_processes(self) -> None:
        """Kill every process left in the sandbox (the sandbox itself stays, with its files)."""
        self.sandbox.kill_processes()

    def command_log(self, name: str) -> Path | None:
        """The host copy of a command's full log (`log_name` of a run), where the sandbox
        keeps its logs on the host and the log exists."""
        logs_dir = getattr(self.sandbox, "logs_dir", None)
        if logs_dir is None or not (logs_dir / name).is_file():
            return None
        return logs_dir / name

    # -- what the agent is given --------------------------------------------------------------
    def opening(self) -> Opening:
        p = self.sandbox.paths
        tools = tools_manual(p.logs, self.submission_path)
        per_command = min(self.config.step_timeout, self.config.time_limit)
        budget = (
            f"At most {self.max_steps} steps and {self.config.time_limit:,.0f} seconds; each "
            f"command may run for at most {per_command:,.0f} seconds. {self._network_note()}"
        )
        if self.config.data == "dev":
            budget += DEV_BUDGET_NOTE
        return Opening(
            self.statement(), tools, budget, self.max_steps, self.config.time_limit, per_command
        )

    def statement(self) -> str:
        """The task as the agent first reads it: mle_gym's statement of the competition, or
        (task="mlebench...") MLE-bench's instructions, which point to
        /home/data/description.md, with the placeholders its runner fills filled."""
        return self.task.statement(self._setting())

    def task_variables(self) -> dict[str, str]:
        """The variables the task gives the sandbox's shell (MLE-bench's, for its task)."""
        return self.task.variables(self._setting())

    def _setting(self) -> Setting:
        return Setting(
            self.competition.id,
            self.sandbox.paths,
            self.config.time_limit,
            self.max_steps,
            self.config.backend,
            self.sandbox_options.get("gpus"),
        )

    def _network_note(self) -> str:
        if self.network_policy is not None:
            return (
                "The network is reachable through an HTTP(S) proxy only ($HTTPS_PROXY, already "
                f"set), under the policy {self.network_policy.name!r}; every request is logged "
                "and a refused one gets a 403 naming the rule."
            )
        return "The network is available." if self.config.network else "There is no network access."

    @property
    def submission_path(self) -> str:
        """Where the agent writes its submission, inside the sandbox."""
        return f"{self.sandbox.paths.submission}/{self.competition.submission.filename}"

    # -- steps --------------------------------------------------------------------------------
    def step(self, action: Any) -> Outcome:
        """One tool call. Total: whatever the action or the agent's files do, the step
        returns, and the last step always carries a graded report. Raises SandboxError when
        the sandbox cannot start, SandboxLost when it was destroyed from outside."""
        if self.done:
            return Outcome(EPISODE_OVER, "none", 0.0, True, False, self.info())
        self._start_for_step()
        self.steps += 1
        if self.feedback is not None:
            self.feedback.begin_step()
        exit_code: int | None = None
        timed_out = False
        terminated = False
        tool = "invalid"
        try:
            call = parse_action(action)
            tool = call.tool
            done = self.run_tool(call)
            observation, exit_code, timed_out = done.observation, done.exit_code, done.timed_out
            terminated = done.ends_episode
        except ActionError as exc:
            observation = f"Invalid action: {exc}"
            if not self.config.malformed_action_costs_step:
                self.steps -= 1  # answered, not counted (the wall clock still runs)
        except FileToolError as exc:
            observation = f"Error: {exc}"
        except Exception as exc:  # a sandbox failure must not end the episode ungraded
            self._raise_if_lost(exc)
            observation = f"Error: the {tool} step failed: {type(exc).__name__}: {exc}"
        self._snapshot(force=False)
        truncated = not terminated and (self.steps >= self.max_steps or self.time_left() <= 0)
        reward = 0.0
        info = self.info(exit_code=exit_code, timed_out=timed_out, tool=tool)
        if self.feedback is not None:
            self.feedback.add_info(info)
        if terminated or truncated:
            reward = self._finish(info)
            if truncated:
                observation += BUDGET_SPENT
        elif self.config.reward_mode == "dense":
            reward = self._dense_step()
        return Outcome(observation, tool, reward, terminated, truncated, info)

    def _start_for_step(self) -> None:
        if self._pending is None:
            return
        try:
            self.start()
        except Exception as exc:  # the infrastructure's failure, not the agent's: no grade
            self.close()
            raise SandboxError(
                f"the sandbox could not start: {type(exc).__name__}: {exc}. Nothing was "
                "graded (the agent had no step); fix the cause and call reset()"
            ) from exc

    def run_tool(self, call: ToolCall) -> ToolOutcome:
        """Run one parsed tool call through the tool table (tools/table.py). Raises what the
        tool raises (FileToolError, a sandbox's errors)."""
        return TOOLS[call.tool].run(self._tool_context(), **call.args)

    def _tool_context(self) -> ToolContext:
        """What this step's tool may use of the episode."""
        return ToolContext(
            sandbox=self.sandbox,
            max_output_chars=self.config.max_output_chars,
            command_timeout=self.command_timeout(),
            log_name=f"step-{self.steps:05d}.log",
            check_submission=self.check_submission,
            note_limits=self._integrity.note_limits,
            shell_restarted=self._reconnect,
        )

    def _reconnect(self) -> str:
        """After a new shell: the task's endpoint and the egress proxy admit it again."""
        return "".join(service.reconnect(self.sandbox) for service in self._services())

    def _services(self) -> list[Service]:
        """What runs beside the sandbox, in the order it connects: the task's endpoint, then
        the egress proxy."""
        return [s for s in (self._task_service, self._egress) if s is not None]

    def _finish(self, info: dict[str, Any]) -> float:
        """Grade the current submission and end the episode: the reward, with the report,
        the graded file, the snapshots and the integrity record added to `info`."""
        self._ending = True
        report = self._grade()
        reward = outcome(report, self.config.reward_mode)["reward"]
        if self.config.reward_mode == "dense":  # what the steps before did not pay yet
            assert self.feedback is not None  # EnvConfig: dense needs data="dev"
            reward = self.feedback.final_reward(report)
        info["report"] = optional_numbers(report.to_dict())
        info["data_variant"] = self.config.data
        if self.config.data == "dev":
            info["data_note"] = DEV_NOTE
        assert self._host_dir is not None and self._started is not None
        graded = self._host_dir / self.competition.submission.filename
        if graded.is_file():
            # the very file that was graded, on the host, until the next reset() or close()
            info["graded_submission"] = str(graded)
        if self._snapshots is not None:
            if graded.is_file():
                self._snapshots.offer_file(
                    graded, self.steps, elapsed_since(self._started), final=True
                )
            # ungraded copies, on the host until the next reset() or close():
            # mle_gym.evaluate_snapshots grades them, with what is left of the budget
            info["snapshots"] = {
                **self._snapshots.to_dict(),
                "grading_budget": self._budget.to_dict(),
                "data_variant": self.config.data,  # what they are graded on
            }
        info["integrity"] = self._integrity.record(
            self.config.data,
            info.get("snapshots"),
            self._budget.to_dict(),
            info["network"] if self._egress is not None else None,
        )
        if self.variant is not None:
            info["integrity"]["dev_variant"] = dict(self.variant)
        if self.resumed_from is not None:
            info["integrity"]["resumed_from"] = self.resumed_from
        self.done = True
        return float(reward)

    def _raise_if_lost(self, exc: Exception) -> None:
        """A sandbox destroyed from outside ends the episode ungraded, with an exception
        rather than an observation: the agent's work is gone through no fault of its own,
        so no reward may be recorded as its result. The episode is then not started, like
        one whose sandbox never started (a batch runs such an episode again)."""
        if not self.sandbox.lost():
            return
        self.close()
        raise SandboxLost(
            f"the episode's sandbox is gone (removed from outside the env: {type(exc).__name__}: "
            f"{exc}); the episode cannot go on and was not graded: call reset() to start a new one"
        ) from exc

    def time_left(self) -> float:
        if self._started is None:
            return self.config.time_limit
        return self.config.time_limit - (time.monotonic() - self._started)

    def command_timeout(self) -> float:
        return max(1.0, min(self.config.step_timeout, self.time_left()))

    # -- the submission -----------------------------------------------------------------------
    def _submission_cap(self) -> int:
        """The copy-out cap, read once per env (it reads the answers' sizes)."""
        if self._cap is None:
            self._cap = submission_cap(self.dirs.private)
        return self._cap

    def _fetch_submission(self) -> Path | None:
        assert self._host_dir is not None
        dest = self._host_dir / self.competition.submission.filename
        dest.unlink(missing_ok=True)
        copied = copy_out(self.sandbox, self.submission_path, dest, self._submission_cap())
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
            note = self.feedback.validate_note(path) if self.feedback is not None else ""
            return True, "The submission is valid." + note
        return False, f"The submission is invalid: {reason}"

    def _dev_grade(self, path: Path) -> GradeReport | None:
        """The grade of `path` on the development answers, within the grading budget (None
        past it), counted in the integrity record: for the development feedback."""
        assert self.config.data == "dev"  # never a grade on the real answers mid-episode
        try:
            report = self._grade_within_budget(path)
        except GradingBudgetSpent:
            return None
        self._integrity.dev_grades += 1
        return report

    def _dense_step(self) -> float:
        """reward_mode="dense", a step that did not end the episode: the feedback's reward for
        the submission now (an unreadable file pays nothing now; the end grades it)."""
        assert self.feedback is not None  # EnvConfig: dense needs data="dev"
        try:
            path = self._fetch_submission()
        except Exception as exc:
            self._raise_if_lost(exc)
            return 0.0
        return self.feedback.dense_reward(path)

    def _format_check(self, path: Path) -> str | None:
        """Validity only: no metric runs during the episode, so no score exists to leak.
        Checks spend the grading budget down to the final grade's share; past it they
        raise GradingBudgetSpent, unrun."""
        return check_bounded(
            self.competition.id,
            path,
            self.dirs.private,
            shown_path=self.submission_path,
            limits=self.grading_limits,
            budget=self._budget,
            keep=self._final_share(),
        )

    def _final_share(self) -> float:
        return self._budget.final_share(self.grading_limits.cpu_seconds)

    def check_file(self, path: Path) -> tuple[bool, str]:
        """MLE-bench's validation answer for a submission file on the host (its grading
        server's words), never its score: for the endpoint of task="mlebench". By default
        the answer is the format check's, as the validate tool's; with
        mlebench_validation="metric" the metric runs for the verdict, as in MLE-bench's
        server, counted apart (`metric_runs_for_validity`): its score is not shown."""
        self._integrity.validations += 1
        try:
            if self.config.mlebench_validation == "metric":
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
        report = self._grade_within_budget(path)
        self._integrity.metric_runs_for_validity += 1
        return report.error

    def _grade_within_budget(self, path: Path) -> GradeReport:
        """A full grade during the episode, leaving the final grade its share of the grading
        budget (GradingBudgetSpent past it)."""
        return grade_within(
            self.competition.id,
            path,
            self.dirs.private,
            self._budget,
            shown_path=self.submission_path,
            limits=self.grading_limits,
            keep=self._final_share(),
        )

    def _grade_file(self, path: Path | None) -> GradeReport:
        if not self._ending:
            self._integrity.grades_before_end += 1
        return grade_bounded(
            self.competition.id,
            path,
            self.dirs.private,
            shown_path=self.submission_path,
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

    # -- records ------------------------------------------------------------------------------
    def keep_code(
        self, dest: Path, bounds: CodeBounds | None = None, source: str | None = None
    ) -> dict[str, Any] | None:
        """Copy the episode's code folder (or the sandbox folder `source`) to `dest` on the
        host, bounded (envs/kept_code.py), after the episode ended and before the next
        reset() or close(); None when it never started. Returns the index written beside
        `dest` (code.json)."""
        if not self.started:
            return None
        folder = source if source is not None else self.sandbox.paths.code
        return keep_code(self.sandbox, folder, dest, bounds or CodeBounds())

    def _snapshot(self, *, force: bool) -> None:
        """Keep the submission if it changed (never graded here: see envs/snapshots.py)."""
        if self._snapshots is None or self._started is None:
            return
        try:
            self._snapshots.offer(
                self.sandbox,
                self.submission_path,
                self._submission_cap(),
                self.steps,
                elapsed_since(self._started),
                force=force,
            )
        except Exception as exc:  # a record must never break the step it follows
            log.warning("submission snapshot skipped: %s: %s", type(exc).__name__, exc)

    def info(
        self, *, exit_code: int | None = None, timed_out: bool = False, tool: str | None = None
    ) -> dict[str, Any]:
        """The step's info: budget left, the sandbox, the network and the paths."""
        info: dict[str, Any] = {
            "competition_id": self.competition.id,
            "step": self.steps,
            # whole seconds, so two runs with the same seed and actions give equal infos
            "time_left": optional(math.ceil(max(0.0, self.time_left())) if self._started else None),
            "steps_left": self.max_steps - self.steps,
            "exit_code": optional(exit_code),
            "timed_out": timed_out,
            "seed": self.seed,
        }
        if tool is not None:
            info["tool"] = tool
        if self.resumed_from is not None:
            info["resumed_from"] = self.resumed_from
        info["sandbox"] = optional_numbers(
            {**self.sandbox.describe(), "started": self.started, "runtime": dict(self._runtime)}
        )
        info["network"] = self._network_info()
        p = self.sandbox.paths
        info["paths"] = {
            "data": p.data,
            "code": p.code,
            "submission": p.submission,
            "submission_file": self.submission_path,
            "logs": p.logs,
        }
        return info

    def _network_info(self) -> dict[str, Any]:
        """The network mode and, through the proxy, what the episode reached so far."""
        if self.network_policy is None:
            return {"mode": "open" if self.config.network else "off"}
        if self._egress is not None:
            return self._egress.summary()
        return not_started_summary(self.network_policy)
