"""An MLE-bench agent's `requirements.txt`, installed once into a directory both backends
can show the agent (as its harness directory): what MLE-bench's Dockerfiles install into
their conda env `agent`.

pip installs it with `--target` for the sandboxes' Python (CPython 3.11 on x86_64 Linux, the
images' and the pinned runtime's), binary wheels only, from the package index or, offline,
from a directory of wheels alone (`--no-index --find-links`). The result is kept under
`$MLE_GYM_HOME/agent-envs/<folder>-<digest>` (digest of the requirements, the wheel
directory and the target) and reused; console scripts start `python3` from PATH rather than
the host's interpreter path, which the container does not have.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from mle_gym.harness.mlebench_agent import AgentFolderError
from mle_gym.sandbox.agent_runtime import PYTHON_VERSION, runtime_home

_PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64")
_DONE = ".complete"
_PORTABLE_SHEBANG = b"#!/usr/bin/env python3\n"


def requirement_lines(folder: Path) -> list[str]:
    """The folder's requirements, comments and blanks left out (none: nothing to build)."""
    path = folder / "requirements.txt"
    if not path.is_file() or path.is_symlink():
        return []
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


def build_requirements(
    folder: str | Path, wheels: str | Path | None = None, home: Path | None = None
) -> Path | None:
    """The directory holding `folder`'s requirements installed (built on first use);
    None when it names none. `wheels`: install from that directory only, offline."""
    folder = Path(folder)
    lines = requirement_lines(folder)
    if not lines:
        return None
    if wheels is not None and not Path(wheels).is_dir():
        raise AgentFolderError(f"the wheel directory is not a directory: {wheels}")
    target = _target(folder, lines, wheels, home)
    if (target / _DONE).is_file():
        return target
    partial = target.with_name(f".{target.name}.{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    platforms = [arg for p in _PLATFORMS for arg in ("--platform", p)]
    source = ["--no-index", "--find-links", str(wheels)] if wheels is not None else []
    argv = [
        sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet", "install",
        "--only-binary=:all:", "--implementation", "cp", "--python-version", PYTHON_VERSION,
        *platforms, *source, "--target", str(partial), "--requirement",
        str(folder / "requirements.txt"),
    ]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        detail = (done.stderr or done.stdout).strip()[-2000:]
        raise AgentFolderError(f"{folder}/requirements.txt could not be installed: {detail}")
    _portable_scripts(partial / "bin")
    for path in [partial, *partial.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o444 | (0o111 if path.is_dir() else 0))
    (partial / _DONE).write_text("")
    try:
        partial.rename(target)
    except OSError:  # another process built it meanwhile
        shutil.rmtree(partial, ignore_errors=True)
    return target


def _target(folder: Path, lines: list[str], wheels: str | Path | None, home: Path | None) -> Path:
    key = "\n".join([*lines, str(Path(wheels).resolve()) if wheels else "", PYTHON_VERSION])
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    root = (home or runtime_home()) / "agent-envs"
    root.mkdir(parents=True, exist_ok=True)
    return root / f"{folder.resolve().name}-{digest}"


def _portable_scripts(bin_dir: Path) -> None:
    """Console scripts' first line names this host's interpreter (or, for a long path, a
    `/bin/sh` trampoline to it): `python3` from PATH instead."""
    if not bin_dir.is_dir():
        return
    for script in bin_dir.iterdir():
        if not script.is_file() or script.is_symlink():
            continue
        lines = script.read_bytes().splitlines(keepends=True)
        if lines and lines[0].startswith(b"#!") and b"python" in lines[0]:
            body = lines[1:]
        elif len(lines) > 2 and lines[0] == b"#!/bin/sh\n" and lines[1].startswith(b"'''exec"):
            end = next((i for i, line in enumerate(lines) if line == b"' '''\n"), None)
            if end is None:
                continue
            body = lines[end + 1 :]
        else:
            continue
        script.write_bytes(_PORTABLE_SHEBANG + b"".join(body))
        script.chmod(0o755)
