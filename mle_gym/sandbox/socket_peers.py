"""Who may connect to the proxy's socket: the episode's sandbox, and nobody else on the host.

Two locks. The socket's directory and the socket itself admit only the agent's host uid
(`restrict_to`), where this process may grant that (as root, or when the agent runs as this
very user). And every accepted connection's peer credentials (SO_PEERCRED: the pid, uid and
gid of the process that connected, as this process sees them) must be the agent's uid,
from a process in the sandbox's own pid namespace (`sandbox_peers`): a host process that
shares the agent's uid (docker's uid 1000 is often a person's) is refused all the same.
"""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mle_gym.sandbox.base import AgentIdentity

_CREDENTIALS = struct.Struct("3i")


@dataclass(frozen=True)
class Peer:
    """The process at the other end of a unix socket connection, as the kernel saw it."""

    pid: int
    uid: int
    gid: int


def peer_of(connection: socket.socket) -> Peer:
    raw = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _CREDENTIALS.size)
    return Peer(*_CREDENTIALS.unpack(raw))


def this_user(peer: Peer) -> bool:
    """A proxy on its own admits the user that runs it (its socket is 0600)."""
    return peer.uid == os.geteuid()


def _namespace(pid: int) -> str | None:
    """The pid namespace of `pid`; None where this user may not read it."""
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except PermissionError:
        return None


def _cgroup(pid: int) -> str:
    return Path(f"/proc/{pid}/cgroup").read_text()


def sandbox_peers(agent: AgentIdentity) -> Callable[[Peer], bool]:
    """Admits the agent's uid from a process in the sandbox: its pid namespace, or, where
    this user may not read namespaces (the docker keeper's, as a non-root user), its
    cgroup (the container's own)."""
    namespace = _namespace(agent.pid)
    cgroup = _cgroup(agent.pid)

    def admit(peer: Peer) -> bool:
        if peer.uid != agent.uid or peer.pid <= 0:
            return False
        try:
            theirs = _namespace(peer.pid) if namespace is not None else None
            if theirs is not None:
                return theirs == namespace
            return _cgroup(peer.pid) == cgroup
        except OSError:  # gone already
            return False

    return admit


def restrict_to(agent: AgentIdentity, directory: Path, socket_path: Path) -> None:
    """Make `directory` (the socket's, bound read-only into the sandbox) and the socket
    reachable by the agent's uid alone: as root, the directory root's with the agent's
    group (0750) and the socket the agent's (0600); as the agent's own user, both stay
    this user's. A non-root user whose sandbox runs the agent as someone else (docker)
    cannot grant one other uid: the socket is then open to every uid and only the peer
    check holds."""
    if os.geteuid() == 0:
        os.chown(directory, 0, agent.gid)
        directory.chmod(0o750)
        os.chown(socket_path, agent.uid, agent.gid)
        socket_path.chmod(0o600)
    elif agent.uid == os.geteuid():
        directory.chmod(0o700)
        socket_path.chmod(0o600)
    else:
        directory.chmod(0o755)
        socket_path.chmod(0o666)
