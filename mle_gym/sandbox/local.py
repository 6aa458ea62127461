"""The local backend: bubblewrap, or (asked for by name) an unisolated shell.

Under bubblewrap the sandbox sees only system software (/usr, a few files of /etc, the
Python that runs mle_gym; or the pinned runtime's /usr, /etc and venv, the files its docker
image runs: agent_runtime.py), the public data read-only at /home/data, and its own writable
/home/code, /home/submission and /tmp (tmpfs mounts bounded in bytes, and /home/code and
/home/submission in files too: workspace.py); it has no network (or, when asked, its own network
namespace with an outbound-only uplink), its own pid, ipc and uts namespaces, a seccomp
filter (no keyrings, mounts, user namespaces or TIOCSTI), a fresh session keyring, a
read-only /proc/sys, and a cgroup with memory, process and CPU limits (its /sys/fs/cgroup
shows that cgroup only).

The agent is never host root. When this process runs as root, bubblewrap keeps the host's
user namespace (one of its own would map the agent onto host root) and the shell drops to
an unprivileged uid of the sandbox's own (uids.py) with `setpriv` (no capabilities, no
new privileges). Otherwise a user namespace maps the agent onto this process's own
unprivileged user, with further user namespaces disabled.

Nothing of the host's home, /tmp or the data cache is mounted, so the private answers
cannot be reached by any path. `isolation="none"` runs the shell as this user with every
host file reachable; it still shows the agent the same /home/... paths (through a mount
namespace of its own), so a policy behaves the same in every mode.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect
import ptyprocess

from mle_gym.sandbox import seccomp
from mle_gym.sandbox.agent_runtime import RUNTIME_PATH, VENV, built_root, is_runtime_root
from mle_gym.sandbox.base import (
    AgentIdentity,
    FileInfo,
    SandboxError,
    SandboxFileError,
    SandboxPaths,
    SandboxSpec,
    public_entries,
)
from mle_gym.sandbox.caller_warning import warn_caller
from mle_gym.sandbox.cgroup import Cgroup, CgroupUnavailable, parse_bytes
from mle_gym.sandbox.environment import shell_environment
from mle_gym.sandbox.gpus import GpuSpec
from mle_gym.sandbox.host_limits import episode_limits, host_cpus
from mle_gym.sandbox.network import Uplink
from mle_gym.sandbox.nvidia_devices import GpuBinds, gpu_binds
from mle_gym.sandbox.pty_spawn import spawn_on_pty
from mle_gym.sandbox.rootfs import RootFiles
from mle_gym.sandbox.scratch import discard, owned_dir, sweep_once
from mle_gym.sandbox.shell import OUTPUT_FD, OutputPipe, ShellSession
from mle_gym.sandbox.shell_backed import ShellBackedSandbox
from mle_gym.sandbox.teardown import attempt
from mle_gym.sandbox.tree import TreeEntry
from mle_gym.sandbox.uids import UidLease, lease_uid
from mle_gym.sandbox.workspace import DEFAULT_FILES, Workspace, WorkspaceUnavailable

# /etc entries programs need to run (name resolution, linker cache, certificates, locale).
_ETC_ENTRIES = (
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "nsswitch.conf",
    "ssl/certs",
    "ca-certificates",
    "mime.types",
    "fonts",
    "protocols",
    "services",
    "timezone",
)
#: The agent's uid inside the sandbox when it runs in a user namespace of its own.
_AGENT_UID = 1000
_SHELL = ("bash", "--noprofile", "--norc", "--noediting", "-i")
#: Where `bwrap_argv` says the seccomp program is; a sandbox puts its own descriptor there.
_SECCOMP_FD = 10
#: The output pipe enters the sandbox at a descriptor at least this high (see `start`).
_PASSED_FD_FLOOR = 100

NOT_ISOLATED_WARNING = (
    "mle_gym: isolation='none': the local sandbox is NOT ISOLATED: agent commands run as "
    "your user with full access to your files and the network. Use it only for code you "
    "trust (the scripted demo); for model-written code use bubblewrap or backend='docker'."
)
NO_BWRAP = (
    "the local sandbox needs bubblewrap to isolate agent commands, and `bwrap` is not "
    "installed. Install it (Debian/Ubuntu: sudo apt-get install bubblewrap), or use "
    "backend='docker'. To run commands without any isolation (only for code you trust), "
    "pass sandbox_options={'isolation': 'none'}."
)
NO_RUNTIME_WARNING = (
    "mle_gym: the pinned agent runtime is not built, so the local sandbox runs agent code "
    "with this Python's own libraries (scores may differ from the docker backend's); run "
    "`mle-gym build-runtime` once, or pass sandbox_options={'runtime': 'host'} to say so"
)
RUNTIME_NEEDS = (
    "the pinned agent runtime runs on its own file system, which needs bubblewrap and no "
    "`gpus` (the host's GPU driver is not in it)"
)
RUNTIME_UNUSABLE_WARNING = (
    f"mle_gym: {RUNTIME_NEEDS}; this sandbox runs agent code with this Python's own "
    "libraries (scores may differ from the docker backend's)"
)
#: The warnings already given in this process: each is said once, however many sandboxes
#: start (warnings' own once-per-place memory is wiped by any filter change, and a
#: notebook or batch starts many).
_warned: set[str] = set()


def bwrap_available() -> bool:
    return shutil.which("bwrap") is not None


def _python_roots() -> list[Path]:
    """Directories holding the interpreter and packages mle_gym runs with."""
    roots = {
        Path(sys.prefix).resolve(),
        Path(sys.base_prefix).resolve(),
        Path(sys.executable).resolve().parent.parent,
    }
    return sorted(r for r in roots if not str(r).startswith("/usr"))


def agent_python(runtime: str | Path, on_host_system: bool = False) -> Path | None:
    """Where the agent's Python comes from: "auto" the pinned runtime's file system when
    built (else None, with one warning per process), "host" None (this process's Python),
    or a path: a runtime's file system (`is_runtime_root`) or a venv on this host's system.
    `on_host_system`: the sandbox cannot run on a runtime's file system (no bubblewrap, or
    GPUs, whose driver is the host's)."""
    if runtime == "host":
        return None
    if runtime != "auto":
        chosen = Path(runtime).resolve()
        if is_runtime_root(chosen):
            if on_host_system:
                raise ValueError(f"runtime {runtime}: {RUNTIME_NEEDS}; pass 'host' or a venv")
            return chosen
        if not (chosen / "bin" / "python3").exists():
            raise ValueError(
                f"runtime {runtime}: no bin/python3 there (a venv or a runtime's root is expected)"
            )
        return chosen
    root = built_root()
    if root is None:
        _warn_once(NO_RUNTIME_WARNING)
    elif on_host_system:
        _warn_once(RUNTIME_UNUSABLE_WARNING)
        return None
    return root


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        warn_caller(message)


def _traversable(path: Path, made: set[str] | None = None) -> list[str]:
    """Directories above a bind target, made traversable by everyone: bubblewrap creates
    them 0700 when it runs as root, which would hide the bind from the agent's uid."""
    made = set() if made is None else made
    args: list[str] = []
    for parent in map(str, reversed(path.parents[:-1])):
        if parent not in made:
            made.add(parent)
            args += ["--perms", "0755", "--dir", parent]
    return args


def _system_binds(root: Path | None = None) -> list[str]:
    """The system the agent's programs run on: this host's /usr, top-level directories and
    a few /etc entries; or a runtime's file system (`root`): its own, all of its /etc, and
    its venv, so that the files are those the runtime's image runs on docker."""
    base = root or Path("/")
    args: list[str] = ["--ro-bind", str(base / "usr"), "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        top = base / name
        if top.is_symlink():
            args += ["--symlink", os.readlink(top), f"/{name}"]
        elif top.is_dir():
            args += ["--ro-bind", str(top), f"/{name}"]
    if root is not None:
        venv = Path(VENV)
        args += ["--ro-bind", str(root / "etc"), "/etc", *_traversable(venv)]
        return [*args, "--ro-bind", str(root / VENV.lstrip("/")), VENV]
    made: set[str] = set()
    for entry in _ETC_ENTRIES:
        if Path("/etc", entry).exists():
            args += _traversable(Path("/etc", entry), made)
            args += ["--ro-bind", f"/etc/{entry}", f"/etc/{entry}"]
    return args


def _python_binds(roots: list[Path]) -> list[str]:
    """Read-only binds of the Python installation; they come after the /tmp and /home tmpfs
    mounts, which would otherwise hide a venv living under either."""
    args: list[str] = []
    for root in roots:
        args += [*_traversable(root), "--ro-bind", str(root), str(root)]
    return args


def _extra_binds(spec: SandboxSpec) -> list[str]:
    """The spec's own read-only directories (after the /home tmpfs, which would hide them)."""
    args: list[str] = []
    for bind in spec.binds:
        args += [
            *_traversable(Path(bind.target)),
            "--ro-bind",
            str(bind.source.resolve()),
            bind.target,
        ]
    return args


def _cgroup_view(dirs: dict[str, Path]) -> list[str]:
    """/sys/fs/cgroup showing the sandbox's own group(s) only, read-only, where docker
    shows a container its own: the host's hierarchy would show every other sandbox's
    processes and memory use (v2: the group at the top; v1: one folder per controller)."""
    args = ["--perms", "0755", "--tmpfs", "/sys/fs/cgroup"]
    for controller, directory in dirs.items():
        target = "/sys/fs/cgroup" if controller == "v2" else f"/sys/fs/cgroup/{controller}"
        if controller != "v2":
            args += ["--perms", "0755", "--dir", target]
        args += ["--ro-bind", str(directory), target]
    return args


def _data_binds(spec: SandboxSpec, data: str) -> list[str]:
    """The public data at `data`, read-only, with the spec's files in /home and beside it.
    With files beside it, `data` is a tmpfs holding read-only binds of each public entry
    and each file (binding a file into the read-only public folder would have to create
    it there), then made read-only itself."""
    args: list[str] = []
    for file in spec.files:
        if file not in spec.data_files():
            args += ["--ro-bind", str(file.source.resolve()), file.target]
    public = spec.public_dir.resolve()
    beside = spec.data_files()
    if not beside:
        return [*args, "--ro-bind", str(public), data]
    entries = public_entries(public)
    args += ["--perms", "0755", "--tmpfs", data]
    for entry in entries:
        args += ["--ro-bind", str(entry), f"{data}/{entry.name}"]
    for file in beside:
        args += ["--ro-bind", str(file.source.resolve()), file.target]
    return [*args, "--remount-ro", data]


def bwrap_argv(
    root: Path,
    spec: SandboxSpec,
    paths: SandboxPaths,
    *,
    as_root: bool,
    agent_uid: int,
    disk: int | None,
    python_roots: list[Path],
    cgroup_dirs: dict[str, Path] | None = None,
    gpus: GpuBinds | None = None,
    system_root: Path | None = None,
) -> list[str]:
    """The bubblewrap command of one sandbox; `root` holds its host-side directories.

    `as_root`: this process is root, so no user namespace and a `setpriv` drop to
    `agent_uid`; otherwise a user namespace maps the agent onto this process's user.
    `cgroup_dirs`: the sandbox's own cgroup directories (`Cgroup.dirs`), the only ones
    it sees under /sys/fs/cgroup. `gpus`: the chosen GPUs' device nodes and driver files.
    `system_root`: a runtime's file system to run on instead of this host's (`_system_binds`).
    """
    inner_uid = agent_uid if as_root else _AGENT_UID
    (root / "passwd").write_text(
        f"agent:x:{inner_uid}:{inner_uid}:agent:/tmp:/bin/bash\n"
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    )
    (root / "group").write_text(f"agent:x:{inner_uid}:\nnogroup:x:65534:\n")
    if as_root:
        # No user namespace: one made by root maps the agent onto host root. A network
        # namespace always; network=True adds an uplink to it (network.py).
        namespaces = [
            "--unshare-ipc",
            "--unshare-pid",
            "--unshare-uts",
            "--unshare-net",
            "--unshare-cgroup-try",
        ]
    else:  # --unshare-all includes the network namespace
        namespaces = [
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",
            "--uid",
            str(_AGENT_UID),
            "--gid",
            str(_AGENT_UID),
            "--cap-drop",
            "ALL",
        ]
    size = ["--size", str(disk)] if disk else []
    p = paths
    argv = [
        "bwrap",
        "--die-with-parent",
        *namespaces,
        "--hostname",
        "sandbox",
        "--seccomp",
        str(_SECCOMP_FD),
        *_system_binds(system_root),
        "--ro-bind",
        str(root / "passwd"),
        "/etc/passwd",
        "--ro-bind",
        str(root / "group"),
        "/etc/group",
        "--ro-bind",
        "/sys",
        "/sys",
        *_cgroup_view(cgroup_dirs or {}),
        "--proc",
        "/proc",
        # kernel tunables (core_pattern runs a program as host root): read-only
        "--ro-bind",
        "/proc/sys",
        "/proc/sys",
        "--dev",
        "/dev",
        *size,
        "--perms",
        "1777",
        "--tmpfs",
        "/dev/shm",
        *size,
        "--perms",
        "1777",
        "--tmpfs",
        "/tmp",
        *(["--bind", str(root / "home")] if spec.writable_home else ["--tmpfs"]),
        "/home",
        *_python_binds(python_roots),
        *_extra_binds(spec),
        *(gpus.bwrap_args() if gpus is not None else []),
        *_data_binds(spec, p.data),
        "--bind",
        str(root / "code"),
        p.code,
        "--bind",
        str(root / "submission"),
        p.submission,
        "--ro-bind",
        str(root / "logs"),
        p.logs,
        # Only /tmp, /dev/shm, code and submission (and a writable home) stay writable.
        *([] if spec.writable_home else ["--remount-ro", "/home"]),
        "--remount-ro",
        "/",
        "--chdir",
        p.code,
    ]
    if as_root:
        drop = [
            "setpriv",
            f"--reuid={agent_uid}",
            f"--regid={agent_uid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]
        return [*argv, *drop, *_SHELL]
    return [*argv, *_SHELL]


class LocalSandbox(ShellBackedSandbox):
    """Runs the agent's shell on this machine; `isolation` is "bwrap" or "none".

    `memory` (e.g. "16g"; "auto": one episode's share of the host, host_limits.py), `cpus`
    (cores, fractional allowed; "auto": every core this process may use) and `pids_limit`
    bound the sandbox through a cgroup; `disk` bounds each of /tmp, /dev/shm, /home/code and
    /home/submission in bytes, and `files` the last two in files (inodes); `uid` is the
    agent's host uid when this process is root (default: one of its own for each running
    sandbox, uids.py). `runtime`: the agent's Python (`agent_python`): "auto" (the pinned
    runtime of `mle-gym build-runtime`, else this Python), "host", or a path (a runtime's
    file system, or a venv on this host's system).
    """

    def __init__(
        self,
        isolation: str = "bwrap",
        memory: str | int | None = "auto",
        cpus: float | str | None = "auto",
        pids_limit: int | None = 4096,
        disk: str | int | None = "8g",
        uid: int | None = None,
        files: int = DEFAULT_FILES,
        gpus: GpuSpec = None,
        runtime: str | Path = "auto",
    ) -> None:
        if isolation not in ("bwrap", "none"):
            raise ValueError("isolation must be 'bwrap' or 'none'")
        if isolation == "bwrap" and not bwrap_available():
            raise SandboxError(NO_BWRAP)
        self.isolated = isolation == "bwrap"
        if gpus is not None and not self.isolated:
            raise ValueError(
                "the `gpus` option needs isolation='bwrap': unisolated, every GPU is seen"
            )
        if not self.isolated:
            _warn_once(NOT_ISOLATED_WARNING)
        if self.isolated:
            seccomp.filter_program()  # fail now, with the reason, if libseccomp is missing
        if memory == "auto":
            memory = episode_limits(1).sandbox_memory
        self.memory = parse_bytes(memory) if memory is not None else None
        self.cpus = host_cpus() if cpus == "auto" else float(cpus) if cpus is not None else None
        self.pids_limit = pids_limit
        self.disk = parse_bytes(disk) if disk is not None else None
        self.files = int(files)
        #: The chosen GPUs' devices and driver files; NoNvidiaDriver now, at gym.make, if
        #: the host has no driver or not those GPUs.
        self.gpus = gpu_binds(gpus)
        #: A runtime's file system the sandbox runs on, or a venv first on the agent's PATH;
        #: None: this process's Python.
        self.runtime = agent_python(runtime, not self.isolated or self.gpus is not None)
        self.runtime_root = self.runtime if self.runtime and is_runtime_root(self.runtime) else None
        self.as_root = os.geteuid() == 0
        self.agent_uid = uid
        self._chosen_uid = uid
        self._uid_lease: UidLease | None = None
        self.paths = SandboxPaths()
        self.root: Path | None = None
        self.shell: ShellSession | None = None
        self.cgroup: Cgroup | None = None
        self.uplink: Uplink | None = None
        self.workspace: Workspace | None = None
        self._files = RootFiles(self._sandbox_pid)
        self._network = False
        self._writable_home = False

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self, spec: SandboxSpec) -> None:
        self.stop()
        sweep_once()
        self.root = owned_dir("episode")
        try:
            writable = ["code", "submission", *(["home"] if spec.writable_home else [])]
            for name in (*writable, "logs"):
                (self.root / name).mkdir()
            if self.as_root and self.isolated:
                self._take_uid()
                for name in writable:
                    os.chown(self.root / name, self.agent_uid, self.agent_uid)
            self.logs_dir = self.root / "logs"
            self._network = spec.network
            self._writable_home = spec.writable_home
            if self.isolated:
                self.workspace = self._make_workspace([self.root / name for name in writable])
            self.cgroup = self._make_cgroup()
            self._oom_kills = 0  # counted from this new group's start
            argv = self._bwrap_argv(spec) if self.isolated else self._unshare_argv(spec)
        except BaseException:
            self.stop()
            raise
        if self.runtime_root is not None:
            path = RUNTIME_PATH
        else:
            tools = [*self.gpus.path] if self.gpus is not None else []
            python = self.runtime or Path(sys.executable).parent.parent
            path = ":".join([str(python / "bin"), *tools, "/usr/local/bin:/usr/bin:/bin"])
        env = shell_environment(
            home="/tmp" if self.isolated else "/home/agent-home",
            path=path,
            extra={**(self.gpus.environment() if self.gpus is not None else {}), **spec.env},
        )
        cwd = str(self.root)
        prefix = [
            *(self.cgroup.join_argv() if self.cgroup is not None else []),
            *(self.workspace.enter_argv() if self.workspace is not None else []),
        ]

        def spawn() -> tuple[pexpect.spawn, OutputPipe]:
            read_end, first = os.pipe()
            # At a number above OUTPUT_FD, which the shell makes from it (`attach`)
            write_end = fcntl.fcntl(first, fcntl.F_DUPFD_CLOEXEC, _PASSED_FD_FLOOR)
            os.close(first)
            passed = [write_end]
            try:
                command = [*prefix, *argv]
                if self.isolated:
                    passed.append(seccomp.program_fd())
                    command[command.index("--seccomp") + 1] = str(passed[-1])
                proc = _SpawnOnPty(
                    command[0],
                    command[1:],
                    cwd=cwd,
                    env=env,
                    echo=False,
                    dimensions=(50, 200),
                    pass_fds=tuple(passed),
                    cooked=False,
                )
            except BaseException:
                os.close(read_end)
                raise
            finally:
                for fd in passed:
                    os.close(fd)
            attach = f"exec {OUTPUT_FD}>&{write_end} {write_end}>&-"
            return proc, OutputPipe(read_end, attach)

        self.shell = ShellSession(spawn, _PtyJobControl(), self._recover, terminal_set=True)
        try:
            self.shell.start()
            if spec.network and self.isolated:
                self.uplink = Uplink(self._sandbox_pid())
                self.uplink.start()
        except BaseException:
            self.stop()
            raise

    def _take_uid(self) -> None:
        """A uid no other running sandbox has (unless one was given), for the agent and for
        the host's file transfers."""
        if self._chosen_uid is None:
            self._uid_lease = lease_uid()
            self.agent_uid = self._uid_lease.uid
        else:
            self.agent_uid = self._chosen_uid
        self._files.uid = self._files.gid = self.agent_uid

    def _make_workspace(self, mountpoints: list[Path]) -> Workspace | None:
        """tmpfs mounts for code and submission (and a writable home), bounded in bytes and
        files."""
        workspace = Workspace(
            mountpoints,
            size=self.disk,
            files=self.files,
            uid=self.agent_uid if self.as_root else None,
        )
        try:
            workspace.create()
        except WorkspaceUnavailable as exc:
            if self.as_root:
                raise SandboxError(f"could not bound the sandbox's files: {exc}") from exc
            warn_caller(
                f"mle_gym: /home/code and /home/submission are host directories ({exc}), "
                "bounded only by the host's disk; allow user namespaces for `unshare` or "
                "use backend='docker'"
            )
            return None
        return workspace

    def _make_cgroup(self) -> Cgroup | None:
        if self.memory is None and self.pids_limit is None and self.cpus is None:
            return None
        group = Cgroup(memory=self.memory, pids=self.pids_limit, cpus=self.cpus)
        try:
            group.create()
        except CgroupUnavailable as exc:
            if self.as_root:
                raise SandboxError(f"could not limit the sandbox's resources: {exc}") from exc
            warn_caller(
                f"mle_gym: the local sandbox runs without memory/pids/CPU limits ({exc}); "
                "run as root, give this user a delegated cgroup, or use backend='docker'"
            )
            return None
        return group

    def _bwrap_argv(self, spec: SandboxSpec) -> list[str]:
        assert self.root is not None
        # on a runtime's file system, its venv comes with it (`_system_binds`)
        python_roots = (
            []
            if self.runtime_root
            else [*_python_roots(), *([self.runtime] if self.runtime else [])]
        )
        return bwrap_argv(
            self.root,
            spec,
            self.paths,
            as_root=self.as_root,
            agent_uid=self.agent_uid if self.agent_uid is not None else _AGENT_UID,
            disk=self.disk,
            python_roots=python_roots,
            cgroup_dirs=self.cgroup.dirs if self.cgroup is not None else None,
            gpus=self.gpus,
            system_root=self.runtime_root,
        )

    def _unshare_argv(self, spec: SandboxSpec) -> list[str]:
        """isolation="none": a mount namespace only, to show the same /home/... paths."""
        assert self.root is not None
        if spec.binds or spec.files or spec.writable_home:  # made on the host's file system
            raise SandboxError("isolation='none' cannot show extra directories or files")
        (self.root / "oldhome").mkdir()
        (self.root / "agent-home").mkdir()
        namespaces = ["--mount"] if self.as_root else ["--user", "--map-root-user", "--mount"]
        return [
            "unshare",
            *namespaces,
            "--propagation",
            "private",
            "--",
            "bash",
            "-c",
            _PATHS_SCRIPT,
            "mle-gym-paths",
            str(self.root),
            str(spec.public_dir.resolve()),
        ]

    def _sandbox_pid(self) -> int:
        """A process inside the sandbox, running as the agent (for /proc/<pid>/root)."""
        if self.shell is None or self.root is None:
            raise SandboxFileError("the sandbox is not started")
        if not self.shell.alive:
            self.shell.start()
        assert self.shell.proc is not None
        want = self.agent_uid if self.as_root and self.isolated else os.getuid()
        queue = _children(self.shell.proc.pid)
        if not self.isolated:
            return self.shell.proc.pid  # unshare execs the shell itself
        while queue:
            pid = queue.pop(0)
            if _real_uid(pid) == want:
                return pid
            queue += _children(pid)
        raise SandboxFileError("the sandbox's shell could not be found")

    def agent_identity(self) -> AgentIdentity:
        """As root the agent is `uid` (user and group, see `bwrap_argv`); otherwise a user
        namespace maps it onto this process's user."""
        pid = self._sandbox_pid()
        if self.as_root and self.isolated:
            return AgentIdentity(self.agent_uid, self.agent_uid, pid)
        return AgentIdentity(os.getuid(), os.getgid(), pid)

    def _kill_all_processes(self) -> None:
        if self.cgroup is not None:
            self.cgroup.kill_all()

    def _slots_exhausted(self) -> bool:
        return (
            self.cgroup is not None
            and self.pids_limit is not None
            and self.cgroup.process_count() >= self.pids_limit - 8
        )

    def _oom_kill_count(self) -> int:
        return self.cgroup.oom_kills() if self.cgroup is not None else 0

    def kill_processes(self) -> None:
        """The cgroup's processes, and the shell: under bubblewrap the sandbox's pid 1 dies
        with it (--die-with-parent), and with it every process of the pid namespace."""
        self._kill_all_processes()
        if self.shell is not None:
            self.shell.close()

    def _memory_limit(self) -> str | None:
        return _human(self.memory)

    def stop(self) -> None:
        """End every process and remove every file of the sandbox. Total: a step that
        fails is logged and the others still run, so a start after it is clean."""
        attempt("closing the file worker", self._files.close)
        if self.uplink is not None:
            attempt("stopping the network uplink", self.uplink.stop)
            self.uplink = None
        if self.shell is not None:
            attempt("stopping the shell", self.shell.stop)
            self.shell = None
        ended = True
        if self.cgroup is not None:
            ended = attempt("removing the cgroup", self.cgroup.remove)
            self.cgroup = None
        if self.workspace is not None:
            attempt("releasing the workspace", self.workspace.close)
            self.workspace = None
        if self._uid_lease is not None and ended:  # every process of the uid is gone
            self._uid_lease.release()
            self._uid_lease = None
        if self.root is not None:
            discard(self.root)
            self.root = None
        self.logs_dir = None

    # -- commands and files ------------------------------------------------------------------
    def stat_file(self, path: str) -> FileInfo | None:
        return self._files.stat(path)

    def read_file(self, path: str, max_bytes: int) -> bytes:
        return self._files.read(path, max_bytes)

    def write_file(self, path: str, data: bytes) -> None:
        self._files.write(path, data)

    def copy_out(self, path: str, dest: Path, max_bytes: int) -> bool:
        return self._files.copy_out(path, dest, max_bytes)

    def list_files(self, root: str, max_files: int) -> tuple[list[tuple[str, int]], bool]:
        return self._files.list(root, max_files)

    def copy_files(
        self, root: str, names: list[str], dest: Path, max_file_bytes: int, max_bytes: int,
        deadline: float,
    ) -> dict[str, str]:  # fmt: skip
        return self._files.copy_many(root, names, dest, max_file_bytes, max_bytes, deadline)

    def read_files(
        self, root: str, names: list[str], max_file_bytes: int, max_bytes: int,
        deadline: float,
    ) -> tuple[dict[str, bytes], dict[str, str]]:  # fmt: skip
        return self._files.read_many(root, names, max_file_bytes, max_bytes, deadline)

    def writable_places(self) -> tuple[str, ...]:
        if not self.isolated:
            return (self.paths.code, self.paths.submission, "/home/agent-home")
        home = ("/home",) if self._writable_home else ()
        return (*home, self.paths.code, self.paths.submission, "/tmp")

    def list_tree(self, root: str, max_entries: int) -> tuple[list[TreeEntry], bool]:
        return self._files.tree(root, max_entries)

    def put_tree(
        self, root: str, entries: list[TreeEntry], source: Callable[[TreeEntry], Path]
    ) -> dict[str, str]:
        return self._files.put(root, entries, source)

    def describe(self) -> dict[str, Any]:
        return {
            "backend": "local",
            "isolation": "bwrap" if self.isolated else "none",
            "memory": _human(self.memory),
            "cpus": self.cpus,
            "pids_limit": self.pids_limit,
            "limits_enforced": self.cgroup is not None,
            "network": "uplink" if self._network and self.isolated else self._network,
            "gpus": [g.uuid or str(g.index) for g in self.gpus.gpus] if self.gpus else [],
            "agent_python": str(self.runtime) if self.runtime is not None else "host",
        }


def _human(size: int | None) -> str | None:
    if size is None:
        return None
    for unit, factor in (("g", 1 << 30), ("m", 1 << 20), ("k", 1 << 10)):
        if size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def _children(pid: int) -> list[int]:
    with contextlib.suppress(OSError):
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    return []


def _real_uid(pid: int) -> int | None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    return None


# isolation="none": keep the host's /home entries reachable at their paths, and put the
# episode's directories at /home/data, /home/code, /home/submission and /home/logs.
_PATHS_SCRIPT = r"""
set -e
root=$1; data=$2
mount --rbind /home "$root/oldhome"
mount -t tmpfs -o mode=755 mle-gym-home /home
for entry in "$root"/oldhome/* "$root"/oldhome/.[!.]*; do
    [ -e "$entry" ] || continue
    name=${entry##*/}
    case $name in data|code|submission|logs|agent-home) continue ;; esac
    if [ -d "$entry" ]; then mkdir "/home/$name"; else : > "/home/$name"; fi
    mount --rbind "$entry" "/home/$name"
done
for name in data code submission logs agent-home; do mkdir "/home/$name"; done
mount --rbind "$data" /home/data
mount -o remount,ro,bind /home/data
for name in code submission logs agent-home; do mount --bind "$root/$name" "/home/$name"; done
mount -o remount,ro,bind /home/logs
cd /home/code
exec bash --noprofile --norc --noediting -i
"""


class _SpawnOnPty(pexpect.spawn):
    """pexpect's spawn, started by `spawn_on_pty` (no fork of this process, a fresh
    session keyring), keeping `pass_fds` open in the child, on a terminal as `cooked` says."""

    def __init__(
        self, *args: Any, pass_fds: tuple[int, ...] = (), cooked: bool = True, **kwargs: Any
    ) -> None:
        self._pass_fds = pass_fds
        self._cooked = cooked
        super().__init__(*args, **kwargs)

    def _spawnpty(self, args: list[str], **kwargs: Any) -> ptyprocess.PtyProcess:
        return spawn_on_pty(
            args,
            cwd=kwargs.get("cwd"),
            env=kwargs.get("env"),
            echo=kwargs.get("echo", True),
            dimensions=kwargs.get("dimensions", (24, 80)),
            pass_fds=self._pass_fds,
            cooked=self._cooked,
        )


class _PtyJobControl:
    """The pty's foreground group, in this host's pid numbering (the kernel translates it
    out of the sandbox's pid namespace), killed with killpg."""

    def foreground_group(self, shell: ShellSession) -> int | None:
        try:
            return os.tcgetpgrp(shell.proc.child_fd) if shell.proc is not None else None
        except OSError:
            return None

    def signal_group(self, shell: ShellSession, group: int, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signum)
