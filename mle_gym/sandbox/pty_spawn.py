"""Start a program on a new pty without forking this process.

A fork copies this process's page tables (a trainer holding a thousand envs is large), and
Python work between fork and exec touches copied pages one by one; a local sandbox's start
spent most of its time there. Here the program starts through `subprocess`'s vfork path
(nothing is copied; the child execs at once), and what used to run between fork and exec
runs elsewhere: the terminal's size and modes are set on the pty from this side, and `setsid
--ctty` (util-linux) gives the program a session of its own with the pty as its controlling
terminal. Whatever else the caller wants done before its program runs (joining a cgroup,
entering namespaces) goes in front of `argv` as programs that exec the rest.

Every child is started by one of a few long-lived starter threads of this process, for two
reasons. A session keyring belongs to a thread's credentials, which a child inherits: a
starter joins a new, empty one before each start, and this process's other threads keep
theirs. And a child that asks to die with its parent (bubblewrap's --die-with-parent) is
killed when the thread that started it ends, not the process: a sandbox started from a
short-lived thread (a caller's, or a helper's) would die with that thread. There are several
starters, not one: a start holds its thread until the child has exec'd, and a thousand
sandboxes starting at once would otherwise queue behind each other's.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import shutil
import subprocess
import termios
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import ptyprocess

_KEYCTL = {"x86_64": 250, "aarch64": 219}
_KEYCTL_JOIN_SESSION_KEYRING = 1
_libc = ctypes.CDLL(None, use_errno=True)
#: Starter threads: enough for the starts of many sandboxes to overlap on a few cores.
STARTERS = 8
_starter: ThreadPoolExecutor


def _new_starter() -> None:
    """The threads that start every child: a pool whose workers, once made, live as long
    as this process (an executor's idle worker waits for the next job; it never ends)."""
    global _starter
    _starter = ThreadPoolExecutor(max_workers=STARTERS, thread_name_prefix="mle-gym-spawn")


_new_starter()
os.register_at_fork(after_in_child=_new_starter)  # a forked child has no such threads


def spawn_on_pty(
    argv: Sequence[str],
    *,
    cwd: str | None,
    env: dict[str, str] | None,
    echo: bool,
    dimensions: tuple[int, int],
    pass_fds: Sequence[int],
    cooked: bool = True,
) -> ptyprocess.PtyProcess:
    """`argv` on a new pty that is its controlling terminal, in a session of its own, with
    a new, empty session keyring and every descriptor but 0-2 and `pass_fds` closed.
    `cooked=False`: the terminal hands input on as it comes, however long a line (no
    canonical mode, whose lines end at 4 KiB), and output as written (no CR before each
    newline). A program that is not there raises FileNotFoundError here."""
    setsid = shutil.which("setsid")
    if setsid is None:
        raise FileNotFoundError("`setsid` (util-linux) is needed to start a sandbox's shell")
    if shutil.which(argv[0], path=(env or os.environ).get("PATH")) is None:
        raise FileNotFoundError(f"no program {argv[0]!r} to run")
    main, terminal = os.openpty()
    try:
        termios.tcsetwinsize(terminal, dimensions)
        attributes = termios.tcgetattr(terminal)
        if not echo:
            attributes[3] &= ~termios.ECHO
        if not cooked:
            attributes[3] &= ~termios.ICANON
            attributes[1] &= ~termios.ONLCR
        termios.tcsetattr(terminal, termios.TCSANOW, attributes)

        def start() -> subprocess.Popen:
            _join_fresh_keyring()
            return subprocess.Popen(
                [setsid, "--ctty", *argv],
                stdin=terminal,
                stdout=terminal,
                stderr=terminal,
                pass_fds=tuple(pass_fds),
                cwd=cwd,
                env=env,
            )

        child = _on_starter(start)
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


def _on_starter(start: Callable[[], subprocess.Popen]) -> subprocess.Popen:
    """`start()` on a starter thread; a child started while this thread was interrupted
    is ended again."""
    future = _starter.submit(start)
    try:
        return future.result()
    except BaseException:
        if not future.cancel() and future.exception() is None:
            child = future.result()
            with contextlib.suppress(OSError):
                child.kill()
            child.wait()
        raise


def _join_fresh_keyring() -> None:
    """Give the calling thread a new, empty session keyring (where the kernel has them)."""
    number = _KEYCTL.get(platform.machine())
    if number is not None:
        _libc.syscall(number, _KEYCTL_JOIN_SESSION_KEYRING, None)
