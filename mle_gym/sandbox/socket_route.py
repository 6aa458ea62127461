"""One route from the sandbox's own loopback to a unix socket server on the host: the
harness's model proxy, MLE-bench's validation endpoint, the egress proxy.

Each is reached the same way: the server's socket sits in a host folder shown read-only in
the sandbox, only the sandbox's agent is admitted (the folder's and socket's modes, and a
peer check of every connection), and a relay started in the sandbox listens on its loopback
port and pipes each connection to the socket. Written once here so the three cannot drift.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from mle_gym.sandbox.base import Sandbox, SandboxError
from mle_gym.sandbox.socket_peers import Peer, restrict_to, sandbox_peers

#: The relay script's name in the shown folder (a copy of mle_gym/sandbox/socket_relay.py).
RELAY_NAME = "relay.py"
START_TIMEOUT = 60.0


class SocketServer(Protocol):
    socket_path: Path
    admit: Callable[[Peer], bool]


def open_route(
    sandbox: Sandbox,
    server: SocketServer,
    port: int,
    shown_dir: str,
    what: str,
    before: str = "",
) -> None:
    """Admit the sandbox's agent (and nobody else) to `server`, then start the relay on the
    sandbox's 127.0.0.1:`port` unless one listens there already (docker keeps it across a new
    shell). `shown_dir` is where the socket's folder is shown; `before` runs first in the same
    command; `what` names the route in the error."""
    agent = sandbox.agent_identity()  # as the host sees it, from the shell about to start it
    server.admit = sandbox_peers(agent)
    restrict_to(agent, server.socket_path.parent, server.socket_path)
    relay = (
        f"(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null || python3 -I "
        f"{shown_dir}/{RELAY_NAME} 127.0.0.1 {port} {shown_dir}/{server.socket_path.name} 2>&1"
    )
    if before:
        relay = f"{before} && {{ {relay}; }}"
    started = sandbox.run(relay, START_TIMEOUT)
    if started.exit_code != 0:
        raise SandboxError(
            f"{what} did not start on 127.0.0.1:{port} in the sandbox: {started.output.strip()}"
        )


def reopen_note(reopen: Callable[[], None]) -> str:
    """After a new shell (on the local backend a new sandbox process, in new namespaces): open
    the route again, or a note for the agent saying why not (the step's own output must still
    reach it)."""
    try:
        reopen()
    except Exception as exc:
        return f"\n[{exc}]"
    return ""
