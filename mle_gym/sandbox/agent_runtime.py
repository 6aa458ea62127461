"""The agent's pinned runtime: one lock file, the same libraries on every backend.

The same code scores differently under different library versions, so the agent's Python
libraries come from one lock (`images/agent-requirements.txt`). `mle-gym build-runtime`
downloads its wheels once from the package registry into a wheelhouse, then installs them
with no index: into a venv the local sandbox uses as the agent's Python, and into an image
layered on the agent image (`mle-gym-agent:runtime-<hash>`) that the docker backend runs
first when it exists. Nothing inside an image build touches a registry.

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
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: In the images' build context, beside the Dockerfiles (image.py's IMAGES_DIR; not imported
#: from there, which would load the Docker SDK wherever the local sandbox is used).
LOCK = Path(__file__).resolve().with_name("images") / "agent-requirements.txt"
#: The wheels' target: CPython 3.11 on x86_64 Linux, the host's and the images' Python.
PYTHON_VERSION = "3.11"
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


def built_venv(home: Path | None = None, lock: Path = LOCK) -> Path | None:
    """The lock's venv when it has been built (its `bin/python3` exists), else None."""
    venv = runtime_dir(home, lock) / "venv"
    return venv if (venv / "bin" / "python3").exists() else None


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


def build_venv(
    home: Path | None = None, lock: Path = LOCK, *, force: bool = False, log: Log = print
) -> Built:
    """The venv the local sandbox runs agent code with: this Python's base interpreter, no
    system site packages, the lock's wheels. Built beside its final place, then renamed."""
    start = time.monotonic()
    final = runtime_dir(home, lock) / "venv"
    if built_venv(home, lock) is not None and not force:
        log(f"runtime {final} already built; reusing it (--force rebuilds)")
        return Built(str(final), 0.0, _size(final))
    wheels = download_wheels(home, lock, log)
    staging = Path(tempfile.mkdtemp(prefix="venv-", dir=final.parent))
    try:
        base = getattr(sys, "_base_executable", sys.executable)
        _run([base, "-m", "venv", "--without-pip", str(staging)])
        site = staging / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
        _install(wheels, lock, site / "site-packages")
        staging.chmod(0o755)
        if final.exists():
            shutil.rmtree(final)
        staging.rename(final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    built = Built(str(final), time.monotonic() - start, _size(final))
    log(f"built {final} in {built.seconds:.0f} s ({built.size_bytes / 2**20:.0f} MiB)")
    return built


def build_image(
    base: str | None = None,
    home: Path | None = None,
    lock: Path = LOCK,
    *,
    force: bool = False,
    log: Log = print,
) -> Built:
    """`mle-gym-agent:runtime-<hash>`: `base` (default: the full agent image, else the offline
    one) with the lock's packages installed where its python3 looks first. The packages are
    installed on this host into the build context, so the build needs no registry."""
    from docker.errors import ImageNotFound

    from mle_gym.sandbox.engine import connect

    start = time.monotonic()
    tag = runtime_image(lock)
    client = connect()
    try:
        if not force:
            try:
                image = client.images.get(tag)
                log(f"image {tag} already built; reusing it (--force rebuilds)")
                return Built(tag, 0.0, int(image.attrs.get("Size", 0)))
            except ImageNotFound:
                pass
        base = base or _present_base(client)
        site = _site_packages(client, base)
        wheels = download_wheels(home, lock, log)
        with tempfile.TemporaryDirectory(prefix="mle-gym-runtime-") as context:
            _install(wheels, lock, Path(context) / "site")
            (Path(context) / "Dockerfile").write_text(
                f"FROM {base}\nUSER root\nCOPY site {site}/\nUSER agent\n"
                f"LABEL org.mle-gym.runtime={lock_hash(lock)}\n"
            )
            log(f"building {tag} from {base} (packages in {site})")
            _, logs = client.images.build(path=context, tag=tag, rm=True, forcerm=True)
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


def _site_packages(client: object, base: str) -> str:
    """The directory `base`'s python3 searches first for packages, checked to be 3.11."""
    probe = (
        "import site, sys; print('%d.%d' % sys.version_info[:2]); print(site.getsitepackages()[0])"
    )
    out = client.containers.run(  # type: ignore[attr-defined]
        base, ["python3", "-c", probe], remove=True, network_disabled=True
    )
    version, site = out.decode().split()[:2]
    if version != PYTHON_VERSION:
        raise RuntimeError(f"{base} has Python {version}; the runtime's wheels are for 3.11")
    return site


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
