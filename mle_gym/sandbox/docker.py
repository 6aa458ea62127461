"""The Docker backend: one container per episode, driven through the Docker SDK.

The agent runs as an unprivileged uid of its own (uids.py: containers share the host's
per-user kernel quotas, so no two running sandboxes share a uid) with no capabilities, no
network (unless asked), and memory, CPU, pids and shm limits. The container's keeper
process runs as root (still without capabilities), so the agent cannot stop the container
by killing it. The root file system is read-only; the writable places (/home/code,
/home/submission, /tmp and the agent's home) are tmpfs mounts limited in size and in files
(inodes), charged to the container's memory, so the host's disk and inodes are never
filled. The public data is bind-mounted
read-only at /home/data and the host-written logs at /home/logs. The persistent shell is
a `docker exec` with a tty whose socket pexpect drives, exactly like the local pty; its
commands' output comes back through a second, tty-less exec that copies a FIFO (shell.py
says why). Files move through separate execs with a fixed argv, as the agent's user,
never through the agent's shell.
"""

from __future__ import annotations

import contextlib
import io
import os
import posixpath
import secrets
import shutil
import socket
import tarfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from docker.errors import APIError, ImageNotFound, NotFound
from pexpect.fdpexpect import fdspawn

from mle_gym.sandbox import containers, fd_wait
from mle_gym.sandbox.agent_runtime import runtime_image
from mle_gym.sandbox.base import (
    GONE,
    LATE,
    AgentIdentity,
    CommandResult,
    FileInfo,
    SandboxError,
    SandboxFileError,
    SandboxPaths,
    SandboxSpec,
    public_entries,
)
from mle_gym.sandbox.cgroup import parse_bytes
from mle_gym.sandbox.docker_runtime import check_network, chosen_runtime, is_gvisor, registration
from mle_gym.sandbox.engine import connect
from mle_gym.sandbox.environment import shell_environment
from mle_gym.sandbox.gpus import GpuSpec, device_requests
from mle_gym.sandbox.host_limits import MIB, episode_limits, host_cpus
from mle_gym.sandbox.image import DEFAULT_IMAGE, OFFLINE_IMAGE
from mle_gym.sandbox.scratch import discard, owned_dir, sweep_once
from mle_gym.sandbox.shell import OUTPUT_FD, OutputPipe, ShellSession
from mle_gym.sandbox.shell_backed import ShellBackedSandbox
from mle_gym.sandbox.teardown import attempt
from mle_gym.sandbox.tree import TreeEntry
from mle_gym.sandbox.uids import UidLease, lease_uid
from mle_gym.sandbox.workspace import DEFAULT_FILES

_SHELL = ["bash", "--noprofile", "--norc", "--noediting", "-i"]
#: Containers this process creates and starts at once. The engine does much of that work
#: one container at a time, so hundreds of envs starting together (an RL trainer's first
#: step) would wait on it past the client's 60 s read timeout; queued here, each request
#: is answered in seconds.
_STARTS = threading.BoundedSemaphore(8)
_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_IO_TIMEOUT = 120
# Reads and writes run as the agent, one exec each; what is at the path is checked in the
# same exec (exit 20: nothing there, 21: a directory, 22: not a regular file). The check and
# the open are two steps, so the open itself refuses what the agent may swap in between:
# `nofollow` a link at the (already resolved) path, `nonblock` a FIFO with no other end.
_READ_SCRIPT = (
    'p=$(readlink -m -- "$1") || exit 20; '
    '[ -e "$p" ] || exit 20; [ -d "$p" ] && exit 21; [ -f "$p" ] || exit 22; '
    'exec dd if="$p" iflag=nofollow,nonblock,count_bytes count="$2" bs=1M status=none'
)
_WRITE_SCRIPT = (
    'p=$(readlink -m -- "$1") && { [ ! -e "$p" ] || [ -f "$p" ] || exit 22; } && '
    'mkdir -p -- "$(dirname -- "$p")" && '
    'exec dd of="$p" oflag=nofollow,nonblock bs=1M status=none'
)
# A listing is its own exec too, with the image's `find` (the root file system is read-only):
# regular files only, no link followed, no other mount entered, the first "$2" in path order.
_LIST_SCRIPT = (
    'find -P "$1" -xdev -type f -printf "%P\\t%s\\0" 2>/dev/null '
    '| LC_ALL=C sort -z | head -z -n "$2"'
)
# Many files in one exec: the image's tar reads the NUL-ended names on stdin below "$1", as
# the agent; a name is never an option, a directory adds nothing below it, a symlink is
# archived as a link (not followed), and each name of a hard-linked file as a file of its own.
# Its complaints (a name gone) are dropped: the archive says what it holds.
_TAR_SCRIPT = (
    'cd -- "$1" && exec tar -c -f - --hard-dereference --no-recursion --null '
    "--verbatim-files-from -T - 2>/dev/null"
)
# A whole tree, as the agent: each entry's type, permission bits, size, device, path and a
# symlink's text, NUL-separated (a name may hold any other byte); the root comes first.
_TREE_FIELDS = 6
_TREE_SCRIPT = (
    'find -P "$1" -xdev -printf "%y\\0%m\\0%s\\0%D\\0%P\\0%l\\0" 2>/dev/null | head -z -n "$2"'
)
# A tree written as the agent from an archive mle_gym builds: permission bits kept, owner the
# agent's, nothing already there replaced (a fresh sandbox's places are empty).
_UNTAR_SCRIPT = 'cd -- "$1" && exec tar -x -f - -p --no-same-owner --skip-old-files'
_TREE_KINDS = {"f": "file", "d": "dir", "l": "symlink"}
#: Bytes a tar member may take beyond its data: its header, a long name's, their padding.
_TAR_OVERHEAD = 6 * 1024
_NOT_THERE, _A_DIRECTORY, _NOT_REGULAR = 20, 21, 22
_garbage_collected = False
#: The (image, gpus) requests a throwaway container has shown the engine can give.
_gpus_given: set[str] = set()
#: The agent's user in the agent images, and its home.
AGENT_USER = "1000:1000"
AGENT_HOME = "/home/agent"
#: Each writable tmpfs's bounds: bytes, and files (a tmpfs's default allows half the
#: host's memory pages as files, millions, each costing kernel memory).
DEFAULT_DISK = "8g"


def workspace_tmpfs(
    user: str = AGENT_USER,
    disk: str | None = DEFAULT_DISK,
    inodes: int | None = DEFAULT_FILES,
    sticky: tuple[str, ...] = ("/tmp",),
    executable: bool = False,
) -> dict[str, str]:
    """The tmpfs mounts (path: options) of a container's writable places.

    The agent's code, submission and home belong to `user`; `sticky` ones are shared like
    /tmp. Each holds at most `disk` bytes and `inodes` files, is charged to the container's
    memory limit, and goes with the container: the host's disk is never written. Docker
    mounts them `noexec` unless `executable` (for agents that install their own programs).
    """
    bounds = [f"size={parse_bytes(disk)}"] if disk else []
    bounds += [f"nr_inodes={int(inodes)}"] if inodes else []
    bounds += ["exec"] if executable else []
    uid, _, gid = user.partition(":")
    owned = ",".join([*bounds, f"uid={uid}", f"gid={gid or uid}", "mode=0755"])
    shared = ",".join([*bounds, "mode=1777"])
    paths = SandboxPaths()
    return {
        **{place: owned for place in (paths.code, paths.submission, AGENT_HOME)},
        **{place: shared for place in sticky},
    }


def _home_tmpfs(user: str, disk: str | None, inodes: int | None) -> dict[str, str]:
    """/home as the agent's own tmpfs, bounded like /home/code (MLE-bench's agents write
    there); the engine mounts it before the mounts inside it."""
    code = workspace_tmpfs(user, disk, inodes)[SandboxPaths().code]
    return {"/home": code}


def resolve_image(client: Any, tag: str | None) -> str:
    """The image to run: `tag`, else $MLE_GYM_IMAGE, else the pinned runtime's image
    (agent_runtime.py), else the full image, else the offline one."""
    variable = None if tag else os.environ.get("MLE_GYM_IMAGE")
    wanted = tag or variable
    candidates = [wanted] if wanted else [runtime_image(), DEFAULT_IMAGE, OFFLINE_IMAGE]
    for candidate in candidates:
        try:
            client.images.get(candidate)
            return candidate
        except ImageNotFound:
            continue
    missing = f"Docker image {' or '.join(candidates)} not found"
    if variable and variable not in (DEFAULT_IMAGE, OFFLINE_IMAGE):  # not a tag we build
        raise SandboxError(
            f"{missing} ($MLE_GYM_IMAGE chose it). Build or pull that tag, or unset "
            "MLE_GYM_IMAGE to run mle_gym's own image."
        )
    if variable:
        missing += " ($MLE_GYM_IMAGE chose it)"
    raise SandboxError(
        f"{missing}. Build it with `mle-gym build-image` (needs a registry) or "
        "`mle-gym build-image --offline` (Debian packages only)."
    )


class DockerSandbox(ShellBackedSandbox):
    """A container per episode; every limit has a safe default and can be changed.

    `memory` "auto": one episode's share of the host (host_limits.py); `cpus` "auto": every
    core this process may use; `user` ("uid:gid"), default: a uid of the sandbox's own;
    `runtime`: the engine's OCI runtime to run the container with, e.g. "runsc" (gVisor,
    docker_runtime.py), default: $MLE_GYM_DOCKER_RUNTIME, else the engine's default.
    """

    def __init__(
        self,
        image: str | None = None,
        memory: str | int | None = "auto",
        cpus: float | str | None = "auto",
        pids_limit: int | None = 1024,
        shm_size: str | None = "2g",
        gpus: GpuSpec = None,
        user: str | None = None,
        disk: str | None = DEFAULT_DISK,
        network_name: str | None = None,
        files: int = DEFAULT_FILES,
        runtime: str | None = None,
    ) -> None:
        self.client = connect()
        self.image = resolve_image(self.client, image)
        self.runtime = chosen_runtime(runtime)
        self._registered = registration(self.client, self.runtime) if self.runtime else {}
        if memory == "auto":
            memory = f"{episode_limits(1).sandbox_memory // MIB}m"
        self.memory = memory
        self.cpus = host_cpus() if cpus == "auto" else float(cpus) if cpus is not None else None
        self.pids_limit = pids_limit
        self.shm_size = shm_size
        self.gpus = gpus
        self.device_requests = device_requests(gpus)
        self.user = user
        self._chosen_user = user
        self._uid_lease: UidLease | None = None
        self.disk = disk
        self.files = int(files)
        self._writable_home = False
        #: With network=True: a Docker network of the user's to join instead of the default
        #: bridge (which reaches every host service bound to 0.0.0.0), e.g. one made with
        #: `docker network create --internal` or one behind the user's own firewall rules.
        self.network_name = network_name
        if network_name is not None:
            try:
                self.client.networks.get(network_name)
            except NotFound:
                raise SandboxError(
                    f"no Docker network named {network_name!r}; create it first, e.g. "
                    f"`docker network create --internal {network_name}`"
                ) from None
        self._check_gpus()
        self.paths = SandboxPaths()
        self.container: Any = None
        self._stopped_note: str | None = None
        self.shell: ShellSession | None = None
        self.host_dir: Path | None = None
        self._env: dict[str, str] = {}
        global _garbage_collected
        if not _garbage_collected:
            _garbage_collected = True
            containers.collect_garbage(self.client)

    def _check_gpus(self) -> None:
        """Refuse now what every start would refuse: GPUs from an engine that cannot give
        them (no NVIDIA Container Toolkit). A throwaway container asks for the same devices,
        once per process and request; the engine only checks them when a container starts."""
        key = f"{self.image}|{self.gpus!r}"
        if not self.device_requests or key in _gpus_given:
            return
        probe = None
        try:
            probe = self.client.containers.create(
                self.image,
                ["true"],
                labels=containers.owner_labels("gpu-check"),
                network_mode="none",
                read_only=True,
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                device_requests=self.device_requests,
                runtime=self.runtime,
            )
            probe.start()
            probe.wait(timeout=_IO_TIMEOUT)
        except APIError as exc:
            raise SandboxError(
                f"the Docker engine cannot give the sandbox the GPUs it asks for (gpus="
                f"{self.gpus!r}): {exc.explanation or exc}. Install the NVIDIA Container "
                "Toolkit and restart the engine, or leave gpus out"
            ) from None
        finally:
            if probe is not None:
                with contextlib.suppress(APIError):
                    _remove(probe)
        _gpus_given.add(key)

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self, spec: SandboxSpec) -> None:
        self.stop()
        check_network(self.runtime, self._registered, spec.network)
        sweep_once()
        self.host_dir = owned_dir("docker")
        self._writable_home = spec.writable_home
        logs = self.logs_dir = self.host_dir / "logs"
        logs.mkdir()
        logs.chmod(0o755)
        self._env = shell_environment(home=AGENT_HOME, path=None, extra=spec.env)
        names = self._take_user()
        episode = uuid.uuid4().hex[:12]
        options: dict[str, Any] = dict(
            image=self.image,
            command=["sleep", "infinity"],
            name=f"mle-gym-{os.getpid()}-{episode}",
            init=True,
            # the keeper runs as root (no capabilities): the agent cannot kill it
            user="0:0",
            working_dir=self.paths.code,
            hostname="sandbox",
            environment=self._env,
            labels=containers.owner_labels(episode),
            network_mode=(self.network_name or "bridge") if spec.network else "none",
            volumes={
                **_data_volumes(spec, self.paths.data),
                str(logs): {"bind": self.paths.logs, "mode": "ro"},
                **{str(b.source.resolve()): {"bind": b.target, "mode": "ro"} for b in spec.binds},
                **names,
            },
            read_only=True,
            tmpfs={
                **workspace_tmpfs(self.user, self.disk, self.files),
                **(_home_tmpfs(self.user, self.disk, self.files) if spec.writable_home else {}),
                # files beside the public data: a root-owned tmpfs of read-only binds
                **({self.paths.data: "size=1m,mode=0755"} if spec.data_files() else {}),
            },
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            privileged=False,
            pids_limit=self.pids_limit,
            shm_size=self.shm_size,
            device_requests=self.device_requests or None,
            runtime=self.runtime,
        )
        if self.memory:
            options.update(mem_limit=self.memory, memswap_limit=self.memory)
        if self.cpus:
            options["nano_cpus"] = int(self.cpus * 1e9)
        # Created, tracked, then started: a start that fails (e.g. no GPU runtime) must not
        # leave the created container behind.
        try:
            with _STARTS:
                self.container = self.client.containers.create(**options)
                containers.track(self.container)
                self.container.start()
        except APIError as exc:
            self.stop()
            raise SandboxError(f"could not start a container from {self.image}: {exc}") from exc
        self.shell = ShellSession(self._spawn_shell, _ContainerJobControl(self), self._recover)
        self.shell.start()
        self._oom_kills = 0  # a new container's memory cgroup has killed nothing yet

    def _take_user(self) -> dict[str, dict[str, str]]:
        """The agent's "uid:gid": the given one, or a leased uid of its own. A leased uid
        is not in the image's /etc/passwd, so passwd and group files naming it as `agent`
        are mounted over the image's (binds for `volumes`)."""
        if self._chosen_user is not None:
            self.user = self._chosen_user
            return {}
        assert self.host_dir is not None
        self._uid_lease = lease_uid()
        uid = self._uid_lease.uid
        self.user = f"{uid}:{uid}"
        self._env.update(USER="agent", LOGNAME="agent")
        files = {
            "passwd": f"root:x:0:0:root:/root:/bin/bash\nagent:x:{uid}:{uid}:agent:/home/agent:"
            "/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
            "group": f"root:x:0:\nagent:x:{uid}:\nnogroup:x:65534:\n",
        }
        for name, text in files.items():
            (self.host_dir / name).write_text(text)
            (self.host_dir / name).chmod(0o644)
        return {str(self.host_dir / n): {"bind": f"/etc/{n}", "mode": "ro"} for n in files}

    def _exec_create(self, argv: list[str], **options: Any) -> str:
        """An exec in the container, started again first if something stopped it."""
        try:
            return self.client.api.exec_create(self.container.id, argv, **options)["Id"]
        except APIError as exc:
            if exc.status_code != 409:  # 409: the container is not running
                raise
            self._stopped_note = self._why_stopped()
            self.container.start()
            return self.client.api.exec_create(self.container.id, argv, **options)["Id"]

    def _why_stopped(self) -> str:
        """What the next command's result says of a container found stopped: under gVisor a
        memory overrun ends the whole sandbox, which only the engine's record shows."""
        self.container.reload()
        state = self.container.attrs.get("State") or {}
        oom = state.get("OOMKilled")
        cause = f"out of memory, limit {self.memory}" if oom else f"exit {state.get('ExitCode')}"
        return (
            f"the sandbox had stopped ({cause}) and was started again: its writable places "
            "(/home/code, /home/submission, /tmp, the home folder) start empty"
        )

    def _after_run(self, result: CommandResult) -> CommandResult:
        result = super()._after_run(result)
        if self._stopped_note is not None:
            result.add_note(self._stopped_note)
            self._stopped_note = None
        return result

    def _spawn_shell(self) -> tuple[fdspawn, OutputPipe]:
        pipe = self._open_output_pipe()
        try:
            exec_id = self._exec_create(
                _SHELL,
                stdin=True,
                tty=True,
                user=self.user,
                workdir=self.paths.code,
                environment=self._env,
            )
            return fdspawn(self._exec_socket(exec_id, tty=True)), pipe
        except BaseException:
            pipe.close()
            raise

    def _open_output_pipe(self) -> OutputPipe:
        """A FIFO in the container, copied to the host by a tty-less exec of `cat`.

        `cat` opens the FIFO for reading only, so it ends once the shell and every process
        that inherited the writing end are gone; the shell unlinks the name once it holds it.
        """
        fifo = f"/tmp/.mle-gym-output-{secrets.token_hex(8)}"
        exec_id = self._exec_create(
            ["sh", "-c", f"mkfifo -m 600 {fifo} && printf R && exec cat {fifo}"],
            stdout=True,
            stderr=True,
            user=self.user,
        )
        fd = self._exec_socket(exec_id, tty=False)
        frames = _Frames()
        ready = b""
        while not ready:  # the FIFO exists once "R" arrives
            if not fd_wait.readable([fd], _IO_TIMEOUT):
                os.close(fd)
                raise SandboxError("the sandbox's output pipe did not open")
            chunk = os.read(fd, 64)
            if not chunk:
                os.close(fd)
                raise SandboxError("the sandbox's output pipe could not be made")
            ready = frames(chunk)
        return OutputPipe(fd, f"exec {OUTPUT_FD}>{fifo}; rm -f {fifo}", frames)

    def _exec_socket(self, exec_id: str, *, tty: bool) -> int:
        """The started exec's connection as a descriptor of our own."""
        sock = self.client.api.exec_start(exec_id, socket=True, tty=tty)
        raw = getattr(sock, "_sock", sock)
        # pexpect (or the output pipe) gets a descriptor of its own and closes it; the SDK's
        # objects close theirs, so the connection ends exactly when the session is closed.
        fd = os.dup(raw.fileno())
        raw.close()
        sock.close()
        return fd

    def _kill_all_processes(self) -> None:
        """Kill every process of the agent (files stay) so a new shell can start.

        With every process slot taken not even `kill` could start, so the pids limit is
        raised for the moment it takes; the container itself keeps running, and with it
        the tmpfs workspace.
        """
        try:
            if self.pids_limit is not None:
                self._set_pids_limit(self.pids_limit + 64)
            self.container.exec_run(["kill", "-KILL", "-1"], user=self.user)
            if self.pids_limit is not None:
                self._set_pids_limit(self.pids_limit)
        except APIError:
            self.container.restart(timeout=0)  # last resort: the tmpfs workspace goes with it

    def kill_processes(self) -> None:
        """Every process of the agent's user (the root keeper stays), and the shell."""
        self._kill_all_processes()
        if self.shell is not None:
            self.shell.close()

    def _set_pids_limit(self, limit: int) -> None:
        # The engine's update endpoint takes PidsLimit; the SDK's update() does not expose it.
        api = self.client.api
        url = api._url("/containers/{0}/update", self.container.id)
        api._raise_for_status(api._post_json(url, data={"PidsLimit": limit}))

    def agent_identity(self) -> AgentIdentity:
        """`user`'s ids as the host sees them (through the container's id maps, where the
        engine remaps users), and the container's first process."""
        if self.container is None:
            raise SandboxError("the sandbox is not started")
        if is_gvisor(self._registered):
            raise SandboxError(
                f"the agent runs in gVisor's own kernel (runtime {self.runtime!r}), which "
                "neither connects to the host's unix sockets nor shows the host its processes, "
                "so the harness's model proxy and MLE-bench's validation route cannot be "
                "offered to it: run harness and task='mlebench' episodes on the default runtime"
            )
        self.container.reload()
        pid = int(self.container.attrs["State"]["Pid"])
        uid, _, gid = self.user.partition(":")
        if not (uid + gid).isdigit():
            raise SandboxError(f"the agent's user {self.user!r} is not numeric ids")
        return AgentIdentity(
            _host_id(pid, "uid_map", int(uid)), _host_id(pid, "gid_map", int(gid or uid)), pid
        )

    def stop(self) -> None:
        """Remove the container and the host files. Total: a step that fails is logged
        (the container stays labelled for `mle-gym gc`) and the others still run."""
        if self.shell is not None:
            attempt("stopping the shell", self.shell.stop)
            self.shell = None
        removed = True
        if self.container is not None:
            container = self.container
            removed = attempt("removing the container", lambda: _remove(container))
            if removed:
                containers.untrack(container)
            self.container = None
        if self._uid_lease is not None and removed:  # every process of the uid is gone
            self._uid_lease.release()
            self._uid_lease = None
        if self.host_dir is not None:
            discard(self.host_dir)
            self.host_dir = None
        self.logs_dir = None

    # -- files, through execs of their own as the agent ----------------------------------------
    def _run_exec(self, argv: list[str], stdin: bytes | None = None) -> tuple[int, bytes, bytes]:
        exec_id = self._exec_create(
            ["timeout", str(_IO_TIMEOUT), *argv],
            stdin=stdin is not None,
            user=self.user,
            environment={"PATH": _PATH},
        )
        if stdin is None:
            out, err = self.client.api.exec_start(exec_id, demux=True)
        else:
            sock = self.client.api.exec_start(exec_id, socket=True)
            raw = getattr(sock, "_sock", sock)
            raw.setblocking(True)
            raw.sendall(stdin)
            raw.shutdown(socket.SHUT_WR)
            chunks = []
            while chunk := raw.recv(1 << 16):
                chunks.append(chunk)
            sock.close()
            out, err = _demux(b"".join(chunks))
        code = self.client.api.exec_inspect(exec_id)["ExitCode"]
        return int(code if code is not None else -1), out or b"", err or b""

    def stat_file(self, path: str) -> FileInfo | None:
        code, out, _ = self._run_exec(["stat", "-L", "-c", "%F|%s|%i:%s:%.9Y:%.9Z", "--", path])
        if code != 0:
            return None
        kind, size, stamp = [*out.decode(errors="replace").strip().split("|"), "", ""][:3]
        mapped = {"directory": "dir", "regular file": "file", "regular empty file": "file"}
        return FileInfo(mapped.get(kind, "other"), int(size) if size.isdigit() else 0, stamp)

    @staticmethod
    def _refusal(code: int, path: str, err: bytes) -> SandboxFileError:
        reasons = {
            _NOT_THERE: f"{path} does not exist",
            _A_DIRECTORY: f"{path} is a directory",
            _NOT_REGULAR: f"{path} is not a regular file",
        }
        return SandboxFileError(reasons.get(code) or f"{path}: {_last_line(err) or 'failed'}")

    def read_file(self, path: str, max_bytes: int) -> bytes:
        code, out, err = self._run_exec(["sh", "-c", _READ_SCRIPT, "sh", path, str(max_bytes + 1)])
        if code != 0:
            raise self._refusal(code, path, err)
        if len(out) > max_bytes:
            raise SandboxFileError(f"{path} is over the {max_bytes:,}-byte limit")
        return out

    def write_file(self, path: str, data: bytes) -> None:
        code, _, err = self._run_exec(["sh", "-c", _WRITE_SCRIPT, "sh", path], stdin=data)
        if code != 0:
            error = self._refusal(code, path, err)
            raise SandboxFileError(f"could not write {path}: {error}")

    def copy_out(self, path: str, dest: Path, max_bytes: int) -> bool:
        """Streamed to `dest`: a submission can be far larger than what is held in memory."""
        exec_id = self._exec_create(
            ["timeout", str(_IO_TIMEOUT), "sh", "-c", _READ_SCRIPT, "sh", path, str(max_bytes + 1)],
            user=self.user,
            environment={"PATH": _PATH},
        )
        total, err = 0, bytearray()
        with open(dest, "wb") as out:
            for chunk, error in self.client.api.exec_start(exec_id, stream=True, demux=True):
                err += error or b""
                if chunk:
                    total += len(chunk)
                    if total > max_bytes:
                        raise SandboxFileError(f"{path} is over the {max_bytes:,}-byte limit")
                    out.write(chunk)
        code = self.client.api.exec_inspect(exec_id)["ExitCode"]
        if code == _NOT_THERE:
            return False
        if code != 0:
            raise self._refusal(code, path, bytes(err))
        return True

    def copy_files(
        self, root: str, names: list[str], dest: Path, max_file_bytes: int, max_bytes: int,
        deadline: float,
    ) -> dict[str, str]:  # fmt: skip
        """All in one exec (one each would cost a round trip per file): the archive is read
        back bounded, and only regular members under the names asked for and within the
        bounds are written, each under its own name below `dest`."""
        left = deadline - time.monotonic()
        if not names or left <= 0:
            return dict.fromkeys(names, LATE)
        archive, cut = self._archive(root, names, max_bytes, left)

        def write(name: str, data: IO[bytes]) -> None:
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with open(target, "wb") as out:
                    shutil.copyfileobj(data, out)
            except BaseException:
                target.unlink(missing_ok=True)
                raise

        return _unpack(archive, set(names), write, (max_file_bytes, max_bytes), cut)

    def read_files(
        self, root: str, names: list[str], max_file_bytes: int, max_bytes: int,
        deadline: float,
    ) -> tuple[dict[str, bytes], dict[str, str]]:  # fmt: skip
        """The archive `copy_files` reads, its members kept in memory rather than written
        out: a checkpoint stores each content once, so an unchanged file costs no write."""
        left = deadline - time.monotonic()
        if not names or left <= 0:
            return {}, dict.fromkeys(names, LATE)
        archive, cut = self._archive(root, names, max_bytes, left)
        contents: dict[str, bytes] = {}

        def keep(name: str, data: IO[bytes]) -> None:
            contents[name] = data.read()

        missed = _unpack(archive, set(names), keep, (max_file_bytes, max_bytes), cut)
        return contents, missed

    def _archive(
        self, root: str, names: list[str], max_bytes: int, left: float
    ) -> tuple[bytes, bool]:
        """A tar stream of `names` under `root`, made as the agent, read back up to its bound
        (`max_bytes` and the headers); whether it was cut (at the bound or the time limit)."""
        exec_id = self._exec_create(
            ["timeout", str(max(1, int(min(left, _IO_TIMEOUT)))), "sh", "-c", _TAR_SCRIPT, "sh",
             root],
            stdin=True,
            user=self.user,
            environment={"PATH": _PATH},
        )  # fmt: skip
        cap = max_bytes + _TAR_OVERHEAD * (len(names) + 4)
        sock = self.client.api.exec_start(exec_id, socket=True)
        frames, archive = _Frames(), bytearray()
        raw = getattr(sock, "_sock", sock)
        raw.settimeout(_IO_TIMEOUT + 10)
        listed = b"".join(n.encode(errors="surrogateescape") + b"\0" for n in names)

        def send() -> None:
            with contextlib.suppress(OSError):  # the stream broke off: the reader says so
                raw.sendall(listed)
                raw.shutdown(socket.SHUT_WR)

        # The names go in while the archive comes out: `tar` writes as it reads them, so
        # sending them all before reading would stall both once the pipes fill (100,000
        # names did).
        sender = threading.Thread(target=send, name="mle-gym-tar-names", daemon=True)
        try:
            sender.start()
            while len(archive) <= cap and (chunk := raw.recv(1 << 16)):
                archive += frames(chunk)
        except OSError:
            cap = len(archive) - 1  # the stream broke off: what came is all there is
        finally:
            with contextlib.suppress(OSError):  # a sender still blocked gets its error now
                raw.shutdown(socket.SHUT_RDWR)
            sock.close()
            sender.join()
        code = self.client.api.exec_inspect(exec_id)["ExitCode"]
        cut = len(archive) > cap or code in (None, 124)  # still running, or timed out
        return bytes(archive[:cap]), cut

    def list_files(self, root: str, max_files: int) -> tuple[list[tuple[str, int]], bool]:
        _, out, _ = self._run_exec(["sh", "-c", _LIST_SCRIPT, "sh", root, str(max_files + 1)])
        found = []
        for record in out.split(b"\0"):
            name, _, size = record.decode(errors="surrogateescape").rpartition("\t")
            if name and size.isdigit():
                found.append((name, int(size)))
        return found[:max_files], len(found) > max_files

    def writable_places(self) -> tuple[str, ...]:
        home = ("/home",) if self._writable_home else ()
        return (*home, self.paths.code, self.paths.submission, AGENT_HOME, "/tmp")

    def list_tree(self, root: str, max_entries: int) -> tuple[list[TreeEntry], bool]:
        count = str(_TREE_FIELDS * (max_entries + 2))
        _, out, _ = self._run_exec(["sh", "-c", _TREE_SCRIPT, "sh", root, count])
        fields = out.split(b"\0")
        records = [fields[i : i + _TREE_FIELDS] for i in range(0, len(fields) - 1, _TREE_FIELDS)]
        if not records or len(records[0]) < _TREE_FIELDS or records[0][4]:
            return [], False
        device = records[0][3]
        found = []
        for kind, mode, size, dev, name, target in (r for r in records[1:] if len(r) == 6):
            if dev != device or not mode.isdigit() or not size.isdigit():
                continue  # another mount (its mount point included)
            entry_kind = _TREE_KINDS.get(kind.decode(errors="replace"), "other")
            found.append(
                TreeEntry(
                    name.decode(errors="surrogateescape"),
                    entry_kind,
                    int(mode, 8),
                    int(size) if entry_kind == "file" else 0,
                    target.decode(errors="surrogateescape") if entry_kind == "symlink" else None,
                )
            )
        found.sort(key=lambda e: e.path)
        return found[:max_entries], len(found) > max_entries

    def put_tree(
        self, root: str, entries: list[TreeEntry], source: Callable[[TreeEntry], Path]
    ) -> dict[str, str]:
        """One exec of the image's tar as the agent, fed an archive built here of only
        regular files, folders and symlinks (symlinks last), permission bits only. tar
        would follow a link already in the place, so an entry below one is left out; the
        place is listed just before (a fresh sandbox runs nothing of the agent's yet)."""
        present, _ = self.list_tree(root, len(entries) + 1024)
        links = {e.path for e in present if e.kind != "dir"}
        missed = {e.path: "below a link or file already there" for e in entries
                  if _below(e.path, links)}  # fmt: skip
        entries = [e for e in entries if e.path not in missed]
        exec_id = self._exec_create(
            ["timeout", str(_IO_TIMEOUT * 10), "sh", "-c", _UNTAR_SCRIPT, "sh", root],
            stdin=True,
            user=self.user,
            environment={"PATH": _PATH},
        )
        order = ("dir", "file", "symlink")
        sock = self.client.api.exec_start(exec_id, socket=True)
        chunks = []
        try:
            raw = getattr(sock, "_sock", sock)
            raw.setblocking(True)
            try:
                _send_archive(raw, sorted(entries, key=lambda e: (order.index(e.kind), e.path)),
                              source)  # fmt: skip
            except BrokenPipeError:
                pass  # tar stopped reading: its complaint comes back below
            raw.shutdown(socket.SHUT_WR)
            while chunk := raw.recv(1 << 16):
                chunks.append(chunk)
        finally:
            sock.close()
        _, err = _demux(b"".join(chunks))
        code = self.client.api.exec_inspect(exec_id)["ExitCode"]
        if code != 0:
            raise SandboxFileError(f"could not write into {root}: {_last_line(err) or code}")
        return missed

    # -- the checks after each command (shell_backed.py) -------------------------------------
    def _slots_exhausted(self) -> bool:
        if self.pids_limit is None:
            return False
        try:
            code, output = self.container.exec_run(["sh", "-c", "ls /proc | grep -c '^[0-9]'"])
        except APIError:
            return True  # not even one more process could start
        text = output.decode(errors="replace").strip()
        return code != 0 or not text.isdigit() or int(text) >= self.pids_limit - 8

    def _oom_kill_count(self) -> int:
        """The container's count of processes killed for memory (cgroup v2 or v1)."""
        probe = (
            "cat /sys/fs/cgroup/memory.events 2>/dev/null || "
            "cat /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null"
        )
        _code, output = self.container.exec_run(["sh", "-c", probe], user=self.user)
        for line in output.decode(errors="replace").splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
        return 0

    def _memory_limit(self) -> str | None:
        return self.memory

    def lost(self) -> bool:
        if self.container is None:
            return False
        try:
            self.container.reload()
        except NotFound:
            return True
        except Exception:  # the engine is unreachable: not known to be gone
            return False
        return False

    def describe(self) -> dict:
        return {
            "backend": "docker",
            "isolation": "container",
            "container_runtime": self.runtime or "default",
            "image": self.image,
            "gpus": self.gpus,
            "memory": self.memory,
            "cpus": self.cpus,
            "pids_limit": self.pids_limit,
        }


class _ContainerJobControl:
    """Finds the shell's foreground job from inside the container (the tty is there, not on
    the host) and kills its process group with an exec, since Docker cannot kill an exec'd
    process from outside."""

    def __init__(self, sandbox: DockerSandbox) -> None:
        self.sandbox = sandbox

    def foreground_group(self, shell: ShellSession) -> int | None:
        if shell.shell_pid is None:
            return None
        code, output = self.sandbox.container.exec_run(
            ["sh", "-c", f"cut -d' ' -f8 /proc/{shell.shell_pid}/stat"], user=self.sandbox.user
        )
        text = output.decode(errors="replace").strip()
        return int(text) if code == 0 and text.lstrip("-").isdigit() else None

    def signal_group(self, shell: ShellSession, group: int, signum: int) -> None:
        # bash's builtin: dash's and procps' kill reject `--` before a negative group id
        self.sandbox.container.exec_run(
            ["bash", "-c", f"kill -{int(signum)} -- -{int(group)}"], user=self.sandbox.user
        )


def _data_volumes(spec: SandboxSpec, data: str) -> dict[str, dict[str, str]]:
    """The public data at `data` and the spec's files, all read-only. With files beside the
    data, each public entry is bound on its own into a tmpfs at `data` (a file bound into
    the read-only public folder would have to be created there)."""
    volumes = {str(f.source.resolve()): {"bind": f.target, "mode": "ro"} for f in spec.files}
    if not spec.data_files():
        volumes[str(spec.public_dir.resolve())] = {"bind": data, "mode": "ro"}
        return volumes
    for entry in public_entries(spec.public_dir.resolve()):
        volumes[str(entry)] = {"bind": f"{data}/{entry.name}", "mode": "ro"}
    return volumes


def _host_id(pid: int, kind: str, inner: int) -> int:
    """What id `inner` of `pid`'s user namespace is on the host (`kind`: uid_map, gid_map)."""
    for line in Path(f"/proc/{pid}/{kind}").read_text().splitlines():
        start, outside, count = (int(field) for field in line.split())
        if start <= inner < start + count:
            return outside + inner - start
    raise SandboxError(f"id {inner} is not mapped in {kind} of process {pid}")


def _remove(container: Any) -> None:
    with contextlib.suppress(NotFound):
        container.remove(force=True)


def _unpack(
    archive: bytes,
    wanted: set[str],
    keep: Callable[[str, IO[bytes]], None],
    bounds: tuple[int, int],
    cut: bool,
) -> dict[str, str]:
    """Hand `keep` each regular member of a tar stream named in `wanted`, within the bounds
    (bytes a file, bytes in all); why each wanted name was not kept. A stream `cut` at its
    bound keeps what came before the cut."""
    missed: dict[str, str] = {}
    written: set[str] = set()
    max_file_bytes, left = bounds
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r|") as members:
            for member in members:
                name = posixpath.normpath(member.name)
                if name not in wanted or name in written or name in missed:
                    continue
                if not member.isreg():
                    missed[name] = "not a regular file when copied"
                elif member.size > min(max_file_bytes, left):
                    missed[name] = f"{member.size:,} bytes when copied: over the bound"
                else:
                    with members.extractfile(member) as data:
                        keep(name, data)
                    written.add(name)
                    left -= member.size
    except (tarfile.TarError, EOFError, OSError):
        pass  # cut at the bound or the time limit: the names after it are reported below
    for name in wanted - written - set(missed):
        missed[name] = CUT if cut else GONE
    return missed


#: Why a file was left when the archive of many was cut at its byte or time bound.
CUT = "the copy of many files was cut at its bound: listed, not copied"


def _below(path: str, names: set[str]) -> bool:
    """Some folder above `path` is one of `names`."""
    parent = posixpath.dirname(path)
    while parent:
        if parent in names:
            return True
        parent = posixpath.dirname(parent)
    return False


class _SocketFile:
    """A socket as the writable file `tarfile` streams to."""

    def __init__(self, raw: socket.socket) -> None:
        self.raw = raw

    def write(self, data: bytes) -> int:
        self.raw.sendall(data)
        return len(data)


def _send_archive(
    raw: socket.socket, entries: list[TreeEntry], source: Callable[[TreeEntry], Path]
) -> None:
    with tarfile.open(fileobj=_SocketFile(raw), mode="w|", format=tarfile.PAX_FORMAT) as tar:
        for entry in entries:
            info = tarfile.TarInfo(entry.path)
            info.mode = entry.mode & 0o777
            if entry.kind == "dir":
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif entry.kind == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, entry.target or ""
                tar.addfile(info)
            else:
                with open(source(entry), "rb") as data:
                    info.size = os.fstat(data.fileno()).st_size
                    tar.addfile(info, data)


def _demux(stream: bytes) -> tuple[bytes, bytes]:
    """Split Docker's multiplexed exec stream (8-byte frame headers) into stdout, stderr."""
    out, err, at = bytearray(), bytearray(), 0
    while at + 8 <= len(stream):
        kind, length = stream[at], int.from_bytes(stream[at + 4 : at + 8], "big")
        frame = stream[at + 8 : at + 8 + length]
        (err if kind == 2 else out).extend(frame)
        at += 8 + length
    return bytes(out), bytes(err)


class _Frames:
    """Docker's multiplexed exec stream, unframed as it arrives (headers may be split)."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._left = 0  # payload bytes still due in the current frame

    def __call__(self, data: bytes) -> bytes:
        self._buffer += data
        out = bytearray()
        while self._buffer:
            if self._left:
                take = self._buffer[: self._left]
                out += take
                del self._buffer[: len(take)]
                self._left -= len(take)
            elif len(self._buffer) >= 8:
                self._left = int.from_bytes(self._buffer[4:8], "big")
                del self._buffer[:8]
            else:
                break
        return bytes(out)


def _last_line(data: bytes) -> str:
    lines = data.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else ""
