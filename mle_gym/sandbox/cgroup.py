"""A control group per local sandbox: memory, process-count and CPU limits, like docker's.

The sandbox's first process joins the group before it execs bubblewrap (`join_argv`), so
everything the agent starts is counted and capped; the memory limit also covers the
sandbox's tmpfs mounts (their pages are charged to the group), so `/tmp` and the workspace
cannot fill the host's memory. Works on cgroup v2 (one hierarchy) and on v1 (one directory per
controller); creating groups needs root or a delegated subtree.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

_ROOT = Path("/sys/fs/cgroup")
_CPU_PERIOD_US = 100_000
#: v1 writes "no limit" as a page-rounded 2**63 - 1; anything this large is none.
_NO_LIMIT = 1 << 60
#: Writes its own pid to the $0 files that follow, then execs the rest of its arguments.
_JOIN = (
    'n=$0; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 126; shift; n=$((n - 1)); done; '
    'exec "$@"'
)


class CgroupUnavailable(RuntimeError):
    """No writable cgroup hierarchy for this process."""


def parse_bytes(text: str | int) -> int:
    """'16g', '512m', '100k' or a number of bytes, as bytes."""
    if isinstance(text, int):
        return text
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    cleaned = text.strip().lower().removesuffix("b").removesuffix("i")
    try:
        if cleaned and cleaned[-1] in units:
            return int(float(cleaned[:-1]) * units[cleaned[-1]])
        return int(cleaned)
    except ValueError:
        raise ValueError(f"not a size: {text!r} (use e.g. '16g', '512m' or a byte count)") from None


def _own_group(controller: str | None, lines: list[str] | None = None) -> Path:
    """This process's group directory in the v2 hierarchy (None) or a v1 controller's;
    `lines`: /proc/self/cgroup already read."""
    for line in lines if lines is not None else Path("/proc/self/cgroup").read_text().splitlines():
        number, controllers, path = line.split(":", 2)
        if controller is None and number == "0" and controllers == "":
            return _ROOT / path.lstrip("/")
        if controller is not None and controller in controllers.split(","):
            return _ROOT / controller / path.lstrip("/")
    raise CgroupUnavailable(f"no {controller or 'v2'} cgroup for this process")


def own_memory_limit() -> int | None:
    """The lowest memory limit on this process's cgroup and its ancestors (None: none)."""
    unified = (_ROOT / "cgroup.controllers").is_file()
    try:
        group = _own_group(None if unified else "memory")
    except (OSError, CgroupUnavailable):
        return None
    top = _ROOT if unified else _ROOT / "memory"
    limits = []
    for directory in [group, *group.parents]:
        if not directory.is_relative_to(top):
            break
        with contextlib.suppress(OSError, ValueError):
            text = (directory / ("memory.max" if unified else "memory.limit_in_bytes")).read_text()
            if text.strip() != "max" and int(text) < _NO_LIMIT:
                limits.append(int(text))
    return min(limits, default=None)


@dataclass
class Cgroup:
    """One sandbox's group(s); the sandbox's command starts with `join_argv()`."""

    memory: int | None
    pids: int | None
    cpus: float | None
    dirs: dict[str, Path] = field(default_factory=dict)

    def create(self) -> None:
        name = f"mle-gym-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        unified = (_ROOT / "cgroup.controllers").is_file()
        try:
            if unified:
                self.dirs["v2"] = self._make(_own_group(None).parent / name)
                self._limit_v2(self.dirs["v2"])
            else:
                lines = Path("/proc/self/cgroup").read_text().splitlines()
                for controller in ("memory", "pids", "cpu"):
                    self.dirs[controller] = self._make(_own_group(controller, lines) / name)
                self._limit_v1()
        except OSError as exc:
            self.remove()
            raise CgroupUnavailable(f"could not create a cgroup: {exc}") from exc

    @staticmethod
    def _make(path: Path) -> Path:
        path.mkdir()
        return path

    def _limit_v2(self, group: Path) -> None:
        if self.memory is not None:
            (group / "memory.max").write_text(str(self.memory))
            with contextlib.suppress(OSError):  # no swap accounting on this host
                (group / "memory.swap.max").write_text("0")
        if self.pids is not None:
            (group / "pids.max").write_text(str(self.pids))
        if self.cpus is not None:
            (group / "cpu.max").write_text(f"{int(self.cpus * _CPU_PERIOD_US)} {_CPU_PERIOD_US}")

    def _limit_v1(self) -> None:
        if self.memory is not None:
            (self.dirs["memory"] / "memory.limit_in_bytes").write_text(str(self.memory))
            with contextlib.suppress(OSError):  # memsw exists only with swap accounting
                (self.dirs["memory"] / "memory.memsw.limit_in_bytes").write_text(str(self.memory))
        if self.pids is not None:
            (self.dirs["pids"] / "pids.max").write_text(str(self.pids))
        if self.cpus is not None:
            (self.dirs["cpu"] / "cpu.cfs_period_us").write_text(str(_CPU_PERIOD_US))
            (self.dirs["cpu"] / "cpu.cfs_quota_us").write_text(str(int(self.cpus * _CPU_PERIOD_US)))

    def join_argv(self) -> list[str]:
        """Words to put before a command so that it runs in the group(s): a shell that
        moves itself in, then execs the rest (a small process moves fast, where a fork of
        this one would wait on its copied pages)."""
        files = [str(directory / "cgroup.procs") for directory in self.dirs.values()]
        return ["/bin/sh", "-c", _JOIN, str(len(files)), *files]

    def oom_kills(self) -> int:
        """How many processes the kernel killed in the group for memory."""
        if "v2" in self.dirs:
            path, key = self.dirs["v2"] / "memory.events", "oom_kill"
        elif "memory" in self.dirs:
            path, key = self.dirs["memory"] / "memory.oom_control", "oom_kill"
        else:
            return 0
        with contextlib.suppress(OSError):
            for line in path.read_text().splitlines():
                name, _, value = line.partition(" ")
                if name == key and value.strip().isdigit():
                    return int(value)
        return 0

    def process_count(self) -> int:
        directory = self.dirs.get("v2") or self.dirs.get("pids")
        if directory is None:
            return 0
        try:
            return int((directory / "pids.current").read_text())
        except (OSError, ValueError):
            return 0

    def kill_all(self) -> None:
        """SIGKILL every process in the group (v2 has a file for it; v1 is walked)."""
        if "v2" in self.dirs:
            with contextlib.suppress(OSError):
                (self.dirs["v2"] / "cgroup.kill").write_text("1")
                return
        for directory in self.dirs.values():
            with contextlib.suppress(OSError):
                for pid in (directory / "cgroup.procs").read_text().split():
                    with contextlib.suppress(OSError):
                        os.kill(int(pid), 9)

    def remove(self) -> None:
        """Kill what is left and remove the group directories."""
        self.kill_all()
        for directory in self.dirs.values():
            for _ in range(50):
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # processes still exiting
                    time.sleep(0.01)
        self.dirs.clear()
