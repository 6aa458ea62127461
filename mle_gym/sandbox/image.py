"""Build the Docker images that agent sandboxes run in.

Two ways to get an image:

* :func:`build_image` builds the full recipe in ``images/Dockerfile`` (or
  ``Dockerfile.cuda``). It needs a registry to pull the base image and PyPI
  wheels from, which is the normal case on a user's machine.
* :func:`build_offline_image` needs no registry at all: it debootstraps a
  Debian bookworm root file system from Debian's own mirror, adds the agent
  user and the sandbox directories, and ``docker import``-s it. That is what
  CI and air-gapped machines use (``.ci/docker-up.sh`` starts the engine).

Both images have the same layout, so the sandbox does not care which one it
runs: a non-root user ``agent`` (uid/gid 1000, home ``/home/agent``), the
directories ``/home/data``, ``/home/code``, ``/home/submission`` and
``/home/logs``, and working directory ``/home/code``. Both default to
``USER agent`` so that a container started without an explicit user is still
unprivileged; the sandbox passes ``user=`` explicitly anyway and can use
``user="root"`` for set-up steps.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path

import docker
from docker.errors import DockerException, ImageNotFound
from docker.utils import parse_repository_tag

from mle_gym.sandbox.engine import DockerUnavailableError, connect
from mle_gym.sandbox.image_names import DEFAULT_IMAGE, OFFLINE_IMAGE

__all__ = [
    "DEFAULT_IMAGE",
    "IMAGES_DIR",
    "OFFLINE_IMAGE",
    "OFFLINE_PACKAGES",
    "DockerUnavailableError",
    "build_image",
    "build_offline_image",
    "image_exists",
]


#: Directory holding the Dockerfiles; it is also the docker build context.
IMAGES_DIR = Path(__file__).resolve().with_name("images")

DEBIAN_SUITE = "bookworm"
DEBIAN_MIRROR = "http://deb.debian.org/debian"

#: Debian packages of the offline image. Checked against bookworm with
#: apt-cache: python3-xgboost (1.7.4) exists; bookworm has no LightGBM
#: package at all, so the offline image has no lightgbm.
OFFLINE_PACKAGES: tuple[str, ...] = (
    "bash",
    "coreutils",
    "curl",  # MLE-bench's validate_submission.sh and agents post to localhost:5000 with it
    "procps",
    "python3",
    "python3-numpy",
    "python3-pandas",
    "python3-scipy",
    "python3-sklearn",
    "python3-xgboost",
)

#: Build-time-only packages dropped after debootstrap. bookworm's
#: python3-scipy hard-depends on python3-pythran, which pulls in g++, Boost
#: headers and the Python dev files (~450 MB) that nothing needs at run time.
#: A stub package providing python3-pythran keeps dpkg's dependencies
#: consistent, so these purge cleanly without --force-depends.
# fmt: off
OFFLINE_PRUNE_PACKAGES: tuple[str, ...] = (
    "python3-pythran", "python3-beniget", "python3-gast", "python3-ply",
    "libboost1.74-dev", "libboost-dev", "libxsimd-dev",
    "g++", "g++-12", "gcc", "gcc-12", "cpp", "cpp-12",
    "libstdc++-12-dev", "libgcc-12-dev", "libc6-dev", "libc-dev-bin",
    "linux-libc-dev", "libcrypt-dev", "libnsl-dev", "libtirpc-dev", "rpcsvc-proto",
    "python3-all", "python3-all-dev", "python3-dev", "python3.11-dev",
    "libpython3-all-dev", "libpython3-dev", "libpython3.11-dev",
    "libexpat1-dev", "zlib1g-dev",
    "libopenblas-pthread-dev", "libopenblas-dev", "libblas-dev", "liblapack-dev",
    "binutils", "binutils-common", "binutils-x86-64-linux-gnu", "libbinutils",
    "libctf0", "libctf-nobfd0", "libgprofng0", "libjansson4",
    "libasan8", "libtsan2", "liblsan0", "libubsan1", "libhwasan0", "libitm1",
    "libcc1-0", "libisl23", "libmpc3", "libmpfr6",
)
# fmt: on
_STUB_PACKAGE = "mle-gym-pythran-stub"

AGENT_USER = "agent"
AGENT_UID = 1000
AGENT_GID = 1000
AGENT_HOME = "/home/agent"
SANDBOX_DIRS = ("/home/data", "/home/code", "/home/submission", "/home/logs")
#: Sandbox directories the agent must be able to write to.
AGENT_OWNED_DIRS = ("/home/code", "/home/submission")

_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

Log = Callable[[str], None]


def image_exists(tag: str) -> bool:
    """Tell whether ``tag`` is present locally, so callers can skip a slow build."""
    client = connect()
    try:
        client.images.get(tag)
    except ImageNotFound:
        return False
    finally:
        client.close()
    return True


def build_image(tag: str = DEFAULT_IMAGE, cuda: bool = False, log: Log = print) -> str:
    """Build the full agent image from ``images/Dockerfile`` (or ``Dockerfile.cuda``).

    Needs registry access (base image, PyPI, the PyTorch wheel index). Build
    output is streamed line by line to ``log``. Returns ``tag``.
    """
    dockerfile = "Dockerfile.cuda" if cuda else "Dockerfile"
    if not (IMAGES_DIR / dockerfile).is_file():
        raise FileNotFoundError(f"missing image recipe {IMAGES_DIR / dockerfile}")
    client = connect()
    try:
        log(f"building {tag} from {IMAGES_DIR / dockerfile}")
        stream = client.api.build(
            path=str(IMAGES_DIR),
            dockerfile=dockerfile,
            tag=tag,
            rm=True,
            forcerm=True,
            decode=True,
        )
        for chunk in stream:
            if "error" in chunk or "errorDetail" in chunk:
                detail = chunk.get("errorDetail", {}).get("message") or chunk.get("error")
                raise RuntimeError(f"docker build of {tag} failed: {detail}")
            text = chunk.get("stream") or chunk.get("status")
            if text:
                for line in str(text).splitlines():
                    if line.strip():
                        log(line.rstrip())
    finally:
        client.close()
    return tag


def build_offline_image(
    tag: str = OFFLINE_IMAGE,
    *,
    force: bool = False,
    log: Log = print,
    mirror: str = DEBIAN_MIRROR,
    workdir: str | os.PathLike[str] | None = None,
) -> str:
    """Build the agent image with no registry, from Debian packages only.

    Reuses an existing ``tag`` unless ``force``. Otherwise debootstraps Debian
    bookworm (minbase + :data:`OFFLINE_PACKAGES`) into a temporary directory
    under ``workdir`` (default: the system temp dir), adds the agent user and
    sandbox directories, trims caches and docs, imports the tree as ``tag``
    and removes the tree. Needs root (debootstrap creates device nodes and
    root-owned files) and the ``debootstrap`` command. Returns ``tag``.
    """
    client = connect()  # fail fast, before minutes of debootstrap
    try:
        try:
            previous_id: str | None = client.images.get(tag).id
        except ImageNotFound:
            previous_id = None
        if previous_id is not None and not force:
            log(f"image {tag} already exists; reusing it (`mle-gym build-image --force` rebuilds)")
            return tag

        if os.geteuid() != 0:
            raise RuntimeError(
                "build_offline_image must run as root: debootstrap creates device "
                "nodes and root-owned files"
            )
        debootstrap = shutil.which("debootstrap") or (
            "/usr/sbin/debootstrap" if os.access("/usr/sbin/debootstrap", os.X_OK) else None
        )
        if debootstrap is None:
            raise RuntimeError(
                "debootstrap not found: install the Debian package `debootstrap` "
                "(apt-get install debootstrap), or run .ci/docker-up.sh which installs it"
            )

        tmp = Path(tempfile.mkdtemp(prefix="mle-gym-rootfs-", dir=workdir))
        rootfs = tmp / "rootfs"
        try:
            _debootstrap(debootstrap, rootfs, mirror, log)
            _prune(rootfs, log)
            _customise(rootfs, log)
            tarball = tmp / "rootfs.tar"
            log(f"packing {rootfs} into {tarball}")
            _run(["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(tarball), "."])
            log(f"importing {tarball} as {tag}")
            _import(client, tarball, tag)
        finally:
            _remove_tree(tmp, log)
        if previous_id is not None and previous_id != client.images.get(tag).id:
            try:  # the old image is now untagged; drop it unless a container uses it
                client.images.remove(previous_id)
            except DockerException as exc:
                log(f"note: kept previous image {previous_id[:19]}: {exc}")
        log(f"built {tag}")
        return tag
    finally:
        client.close()


# --------------------------------------------------------------------------- helpers


def _run(cmd: list[str]) -> None:
    """Run a short helper command, surfacing its stderr on failure."""
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()}")


def _debootstrap(debootstrap: str, rootfs: Path, mirror: str, log: Log) -> None:
    """Install a minimal bookworm with the ML packages; stream its output to ``log``."""
    cmd = [
        debootstrap,
        "--variant=minbase",
        f"--include={','.join(OFFLINE_PACKAGES)}",
        DEBIAN_SUITE,
        str(rootfs),
        mirror,
    ]
    log("running " + " ".join(cmd))
    tail: deque[str] = deque(maxlen=30)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive", LC_ALL="C")
    env["PATH"] = env.get("PATH", "") + ":/usr/sbin:/sbin"
    with subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip()
            tail.append(line)
            log(line)
        code = proc.wait()
    if code != 0:
        debootstrap_log = rootfs / "debootstrap" / "debootstrap.log"
        extra = ""
        if debootstrap_log.is_file():
            extra = "\n--- debootstrap.log (tail) ---\n" + "\n".join(
                debootstrap_log.read_text(errors="replace").splitlines()[-30:]
            )
        raise RuntimeError(f"debootstrap failed with exit code {code}:\n" + "\n".join(tail) + extra)


def _chroot(rootfs: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": _PATH,
        "LC_ALL": "C",
        "DEBIAN_FRONTEND": "noninteractive",
        "HOME": "/root",
    }
    return subprocess.run(
        ["chroot", str(rootfs), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def _prune(rootfs: Path, log: Log) -> None:
    """Purge :data:`OFFLINE_PRUNE_PACKAGES`; on a dpkg complaint keep them (bigger, still valid)."""
    query = _chroot(rootfs, "dpkg-query", "-W", "-f", "${Package} ${db:Status-Status}\n")
    if query.returncode != 0:
        log(f"warning: dpkg-query failed, not pruning: {query.stderr.strip()}")
        return
    installed = {
        name
        for name, _, status in (line.partition(" ") for line in query.stdout.splitlines())
        if status == "installed"
    }
    victims = [p for p in OFFLINE_PRUNE_PACKAGES if p in installed]
    if not victims:
        return
    log(f"pruning {len(victims)} build-time-only packages (compiler, Boost, dev headers)")
    stub = rootfs / "tmp" / _STUB_PACKAGE
    (stub / "DEBIAN").mkdir(parents=True)
    (stub / "DEBIAN" / "control").write_text(
        f"Package: {_STUB_PACKAGE}\n"
        "Version: 1.0\n"
        "Architecture: all\n"
        "Maintainer: mle_gym <mle-gym@localhost>\n"
        "Provides: python3-pythran\n"
        "Description: stands in for pythran, a build-time-only dependency of scipy\n"
        " The mle-gym offline image has no compiler, so pythran cannot work there.\n"
    )
    try:
        steps = (
            (
                "dpkg-deb",
                "--build",
                f"/tmp/{_STUB_PACKAGE}",
                f"/tmp/{_STUB_PACKAGE}.deb",
            ),
            ("dpkg", "-i", f"/tmp/{_STUB_PACKAGE}.deb"),
            ("dpkg", "--purge", *victims),
        )
        for step in steps:
            done = _chroot(rootfs, *step)
            if done.returncode != 0:
                log(
                    f"warning: `{' '.join(step[:2])}` failed, keeping the build tools "
                    f"in the image: {(done.stderr or done.stdout).strip()[-2000:]}"
                )
                if step[1] == "--purge":
                    _chroot(rootfs, "dpkg", "--purge", _STUB_PACKAGE)
                return
        check = _chroot(rootfs, "apt-get", "check", "-q")
        if check.returncode != 0:
            log(f"warning: apt-get check after pruning: {check.stdout.strip()[-1000:]}")
    finally:
        shutil.rmtree(stub, ignore_errors=True)
        (rootfs / "tmp" / f"{_STUB_PACKAGE}.deb").unlink(missing_ok=True)


def _customise(rootfs: Path, log: Log) -> None:
    """Turn the bare Debian tree into the sandbox layout and make it small."""
    log("adding agent user, sandbox directories and python symlink")
    python = rootfs / "usr/bin/python"
    if not python.exists() and not python.is_symlink():
        python.symlink_to("python3")

    _add_agent_user(rootfs)

    home = rootfs / AGENT_HOME.lstrip("/")
    home.mkdir(parents=True, exist_ok=True)
    skel = rootfs / "etc/skel"
    if skel.is_dir():
        for item in skel.iterdir():
            if item.is_file():
                shutil.copy2(item, home / item.name)
                os.chown(home / item.name, AGENT_UID, AGENT_GID)
    home.chmod(0o755)
    os.chown(home, AGENT_UID, AGENT_GID)

    for d in SANDBOX_DIRS:
        p = rootfs / d.lstrip("/")
        p.mkdir(parents=True, exist_ok=True)
        p.chmod(0o755)
        if d in AGENT_OWNED_DIRS:
            os.chown(p, AGENT_UID, AGENT_GID)
        else:
            os.chown(p, 0, 0)

    log("removing apt caches, docs and logs")
    for rel in ("var/cache/apt/archives", "var/lib/apt/lists"):
        _empty_dir(rootfs / rel, keep={"partial", "lock"})
    for pkgcache in (rootfs / "var/cache/apt").glob("*.bin"):
        pkgcache.unlink()
    for rel in ("usr/share/man", "usr/share/info"):
        _empty_dir(rootfs / rel)
    doc = rootfs / "usr/share/doc"
    if doc.is_dir():  # keep the copyright files, drop the rest
        for path in sorted(doc.rglob("*"), key=lambda p: len(p.parts), reverse=True):
            if path.is_symlink() or path.is_file():
                if path.name != "copyright":
                    path.unlink()
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()
    for logfile in (rootfs / "var/log").rglob("*"):
        if logfile.is_file() and not logfile.is_symlink():
            logfile.write_bytes(b"")
    # Docker provides these at run time; do not bake in the build host's.
    for rel in ("etc/hostname", "etc/resolv.conf"):
        p = rootfs / rel
        if p.is_file() and not p.is_symlink():
            p.write_text("")


def _add_agent_user(rootfs: Path) -> None:
    """Write the agent's passwd/group/shadow entries directly (no chroot needed)."""
    etc = rootfs / "etc"
    passwd = (etc / "passwd").read_text()
    if any(
        line.split(":")[0] == AGENT_USER or line.split(":")[2:3] == [str(AGENT_UID)]
        for line in passwd.splitlines()
        if line.count(":") >= 2
    ):
        raise RuntimeError(f"uid {AGENT_UID} or user {AGENT_USER} already exists in {etc}/passwd")
    _append_line(
        etc / "passwd",
        f"{AGENT_USER}:x:{AGENT_UID}:{AGENT_GID}::{AGENT_HOME}:/bin/bash",
    )
    _append_line(etc / "group", f"{AGENT_USER}:x:{AGENT_GID}:")
    if (etc / "shadow").exists():
        _append_line(etc / "shadow", f"{AGENT_USER}:*:19000:0:99999:7:::")
    if (etc / "gshadow").exists():
        _append_line(etc / "gshadow", f"{AGENT_USER}:!::")


def _append_line(path: Path, line: str) -> None:
    text = path.read_text()
    if text and not text.endswith("\n"):
        text += "\n"
    mode = path.stat().st_mode
    path.write_text(text + line + "\n")
    path.chmod(mode & 0o7777)


def _empty_dir(path: Path, keep: Iterable[str] = ()) -> None:
    if not path.is_dir():
        return
    keep = set(keep)
    for child in path.iterdir():
        if child.name in keep:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def _import(client: docker.DockerClient, tarball: Path, tag: str) -> None:
    """``docker import`` the tarball with the image config the sandbox expects."""
    repository, image_tag = parse_repository_tag(tag)
    changes = [
        f"ENV PATH={_PATH}",
        "ENV LANG=C.UTF-8",
        "ENV PYTHONUNBUFFERED=1",
        "WORKDIR /home/code",
        f"USER {AGENT_USER}",
        'CMD ["/bin/bash"]',
        "LABEL org.mle-gym.image=offline",
        f"LABEL org.mle-gym.base=debian-{DEBIAN_SUITE}",
    ]
    result = client.api.import_image(
        src=str(tarball),
        repository=repository,
        tag=image_tag or "latest",
        changes=changes,
    )
    if "error" in str(result).lower():
        raise RuntimeError(f"docker import of {tag} failed: {result}")
    try:
        client.images.get(tag)
    except ImageNotFound as exc:
        raise RuntimeError(
            f"docker import reported success but {tag} is missing: {result}"
        ) from exc


def _mounts_under(path: Path) -> list[str]:
    """Mount points at or below ``path`` (debootstrap mounts /proc, /sys, maybe /dev)."""
    prefix = str(path.resolve())
    found = []
    with open("/proc/self/mounts") as fh:
        for line in fh:
            fields = line.split()
            if len(fields) < 2:
                continue
            # /proc/self/mounts escapes space, tab, newline and backslash as octal.
            target = fields[1].encode().decode("unicode_escape")
            if target == prefix or target.startswith(prefix + "/"):
                found.append(target)
    return found


def _remove_tree(tmp: Path, log: Log) -> None:
    """Delete the build tree, but never recurse into a still-mounted /proc, /sys or /dev."""
    for target in sorted(_mounts_under(tmp), key=len, reverse=True):
        subprocess.run(["umount", "-l", target], capture_output=True, check=False)
    leftover = _mounts_under(tmp)
    if leftover:
        log(f"warning: not removing {tmp}: still mounted: {', '.join(leftover)}")
        return
    shutil.rmtree(tmp, ignore_errors=True)
    if tmp.exists():
        log(f"warning: could not fully remove {tmp}")
