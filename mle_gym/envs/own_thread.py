"""One worker thread per env, for its async calls (`areset`, `astep`, `aclose`).

Each env has its own thread, not a share of a pool: a shared pool of eight would make the
ninth env wait for one of the first eight, so any number of envs step at once while one env
takes one call at a time.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any


class OwnThread:
    """Runs an env's calls one at a time in the env's own thread, off the event loop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._worker: ThreadPoolExecutor | None = None

    async def run(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mle-gym-env")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._worker, functools.partial(self._serially, call, *args, **kwargs)
        )

    def _serially(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return call(*args, **kwargs)

    def shutdown(self) -> None:
        """Let the thread go (a call it is running finishes on its own)."""
        if self._worker is not None:
            self._worker.shutdown(wait=False)
            self._worker = None
