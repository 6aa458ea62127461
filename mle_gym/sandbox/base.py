"""The interface every sandbox backend implements, and what a command returns.

The env and the tools only ever call `start`, `run`, the file operations and `stop`. Files
move without the agent's shell (which the agent controls) and every path is resolved as
inside the sandbox, with the agent's permissions: a symlink never leads to a host file.
"""

from __future__ import annotations

import posixpath
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mle_gym.sandbox.tree import TreeEntry


@dataclass(frozen=True)
class SandboxPaths:
    """Where things are, as seen from inside the sandbox."""

    data: str = "/home/data"
    code: str = "/home/code"
    submission: str = "/home/submission"
    logs: str = "/home/logs"


#: Where a bind may not go: the system's own trees, the episode's paths (`SandboxPaths`) and
#: the agent's home in docker.
_RESERVED = ("/bin", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sbin")
_RESERVED += ("/sys", "/tmp", "/usr", "/home/agent", *vars(SandboxPaths()).values())


@dataclass(frozen=True)
class ReadOnlyBind:
    """A host directory shown read-only inside the sandbox at `target` (e.g. a harness's
    packages, or the directory of a unix socket: connecting needs no write permission)."""

    source: Path
    target: str

    def __post_init__(self) -> None:
        target = self.target
        if not target.startswith("/") or posixpath.normpath(target) != target or target == "/":
            raise ValueError(f"a bind target must be a normalised absolute path, got {target!r}")
        for reserved in _RESERVED:
            if _within(target, reserved):
                raise ValueError(f"a bind cannot go at {target}: it is inside {reserved}")
            if _within(reserved, target):
                raise ValueError(f"a bind at {target} would hide {reserved}")
        if not Path(self.source).is_dir():
            raise ValueError(f"a bind's source must be a directory: {self.source}")


@dataclass(frozen=True)
class ReadOnlyFile:
    """A host file shown read-only at `target`: directly in /home (MLE-bench's
    /home/instructions.txt), or beside the public data (/home/data/description.md) without
    a byte of the prepared folder changing (the backend lays /home/data out of read-only
    binds of the folder's entries and these files)."""

    source: Path
    target: str

    def __post_init__(self) -> None:
        parent, name = posixpath.split(self.target)
        if posixpath.normpath(self.target) != self.target or parent not in FILE_PARENTS:
            where = " or ".join(FILE_PARENTS)
            raise ValueError(f"a file can go directly in {where}, not at {self.target!r}")
        if name in ("", ".", "..") or (parent == "/home" and f"/home/{name}" in _RESERVED):
            raise ValueError(f"a file cannot go at {self.target}")
        if not Path(self.source).is_file():
            raise ValueError(f"a read-only file's source must be a file: {self.source}")


#: Where a `ReadOnlyFile` may go.
FILE_PARENTS = ("/home", SandboxPaths().data)


@dataclass(frozen=True)
class SandboxSpec:
    """What one episode's sandbox gets: the public data (mounted read-only), variables, and
    any further read-only directories (`binds`, each at its own target) and files (`files`).
    `writable_home`: /home itself is the agent's, as in MLE-bench's container (its agents
    write /home/agent and edit /home/instructions.txt), bounded like /home/code; the data,
    logs and the other binds in it stay read-only."""

    public_dir: Path
    env: dict[str, str] = field(default_factory=dict)
    network: bool = False
    binds: tuple[ReadOnlyBind, ...] = ()
    files: tuple[ReadOnlyFile, ...] = ()
    writable_home: bool = False

    def __post_init__(self) -> None:
        targets = [b.target for b in self.binds]
        for i, target in enumerate(targets):
            for other in targets[i + 1 :]:
                if _within(target, other) or _within(other, target):
                    raise ValueError(f"binds at {target} and {other} overlap")
        names = [f.target for f in self.files]
        if len(set(names)) != len(names):
            raise ValueError(f"two files at the same place: {names}")
        data = SandboxPaths().data
        for file in self.files:
            name = posixpath.basename(file.target)
            if file.target.startswith(f"{data}/") and (self.public_dir / name).exists():
                raise ValueError(f"{file.target} would hide the public data's own {name}")

    def data_files(self) -> list[ReadOnlyFile]:
        """The files that go beside the public data."""
        data = SandboxPaths().data
        return [f for f in self.files if posixpath.dirname(f.target) == data]


#: Most entries a public folder may have when files go beside it (each is a mount).
MAX_PUBLIC_ENTRIES = 1024


def public_entries(public: Path) -> list[Path]:
    """The public folder's top-level entries, each bound on its own where files go beside
    them; `SandboxError` past `MAX_PUBLIC_ENTRIES`."""
    entries = sorted(public.iterdir())
    if len(entries) > MAX_PUBLIC_ENTRIES:
        raise SandboxError(
            f"{public} has {len(entries)} top-level entries; files can go beside at most "
            f"{MAX_PUBLIC_ENTRIES}"
        )
    return entries


def _within(path: str, top: str) -> bool:
    """`path` is `top` or lies under it."""
    return path == top or path.startswith(f"{top.rstrip('/')}/")


@dataclass
class CommandResult:
    """The outcome of one command."""

    output: str
    exit_code: int | None
    timed_out: bool = False
    #: Total bytes the command printed (the observation may show fewer).
    output_bytes: int = 0
    #: The whole raw output when it fit in the capture buffer (tools use it for file reads).
    raw: bytes | None = None
    #: Where the full output was logged, as a path inside the sandbox.
    log_path: str | None = None
    #: Bytes written to the log file (it is capped).
    log_bytes: int = 0
    #: Set when the shell had to be restarted (its state was lost).
    shell_restarted: bool = False
    notes: list[str] = field(default_factory=list)

    def add_note(self, note: str) -> None:
        """Something the agent must know about this command, in `notes` and the output."""
        self.notes.append(note)
        self.output += f"\n[{note}]"


class SandboxError(RuntimeError):
    """The sandbox could not be started or has broken down."""


class SandboxLost(SandboxError):
    """The sandbox was destroyed from outside (its container removed, the engine restarted):
    the episode cannot go on, and what it did is gone through no fault of the agent's."""


class SandboxFileError(OSError):
    """A file operation inside the sandbox failed; the message says why, for the agent."""


#: Why `Sandbox.copy_files` left a file: the time ran out, or it was gone by then.
LATE = "past the time bound: listed, not copied"
GONE = "gone or unreadable when copied"


@dataclass(frozen=True)
class FileInfo:
    """What is at a path inside the sandbox: "file", "dir" or "other", and its size.

    `stamp` changes whenever the file may have changed (inode, size, modification and change
    times), so a caller that keeps copies (submission snapshots) copies only after a change;
    the change time cannot be set back by the agent. None when the backend cannot tell."""

    kind: str
    size: int
    stamp: str | None = None


@dataclass(frozen=True)
class AgentIdentity:
    """The agent as the host sees it: the uid and gid its processes run under there, and
    the host pid of one process in the sandbox (every process of the sandbox shares its pid
    namespace and cgroup). For a host service that only the sandbox may reach."""

    uid: int
    gid: int
    pid: int


class Sandbox(ABC):
    """An isolated place with a persistent shell, one per episode."""

    paths: SandboxPaths

    @abstractmethod
    def start(self, spec: SandboxSpec) -> None:
        """Create a fresh workspace and shell; any previous one is destroyed first."""

    @abstractmethod
    def run(
        self,
        command: str,
        timeout: float,
        *,
        max_output_chars: int = 20_000,
        log_name: str | None = None,
        capture_bytes: int | None = None,
    ) -> CommandResult:
        """Run `command` in the persistent shell; kill it and its children after `timeout`."""

    @abstractmethod
    def stat_file(self, path: str) -> FileInfo | None:
        """What is at `path` (symlinks followed inside the sandbox); None if nothing."""

    @abstractmethod
    def read_file(self, path: str, max_bytes: int) -> bytes:
        """A regular file's bytes; `SandboxFileError` if absent, special or too large."""

    @abstractmethod
    def write_file(self, path: str, data: bytes) -> None:
        """Create or overwrite a regular file, creating missing parent directories."""

    @abstractmethod
    def copy_out(self, path: str, dest: Path, max_bytes: int) -> bool:
        """Stream a regular file to the host path `dest`; False when nothing is at `path`."""

    @abstractmethod
    def list_files(self, root: str, max_files: int) -> tuple[list[tuple[str, int]], bool]:
        """The regular files under the directory `root`, as (path relative to it, bytes),
        the first `max_files` in path order, and whether there were more. mle_gym's own
        code walks the tree, never the agent's shell (whose `find` the agent can shadow);
        links are not followed and no other mount is entered. Empty when `root` is not a
        directory."""

    def copy_files(
        self, root: str, names: list[str], dest: Path, max_file_bytes: int, max_bytes: int,
        deadline: float,
    ) -> dict[str, str]:  # fmt: skip
        """Copy each of `names` (paths relative to `root`) to the same path under `dest`, each
        up to `max_file_bytes` and `max_bytes` in all, until `deadline` (time.monotonic());
        why each name that was not copied was not. Here one `copy_out` each; a backend whose
        copies cost a round trip each does them all at once."""
        missed: dict[str, str] = {}
        left = max_bytes
        for name in names:
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                if time.monotonic() > deadline:
                    missed[name] = LATE
                elif not self.copy_out(f"{root}/{name}", target, min(max_file_bytes, left)):
                    missed[name] = GONE
                else:
                    left -= target.stat().st_size
            except (SandboxFileError, UnicodeError) as exc:
                missed[name] = str(exc)
            if name in missed:
                target.unlink(missing_ok=True)
        return missed

    def read_files(
        self, root: str, names: list[str], max_file_bytes: int, max_bytes: int,
        deadline: float,
    ) -> tuple[dict[str, bytes], dict[str, str]] | None:  # fmt: skip
        """`copy_files`, into memory: each name's bytes, and why each name not read was not;
        for many small files, whose copies on disk cost more than their bytes. None (here)
        where the backend copies to disk anyway: the caller then uses `copy_files`."""
        return None

    def writable_places(self) -> tuple[str, ...]:
        """Every folder the agent can write to (outer ones before the ones mounted inside
        them), for a checkpoint of the workspace; /dev/shm is left out (shared memory, not
        files the agent keeps)."""
        raise NotImplementedError(f"{type(self).__name__} cannot list its writable places")

    def list_tree(self, root: str, max_entries: int) -> tuple[list[TreeEntry], bool]:
        """Every entry under the directory `root` (files, folders, symlinks with their text,
        others), as `list_files` walks: by mle_gym's code, no link followed, no other mount
        entered; the first `max_entries` in path order, and whether there were more."""
        raise NotImplementedError(f"{type(self).__name__} cannot list a tree")

    def put_tree(
        self, root: str, entries: list[TreeEntry], source: Callable[[TreeEntry], Path]
    ) -> dict[str, str]:
        """Write `entries` (files, folders, symlinks; their paths relative to the existing
        folder `root`, none below a symlink of theirs) as the agent, a file's bytes from the
        host path `source(entry)`: never through a link, never over something already there,
        permission bits only. Why each entry that was not written was not."""
        raise NotImplementedError(f"{type(self).__name__} cannot write a tree")

    def kill_processes(self) -> None:
        """End every process in the sandbox, its shell included; files stay, and the next
        command starts a new shell. For whatever a program left running (its children in
        sessions of their own too), where killing its process group would miss some."""
        raise NotImplementedError(f"{type(self).__name__} cannot kill its processes")

    def agent_identity(self) -> AgentIdentity:
        """Who the agent is on the host, once the sandbox has started."""
        raise NotImplementedError(f"{type(self).__name__} cannot say who its agent is")

    @abstractmethod
    def stop(self) -> None:
        """Destroy everything the sandbox started; safe to call twice."""

    def lost(self) -> bool:
        """Whether a started sandbox was destroyed from outside (asked after an error, to
        tell a lost sandbox from a failing command)."""
        return False

    def describe(self) -> dict:
        """Facts for `info` (backend, isolation, devices)."""
        return {"backend": type(self).__name__}

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
