"""What the agent is given: a `Task` is the statement, the variables, the files shown in the
sandbox and the endpoints started beside it.

`MleGymTask` is mle_gym's own statement of the competition. `MLEBenchContract` is MLE-bench's
container contract, read from the user's checkout (envs/mlebench_task.py): its instructions,
its variables, the description at /home/data and its validation endpoint. The episode asks the
task, never which task it is, so a new task mode is one more class here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from mle_gym.competitions.spec import Competition
from mle_gym.envs.config import EnvConfig
from mle_gym.envs.mlebench_setup import MLEBenchSetup, hardware
from mle_gym.envs.mlebench_task import (
    MLEBenchTask,
    fill_placeholders,
    find_mlebench_dir,
    mlebench_variables,
)
from mle_gym.sandbox.base import ReadOnlyBind, ReadOnlyFile, Sandbox, SandboxPaths


@dataclass(frozen=True)
class Setting:
    """Where and under what budget the task runs: what its statement and variables name."""

    competition_id: str
    paths: SandboxPaths
    time_limit: float
    max_steps: int
    backend: str
    gpus: Any = None


class Service(Protocol):
    """Something started beside the sandbox that the agent reaches through it (an endpoint)."""

    def connect(self, sandbox: Sandbox) -> None: ...

    def reconnect(self, sandbox: Sandbox) -> str: ...

    def close(self) -> None: ...


@dataclass
class Mounts:
    """What a task adds to the sandbox at start, and the service behind it (if any)."""

    binds: list[ReadOnlyBind]
    files: list[ReadOnlyFile]
    service: Service | None = None


#: Checks a submission file on the host: (valid, message).
FileCheck = Callable[[Path], tuple[bool, str]]


class Task(Protocol):
    """What the agent is given (see the module's docstring)."""

    #: The env's `task` option that chose it.
    name: str
    #: Whether the sandbox follows MLE-bench's container contract: /home is the agent's, and
    #: its agents expect conda (mle_gym.harness gives them a stand-in).
    mlebench: bool

    def statement(self, setting: Setting) -> str:
        """The task as the agent first reads it."""
        ...

    def variables(self, setting: Setting) -> dict[str, str]:
        """Environment variables the sandbox's shell gets."""
        ...

    def mounts(
        self, data_dir: str, writable_home: bool, check_file: FileCheck, max_bytes: int
    ) -> Mounts:
        """Files, directories and endpoints the task adds at the sandbox's start."""
        ...


class MleGymTask:
    """mle_gym's own statement of the competition, at the sandbox's paths."""

    name = "mle_gym"
    mlebench = False

    def __init__(self, competition: Competition) -> None:
        self.competition = competition

    def statement(self, setting: Setting) -> str:
        p = setting.paths
        return self.competition.render_statement(p.data, p.code, p.submission)

    def variables(self, setting: Setting) -> dict[str, str]:
        return {}

    def mounts(
        self, data_dir: str, writable_home: bool, check_file: FileCheck, max_bytes: int
    ) -> Mounts:
        return Mounts([], [])


class MLEBenchContract:
    """MLE-bench's task as its runner sets it up: its instructions with the placeholders
    filled, its variables, its description at /home/data and its validation endpoint."""

    mlebench = True

    def __init__(self, files: MLEBenchTask, name: str) -> None:
        #: The instructions, description and scripts read from the user's checkout.
        self.files = files
        self.name = name

    def statement(self, setting: Setting) -> str:
        """MLE-bench's instructions, which point to /home/data/description.md."""
        return fill_placeholders(self.files.instructions, self.variables(setting))

    def variables(self, setting: Setting) -> dict[str, str]:
        p = setting.paths
        return mlebench_variables(
            setting.competition_id,
            time_limit=setting.time_limit,
            max_steps=setting.max_steps,
            hardware=hardware(setting.gpus),
            agent_dir="/home/agent" if setting.backend == "docker" else "/tmp",
            submission_dir=p.submission,
            logs_dir=p.logs,
            code_dir=p.code,
        )

    def mounts(
        self, data_dir: str, writable_home: bool, check_file: FileCheck, max_bytes: int
    ) -> Mounts:
        setup = MLEBenchSetup(self.files, {"check_file": check_file, "max_bytes": max_bytes})
        binds, files = setup.mounts(data_dir, copy_home=writable_home)
        return Mounts(binds, files, setup)


def make_task(competition: Competition, config: EnvConfig) -> Task:
    """The task `config.task` names (MLE-bench's is read from the checkout now, so a
    missing one fails at `gym.make`)."""
    if not config.mlebench:
        return MleGymTask(competition)
    root = find_mlebench_dir(config.mlebench_dir)
    files = MLEBenchTask.load(root, competition.id, obfuscated=config.task == "mlebench-obfuscated")
    return MLEBenchContract(files, config.task)
