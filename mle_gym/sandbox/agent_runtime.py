"""The agent's pinned runtime: one file system, the same interpreter and libraries on every backend.

The same code scores differently under different interpreters and library versions, so the
agent's Python libraries come from one lock (`images/agent-requirements.txt`) and its
interpreter from one image. `mle-gym build-runtime` downloads the lock's wheels once from the
package registry into a wheelhouse and builds the image `mle-gym-agent:runtime-<hash>` on the
agent image: a venv of that image's own `python3` at `VENV` (no system site packages, so
nothing the base image installed for its own Python is importable) holding exactly the lock's
wheels, first on the image's PATH. The image's file system is then exported once into
`<runtime>/root`, the tree the local sandbox runs on (its /usr, /etc and the venv, read-only).
Both backends thus run the same files: the same interpreter, standard library and packages.
Nothing inside the image build touches a registry.

Where the runtime is not built, the local sandbox falls back to this process's Python and
libraries with a warning, and the docker backend to the plain agent image; every episode
records the versions it had (`info["sandbox"]["runtime"]`), so results stay labelled.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: In the images' build context, beside the Dockerfiles (image.py's IMAGES_DIR; not imported
#: from there, which would load the Docker SDK wherever the local sandbox is used).
LOCK = Path(__file__).resolve().with_name("images") / "agent-requirements.txt"
#: The wheels' target: CPython 3.11 on x86_64 Linux, the agent images' Python.
PYTHON_VERSION = "3.11"
#: The runtime's venv inside its file system, on both backends.
VENV = "/opt/mle-gym-runtime"
#: The image label naming where its venv is: an image without it predates the venv.
_LAYOUT_LABEL = "org.mle-gym.runtime-venv"
#: The agent's PATH under the runtime: its venv first, then the image's own.
RUNTIME_PATH = f"{VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64")

Log = Callable[[str], None]


def lock_hash(lock: Path = LOCK) -> str:
    """Short digest of the lock's pins: a runtime's name, so a new lock builds a new one."""
    return hashlib.sha256("\n".join(pins(lock)).encode()).hexdigest()[:12]


def pins(lock: Path = LOCK) -> list[str]:
    """The lock's `name==version` lines, comments and blanks left out."""
    lines = (line.split("#", 1)[0].strip() for line in lock.read_text().splitlines())
    return [line for line in lines if line]


def runtime_image(lock: Path = LOCK) -> str:
    """The docker image built from the lock."""
    return f"mle-gym-agent:runtime-{lock_hash(lock)}"


def runtime_home() -> Path:
    """`$MLE_GYM_HOME` or `~/.cache/mle-gym`, where runtimes are built."""
    configured = os.environ.get("MLE_GYM_HOME")
    return Path(configured) if configured else Path.home() / ".cache" / "mle-gym"


def runtime_dir(home: Path | None = None, lock: Path = LOCK) -> Path:
    return (home or runtime_home()) / f"runtime-{lock_hash(lock)}"


def built_root(home: Path | None = None, lock: Path = LOCK) -> Path | None:
    """The runtime image's file system exported for the local sandbox, when built, else None."""
    root = runtime_dir(home, lock) / "root"
    return root if is_runtime_root(root) else None


def is_runtime_root(path: Path) -> bool:
    """A runtime's file system (`export_root`): it holds the runtime's venv."""
    return (path / VENV.lstrip("/") / "pyvenv.cfg").is_file()


@dataclass(frozen=True)
class Built:
    """What a build made, with its cost (for the user and benchmarks/)."""

    path: str
    seconds: float
    size_bytes: int


def download_wheels(home: Path | None = None, lock: Path = LOCK, log: Log = print) -> Path:
    """The lock's wheels in `<runtime>/wheels`, fetched once from the package registry."""
    wheels = runtime_dir(home, lock) / "wheels"
    done = wheels / ".complete"
    if done.exists():
        return wheels
    wheels.mkdir(parents=True, exist_ok=True)
    log(f"downloading the runtime's wheels into {wheels}")
    _pip("download", *_wheel_target(), "--dest", str(wheels), "--requirement", str(lock))
    done.write_text(lock_hash(lock))
    return wheels


def build_runtime(
    base: str | None = None,
    home: Path | None = None,
    lock: Path = LOCK,
    *,
    force: bool = False,
    log: Log = print,
) -> list[Built]:
    """The runtime image and its file system for the local sandbox, each built once."""
    image = build_image(base, home, lock, force=force, log=log)
    return [image, export_root(image.path, home, lock, force=force, log=log)]


def export_root(
    image: str,
    home: Path | None = None,
    lock: Path = LOCK,
    *,
    force: bool = False,
    log: Log = print,
) -> Built:
    """`image`'s file system in `<runtime>/root`: the local sandbox's system, file for file
    the docker backend's. Exported again when the image changed (its id is kept beside the
    tree). Exported from a created (never started) container into a staging folder beside
    its final place, then renamed; device nodes are left out (the sandbox makes its own
    /dev) and setuid bits dropped (tarfile's `tar` filter)."""
    from mle_gym.sandbox.engine import connect

    start = time.monotonic()
    final = runtime_dir(home, lock) / "root"
    source = final.with_name("root.image")
    client = connect()
    try:
        image_id = str(client.images.get(image).id)
        if (
            not force
            and built_root(home, lock) is not None
            and source.is_file()
            and source.read_text() == image_id
        ):
            log(f"runtime {final} already built from {image}; reusing it (--force rebuilds)")
            return Built(str(final), 0.0, _size(final))
        final.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix="root-", dir=final.parent))
        try:
            log(f"exporting {image}'s file system into {final}")
            _export(client, image_id, staging, final)
            source.write_text(image_id)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    finally:
        client.close()
    built = Built(str(final), time.monotonic() - start, _size(final))
    log(f"built {final} in {built.seconds:.0f} s ({built.size_bytes / 2**20:.0f} MiB)")
    return built


def _export(client: object, image_id: str, staging: Path, final: Path) -> None:
    """The image's files into `staging`, then renamed to `final`."""
    archive = staging / "export.tar"
    container = client.containers.create(image_id, network_disabled=True)  # type: ignore[attr-defined]
    try:
        with open(archive, "wb") as out:
            for chunk in container.export():
                out.write(chunk)
    finally:
        container.remove(force=True)
    tree = staging / "root"
    tree.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter=_no_devices, numeric_owner=True)
    archive.unlink()
    tree.chmod(0o755)
    if final.exists():
        shutil.rmtree(final)
    tree.rename(final)


def _no_devices(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    if member.isdev():
        return None
    return tarfile.tar_filter(member, dest)


def build_image(
    base: str | None = None,
    home: Path | None = None,
    lock: Path = LOCK,
    *,
    force: bool = False,
    log: Log = print,
) -> Built:
    """`mle-gym-agent:runtime-<hash>`: `base` (default: the full agent image, else the offline
    one) with a venv of its own python3 at `VENV`, holding the lock's packages only, first on
    PATH. The packages are installed on this host into the build context, so the build needs
    no registry."""
    from docker.errors import ImageNotFound

    from mle_gym.sandbox.engine import connect

    start = time.monotonic()
    tag = runtime_image(lock)
    client = connect()
    try:
        if not force:
            try:
                image = client.images.get(tag)
                if image.labels.get(_LAYOUT_LABEL) == VENV:
                    log(f"image {tag} already built; reusing it (--force rebuilds)")
                    return Built(tag, 0.0, int(image.attrs.get("Size", 0)))
                log(f"image {tag} has an older layout (no venv at {VENV}); rebuilding it")
            except ImageNotFound:
                pass
        base = base or _present_base(client)
        _check_python(client, base)
        wheels = download_wheels(home, lock, log)
        site = f"{VENV}/lib/python{PYTHON_VERSION}/site-packages"
        with tempfile.TemporaryDirectory(prefix="mle-gym-runtime-") as context:
            _install(wheels, lock, Path(context) / "site")
            (Path(context) / "Dockerfile").write_text(
                f"FROM {base}\nUSER root\nRUN python3 -m venv --without-pip {VENV}\n"
                f"COPY site {site}/\nENV PATH={RUNTIME_PATH}\nUSER agent\n"
                f"LABEL org.mle-gym.runtime={lock_hash(lock)} {_LAYOUT_LABEL}={VENV}\n"
            )
            log(f"building {tag} from {base} (packages in {site})")
            _, logs = client.images.build(
                path=context, tag=tag, rm=True, forcerm=True, network_mode="none"
            )
            for chunk in logs:
                text = str(chunk.get("stream", "")).strip()
                if text:
                    log(text)
        size = int(client.images.get(tag).attrs.get("Size", 0))
    finally:
        client.close()
    built = Built(tag, time.monotonic() - start, size)
    log(f"built {tag} in {built.seconds:.0f} s ({size / 2**20:.0f} MiB)")
    return built


def _present_base(client: object) -> str:
    from docker.errors import ImageNotFound

    from mle_gym.sandbox.image import DEFAULT_IMAGE, OFFLINE_IMAGE

    for tag in (DEFAULT_IMAGE, OFFLINE_IMAGE):
        try:
            client.images.get(tag)  # type: ignore[attr-defined]
            return tag
        except ImageNotFound:
            continue
    raise RuntimeError(
        f"no agent image to build on ({DEFAULT_IMAGE} or {OFFLINE_IMAGE}): run "
        "`mle-gym build-image` (or `--offline`) first"
    )


def _check_python(client: object, base: str) -> None:
    """`base`'s python3 must be the wheels' 3.11."""
    probe = "import sys; print('%d.%d' % sys.version_info[:2])"
    out = client.containers.run(  # type: ignore[attr-defined]
        base, ["python3", "-c", probe], remove=True, network_disabled=True
    )
    version = out.decode().strip()
    if version != PYTHON_VERSION:
        raise RuntimeError(f"{base} has Python {version}; the runtime's wheels are for 3.11")


def _wheel_target() -> list[str]:
    """pip options naming the wheels' Python and platforms, whatever the host."""
    platforms = [arg for p in _PLATFORMS for arg in ("--platform", p)]
    return [
        "--only-binary=:all:",
        "--no-deps",
        "--implementation",
        "cp",
        "--python-version",
        PYTHON_VERSION,
        *platforms,
    ]


def _install(wheels: Path, lock: Path, target: Path) -> None:
    """The lock's exact wheels into `target`, from the wheelhouse only (no index)."""
    _pip(
        "install",
        *_wheel_target(),
        "--no-index",
        "--find-links",
        str(wheels),
        "--target",
        str(target),
        "--requirement",
        str(lock),
    )
    shutil.rmtree(target / "bin", ignore_errors=True)  # console scripts name the host's paths


def _pip(*args: str) -> None:
    _run([sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet", *args])


def _run(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip()[-2000:]
        raise RuntimeError(f"{' '.join(argv[:4])} ... failed ({done.returncode}): {detail}")


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())
