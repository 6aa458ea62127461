"""The Docker backend: one container per episode, driven through the Docker SDK.

The container runs as the image's unprivileged user with no capabilities, no network
(unless asked), and memory, CPU, pids and shm limits. The public data is bind-mounted
read-only at /home/data and the host-written logs at /home/logs; /home/code and
/home/submission live in the container, so removing it removes them. The persistent shell
is a `docker exec` with a tty whose socket pexpect drives, exactly like the local pty.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

from docker.errors import APIError, ImageNotFound, NotFound
from pexpect.fdpexpect import fdspawn

from mle_gym.sandbox import containers
from mle_gym.sandbox.base import CommandResult, SandboxError, SandboxPaths, SandboxSpec
from mle_gym.sandbox.engine import connect
from mle_gym.sandbox.gpus import GpuSpec, device_requests
from mle_gym.sandbox.image import DEFAULT_IMAGE, OFFLINE_IMAGE
from mle_gym.sandbox.scratch import owned_dir, sweep_once
from mle_gym.sandbox.shell import ShellSession
from mle_gym.sandbox.shell_backed import ShellBackedSandbox

_SHELL = ["bash", "--noprofile", "--norc", "--noediting", "-i"]
_garbage_collected = False


def resolve_image(client: Any, tag: str | None) -> str:
    """The image to run: `tag`, else $MLE_GYM_IMAGE, else the full image, else the offline one."""
    wanted = tag or os.environ.get("MLE_GYM_IMAGE")
    candidates = [wanted] if wanted else [DEFAULT_IMAGE, OFFLINE_IMAGE]
    for candidate in candidates:
        try:
            client.images.get(candidate)
            return candidate
        except ImageNotFound:
            continue
    raise SandboxError(
        f"Docker image {' or '.join(candidates)} not found. Build it with `mle-gym build-image` "
        "(needs a registry) or `mle-gym build-image --offline` (Debian packages only)."
    )


class DockerSandbox(ShellBackedSandbox):
    """A container per episode; every limit has a safe default and can be changed."""

    def __init__(
        self,
        image: str | None = None,
        memory: str | None = "16g",
        cpus: float | None = None,
        pids_limit: int | None = 1024,
        shm_size: str | None = "2g",
        gpus: GpuSpec = None,
        user: str = "1000:1000",
    ) -> None:
        self.client = connect()
        self.image = resolve_image(self.client, image)
        self.memory = memory
        self.cpus = cpus
        self.pids_limit = pids_limit
        self.shm_size = shm_size
        self.gpus = gpus
        self.device_requests = device_requests(gpus)
        self.user = user
        self.paths = SandboxPaths()
        self.container: Any = None
        self.shell: ShellSession | None = None
        self.host_dir: Path | None = None
        self._env: dict[str, str] = {}
        self._oom_kills = 0
        global _garbage_collected
        if not _garbage_collected:
            _garbage_collected = True
            containers.collect_garbage(self.client)

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self, spec: SandboxSpec) -> None:
        self.stop()
        sweep_once()
        self.host_dir = owned_dir("docker")
        logs = self.logs_dir = self.host_dir / "logs"
        logs.mkdir()
        logs.chmod(0o755)
        self._env = {
            "HOME": "/home/agent",
            "TERM": "dumb",
            "LANG": "C.UTF-8",
            "PS1": "",
            "PYTHONUNBUFFERED": "1",
            "MPLBACKEND": "Agg",
            **spec.env,
        }
        episode = uuid.uuid4().hex[:12]
        options: dict[str, Any] = dict(
            image=self.image,
            command=["sleep", "infinity"],
            name=f"mle-gym-{os.getpid()}-{episode}",
            init=True,
            user=self.user,
            working_dir=self.paths.code,
            hostname="sandbox",
            environment=self._env,
            labels=containers.owner_labels(episode),
            network_mode="bridge" if spec.network else "none",
            volumes={
                str(spec.public_dir.resolve()): {"bind": self.paths.data, "mode": "ro"},
                str(logs): {"bind": self.paths.logs, "mode": "ro"},
            },
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            privileged=False,
            pids_limit=self.pids_limit,
            shm_size=self.shm_size,
            device_requests=self.device_requests or None,
        )
        if self.memory:
            options.update(mem_limit=self.memory, memswap_limit=self.memory)
        if self.cpus:
            options["nano_cpus"] = int(self.cpus * 1e9)
        # Created, tracked, then started: a start that fails (e.g. no GPU runtime) must not
        # leave the created container behind.
        try:
            self.container = self.client.containers.create(**options)
            containers.track(self.container)
            self.container.start()
        except APIError as exc:
            self.stop()
            raise SandboxError(f"could not start a container from {self.image}: {exc}") from exc
        self.shell = ShellSession(self._spawn_shell, _ContainerJobControl(self), self._restart)
        self.shell.start()
        self._oom_kills = self._read_oom_kills()

    def _spawn_shell(self) -> fdspawn:
        exec_id = self.client.api.exec_create(
            self.container.id,
            _SHELL,
            stdin=True,
            tty=True,
            user=self.user,
            workdir=self.paths.code,
            environment=self._env,
        )
        sock = self.client.api.exec_start(exec_id, socket=True, tty=True)
        raw = getattr(sock, "_sock", sock)
        # pexpect gets a descriptor of its own and closes it; the SDK's objects close theirs,
        # so the connection (and the shell) ends exactly when the session is closed.
        fd = os.dup(raw.fileno())
        raw.close()
        sock.close()
        return fdspawn(fd)

    def _restart(self) -> None:
        """Kill every process in the container (files stay) so a new shell can start."""
        self.container.restart(timeout=0)

    def stop(self) -> None:
        if self.shell is not None:
            self.shell.close()
            self.shell = None
        if self.container is not None:
            with contextlib.suppress(NotFound):
                self.container.remove(force=True)
            containers.untrack(self.container)
            self.container = None
        if self.host_dir is not None:
            shutil.rmtree(self.host_dir, ignore_errors=True)
            self.host_dir = None
        self.logs_dir = None

    # -- commands ---------------------------------------------------------------------------------
    def _after_run(self, result: CommandResult) -> CommandResult:
        self._note_oom(result)
        if result.timed_out and self._pids_exhausted():
            self._restart()
            self.shell.start()
            result.shell_restarted = True
            note = (
                f"the container ran out of process slots (pids limit {self.pids_limit}); "
                "all its processes were killed and a new shell started (files are kept)"
            )
            result.notes.append(note)
            result.output += f"\n[{note}]"
        return result

    def _pids_exhausted(self) -> bool:
        """True when (nearly) every process slot is taken, e.g. by a fork bomb."""
        if self.pids_limit is None:
            return False
        try:
            code, output = self.container.exec_run(["sh", "-c", "ls /proc | grep -c '^[0-9]'"])
        except APIError:
            return True  # not even one more process could start
        text = output.decode(errors="replace").strip()
        return code != 0 or not text.isdigit() or int(text) >= self.pids_limit - 8

    def _read_oom_kills(self) -> int:
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

    def _note_oom(self, result: CommandResult) -> None:
        if result.exit_code not in (137, None) and not result.shell_restarted:
            return
        kills = self._read_oom_kills()
        if kills > self._oom_kills:
            result.notes.append(f"killed: out of memory, limit {self.memory}")
            result.output += f"\n[killed: out of memory, limit {self.memory}]"
        self._oom_kills = kills

    def describe(self) -> dict:
        return {
            "backend": "docker",
            "isolation": "container",
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

    def kill_group(self, shell: ShellSession, group: int) -> None:
        # bash's builtin: dash's and procps' kill reject `--` before a negative group id
        self.sandbox.container.exec_run(
            ["bash", "-c", f"kill -KILL -- -{group}"], user=self.sandbox.user
        )
