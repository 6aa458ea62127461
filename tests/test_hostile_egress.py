"""A hostile agent against the egress proxy of `network="proxy"`: it asks for the host's own
services and the cloud's metadata under a policy that allows everything, floods the proxy
with connections, declares a huge body, and fills the log. The proxy runs on the host as
the episode's does; requests come straight to its socket (the sandbox's relay only pipes
bytes), as this test's own user, which the proxy admits when no sandbox is attached."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mle_gym.sandbox import routes
from mle_gym.sandbox.egress_policy import make_policy
from mle_gym.sandbox.egress_proxy import EgressProxy
from tests.egress_support import ask, upstream


@pytest.fixture
def proxy_factory(tmp_path: Path) -> Iterator:
    started: list[EgressProxy] = []

    def make(policy: object = None, **options: object) -> EgressProxy:
        proxy = EgressProxy(
            tmp_path / f"egress-{len(started)}.sock",
            tmp_path / f"network-{len(started)}.jsonl",
            make_policy(policy),  # type: ignore[arg-type]
            **options,  # type: ignore[arg-type]
        )
        proxy.start()
        started.append(proxy)
        return proxy

    yield make
    for proxy in started:
        proxy.close()
        proxy.close_log()


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0


def _own_addresses() -> list[str]:
    return [
        str(network.network_address)
        for network in routes.local_destinations()
        if network.prefixlen in (32, 128) and not network.is_loopback
    ]


def test_host_services_and_metadata_are_refused_whatever_the_policy(proxy_factory) -> None:
    """Policy "*" allows every host; the guard still refuses the host's loopback, its own
    addresses, private ranges and the metadata addresses, before any connection (a 403
    naming the guard, not the 502 of a failed attempt)."""
    proxy = proxy_factory({"allow": ["*"]})
    targets = ["127.0.0.1", "localhost", "169.254.169.254", "100.100.100.200", "10.0.0.1"]
    targets += ["192.168.1.1", "[::1]", "[fd00:ec2::254]", *_own_addresses()]
    for target in targets:
        shown = f"[{target}]" if ":" in target and not target.startswith("[") else target
        for raw in (
            f"CONNECT {shown}:443 HTTP/1.1\r\n\r\n",
            f"GET http://{shown}/latest/meta-data/ HTTP/1.1\r\n\r\n",
        ):
            answer = ask(proxy.socket_path, raw.encode())
            assert _status(answer) == 403, (raw, answer)
            assert b"never reached" in answer or b"host's own" in answer, answer
    assert proxy.summary()["hosts"] == []


def test_connections_at_once_are_bounded(proxy_factory) -> None:
    """Past `max_connections` open tunnels, a further connection is closed unanswered."""
    with upstream() as port:
        proxy = proxy_factory(
            {"allow": ["up.test"]},
            max_connections=2,
            test_upstreams={"up.test": ("127.0.0.1", port)},
        )
        held = []
        for _ in range(2):
            client = socket.socket(socket.AF_UNIX)
            client.settimeout(10)
            client.connect(str(proxy.socket_path))
            client.sendall(b"CONNECT up.test:443 HTTP/1.1\r\n\r\n")
            assert client.recv(100).startswith(b"HTTP/1.1 200"), "the tunnel did not open"
            held.append(client)
        extra = ask(proxy.socket_path, b"CONNECT up.test:443 HTTP/1.1\r\n\r\n", timeout=5)
        assert extra == b""
        for client in held:
            client.close()


def test_a_large_body_is_refused_before_it_is_read(proxy_factory) -> None:
    """A declared body over the bound gets a 413 at once: nothing of it is awaited."""
    with upstream() as port:
        proxy = proxy_factory(
            {"allow": ["up.test"]},
            max_request_bytes=1024,
            test_upstreams={"up.test": ("127.0.0.1", port)},
        )
        started = time.monotonic()
        answer = ask(
            proxy.socket_path,
            b"POST http://up.test/upload HTTP/1.1\r\nContent-Length: 1000000000\r\n\r\n",
            timeout=5,
        )
        assert _status(answer) == 413 and b"1024 bytes" in answer, answer
        assert time.monotonic() - started < 4
        chunked = b"POST http://up.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        assert _status(ask(proxy.socket_path, chunked, timeout=5)) == 411


def test_the_log_is_bounded_and_every_request_still_counts(proxy_factory) -> None:
    proxy = proxy_factory({"allow": ["nothing.test"]}, max_log_bytes=2000)
    for index in range(60):
        ask(proxy.socket_path, f"GET http://flood{index}.test/ HTTP/1.1\r\n\r\n".encode())
    summary = proxy.summary()
    assert summary["requests"] == 60 and summary["denied"] == 60
    log = Path(summary["log"])
    assert log.stat().st_size <= 2000 + len('{"log_full": true}\n')
    assert json.loads(log.read_text().splitlines()[-1]) == {"log_full": True}
    assert summary["log_lines_dropped"] > 0


def test_the_host_header_is_the_judged_one(proxy_factory) -> None:
    """A plain-HTTP request to an allowed host cannot name another site on the same address
    in its Host header: the proxy sends the URL's host, once."""
    with upstream() as port:
        proxy = proxy_factory(
            {"allow": ["up.test"]}, test_upstreams={"up.test": ("127.0.0.1", port)}
        )
        answer = ask(
            proxy.socket_path,
            b"GET http://up.test/host HTTP/1.1\r\nHost: denied.test\r\nHost: x.test\r\n\r\n",
        )
        assert answer.endswith(b"HOST ['up.test']"), answer
