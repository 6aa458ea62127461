"""The local backend: bubblewrap when available, else an unisolated process group.

Under bubblewrap the sandbox sees only system software (/usr, a few files of /etc, the
Python that runs mle_gym), the public data read-only at /home/data, and its own writable
/home/code and /home/submission; it has no network, its own pid namespace and an
unprivileged user. Nothing of the host's home, /tmp or the data cache is mounted, so the
private answers cannot be reached by any path.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import sys
import warnings
from pathlib import Path

import pexpect

from mle_gym.sandbox.base import SandboxPaths, SandboxSpec
from mle_gym.sandbox.scratch import owned_dir, sweep_once
from mle_gym.sandbox.shell import ShellSession
from mle_gym.sandbox.shell_backed import ShellBackedSandbox

log = logging.getLogger(__name__)

# /etc entries programs need to run (name resolution, linker cache, certificates, locale).
_ETC_ENTRIES = (
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "nsswitch.conf",
    "ssl",
    "ca-certificates",
    "mime.types",
    "fonts",
    "protocols",
    "services",
    "timezone",
)
_AGENT_UID = 1000

NOT_ISOLATED_WARNING = (
    "mle_gym: bubblewrap (bwrap) is not installed, so the local sandbox is NOT ISOLATED: "
    "agent commands run as your user with full access to your files and the network. "
    "Install bubblewrap (apt-get install bubblewrap) or use backend='docker'."
)


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


def _system_binds() -> list[str]:
    args: list[str] = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        top = Path("/") / name
        if top.is_symlink():
            args += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            args += ["--ro-bind", str(top), str(top)]
    for entry in _ETC_ENTRIES:
        if Path("/etc", entry).exists():
            args += ["--ro-bind", f"/etc/{entry}", f"/etc/{entry}"]
    return args


def _python_binds() -> list[str]:
    """Read-only binds of the Python installation; they come after the /tmp and /home tmpfs
    mounts, which would otherwise hide a venv living under either."""
    args: list[str] = []
    for root in _python_roots():
        args += ["--ro-bind", str(root), str(root)]
    return args


class LocalSandbox(ShellBackedSandbox):
    """Runs the agent's shell on this machine; `isolation` is "auto", "bwrap" or "none"."""

    def __init__(self, isolation: str = "auto") -> None:
        if isolation not in ("auto", "bwrap", "none"):
            raise ValueError("isolation must be 'auto', 'bwrap' or 'none'")
        if isolation == "bwrap" and not bwrap_available():
            raise RuntimeError("isolation='bwrap' was asked for but bwrap is not installed")
        self.isolated = isolation != "none" and bwrap_available()
        if not self.isolated:
            warnings.warn(NOT_ISOLATED_WARNING, RuntimeWarning, stacklevel=2)
            log.warning(NOT_ISOLATED_WARNING)
        self.paths = SandboxPaths()
        self.root: Path | None = None
        self.shell: ShellSession | None = None
        self._log_count = 0

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self, spec: SandboxSpec) -> None:
        self.stop()
        sweep_once()
        self.root = owned_dir("episode")
        for name in ("code", "submission", "logs", "home"):
            (self.root / name).mkdir()
        self.logs_dir = self.root / "logs"
        if self.isolated:
            self.paths = SandboxPaths()
            argv = self._bwrap_argv(spec)
            cwd = str(self.root)
        else:
            self.paths = SandboxPaths(
                data=str(spec.public_dir.resolve()),
                code=str(self.root / "code"),
                submission=str(self.root / "submission"),
                logs=str(self.root / "logs"),
            )
            argv = ["bash", "--noprofile", "--norc", "--noediting", "-i"]
            cwd = self.paths.code
        env = self._shell_env(spec)
        self.shell = ShellSession(
            lambda: pexpect.spawn(
                argv[0], argv[1:], cwd=cwd, env=env, echo=False, dimensions=(50, 200)
            ),
            _PtyJobControl(),
        )
        self.shell.start()

    def _shell_env(self, spec: SandboxSpec) -> dict[str, str]:
        python_bin = str(Path(sys.executable).parent)
        home = "/tmp" if self.isolated else str(self.root / "home")
        env = {
            "PATH": f"{python_bin}:/usr/local/bin:/usr/bin:/bin",
            "HOME": home,
            "TERM": "dumb",
            "LANG": "C.UTF-8",
            "PS1": "",
            "PYTHONUNBUFFERED": "1",
            "MPLBACKEND": "Agg",
        }
        env.update(spec.env)
        return env

    def _bwrap_argv(self, spec: SandboxSpec) -> list[str]:
        assert self.root is not None
        (self.root / "passwd").write_text(
            f"agent:x:{_AGENT_UID}:{_AGENT_UID}:agent:/tmp:/bin/bash\n"
            "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
        )
        (self.root / "group").write_text(f"agent:x:{_AGENT_UID}:\nnogroup:x:65534:\n")
        p = self.paths
        argv = [
            "bwrap",
            "--die-with-parent",
            "--unshare-all",
            "--unshare-user",
            "--uid",
            str(_AGENT_UID),
            "--gid",
            str(_AGENT_UID),
            "--hostname",
            "sandbox",
            "--cap-drop",
            "ALL",
            *_system_binds(),
            "--ro-bind",
            str(self.root / "passwd"),
            "/etc/passwd",
            "--ro-bind",
            str(self.root / "group"),
            "/etc/group",
            "--ro-bind",
            "/sys",
            "/sys",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--tmpfs",
            "/tmp",
            "--tmpfs",
            "/home",
            *_python_binds(),
            "--ro-bind",
            str(spec.public_dir.resolve()),
            p.data,
            "--bind",
            str(self.root / "code"),
            p.code,
            "--bind",
            str(self.root / "submission"),
            p.submission,
            "--ro-bind",
            str(self.root / "logs"),
            p.logs,
            # Only /tmp, code and submission stay writable: not even the sandbox's own root.
            "--remount-ro",
            "/home",
            "--remount-ro",
            "/",
            "--chdir",
            p.code,
        ]
        if spec.network:
            argv.append("--share-net")
        return [*argv, "bash", "--noprofile", "--norc", "--noediting", "-i"]

    def stop(self) -> None:
        if self.shell is not None:
            self.shell.close()
            self.shell = None
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None
        self.logs_dir = None

    # -- commands ----------------------------------------------------------------------------
    def describe(self) -> dict:
        return {"backend": "local", "isolation": "bwrap" if self.isolated else "none"}


class _PtyJobControl:
    """The pty's foreground group, in this host's pid numbering (the kernel translates it
    out of the sandbox's pid namespace), killed with killpg."""

    def foreground_group(self, shell: ShellSession) -> int | None:
        try:
            return os.tcgetpgrp(shell.proc.child_fd) if shell.proc is not None else None
        except OSError:
            return None

    def kill_group(self, shell: ShellSession, group: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)
