"""Keeping track of this process's containers so none outlives it for long.

Every container carries labels naming mle_gym, its owner (host name, pid and the pid's start
time, so a reused pid is not mistaken for the owner) and its episode. The containers a
process started are removed at exit and on SIGTERM; containers whose owner is gone
(e.g. killed with SIGKILL) are removed by `collect_garbage`, which runs when a process starts
its first container and with `mle-gym gc`.

SIGINT is left alone: Ctrl-C (or a notebook's interrupt) cuts the step it lands in, as on the
local backend, and every sandbox stays; an uncaught KeyboardInterrupt ends the process, and
the exit handler removes them then.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import threading
from typing import Any

from mle_gym.sandbox.scratch import process_identity

LABEL = "mle_gym"
LABEL_HOST = "mle_gym.owner_host"
LABEL_PID = "mle_gym.owner_pid"
LABEL_OWNER = "mle_gym.owner"
LABEL_EPISODE = "mle_gym.episode"

_live: dict[str, Any] = {}
_lock = threading.Lock()
_installed = False


def owner_labels(episode: str) -> dict[str, str]:
    pid = os.getpid()
    return {
        LABEL: "1",
        LABEL_HOST: socket.gethostname(),
        LABEL_PID: str(pid),
        LABEL_OWNER: process_identity(pid) or "",
        LABEL_EPISODE: episode,
    }


def track(container: Any) -> None:
    """Remember a container so this process removes it however it ends."""
    _install_handlers()
    with _lock:
        _live[container.id] = container


def untrack(container: Any) -> None:
    with _lock:
        _live.pop(container.id, None)


def remove_all_tracked() -> None:
    with _lock:
        containers = list(_live.values())
        _live.clear()
    for container in containers:
        try:
            container.remove(force=True)
        except Exception:  # already gone, or the engine is down: nothing more to do
            pass


def _install_handlers() -> None:
    global _installed
    if _installed:
        return
    _installed = True
    atexit.register(remove_all_tracked)
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)

    def handler(num: int, frame: Any) -> None:
        remove_all_tracked()
        if callable(previous):
            previous(num, frame)
        elif previous == signal.SIG_IGN:
            return
        else:
            signal.signal(num, signal.SIG_DFL)
            os.kill(os.getpid(), num)

    signal.signal(signal.SIGTERM, handler)


def _orphaned(labels: dict[str, str]) -> bool:
    if labels.get(LABEL_HOST) != socket.gethostname():
        return False  # another machine's engine user: not ours to judge
    try:
        pid = int(labels.get(LABEL_PID, ""))
    except ValueError:
        return True
    return process_identity(pid) != labels.get(LABEL_OWNER)


def collect_garbage(client: Any) -> list[str]:
    """Remove mle_gym containers whose owner process is gone; return their names."""
    removed = []
    # sparse: the list alone, with no inspection of each container, which fails when another
    # process removes one meanwhile (the engine is shared)
    for container in client.containers.list(all=True, sparse=True, filters={"label": f"{LABEL}=1"}):
        if _orphaned(container.attrs.get("Labels") or {}):
            try:
                container.remove(force=True)
                removed.append((container.attrs.get("Names") or [container.id])[0].lstrip("/"))
            except Exception:  # removed meanwhile by someone else
                pass
    return removed
