"""An outbound-only uplink for a local sandbox that asked for the network.

The sandbox keeps a network namespace of its own; slirp4netns (Debian's package) gives it
a user-mode NAT to the outside world with `--disable-host-loopback`, so services bound to
the host's loopback (Ray, Jupyter, databases, D-Bus) stay out of reach, and so does any
abstract unix socket of the host. Slirp connects from the host, though, so a service bound
to 0.0.0.0 would still answer at any of the host's own addresses: before the uplink comes
up, the namespace gets a `prohibit` route for each of them and for the link-local and cloud
metadata ranges. The agent has no CAP_NET_ADMIN there, so it cannot remove them.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import shutil
import subprocess
import sys

from mle_gym.sandbox import fd_wait, routes
from mle_gym.sandbox.base import SandboxError

NO_SLIRP = (
    "network=True on the local backend needs slirp4netns (Debian/Ubuntu: sudo apt-get "
    "install slirp4netns), which gives the sandbox outbound access without the host's "
    "loopback services; or use backend='docker'"
)
_READY_TIMEOUT = 10.0
#: slirp4netns's own network (its default --cidr): every address in it is slirp's alias for
#: the host's loopback (refused by --disable-host-loopback) or its DNS forwarder, never a
#: host address, and its gateway must stay routable.
SLIRP_NETWORK = ipaddress.ip_network("10.0.2.0/24")
_LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))
#: Link-local (where clouds serve instance metadata and credentials, 169.254.169.254) and the
#: metadata addresses outside it (Alibaba's; AWS's over IPv6).
LINK_LOCAL_AND_METADATA = tuple(
    ipaddress.ip_network(text)
    for text in ("169.254.0.0/16", "fe80::/10", "100.100.100.200/32", "fd00:ec2::254/128")
)


def blocked_networks() -> list[routes.Network]:
    """What a sandbox's uplink must never reach: link-local/metadata, and every destination
    the host delivers to itself, as this moment's local routing table lists it (less the
    loopback and slirp's network, which are the sandbox's own)."""
    found = list(LINK_LOCAL_AND_METADATA)
    for network in routes.local_destinations():
        if not any(_within(network, other) for other in (*_LOOPBACK, SLIRP_NETWORK, *found)):
            found.append(network)
    return found


def _within(network: routes.Network, other: routes.Network) -> bool:
    return network.version == other.version and network.subnet_of(other)  # type: ignore[arg-type]


def block_host(pid: int) -> None:
    """Add the prohibit routes to the network namespace of the sandbox process `pid`."""
    failure = "could not keep the sandbox's network off the host's addresses"
    try:
        program = [sys.executable, "-I", "-S", routes.__file__, str(pid)]
        result = subprocess.run(
            [*program, *map(str, blocked_networks())],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=_READY_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxError(f"{failure}: {exc}") from exc
    if result.returncode != 0:
        raise SandboxError(f"{failure}: {result.stderr.strip() or result.returncode}")


class Uplink:
    """slirp4netns attached to the network namespace of the sandbox process `pid`."""

    def __init__(self, pid: int) -> None:
        if shutil.which("slirp4netns") is None:
            raise SandboxError(NO_SLIRP)
        self.pid = pid
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        block_host(self.pid)
        # the namespace belongs to a user namespace of ours when this process is not root
        owner = routes.network_namespace_owner(self.pid) if os.geteuid() != 0 else None
        ready_read, ready_write = os.pipe()
        argv = [
            "slirp4netns",
            "--configure",
            "--mtu=65520",
            "--disable-host-loopback",
            f"--ready-fd={ready_write}",
        ]
        passed = [ready_write]
        if owner is not None:
            passed.append(owner)
            argv.append(f"--userns-path=/proc/self/fd/{owner}")
        argv += ["--netns-type=path", f"/proc/{self.pid}/ns/net", "tap0"]
        try:
            self.process = subprocess.Popen(
                argv,
                pass_fds=passed,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        finally:
            for fd in passed:
                os.close(fd)
        try:
            ready = fd_wait.readable([ready_read], _READY_TIMEOUT)
            if not ready or os.read(ready_read, 1) != b"1":
                self.stop()
                raise SandboxError("slirp4netns did not bring up the sandbox's network")
        finally:
            os.close(ready_read)

    def stop(self) -> None:
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)
            if self.process.stderr is not None:
                self.process.stderr.close()
            self.process = None
