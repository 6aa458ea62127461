"""An agent folder laid out as MLE-bench's (`agents/<name>/`: `config.yaml`, `Dockerfile`,
`start.sh`) as a harness run: the files its Dockerfile copies under /home, the variables and
arguments its runner (`agents/run.py`) gives `start.sh`, and a `conda` that its
`eval "$(conda shell.bash hook)"; conda activate agent` lines accept.

Nothing is built from the Dockerfile: only its simple `COPY src... dest` lines with a
destination under /home (after its `${AGENT_DIR}`-style variables are filled) and its last
`WORKDIR` are read. The folder is staged on the host (no symlinks, no special files, bounded
in bytes and files, refused otherwise), shown read-only, and copied into the sandbox's
writable /home when the harness starts, so what the agent changes there is its own copy.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import shlex
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: MLE-bench's container paths for an agent (its agents/.shared_env), and ours for its logs:
#: /home/logs holds mle_gym's own step logs, read-only to the agent.
AGENT_DIR = "/home/agent"
LOGS_DIR = "/home/agent_logs"
CODE_DIR = "/home/code"
SUBMISSION_DIR = "/home/submission"
#: MLE-bench's base image works from /home.
DEFAULT_WORKDIR = "/home"
#: Inside the sandbox: the staged folder (read-only), copied into /home at the start.
STAGE_DIR = "/opt/mle-gym-agent"
#: Bounds on what a folder may bring into the sandbox.
MAX_FOLDER_BYTES = 64 * 1024**2
MAX_FOLDER_FILES = 5000
MAX_FOLDER_DEPTH = 32
#: The proxy holds the model key; the sandbox keeps the placeholder.
_PROXY_KEY = "OPENAI_API_KEY"
OBFUSCATE = "OBFUSCATE"
_SECRET = re.compile(r"\$\{\{\s*secrets\.(\w+)\s*\}\}")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
#: Places under /home a folder may not write: the episode's own.
_NOT_OURS = ("/home/data", "/home/logs", "/home/submission", "/home/validate_submission.sh")


class AgentFolderError(ValueError):
    """The agent folder cannot be run (the message says why and what to change)."""


@dataclass(frozen=True)
class MLEBenchAgent:
    """One agent of a folder: what `start.sh` gets and which files go where."""

    folder: Path
    agent_id: str | None
    #: `start.sh`'s arguments, as MLE-bench's runner passes `kwargs`.
    arguments: tuple[str, ...] = ()
    #: config.yaml's `env_vars` (secrets filled from this process's environment).
    variables: dict[str, str] = field(default_factory=dict)
    #: (source in the folder, destination in the sandbox) from the Dockerfile's COPY lines.
    copies: tuple[tuple[Path, str], ...] = ((Path("."), AGENT_DIR),)
    workdir: str = DEFAULT_WORKDIR
    #: Dockerfile lines not followed (a COPY outside /home, RUN steps are never run).
    skipped: tuple[str, ...] = ()

    @property
    def obfuscated(self) -> bool:
        """The config asks for MLE-bench's obfuscated task (its OBFUSCATE=true step moves the
        obfuscated files over the plain ones; task="mlebench-obfuscated" shows them there)."""
        return self.variables.get(OBFUSCATE) == "true"

    def task(self) -> str:
        """The task that matches the config."""
        return "mlebench-obfuscated" if self.obfuscated else "mlebench"

    def sandbox_variables(self, task: str) -> dict[str, str]:
        """The config's variables for `task`: in the obfuscated task the files are already
        where OBFUSCATE=true would move them (into the read-only /home/data), so it is left
        out and the agent's start.sh skips that step."""
        drop = task == "mlebench-obfuscated"
        return {k: v for k, v in self.variables.items() if not (drop and k == OBFUSCATE)}

    def command(self) -> str:
        """What MLE-bench's runner runs, from the Dockerfile's working directory."""
        start = shlex.join(["bash", f"{AGENT_DIR}/start.sh", *self.arguments])
        return f"cd {shlex.quote(self.workdir)} && {start}"


def load_agent(folder: str | Path, agent_id: str | None = None) -> MLEBenchAgent:
    """The agent `agent_id` of `folder`'s config.yaml (default: the folder's name, or its
    only agent); a folder without config.yaml runs `start.sh` with no arguments."""
    folder = Path(folder)
    if not folder.is_dir():
        raise AgentFolderError(f"the agent folder is not a directory: {folder}")
    if not (folder / "start.sh").is_file() or (folder / "start.sh").is_symlink():
        raise AgentFolderError(f"{folder} has no start.sh (MLE-bench runs $AGENT_DIR/start.sh)")
    entry = _config_entry(folder, agent_id)
    copies, workdir, skipped = _dockerfile_layout(folder)
    arguments: list[str] = []
    kwargs = {k: _secret(v) for k, v in (entry.get("kwargs") or {}).items()}
    kind = entry.get("kwargs_type")
    if kwargs and kind not in ("argparse", "omegaconf"):
        raise AgentFolderError(f"kwargs_type must be argparse or omegaconf, got {kind!r}")
    for key, value in kwargs.items():
        if value is None:
            continue
        arguments += [f"--{key}", str(value)] if kind == "argparse" else [f"{key}={value}"]
    variables = {
        name: str(value)
        for name, raw in (entry.get("env_vars") or {}).items()
        if name != _PROXY_KEY and (value := _secret(raw)) is not None
    }
    return MLEBenchAgent(
        folder=folder,
        agent_id=entry.get("id"),
        arguments=tuple(arguments),
        variables=variables,
        copies=tuple(copies),
        workdir=workdir,
        skipped=tuple(skipped),
    )


def _config_entry(folder: Path, agent_id: str | None) -> dict[str, Any]:
    path = folder / "config.yaml"
    if not path.is_file():
        if agent_id is not None:
            raise AgentFolderError(f"{folder} has no config.yaml to find {agent_id!r} in")
        return {}
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - a dependency
        raise AgentFolderError("reading config.yaml needs PyYAML: pip install pyyaml") from exc
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise AgentFolderError(f"{path} is not valid YAML: {exc}") from exc
    agents = {
        key: value
        for key, value in (config or {}).items()
        if isinstance(value, dict) and "start" in value
    }
    if agent_id is None:
        if folder.name in agents:
            agent_id = folder.name
        elif len(agents) == 1:
            agent_id = next(iter(agents))
        else:
            raise AgentFolderError(
                f"{path} has several agents; choose one with --agent-config: {sorted(agents)}"
            )
    if agent_id not in agents:
        raise AgentFolderError(f"{path} has no agent {agent_id!r}; it has {sorted(agents)}")
    return {**agents[agent_id], "id": agent_id}


def _secret(value: Any) -> Any:
    """A `${{ secrets.NAME }}` value from this process's environment (None when unset, so
    the variable is left out); any other value as it is."""
    if isinstance(value, str) and (match := _SECRET.fullmatch(value.strip())):
        return os.environ.get(match[1])
    return value


def _dockerfile_layout(folder: Path) -> tuple[list[tuple[Path, str]], str, list[str]]:
    """The Dockerfile's COPY lines into /home, its last WORKDIR under /home, and the lines
    not followed; without a Dockerfile, the whole folder at AGENT_DIR."""
    path = folder / "Dockerfile"
    if not path.is_file():
        return [(Path("."), AGENT_DIR)], DEFAULT_WORKDIR, []
    known = {
        "AGENT_DIR": AGENT_DIR,
        "LOGS_DIR": LOGS_DIR,
        "CODE_DIR": CODE_DIR,
        "SUBMISSION_DIR": SUBMISSION_DIR,
    }
    text = re.sub(r"\\\r?\n", " ", path.read_text(encoding="utf-8"))
    copies: list[tuple[Path, str]] = []
    skipped: list[str] = []
    workdir = DEFAULT_WORKDIR
    for line in text.splitlines():
        words = line.strip().split(None, 1)
        if len(words) < 2 or words[0].upper() not in ("COPY", "ADD", "WORKDIR"):
            continue
        instruction, rest = words[0].upper(), _VARIABLE.sub(lambda m: _fill(m, known), words[1])
        if instruction == "WORKDIR":
            place = posixpath.normpath(rest.strip())
            workdir = place if _under_home(place) else DEFAULT_WORKDIR
            continue
        parts = json.loads(rest) if rest.lstrip().startswith("[") else shlex.split(rest)
        if instruction == "ADD" or any(p.startswith("--from") for p in parts) or len(parts) < 2:
            skipped.append(line.strip())
            continue
        parts = [p for p in parts if not p.startswith("--")]
        *sources, destination = parts
        target = posixpath.normpath(destination)
        if not _under_home(target) or any(_within(target, place) for place in _NOT_OURS):
            skipped.append(line.strip())
            continue
        into = destination.endswith("/") or len(sources) > 1
        for source in sources:
            copies.append((Path(source), f"{target}/" if into else target))
    return copies, workdir, skipped


def _fill(match: re.Match[str], known: dict[str, str]) -> str:
    return known.get(match[1] or match[2], match[0])


def _under_home(path: str) -> bool:
    return path.startswith("/home/") and ".." not in path.split("/")


def _within(path: str, top: str) -> bool:
    return path == top or path.startswith(f"{top}/")


def stage(agent: MLEBenchAgent, home: Path) -> None:
    """Lay out under `home` (a new host directory, shown read-only at STAGE_DIR) what the
    agent's Dockerfile puts under /home, as Docker's COPY does (a directory's contents into
    the destination). Refused: a source outside the folder, a symlink or special file, more
    than MAX_FOLDER_FILES files and directories, MAX_FOLDER_BYTES bytes or MAX_FOLDER_DEPTH
    levels."""
    folder = agent.folder.resolve()
    budget = _Budget()
    (home / AGENT_DIR.removeprefix("/home/")).mkdir(parents=True, exist_ok=True)
    for source, destination in agent.copies:
        origin = folder / source
        if not _within(str(origin.resolve()), str(folder)) or origin.is_symlink():
            raise AgentFolderError(f"{source} is outside the agent folder {agent.folder}")
        if not origin.exists():
            raise AgentFolderError(f"the Dockerfile copies {source}, which {folder} lacks")
        target = home / destination.removeprefix("/home/").rstrip("/")
        if origin.is_dir():
            _copy_tree(origin, target, budget)
        else:
            if destination.endswith("/") or target.is_dir():
                target = target / origin.name
            _copy_file(origin, target, budget)
    for directory, _, _ in os.walk(home):
        Path(directory).chmod(0o755)


@dataclass
class _Budget:
    files: int = 0
    bytes: int = 0

    def take(self, path: Path, size: int) -> None:
        self.files += 1
        self.bytes += size
        if self.files > MAX_FOLDER_FILES or self.bytes > MAX_FOLDER_BYTES:
            raise AgentFolderError(
                f"the agent folder brings more than {MAX_FOLDER_FILES} files and folders or "
                f"{MAX_FOLDER_BYTES // 1024**2} MiB (at {path}): what it needs installed "
                "goes in its requirements.txt or --harness-dir, not in the folder"
            )


def _copy_tree(origin: Path, target: Path, budget: _Budget, depth: int = 0) -> None:
    if depth > MAX_FOLDER_DEPTH:
        raise AgentFolderError(f"{origin} is nested more than {MAX_FOLDER_DEPTH} levels deep")
    budget.take(origin, 0)  # directories count as files
    target.mkdir(parents=True, exist_ok=True)
    for entry in sorted(origin.iterdir()):
        mode = entry.lstat().st_mode
        if stat.S_ISDIR(mode):
            _copy_tree(entry, target / entry.name, budget, depth + 1)
        else:
            _copy_file(entry, target / entry.name, budget)


def _copy_file(origin: Path, target: Path, budget: _Budget) -> None:
    info = origin.lstat()
    if stat.S_ISLNK(info.st_mode):
        raise AgentFolderError(
            f"{origin} is a symlink: an agent folder is copied into the sandbox without links"
        )
    if not stat.S_ISREG(info.st_mode):
        raise AgentFolderError(f"{origin} is not a regular file")
    budget.take(origin, info.st_size)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(origin, "rb") as source, open(target, "wb") as copy:
        copy.write(source.read(info.st_size))  # as counted: a file that grows is refused
        if source.read(1):
            raise AgentFolderError(f"{origin} changed while it was copied")
    target.chmod(0o755 if info.st_mode & 0o111 else 0o644)
