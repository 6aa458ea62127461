"""Start a program on a new pty, holding mle_gym's fork lock for the fork alone.

ptyprocess's `spawn` returns only once the child has run its pre-exec work and exec'd, so
a caller that must hold `FORK_LOCK` around the fork (mle_gym.forks says why) held it for
all of that too: for a local sandbox, the child's move into its cgroup (a cgroup migration
waits for the kernel's RCU grace period), its keyring and namespaces. A thousand sandboxes
started at once then started one after the other. Here the lock covers the fork, and the
wait for the exec happens outside it, so starts overlap; the child's work is ptyprocess's.
"""

from __future__ import annotations

import builtins
import os
import pty
import resource
import termios
from collections.abc import Callable, Sequence

import ptyprocess

from mle_gym.forks import FORK_LOCK

#: The highest descriptor the child closes, at most (ptyprocess's ceiling too).
_MAX_FD = 1 << 20


def spawn_on_pty(
    argv: Sequence[str],
    *,
    cwd: str | None,
    env: dict[str, str] | None,
    echo: bool,
    dimensions: tuple[int, int],
    preexec_fn: Callable[[], None] | None,
    pass_fds: Sequence[int],
) -> ptyprocess.PtyProcess:
    """`argv` (its first item a path) on a new pty, as `ptyprocess.PtyProcess.spawn` does:
    every descriptor but 0-2 and `pass_fds` closed, `preexec_fn` run in the child, and a
    failure before the exec raised here with the child's reason."""
    failed_read, failed_write = os.pipe2(os.O_CLOEXEC)  # EOF once the child has exec'd
    try:
        with FORK_LOCK:
            pid, fd = pty.fork()
        if pid == 0:  # the child: never returns
            _child(argv, cwd, env, echo, dimensions, preexec_fn, pass_fds, failed_write)
        os.close(failed_write)
        failed_write = -1
        reason = _read_all(failed_read)
    finally:
        os.close(failed_read)
        if failed_write >= 0:
            os.close(failed_write)
    if reason:
        os.waitpid(pid, 0)
        os.close(fd)
        name, _, message = reason.decode("utf-8", "replace").partition(": ")
        kind = getattr(builtins, name, None)
        raise (kind if isinstance(kind, type) and issubclass(kind, Exception) else Exception)(
            message or name
        )
    proc = ptyprocess.PtyProcess(pid, fd)
    proc.argv = list(argv)
    if env is not None:
        proc.env = env
    if cwd is not None:
        proc.launch_dir = cwd
    return proc


def _child(
    argv: Sequence[str],
    cwd: str | None,
    env: dict[str, str] | None,
    echo: bool,
    dimensions: tuple[int, int],
    preexec_fn: Callable[[], None] | None,
    pass_fds: Sequence[int],
    failed: int,
) -> None:
    try:
        termios.tcsetwinsize(0, dimensions)
        if not echo:
            attributes = termios.tcgetattr(0)
            attributes[3] &= ~termios.ECHO
            termios.tcsetattr(0, termios.TCSANOW, attributes)
        kept = sorted({*pass_fds, failed})
        ceiling = min(_MAX_FD, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        for low, high in zip([2, *kept], [*kept, ceiling], strict=True):
            os.closerange(low + 1, high)
        if cwd is not None:
            os.chdir(cwd)
        if preexec_fn is not None:
            preexec_fn()
        if env is None:
            os.execv(argv[0], list(argv))
        os.execve(argv[0], list(argv), env)
    except BaseException as exc:
        os.write(failed, f"{type(exc).__name__}: {exc}".encode(errors="replace"))
    os._exit(127)


def _read_all(fd: int) -> bytes:
    data = b""
    while chunk := os.read(fd, 4096):
        data += chunk
    return data
