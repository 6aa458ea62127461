"""Start a program on a new pty without forking this process.

A fork copies this process's page tables (a trainer holding a thousand envs is large), and
Python work between fork and exec touches copied pages one by one; a local sandbox's start
spent most of its time there. Here the program starts through `subprocess`'s vfork path
(nothing is copied; the child execs at once), and what used to run between fork and exec
runs elsewhere: the terminal's size and echo are set on the pty from this side, `setsid
--ctty` (util-linux) gives the program a session of its own with the pty as its controlling
terminal, and a fresh session keyring is joined by a short-lived thread of this process
that starts the child (a keyring belongs to a thread's credentials, which the child
inherits). Whatever else the caller wants done before its program runs (joining a cgroup,
entering namespaces) goes in front of `argv` as programs that exec the rest.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import shutil
import subprocess
import termios
import threading
from collections.abc import Callable, Sequence

import ptyprocess

_KEYCTL = {"x86_64": 250, "aarch64": 219}
_KEYCTL_JOIN_SESSION_KEYRING = 1
_libc = ctypes.CDLL(None, use_errno=True)


def spawn_on_pty(
    argv: Sequence[str],
    *,
    cwd: str | None,
    env: dict[str, str] | None,
    echo: bool,
    dimensions: tuple[int, int],
    pass_fds: Sequence[int],
    fresh_keyring: bool = False,
) -> ptyprocess.PtyProcess:
    """`argv` on a new pty that is its controlling terminal, in a session of its own, with
    every descriptor but 0-2 and `pass_fds` closed; `fresh_keyring`: with a new, empty
    session keyring. A program that cannot be run raises here (OSError)."""
    setsid = shutil.which("setsid")
    if setsid is None:
        raise FileNotFoundError("`setsid` (util-linux) is needed to start a sandbox's shell")
    if shutil.which(argv[0], path=(env or os.environ).get("PATH")) is None:
        raise FileNotFoundError(f"no program {argv[0]!r} to run")
    main, terminal = os.openpty()
    try:
        termios.tcsetwinsize(terminal, dimensions)
        if not echo:
            attributes = termios.tcgetattr(terminal)
            attributes[3] &= ~termios.ECHO
            termios.tcsetattr(terminal, termios.TCSANOW, attributes)

        def start() -> subprocess.Popen:
            return subprocess.Popen(
                [setsid, "--ctty", *argv],
                stdin=terminal,
                stdout=terminal,
                stderr=terminal,
                pass_fds=tuple(pass_fds),
                cwd=cwd,
                env=env,
            )

        child = _in_fresh_keyring(start) if fresh_keyring else start()
    except BaseException:
        os.close(main)
        raise
    finally:
        os.close(terminal)
    # ptyprocess waits for the child; the Popen object must not (its finalizer would reap
    # the child under ptyprocess, or warn that it still runs), so it is marked done.
    child.returncode = 0
    proc = ptyprocess.PtyProcess(child.pid, main)
    proc.argv = list(argv)
    if env is not None:
        proc.env = env
    if cwd is not None:
        proc.launch_dir = cwd
    return proc


def _in_fresh_keyring(start: Callable[[], subprocess.Popen]) -> subprocess.Popen:
    """`start()` in a thread of its own that first joins a new session keyring, so the
    child starts with it and this process's other threads keep theirs."""
    outcome: list = []

    def run() -> None:
        try:
            _join_fresh_keyring()
            outcome.append(start())
        except BaseException as exc:  # handed to the caller's thread
            outcome.append(exc)

    thread = threading.Thread(target=run, name="mle-gym-spawn")
    thread.start()
    try:
        thread.join()
    except BaseException:  # interrupted: the start (milliseconds) ends, then is undone
        thread.join()
        for child in outcome:
            if isinstance(child, subprocess.Popen):
                with contextlib.suppress(OSError):
                    child.kill()
                child.wait()
        raise
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def _join_fresh_keyring() -> None:
    """Give the calling thread a new, empty session keyring (where the kernel has them)."""
    number = _KEYCTL.get(platform.machine())
    if number is not None:
        _libc.syscall(number, _KEYCTL_JOIN_SESSION_KEYRING, None)
