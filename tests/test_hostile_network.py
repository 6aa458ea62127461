"""A hostile agent with `network=True` on the local backend (issue 24, item 5).

slirp4netns makes the sandbox's connections from the host, so before its fix any host
service bound to 0.0.0.0 (a model server, a Ray head, Jupyter) answered at the host's own
addresses. Nothing here contacts an address outside this machine: the external side is
checked by asking the sandbox's kernel for its route (`ip route get` sends no packet).
"""

from __future__ import annotations

import ipaddress
import json
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mle_gym.sandbox.base import SandboxSpec
from mle_gym.sandbox.local import LocalSandbox
from tests.conftest import require_bwrap
from tests.prerequisites import require

MARKER = b"HOST-SERVICE-ANSWERED"


def _host_addresses() -> list[str]:
    """The host's non-loopback interface addresses, from `ip` (not from the code under
    test); IPv6 link-local ones need an interface to be dialled, so they are left out."""
    found = json.loads(subprocess.run(["ip", "-j", "addr"], capture_output=True).stdout)
    addresses = [a["local"] for link in found for a in link.get("addr_info", [])]
    return [
        a
        for a in addresses
        if not ipaddress.ip_address(a).is_loopback and not ipaddress.ip_address(a).is_link_local
    ]


def _serve(listener: socket.socket) -> None:
    """Answer every connection with the marker until the listener is closed."""
    while True:
        try:
            peer, _ = listener.accept()
        except OSError:
            return
        with peer:
            peer.sendall(MARKER)


@pytest.fixture
def host_service() -> Iterator[int]:
    """A service on every address of the host (0.0.0.0 and ::), on one free port."""
    listeners = [socket.socket(socket.AF_INET), socket.socket(socket.AF_INET6)]
    listeners[1].setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    listeners[0].bind(("0.0.0.0", 0))
    port = listeners[0].getsockname()[1]
    listeners[1].bind(("::", port))
    for listener in listeners:
        listener.listen()
        threading.Thread(target=_serve, args=(listener,), daemon=True).start()
    yield port
    for listener in listeners:
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()


@pytest.fixture
def online(tmp_path: Path) -> Iterator[LocalSandbox]:
    require_bwrap()
    require(shutil.which("ip") is not None, "iproute2 (`ip`) is missing: apt-get install iproute2")
    public = tmp_path / "public"
    public.mkdir()
    sandbox = LocalSandbox()
    sandbox.start(SandboxSpec(public, network=True))
    yield sandbox
    sandbox.stop()


def _dial(sandbox: LocalSandbox, addresses: list[str], port: int) -> dict[str, str]:
    """What the sandbox gets connecting to each address: what it read, or its error."""
    probe = (
        "import socket, sys\n"
        "for host in sys.argv[2:]:\n"
        "    try:\n"
        "        s = socket.create_connection((host, int(sys.argv[1])), 3)\n"
        "        print(host, s.recv(64).decode())\n"
        "    except OSError as e:\n"
        "        print(host, type(e).__name__)\n"
    )
    sandbox.write_file("/tmp/dial.py", probe.encode())
    output = sandbox.run(f"python3 /tmp/dial.py {port} {' '.join(addresses)}", 60).output
    return dict(line.split(" ", 1) for line in output.splitlines() if " " in line)


def test_host_services_on_every_address_are_out_of_reach(
    online: LocalSandbox, host_service: int
) -> None:
    """From the sandbox, no address of the host reaches a service bound to 0.0.0.0 or ::,
    and the agent cannot remove what blocks it."""
    addresses = _host_addresses()
    assert addresses, "the host has no address besides loopback to try"
    replies = _dial(online, addresses, host_service)
    assert set(replies) == set(addresses)
    reached = {a: r for a, r in replies.items() if MARKER.decode() in r}
    assert not reached, f"host services answered the sandbox at {sorted(reached)}"
    undo = online.run(
        f"ip route del {addresses[0]}; ip route flush table main; ip -6 route flush table main", 10
    ).output
    assert undo.count("Operation not permitted") == 3, undo
    assert MARKER.decode() not in _dial(online, addresses[:1], host_service)[addresses[0]]


def test_link_local_and_metadata_are_prohibited_and_the_rest_is_routed(
    online: LocalSandbox,
) -> None:
    """Metadata addresses are refused by the sandbox's own kernel, while any other address
    is routed to the uplink (the route is asked for; no packet is sent)."""
    routes = online.run("ip route; ip -6 route", 10).output
    for network in ("169.254.0.0/16", "100.100.100.200", "fe80::/10", "fd00:ec2::254"):
        assert f"prohibit {network} " in routes, routes
    lookups = online.run(
        "ip route get 169.254.169.254; ip route get 100.100.100.200; ip route get 203.0.113.7",
        10,
    ).output.splitlines()
    assert lookups[:2] == ["RTNETLINK answers: Permission denied"] * 2, lookups
    assert lookups[2].startswith("203.0.113.7 via 10.0.2.2 dev tap0"), lookups
