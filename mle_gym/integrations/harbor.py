"""A Harbor environment provider on the Docker engine alone, for exported mle_gym tasks.

Harbor's own `docker` provider drives `docker compose` (v2), and for `no-network` it builds
and starts an egress-control sidecar from public images. Neither works on an engine without
the compose plugin or without a registry (Debian's Docker 20.10 with docker-compose 1.29
has no `docker compose`; an air-gapped cluster node has no registry). This provider needs
neither: it builds the task's Dockerfile with the Docker SDK (the exported Dockerfiles only
start FROM local images), applies the bind mounts of the task's docker-compose.yaml (the
public data, or the verifier's answers), and runs the container with no network at all
(`network_mode=none`, the kernel's guarantee rather than a firewall), the task's CPU,
memory and GPU limits, no new privileges, and mle_gym's container labels (so `mle-gym gc`
removes leftovers). Every place the agent's user can write (/home/code, /home/submission,
its home, /tmp, /var/tmp, /run/lock, Harbor's /logs) is a tmpfs bounded in bytes and files
as the docker backend's workspace is (`workspace_disk`, `workspace_inodes`), so an agent
fills neither the host's disk nor its inodes. Files move through `tar` in the container
(the engine's archive API cannot see tmpfs mounts), so nothing is mounted from Harbor's
trial directory; a download is streamed to a host file and refused past
`max_download_bytes` (default: the env's submission cap for the task's answers, plus room
for the archive's headers), so a huge artifact costs neither host memory nor disk.

    harbor trial start -p TASK_DIR -a oracle \\
        -e mle_gym.integrations.harbor:MleGymDockerEnvironment \\
        [--environment-kwarg workspace_disk=8g --environment-kwarg max_download_bytes=N]

Runs in Harbor's interpreter (Python >= 3.12, with mle_gym installed there).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import socket
import tarfile
import tempfile
from pathlib import Path, PurePosixPath
from typing import IO, Any

import docker
import yaml
from docker.errors import APIError, ImageNotFound, NotFound
from docker.utils.socket import frames_iter
from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.environments.capabilities import (
    EnvironmentCapabilities,
    EnvironmentResourceCapabilities,
)
from harbor.models.task.config import NetworkMode

from mle_gym.export.harbor import ANSWERS_DIR
from mle_gym.grading.submission_cap import MIN_SUBMISSION_CAP, submission_cap
from mle_gym.sandbox import containers
from mle_gym.sandbox.docker import AGENT_USER, DEFAULT_DISK, workspace_tmpfs
from mle_gym.sandbox.engine import connect
from mle_gym.sandbox.workspace import DEFAULT_FILES

IMAGE_REPOSITORY = "mle-gym-harbor"
_TIMED_OUT = 124  # coreutils `timeout`
#: Writable by anyone in the agent image, or made so by Harbor (its /logs/agent, ...).
_SHARED_PLACES = ("/tmp", "/var/tmp", "/run/lock", "/logs")
#: Room for the archive's headers above the submission cap (512 bytes a file, and padding).
_ARCHIVE_SLACK = 1 << 20


class DownloadTooLarge(OSError):
    """An artifact larger than the provider takes from a container."""


def _mounts(compose_file: Path, task: str) -> list[docker.types.Mount]:
    """The bind mounts of service `main` in a task's docker-compose.yaml (long or short form)."""
    if not compose_file.is_file():
        return []
    spec = yaml.safe_load(compose_file.read_text()) or {}
    volumes = ((spec.get("services") or {}).get("main") or {}).get("volumes") or []
    mounts = []
    for volume in volumes:
        if isinstance(volume, str):
            source, _, rest = volume.partition(":")
            target, _, mode = rest.partition(":")
            volume = {"type": "bind", "source": source, "target": target, "read_only": mode == "ro"}
        if volume.get("type") != "bind":
            raise ValueError(f"{compose_file}: only bind mounts are supported, got {volume!r}")
        source = Path(os.path.expandvars(str(volume["source"]))).expanduser()
        if not source.is_dir() and not source.is_file():
            raise FileNotFoundError(
                f"{source} (mounted at {volume['target']}) does not exist: prepare the data "
                f"first, e.g. `mle-gym prepare {task}`"
            )
        mounts.append(
            docker.types.Mount(
                str(volume["target"]), str(source), type="bind",
                read_only=bool(volume.get("read_only")),
            )
        )  # fmt: skip
    return mounts


def _bases(dockerfile: Path) -> list[str]:
    """The images a Dockerfile starts FROM (not its own earlier stages)."""
    bases, stages = [], set()
    for line in dockerfile.read_text().splitlines():
        words = line.split()
        if len(words) >= 2 and words[0].upper() == "FROM":
            if words[1] not in stages:
                bases.append(words[1])
            if len(words) >= 4 and words[2].upper() == "AS":
                stages.add(words[3])
    return bases


def _answers(task_dir: Path) -> Path | None:
    """The host directory of an exported task's answers (copied into tests/answers, or what
    tests/docker-compose.yaml mounts at /home/answers); None where neither is on this host."""
    copied = task_dir / "tests" / "answers"
    if copied.is_dir():
        return copied
    try:
        mounts = _mounts(task_dir / "tests" / "docker-compose.yaml", task_dir.name)
    except (OSError, ValueError, yaml.YAMLError):
        return None
    found = [Path(m["Source"]) for m in mounts if m["Target"] == ANSWERS_DIR]
    return found[0] if found and found[0].is_dir() else None


def _untar(archive: IO[bytes], dest: Path, strip: str) -> None:
    """Extract an engine archive of `strip` (its top entry) into `dest`."""
    with tarfile.open(fileobj=archive) as tar:
        members = []
        for member in tar.getmembers():
            rel = PurePosixPath(member.name).relative_to(strip)
            if str(rel) == ".":
                continue
            member.name = str(rel)
            members.append(member)
        tar.extractall(dest, members=members, filter="data")


class MleGymDockerEnvironment(BaseEnvironment):
    """One container per environment (agent or verifier), made with the Docker SDK."""

    def __init__(
        self,
        *args: Any,
        workspace_disk: str | None = DEFAULT_DISK,
        workspace_inodes: int | None = DEFAULT_FILES,
        max_download_bytes: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._client: docker.DockerClient | None = None
        self._container: Any = None
        self._built: str | None = None
        #: Bounds of each writable tmpfs (`--environment-kwarg` sets them), as the docker
        #: backend's `disk`; and the most bytes one download takes (None: from the task).
        self.workspace_disk = workspace_disk
        self.workspace_inodes = workspace_inodes
        self._max_download = max_download_bytes

    @staticmethod
    def type() -> str:
        return "mle-gym-docker"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return EnvironmentCapabilities(disable_internet=True, gpus=True)

    @classmethod
    def resource_capabilities(cls) -> EnvironmentResourceCapabilities:
        return EnvironmentResourceCapabilities(cpu_limit=True, memory_limit=True)

    def _validate_definition(self) -> None:
        if not (self.environment_dir / "Dockerfile").is_file() and not (
            self.task_env_config.docker_image
        ):
            raise FileNotFoundError(f"{self.environment_dir} has no Dockerfile")

    # -- lifecycle ----------------------------------------------------------------------------
    def _image(self, client: docker.DockerClient, force_build: bool) -> str:
        dockerfile = self.environment_dir / "Dockerfile"
        if not dockerfile.is_file():
            return str(self.task_env_config.docker_image)
        # The tag names the build context: small files by content, large ones (copied data)
        # by size and modification time, so a start does not read hundreds of GB.
        digest = hashlib.sha256()
        for path in sorted(p for p in self.environment_dir.rglob("*") if p.is_file()):
            stat = path.stat()
            digest.update(path.relative_to(self.environment_dir).as_posix().encode() + b"\0")
            small = stat.st_size < 1 << 20
            digest.update(
                path.read_bytes() if small else f"{stat.st_size}:{stat.st_mtime_ns}".encode()
            )
        tag = f"{IMAGE_REPOSITORY}:{digest.hexdigest()[:16]}"
        if not force_build:
            try:
                client.images.get(tag)
                return tag
            except ImageNotFound:
                pass
        for base in _bases(dockerfile):  # never a pull: say which local image is missing
            try:
                client.images.get(base)
            except ImageNotFound:
                raise RuntimeError(
                    f"{dockerfile} starts FROM {base}, which is not a local image: build it "
                    "(`mle-gym build-image`, or `mle-gym export harbor ... --build-grader` "
                    "for mle-gym-grader images)"
                ) from None
        client.images.build(path=str(self.environment_dir), tag=tag, rm=True, pull=False)
        self._built = tag
        return tag

    def _start(self, force_build: bool) -> None:
        client = self._client = connect()
        image = self._image(client, force_build)
        options: dict[str, Any] = dict(
            image=image,
            command=["sleep", "infinity"],
            detach=True,
            init=True,
            labels=containers.owner_labels(self.session_id),
            mounts=_mounts(self.environment_dir / "docker-compose.yaml", self.environment_name),
            network_mode=(
                "bridge" if self.network_policy.network_mode == NetworkMode.PUBLIC else "none"
            ),
            environment=self._startup_env(),
            tmpfs=workspace_tmpfs(
                AGENT_USER, self.workspace_disk, self.workspace_inodes, _SHARED_PLACES, True
            ),
            security_opt=["no-new-privileges"],
            cap_drop=["NET_RAW", "MKNOD", "AUDIT_WRITE", "SYS_CHROOT", "SETFCAP"],
            pids_limit=4096,
        )
        if self.task_env_config.workdir:
            options["working_dir"] = self.task_env_config.workdir
        if cpus := self._effective_cpus:
            options["nano_cpus"] = int(min(cpus, os.cpu_count() or cpus) * 1e9)
        if memory_mb := self._effective_memory_mb:
            options.update(mem_limit=f"{memory_mb}m", memswap_limit=f"{memory_mb}m")
        if gpus := self._effective_gpus:
            options["device_requests"] = [
                docker.types.DeviceRequest(count=gpus, capabilities=[["gpu"]])
            ]
        self._container = client.containers.run(**options)
        containers.track(self._container)

    async def start(self, force_build: bool) -> None:
        await asyncio.to_thread(self._start, force_build)
        # Harbor's log directories (/logs/agent, /logs/verifier, ...): nothing is mounted
        # from the trial directory, so they are made here and downloaded at the end.
        await self.ensure_dirs(self._mount_targets(writable_only=True))

    def _stop(self, delete: bool) -> None:
        if self._container is not None:
            try:
                self._container.remove(force=True)
            except NotFound:
                pass
            containers.untrack(self._container)
            self._container = None
        if delete and self._built is not None and self._client is not None:
            try:  # as Harbor's docker provider: a deleted environment takes its image along
                self._client.images.remove(self._built)
            except APIError:  # e.g. another trial of the same task still runs it
                pass
            self._built = None
        if self._client is not None:
            self._client.close()
            self._client = None

    async def stop(self, delete: bool) -> None:
        await asyncio.to_thread(self._stop, delete)

    @property
    def _running(self) -> Any:
        if self._container is None:
            raise RuntimeError(f"the {self.environment_name} environment is not running")
        return self._container

    # -- commands -----------------------------------------------------------------------------
    def _exec(
        self, command: str, cwd: str | None, env: dict[str, str] | None,
        timeout_sec: int | None, user: str | int | None,
    ) -> ExecResult:  # fmt: skip
        argv = ["bash", "-c", command]
        if timeout_sec:
            argv = ["timeout", "--kill-after=5", str(int(timeout_sec)), *argv]
        code, (out, err) = self._running.exec_run(
            argv,
            user="" if user is None else str(user),
            workdir=cwd or self.task_env_config.workdir,
            environment=env,
            demux=True,
        )
        if timeout_sec and code == _TIMED_OUT:
            raise RuntimeError(f"Command timed out after {timeout_sec} seconds")
        return ExecResult(
            stdout=(out or b"").decode(errors="replace"),
            stderr=(err or b"").decode(errors="replace"),
            return_code=int(code if code is not None else -1),
        )

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        return await asyncio.to_thread(
            self._exec, command, cwd, self._merge_env(env), timeout_sec, self._resolve_user(user)
        )

    # -- files --------------------------------------------------------------------------------
    # Files move through `tar` in the container, run by a fresh exec: the engine's archive
    # API reads and writes the image's layer, beneath the tmpfs mounts, so it would neither
    # see a submission nor put one where the verifier looks.
    @property
    def _api(self) -> Any:
        return self._running.client.api

    def _tar_exec(self, argv: list[str], *, stdin: bool) -> str:
        return self._api.exec_create(
            self._running.id, argv, stdin=stdin, stdout=True, stderr=True, user="root"
        )["Id"]

    def _finish(self, exec_id: str, what: str, errors: bytes, ok: tuple[int, ...] = (0,)) -> None:
        code = self._api.exec_inspect(exec_id)["ExitCode"]
        if code not in ok:
            lines = errors.decode(errors="replace").strip().splitlines()
            raise OSError(f"{what} failed (tar exited {code}): {lines[-1] if lines else ''}")

    def _put(self, source: Path, target: str) -> None:
        """Copy `source` (a file, or a directory's contents) to the path `target`.

        The archive is spooled to an unnamed host file and streamed in: an artifact passed
        on to the verifier is never held in memory."""
        dest = target if source.is_dir() else str(PurePosixPath(target).parent)
        with tempfile.TemporaryFile() as archive:
            with tarfile.open(fileobj=archive, mode="w") as tar:
                tar.add(source, arcname="." if source.is_dir() else PurePosixPath(target).name)
            archive.seek(0)
            script = 'mkdir -p -- "$1" && exec tar -C "$1" -xf -'
            exec_id = self._tar_exec(["sh", "-c", script, "sh", dest], stdin=True)
            sock = self._api.exec_start(exec_id, socket=True)
            raw = getattr(sock, "_sock", sock)
            try:
                raw.setblocking(True)
                while chunk := archive.read(1 << 20):
                    raw.sendall(chunk)
                raw.shutdown(socket.SHUT_WR)
                errors = b"".join(data for kind, data in frames_iter(raw, False) if kind == 2)
            finally:
                sock.close()
        self._finish(exec_id, f"copying {source} to {target}", errors[-4096:])

    def max_download_bytes(self) -> int:
        """The most one download may take: the env's submission cap for this task's answers
        (as the verifier refuses a larger submission unread), or set by the caller."""
        if self._max_download is None:
            answers = _answers(self.environment_dir.parent)
            cap = submission_cap(answers) if answers is not None else MIN_SUBMISSION_CAP
            self._max_download = cap + _ARCHIVE_SLACK
        return int(self._max_download)

    def _spool(self, source: str, archive: IO[bytes]) -> None:
        """Stream a tar archive of `source` into `archive` (a host file), refused once it
        passes `max_download_bytes`."""
        cap = self.max_download_bytes()
        path = PurePosixPath(source.rstrip("/") or "/")
        argv = ["tar", "-C", str(path.parent), "-cf", "-", "--", path.name]
        exec_id = self._tar_exec(argv, stdin=False)
        stream = self._api.exec_start(exec_id, stream=True, demux=True)
        total, errors = 0, b""
        try:
            for chunk, error in stream:
                errors = (errors + (error or b""))[-4096:]
                total += len(chunk or b"")
                if total > cap:
                    reason = (
                        f"{source} is over the {cap:,}-byte download limit (the task's "
                        "submission cap; --environment-kwarg max_download_bytes=N changes it)"
                    )
                    self.logger.warning(reason)  # Harbor itself logs a failed artifact quietly
                    raise DownloadTooLarge(reason)
                archive.write(chunk or b"")
        finally:
            stream.close()
        # tar's 1: a file changed while it was read (a process of the agent's still writes)
        self._finish(exec_id, f"copying {source} out", errors, ok=(0, 1))
        archive.seek(0)

    def _get(self, source: str, target: Path, is_dir: bool) -> None:
        name = PurePosixPath(source.rstrip("/")).name
        where = target if is_dir else target.parent
        where.mkdir(parents=True, exist_ok=True)
        # An unnamed file beside the target: nothing is left behind when a download fails.
        with tempfile.TemporaryFile(dir=where) as archive:
            self._spool(source, archive)
            if is_dir:
                _untar(archive, target, name)
                return
            with tarfile.open(fileobj=archive) as tar:
                member = tar.extractfile(tar.getmember(name))
                if member is None:
                    raise IsADirectoryError(f"{source} is not a file")
                with open(target, "wb") as out:
                    shutil.copyfileobj(member, out, 1 << 20)

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        await asyncio.to_thread(self._put, Path(source_path), target_path)

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        await asyncio.to_thread(self._put, Path(source_dir), target_dir)

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        await asyncio.to_thread(self._get, source_path, Path(target_path), False)

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        await asyncio.to_thread(self._get, source_dir, Path(target_dir), True)
