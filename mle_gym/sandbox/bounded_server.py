"""A cap on the connections a sandbox-facing unix-socket server serves at once.

The harness proxy and MLE-bench's validation endpoint both answer the agent, who can open
connections without end; past the cap a connection is closed unanswered, so threads and
memory stay bounded.
"""

from __future__ import annotations

import os
import socketserver
import threading
from typing import Any


class BoundedUnixServer(socketserver.ThreadingUnixStreamServer):
    """A threading unix-socket server serving at most `max_connections` at once, from a
    daemon thread of its own (`serve_in_background`) until `stop`."""

    daemon_threads = True  # a connection left open by the agent never holds the process
    block_on_close = False

    def __init__(self, path: str, handler: Any, max_connections: int) -> None:
        self._slots = threading.BoundedSemaphore(max_connections)
        super().__init__(path, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def serve_in_background(self, name: str) -> None:
        """Serve from a daemon thread; the socket admits only this user until the caller
        opens it to the agent (`socket_peers.restrict_to`)."""
        os.chmod(self.server_address, 0o600)
        threading.Thread(target=self.serve_forever, name=name, daemon=True).start()

    def stop(self) -> None:
        """Stop serving and close the socket (its file is the caller's to remove)."""
        self.shutdown()
        self.server_close()
