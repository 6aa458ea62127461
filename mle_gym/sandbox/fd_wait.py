"""Waiting on descriptors with poll(2), which takes any descriptor number.

select(2) refuses descriptors from 1024 up, and a process holding hundreds of sandboxes (an
RL trainer's rollout groups) passes that many: every wait on a sandbox's pipe, pty or socket
goes through here instead.
"""

from __future__ import annotations

import select


def _wait(fds: list[int], events: int, timeout: float) -> list[int]:
    poller = select.poll()
    for fd in fds:
        poller.register(fd, events)
    return [fd for fd, _ in poller.poll(max(0, round(timeout * 1000)))]


def readable(fds: list[int], timeout: float) -> list[int]:
    """The descriptors of `fds` with data (or end of file) to read, waiting at most `timeout` s."""
    return _wait(fds, select.POLLIN | select.POLLPRI, timeout)


def writable(fd: int, timeout: float) -> bool:
    """Whether `fd` takes a write, waiting at most `timeout` seconds."""
    return bool(_wait([fd], select.POLLOUT, timeout))
