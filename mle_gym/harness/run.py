"""`run_harness`: an agent harness that owns its loop, run black-box inside an episode's sandbox.

The episode is an env's `Episode` (envs/episode.py), driven through its public API (`open`,
`reset`, `start`, `step`), so data, limits, budget and grading are those of every other
episode. Into its sandbox go, read-only, the proxy's directory (the
relay script and the proxy's unix socket, at `PROXY_DIR`; only the sandbox's agent may
connect to it) and optionally the caller's
harness directory (`HARNESS_DIR`: its bin/ first on PATH, itself last on Python's path).
The sandbox keeps no network: the relay listens on its own loopback and pipes to the host's
recording proxy, the one route out.
The task goes to `TASK_FILE` and `MLE_GYM_TASK`; the harness runs in the agent's shell from
/home/code, stdin /dev/null, cut (with every process in the sandbox) at the wall clock. The
proxy then closes, every process left is killed, and the submission is graded by the
episode's own `submit`.
"""

from __future__ import annotations

import json
import shlex
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mle_gym.harness.agent_requirements import build_requirements
from mle_gym.harness.conda_shim import write_tools
from mle_gym.harness.mlebench_agent import (
    AGENT_DIR,
    LOGS_DIR,
    STAGE_DIR,
    MLEBenchAgent,
    load_agent,
    stage,
)
from mle_gym.harness.proxy import MAX_VALIDATIONS, VALIDATE_PATH, ModelProxy, check_endpoint
from mle_gym.sandbox import socket_relay as relay
from mle_gym.sandbox.base import SandboxError
from mle_gym.sandbox.socket_route import RELAY_NAME, open_route

if TYPE_CHECKING:
    from mle_gym.envs.episode import Episode

#: Inside the sandbox: the proxy's directory, the caller's harness, the task file.
PROXY_DIR = "/opt/mle-gym"
HARNESS_DIR = "/opt/harness"
TASK_FILE = "/home/code/TASK.md"
#: The relay's port on the sandbox's own loopback (nothing else listens there).
RELAY_PORT = 8642
#: A key for clients that refuse to start without one; the real key stays on the host.
PLACEHOLDER_KEY = "mle-gym-proxy"
_SOCKET = "model.sock"
#: Puts the harness directory *after* the sandbox's own packages: the harness gets what the
#: sandbox lacks, and the agent's code (which inherits the harness's variables) keeps the
#: sandbox's numpy, pandas and scikit-learn rather than whatever the harness pulled in.
_SITE_CUSTOMIZE = f"""\
\"\"\"mle_gym: the harness directory goes last on Python's path.\"\"\"
import sys

sys.path.append({HARNESS_DIR!r})
"""
_RELAY_START_TIMEOUT = 60.0
_HARNESS_OUTPUT_CHARS = 4000


class HarnessError(RuntimeError):
    """The harness could not be started in the sandbox (the message says why)."""


@dataclass
class HarnessResult:
    """One harness episode: the env's reward and report, and what the harness did."""

    competition_id: str
    reward: float
    report: dict[str, Any]
    #: Model calls forwarded upstream, and calls refused past `max_requests`.
    requests: int
    refused: int
    #: Format checks answered through `$MLE_GYM_VALIDATE_URL` (at most `max_validations`).
    validations: int
    #: In `run_dir`: the proxy's JSON Lines log, the harness's output (head and tail), and
    #: a copy of the graded submission (None when there was none).
    log_path: Path
    output_path: Path
    submission_path: Path | None
    #: The harness's exit status; None when it was cut.
    exit_code: int | None
    #: Cut by the wall-clock budget.
    cut: bool
    seconds: float
    run_dir: Path
    #: An MLE-bench agent's $LOGS_DIR, kept in `run_dir`/agent_logs/files within the
    #: kept-code bounds (the index beside, agent_logs/code.json); None in other runs.
    agent_logs_path: Path | None = None
    #: The episode's integrity record (envs/integrity.py): the data variant it ran on (and,
    #: on a development variant, which carving: what `mle-gym receipt` checks).
    integrity: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: str(v) if isinstance(v, Path) else v for k, v in asdict(self).items()}


def harness_variables(
    port: int, task: str, harness_dir: bool, extra: Mapping[str, str] | None
) -> dict[str, str]:
    """What the harness's environment gets: the conventional OpenAI variables pointing at
    the relay, the task, and the harness directory: its bin/ first on PATH, itself last on
    Python's path (see `_SITE_CUSTOMIZE`)."""
    url = f"http://127.0.0.1:{port}/v1"
    variables = {
        "OPENAI_BASE_URL": url,  # the openai SDK, Codex CLI, litellm
        "OPENAI_API_BASE": url,  # litellm and older clients
        "OPENAI_API_KEY": PLACEHOLDER_KEY,
        "MLE_GYM_MODEL_URL": url,
        "MLE_GYM_VALIDATE_URL": f"http://127.0.0.1:{port}{VALIDATE_PATH}",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "MLE_GYM_TASK": task,
        "MLE_GYM_TASK_FILE": TASK_FILE,
    }
    if harness_dir:
        variables["PATH"] = f"{HARNESS_DIR}/bin:$PATH"
        variables["PYTHONPATH"] = f"{PROXY_DIR}/python"
    variables.update(extra or {})
    return variables


def _exports(variables: Mapping[str, str]) -> str:
    """`export` lines; only PATH may expand (its own $PATH)."""
    lines = []
    for name, value in variables.items():
        if name == "PATH" and "$PATH" in value:
            parts = value.split("$PATH")
            quoted = '"$PATH"'.join(shlex.quote(part) if part else "" for part in parts)
        else:
            quoted = shlex.quote(value)
        lines.append(f"export {name}={quoted}")
    return "\n".join(lines)


def harness_task(
    statement: str,
    submission: str,
    time_limit: float,
    max_requests: int | None,
    max_validations: int = MAX_VALIDATIONS,
    dev: bool = False,
) -> str:
    """The competition's statement, and how a harness episode runs (`dev`: on the
    competition's development variant, whose validation also gives the score)."""
    calls = f" and at most {max_requests} model calls" if max_requests is not None else ""
    check = (
        "and its score on the development answers: this is the competition's development "
        "variant, /home/data carved from its public training data"
        if dev
        else "never its score"
    )
    return (
        f"{statement.rstrip()}\n\n## How this episode runs\n"
        f"You work in a sandbox from /home/code. It has no network access except the "
        f"OpenAI-compatible model endpoint in $OPENAI_BASE_URL. There is no submit step: when "
        f"you stop, the file at {submission} is graded. To check its format first ({check}), "
        f"POST to $MLE_GYM_VALIDATE_URL; the answer is JSON with `valid` and `message` "
        f"(one check at a time, at most {max_validations} in all). "
        f"Budget: {time_limit:,.0f} seconds of wall-clock time{calls}; at the end of the time "
        f"everything still running is stopped.\n"
    )


def _default_run_dir(competition_id: str) -> Path:
    return Path("runs") / f"harness-{competition_id}-{time.strftime('%Y%m%d-%H%M%S')}"


def run_harness(
    competition_id: str,
    command: str | Sequence[str] | None,
    model_endpoint: str,
    *,
    backend: str = "local",
    time_limit: float | None = None,
    max_requests: int | None = None,
    max_validations: int = MAX_VALIDATIONS,
    run_dir: str | Path | None = None,
    harness_dir: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    reward_mode: str = "normalized",
    api_key: str | None = None,
    seed: int = 0,
    port: int = RELAY_PORT,
    mlebench_agent: str | Path | None = None,
    agent_config: str | None = None,
    agent_requirements: bool = False,
    agent_wheels: str | Path | None = None,
    **env_kwargs: Any,
) -> HarnessResult:
    """Run `command` (a shell command line, or an argv list) inside a fresh episode's
    sandbox with `model_endpoint` as its only network route, then grade the submission.

    `time_limit` (s, default the env's) cuts the harness and everything it started;
    `max_requests` bounds the model calls and `max_validations` the format checks through
    $MLE_GYM_VALIDATE_URL; `api_key` is added by the proxy (the harness
    only sees a placeholder); `env` adds variables; `harness_dir` is mounted read-only at
    /opt/harness; the rest (`sandbox_options`, ...) goes to `gym.make`. The proxy's log, the
    harness's output, the graded submission and `result.json` are written to `run_dir`.

    `mlebench_agent`: an agent folder laid out as MLE-bench's (`agents/<name>`), run as
    MLE-bench's runner runs it (`command` may then be None; `agent_config` picks the entry
    of its config.yaml; the task defaults to "mlebench", read from the clone the folder is
    in). With task="mlebench..." and `harness_dir` but no `mlebench_agent`, `harness_dir` is
    taken as the agent folder too (docs/harness.md, "Agents written for MLE-bench").
    `agent_requirements` (or `agent_wheels`, a directory of wheels to install from, offline):
    the folder's requirements.txt, installed once (harness/agent_requirements.py), is the
    harness directory.
    """
    from mle_gym.envs.config import EnvConfig
    from mle_gym.envs.episode import Episode
    from mle_gym.sandbox.base import ReadOnlyBind
    from mle_gym.sandbox.scratch import owned_dir

    if env_kwargs.get("network") is True:
        raise ValueError(
            "a harness episode reaches the network through proxies only: network=True is "
            "refused (network='proxy' adds the logging egress proxy beside the model's)"
        )
    if harness_dir is not None and not Path(harness_dir).is_dir():
        raise ValueError(f"harness_dir is not a directory: {harness_dir}")
    check_endpoint(model_endpoint)
    agent = _mlebench_agent(mlebench_agent, agent_config, harness_dir, env_kwargs)
    if agent is not None and (agent_requirements or agent_wheels is not None):
        if harness_dir is not None and mlebench_agent is not None:
            raise ValueError("give the agent's requirements or a harness_dir, not both")
        harness_dir = build_requirements(agent.folder, agent_wheels) or harness_dir
    if command is None:
        if agent is None:
            raise ValueError("a harness run needs a command (or an MLE-bench agent folder)")
        command = agent.command()
    argv = command if isinstance(command, str) else shlex.join(command)
    if time_limit is not None:
        env_kwargs["time_limit"] = time_limit
    config = EnvConfig(backend=backend, reward_mode=reward_mode, **env_kwargs)
    run_dir = Path(run_dir) if run_dir is not None else _default_run_dir(competition_id)
    run_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    plumbing = owned_dir("proxy")  # 0700 until `peers.restrict_to` lets the agent in
    staged = owned_dir("mlebench-agent") if agent is not None else None
    episode: Episode | None = None
    try:
        shutil.copyfile(relay.__file__, plumbing / RELAY_NAME)
        (plumbing / "python").mkdir(mode=0o755)
        (plumbing / "python" / "sitecustomize.py").write_text(_SITE_CUSTOMIZE)
        binds = [ReadOnlyBind(plumbing, PROXY_DIR)]
        if harness_dir is not None:
            binds.append(ReadOnlyBind(Path(harness_dir), HARNESS_DIR))
        if config.mlebench:
            write_tools(plumbing / "bin")
        if agent is not None and staged is not None:
            stage(agent, staged / "home")
            binds.append(ReadOnlyBind(staged / "home", STAGE_DIR))
        episode = Episode.open(competition_id, config)
        proxy = ModelProxy(
            model_endpoint,
            plumbing / _SOCKET,
            run_dir / "model_calls.jsonl",
            max_requests=max_requests,
            max_validations=max_validations,
            api_key=api_key,
            validate=episode.check_submission,
        )
        with proxy:
            episode.reset(seed)
            episode.start(binds, writable_home=config.mlebench)
            deadline = time.monotonic() + episode.time_limit
            variables = _mlebench_variables(agent, config.task, harness_dir)
            extra = {**variables, **(env or {})}
            exit_code, cut = _run_in_sandbox(
                episode, proxy, argv, port, harness_dir is not None, extra, deadline,
                agent is not None,
            )  # fmt: skip
            proxy.close()  # no more model calls, whatever is still running
            episode.stop_processes()
            agent_logs = None
            if agent is not None:
                # what MLE-bench's runner copies out besides the submission, bounded
                agent_logs = run_dir / "agent_logs" / "files"  # its index beside: code.json
                episode.keep_code(agent_logs, source=LOGS_DIR)
                episode.keep_code(run_dir / "code" / "files")
            output = run_dir / "harness.log"
            harness_log = episode.command_log("harness.log")
            if harness_log is not None:
                shutil.copyfile(harness_log, output)
            ending = episode.step({"tool": "submit"})
            reward, info = ending.reward, ending.info
            graded = info.get("graded_submission")
            submission = run_dir / Path(graded).name if graded else None
            if graded:
                shutil.copyfile(graded, submission)
    finally:
        if episode is not None:
            episode.close()
        shutil.rmtree(plumbing, ignore_errors=True)
        if staged is not None:
            shutil.rmtree(staged, ignore_errors=True)
    result = HarnessResult(
        competition_id=competition_id,
        reward=float(reward),
        report=info["report"],
        requests=proxy.requests,
        refused=proxy.refused,
        validations=proxy.validations,
        log_path=proxy.recorder.path,
        output_path=output,
        submission_path=submission,
        exit_code=exit_code,
        cut=cut,
        seconds=time.monotonic() - started,
        run_dir=run_dir,
        agent_logs_path=agent_logs,
        integrity=info.get("integrity"),
    )
    (run_dir / "result.json").write_text(json.dumps(result.to_dict(), indent=2) + "\n")
    return result


def _run_in_sandbox(
    episode: Episode,
    proxy: ModelProxy,
    command: str,
    port: int,
    harness_dir: bool,
    extra: Mapping[str, str] | None,
    deadline: float,
    agent_folder: bool = False,
) -> tuple[int | None, bool]:
    """Write the task, start the relay, let the sandbox's agent (and no one else) reach
    the proxy, run the harness until it exits or the deadline."""
    sandbox = episode.sandbox
    paths = sandbox.paths
    task = harness_task(
        episode.statement(),
        episode.submission_path,
        episode.time_limit,
        proxy.max_requests,
        proxy.max_validations,
        dev=episode.config.data == "dev",
    )
    sandbox.write_file(TASK_FILE, task.encode())
    try:
        open_route(sandbox, proxy, int(port), PROXY_DIR, "the model relay")
    except SandboxError as exc:
        raise HarnessError(str(exc)) from None
    variables = harness_variables(port, task, harness_dir, extra)
    if episode.task.mlebench:  # conda's stand-in, after the sandbox's own programs
        variables["PATH"] = f"{variables.get('PATH', '$PATH')}:{PROXY_DIR}/bin"
    sandbox.run(_exports(variables), _RELAY_START_TIMEOUT)
    if agent_folder:  # the agent's own copy of its files, as its image had them
        copied = sandbox.run(
            f"{{ cp -R {STAGE_DIR}/. /home/ && mkdir -p {LOGS_DIR}; }} 2>&1", _RELAY_START_TIMEOUT
        )
        if copied.exit_code != 0:
            raise HarnessError(f"the agent folder could not be copied in: {copied.output}")
    remaining = max(1.0, deadline - time.monotonic())
    result = sandbox.run(
        f"( cd {shlex.quote(paths.code)} && {command}\n)",
        remaining,
        max_output_chars=_HARNESS_OUTPUT_CHARS,
        log_name="harness.log",
    )
    return result.exit_code, result.timed_out


def _mlebench_agent(
    folder: str | Path | None,
    agent_config: str | None,
    harness_dir: str | Path | None,
    env_kwargs: dict[str, Any],
) -> MLEBenchAgent | None:
    """The MLE-bench agent folder of this run, if any; with one given, the task defaults to
    MLE-bench's, read from the clone the folder lies in."""
    if folder is None:
        mlebench = env_kwargs.get("task", "mle_gym") != "mle_gym"
        if not mlebench or harness_dir is None or not (Path(harness_dir) / "start.sh").is_file():
            return None
        return load_agent(harness_dir, agent_config)
    agent = load_agent(folder, agent_config)
    env_kwargs.setdefault("task", agent.task())
    clone = Path(folder).resolve().parent.parent
    if "mlebench_dir" not in env_kwargs and (clone / "environment").is_dir():
        env_kwargs["mlebench_dir"] = str(clone)
    return agent


def _mlebench_variables(
    agent: MLEBenchAgent | None, task: str | None, harness_dir: str | Path | None
) -> dict[str, str]:
    """MLE-bench's agent variables (agents/run.py and the agent's config.yaml)."""
    if agent is not None and task is not None:
        return {"AGENT_DIR": AGENT_DIR, "LOGS_DIR": LOGS_DIR, **agent.sandbox_variables(task)}
    if task not in (None, "mle_gym") and harness_dir is not None:
        return {"AGENT_DIR": HARNESS_DIR}
    return {}
