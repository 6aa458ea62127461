"""The host side of a governed sandbox's one way out: an HTTP(S) forward proxy per episode.

The sandbox keeps no network. Its clients find this proxy through `HTTP(S)_PROXY`, which
points at the relay on the sandbox's own loopback (`socket_relay`); the relay pipes each
connection to this server's unix socket, bound read-only into the sandbox, and only the
episode's sandbox may connect (`socket_peers`).

Plain HTTP requests (`GET http://host/path`) are forwarded one per connection; HTTPS goes
through `CONNECT host:443` as an opaque tunnel (the proxy sees the host, and the server
name the client's TLS hello names, never the content). Each request is judged by the
episode's policy (`egress_policy`): a refusal is a 403 naming the rule. An allowed host is
resolved here and dialled only at an address outside the host and its network, on ports
80 and 443, whatever the policy says. Every request, allowed or not, is one JSON line in the
log: time, method, host, port, the URL (plain HTTP), the TLS server name (HTTPS), bytes
each way, status, verdict and rule.

Bounds, against an agent that floods: connections served at once, the request's head (the
standard library's line and header caps) and body, idle time, and the log's size.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mle_gym.sandbox import routes
from mle_gym.sandbox.bounded_server import BoundedUnixServer
from mle_gym.sandbox.egress_policy import PORTS, EgressPolicy, forbidden_address
from mle_gym.sandbox.socket_peers import Peer, peer_of, this_user

MAX_CONNECTIONS = 64
#: A plain-HTTP request body past this is refused before it is read.
MAX_REQUEST_BYTES = 16 * 1024**2
MAX_LOG_BYTES = 64 * 1024**2
IDLE_TIMEOUT = 120.0
CONNECT_TIMEOUT = 15.0
#: Distinct hosts listed by `summary` (all are counted).
MAX_LISTED_HOSTS = 200
_CHUNK = 1 << 16
#: How long `close` waits for cut connections to log themselves.
_CLOSE_WAIT = 2.0
#: Request headers that concern the hop to the proxy, not the server.
_HOP_HEADERS = frozenset(
    {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "upgrade"}
)


class _Refusal(Exception):
    def __init__(self, status: int, verdict: str, rule: str) -> None:
        super().__init__(rule)
        self.status, self.verdict, self.rule = status, verdict, rule


class _Log:
    """JSON Lines, thread-safe; past `max_bytes` one last line says so and the rest are
    counted in `dropped`."""

    def __init__(self, path: Path, max_bytes: int) -> None:
        self.path, self.max_bytes = path, max_bytes
        self.written = self.dropped = 0
        self._lock = threading.Lock()
        self._file = open(path, "ab")  # noqa: SIM115 (open for the proxy's lifetime)

    def write(self, record: dict[str, Any]) -> None:
        line = (json.dumps(record, ensure_ascii=True) + "\n").encode()
        with self._lock:
            if self._file.closed or self.written + len(line) > self.max_bytes:
                if not self._file.closed and not self.dropped:
                    self._file.write(b'{"log_full": true}\n')
                    self._file.flush()
                self.dropped += 1
                return
            self._file.write(line)
            self._file.flush()
            self.written += len(line)

    def close(self) -> None:
        with self._lock:
            self._file.close()


def server_name(hello: bytes) -> str | None:
    """The server name (SNI) in a TLS ClientHello record; None if there is none to read."""
    try:
        if hello[0] != 0x16 or hello[5] != 0x01:
            return None
        at = 5 + 4 + 2 + 32  # record header, handshake header, version, random
        at += 1 + hello[at]  # session id
        at += 2 + int.from_bytes(hello[at : at + 2], "big")  # cipher suites
        at += 1 + hello[at]  # compression methods
        end = at + 2 + int.from_bytes(hello[at : at + 2], "big")
        at += 2
        while at + 4 <= end:
            kind = int.from_bytes(hello[at : at + 2], "big")
            length = int.from_bytes(hello[at + 2 : at + 4], "big")
            at += 4
            if kind == 0:  # server_name: list length, name type, name length, name
                size = int.from_bytes(hello[at + 3 : at + 5], "big")
                name = hello[at + 5 : at + 5 + size].decode("ascii")
                return name if len(name) == size else None
            at += length
    except (IndexError, UnicodeDecodeError):
        return None
    return None


class _Server(BoundedUnixServer):
    request_queue_size = 64

    def __init__(self, proxy: EgressProxy) -> None:
        self.proxy = proxy
        super().__init__(str(proxy.socket_path), _Handler, proxy.max_connections)

    def verify_request(self, request: Any, client_address: Any) -> bool:
        try:
            peer = peer_of(request)
        except OSError:
            return False
        if self.proxy.admit(peer):
            return True
        self.proxy.strangers += 1
        return False

    def handle_error(self, request: Any, client_address: Any) -> None:
        self.proxy.errors.append(f"{sys.exc_info()[0].__name__}: {sys.exc_info()[1]}"[:200])
        del self.proxy.errors[:-20]


class EgressProxy:
    """One episode's forward proxy on `socket_path`, judging by `policy`, logging to
    `log_path`. `test_upstreams` (tests only) maps a host name to a (address, port) that is
    dialled as is, past the address guard: loopback servers standing in for the internet."""

    def __init__(
        self,
        socket_path: Path,
        log_path: Path,
        policy: EgressPolicy,
        *,
        max_connections: int = MAX_CONNECTIONS,
        max_request_bytes: int = MAX_REQUEST_BYTES,
        max_log_bytes: int = MAX_LOG_BYTES,
        idle_timeout: float = IDLE_TIMEOUT,
        test_upstreams: Mapping[str, tuple[str, int]] | None = None,
    ) -> None:
        self.socket_path = socket_path
        self.policy = policy
        self.max_connections = max_connections
        self.max_request_bytes = max_request_bytes
        self.idle_timeout = idle_timeout
        self.log = _Log(log_path, max_log_bytes)
        self.test_upstreams = dict(test_upstreams or {})
        #: Whether a connecting process may use the proxy (`socket_peers.sandbox_peers` once
        #: the sandbox runs); on its own the proxy admits its own user.
        self.admit: Callable[[Peer], bool] = this_user
        self.requests = self.denied = self.strangers = 0
        self.bytes_up = self.bytes_down = 0
        self.hosts: set[str] = set()
        self.errors: list[str] = []
        self._host_networks = routes.local_destinations()
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._server: _Server | None = None

    def start(self) -> None:
        self._server = _Server(self)
        self._server.serve_in_background("mle-gym-egress-proxy")

    def close(self) -> None:
        """Stop answering and cut open connections, giving their lines a moment to be
        written (`_CLOSE_WAIT`)."""
        if self._server is not None:
            self._server.stop()
            self._server = None
        with self._lock:
            for sock in list(self._open):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        deadline = time.monotonic() + _CLOSE_WAIT
        while self._open and time.monotonic() < deadline:
            time.sleep(0.02)
        self.socket_path.unlink(missing_ok=True)

    def close_log(self) -> None:
        self.log.close()

    def summary(self) -> dict[str, Any]:
        """What `info["network"]` and the integrity record show."""
        with self._lock:
            hosts = sorted(self.hosts)
            return {
                "policy": self.policy.name,
                "requests": self.requests,
                "denied": self.denied,
                "distinct_hosts": len(hosts),
                "hosts": hosts[:MAX_LISTED_HOSTS],
                "bytes_sent": self.bytes_up,
                "bytes_received": self.bytes_down,
                "refused_connections": self.strangers,
                "log": str(self.log.path),
                "log_lines_dropped": self.log.dropped,
            }

    # -- what a request may reach -------------------------------------------------------
    def judge(self, host: str, port: int, path: str | None) -> str:
        """The allowing rule; `_Refusal` when the policy, the port or the host says no."""
        verdict = self.policy.judge(host, path)
        if not verdict.allowed:
            raise _Refusal(403, "denied", verdict.rule)
        if host not in self.test_upstreams and port not in PORTS:
            raise _Refusal(403, "refused", f"port {port}: the proxy connects to 80 and 443 only")
        return verdict.rule

    def dial(self, host: str, port: int) -> socket.socket:
        """A connection to `host`, at an address the guard allows."""
        if host in self.test_upstreams:
            return socket.create_connection(self.test_upstreams[host], timeout=CONNECT_TIMEOUT)
        try:
            found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise _Refusal(502, "failed", f"{host} could not be resolved: {exc}") from exc
        addresses = [entry[4][0] for entry in found]
        for address in addresses:  # one forbidden address refuses the name: no retry past it
            why = forbidden_address(address, self._host_networks)
            if why is not None:
                raise _Refusal(403, "refused", f"{host} resolves to {why}")
        failure: OSError | None = None
        for entry in found:
            sock = socket.socket(entry[0], socket.SOCK_STREAM)
            sock.settimeout(CONNECT_TIMEOUT)
            try:
                sock.connect(entry[4])
                return sock
            except OSError as exc:
                sock.close()
                failure = exc
        raise _Refusal(502, "failed", f"{host}:{port} could not be reached: {failure}")

    def record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self.requests += 1
            self.denied += entry["verdict"] in ("denied", "refused")
            if entry["verdict"] == "allowed":
                self.hosts.add(entry["host"])
            self.bytes_up += entry.get("bytes_sent", 0)
            self.bytes_down += entry.get("bytes_received", 0)
        self.log.write(entry)

    def track(self, sock: socket.socket, open_: bool) -> None:
        with self._lock:
            (self._open.add if open_ else self._open.discard)(sock)


def _pump(source: socket.socket, sink: socket.socket, counted: list[int], index: int) -> None:
    """Copy until `source` ends or idles out, counting bytes, then half-close `sink`."""
    try:
        while data := source.recv(_CHUNK):
            sink.sendall(data)
            counted[index] += len(data)
    except OSError:
        pass
    finally:
        try:
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mle-gym-egress"
    server: _Server

    def setup(self) -> None:
        self.timeout = self.server.proxy.idle_timeout
        super().setup()

    def log_message(self, *_args: Any) -> None:  # the JSON Lines log says it all
        pass

    def _refuse(self, refusal: _Refusal) -> None:
        body = f"mle_gym egress proxy: {refusal.verdict}: {refusal.rule}\n".encode()
        self.close_connection = True
        self.send_response(refusal.status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def _entry(self, method: str, host: str, port: int) -> dict[str, Any]:
        return {"time": time.time(), "method": method, "host": host, "port": port}

    def _finish(self, entry: dict[str, Any], clock: float, refusal: _Refusal | None) -> None:
        if refusal is not None:
            entry.update(status=refusal.status, verdict=refusal.verdict, rule=refusal.rule)
            try:
                self._refuse(refusal)
            except OSError:
                pass
        entry["seconds"] = round(time.monotonic() - clock, 4)
        self.server.proxy.record(entry)

    def do_CONNECT(self) -> None:
        proxy, clock = self.server.proxy, time.monotonic()
        host, _, port_text = self.path.rpartition(":")
        host = host.strip("[]").lower()
        entry = self._entry("CONNECT", host, int(port_text) if port_text.isdigit() else 0)
        refusal: _Refusal | None = None
        try:
            if not host or not port_text.isdigit():
                raise _Refusal(400, "refused", "CONNECT needs host:port")
            entry["rule"] = proxy.judge(host, entry["port"], None)
            upstream = proxy.dial(host, entry["port"])
        except _Refusal as exc:
            refusal = exc
        if refusal is not None:
            self._finish(entry, clock, refusal)
            return
        self.close_connection = True
        self.send_response(200, "Connection established")
        self.end_headers()
        self._tunnel(entry, upstream, clock)

    def _tunnel(self, entry: dict[str, Any], upstream: socket.socket, clock: float) -> None:
        proxy, client = self.server.proxy, self.connection
        counted = [0, 0]
        proxy.track(upstream, True)
        try:
            upstream.settimeout(proxy.idle_timeout)
            first = client.recv(_CHUNK)
            name = server_name(first) if first else None
            if name is not None:
                entry["sni"] = name
                verdict = proxy.policy.judge(name, None)
                if name.lower() != entry["host"] and not verdict.allowed:
                    entry.update(status=403, verdict="denied", rule=f"server name: {verdict.rule}")
                    return
            entry.update(status=200, verdict="allowed")
            if first:
                upstream.sendall(first)
                counted[0] += len(first)
            back = threading.Thread(target=_pump, args=(upstream, client, counted, 1), daemon=True)
            back.start()
            _pump(client, upstream, counted, 0)
            back.join()
        except OSError as exc:
            entry.setdefault("verdict", "allowed")
            entry["error"] = f"{type(exc).__name__}: {exc}"[:200]
        finally:
            self._settle(upstream, entry, counted, clock)

    def _plain(self) -> None:
        proxy, clock, method = self.server.proxy, time.monotonic(), self.command
        parts = urlsplit(self.path)
        host = (parts.hostname or "").lower()
        try:
            port = parts.port or 80
        except ValueError:
            port = 0
        entry = self._entry(method, host, port)
        entry["url"] = self.path[:2048]
        refusal: _Refusal | None = None
        upstream: socket.socket | None = None
        try:
            if parts.scheme != "http" or not host or not port:
                raise _Refusal(400, "refused", "a proxied request needs an absolute http:// URL")
            length = self._body_length()
            entry["rule"] = proxy.judge(host, port, parts.path or "/")
            upstream = proxy.dial(host, port)
        except _Refusal as exc:
            refusal = exc
        if refusal is not None or upstream is None:
            self._finish(entry, clock, refusal)
            return
        self.close_connection = True
        counted = [0, 0]
        proxy.track(upstream, True)
        try:
            upstream.settimeout(proxy.idle_timeout)
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            # the Host header is the judged URL's: a client's own could name a denied site
            # served from the same address
            head = [f"{method} {target} HTTP/1.1", f"Host: {parts.netloc}"]
            head += [
                f"{name}: {value}"
                for name, value in self.headers.items()
                if name.lower() not in _HOP_HEADERS and name.lower() != "host"
            ]
            head.append("Connection: close")
            data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
            upstream.sendall(data)
            counted[0] += len(data)
            left = length
            while left:
                chunk = self.rfile.read(min(left, _CHUNK))
                if not chunk:
                    break
                upstream.sendall(chunk)
                counted[0] += len(chunk)
                left -= len(chunk)
            status_line = b""
            while data := upstream.recv(_CHUNK):
                if not status_line:
                    status_line = data.split(b"\r\n", 1)[0]
                self.connection.sendall(data)
                counted[1] += len(data)
            fields = status_line.split(b" ", 2)
            entry["status"] = int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else None
            entry["verdict"] = "allowed"
        except OSError as exc:
            entry["verdict"] = "allowed"
            entry["error"] = f"{type(exc).__name__}: {exc}"[:200]
        finally:
            self._settle(upstream, entry, counted, clock)

    def _settle(
        self, upstream: socket.socket, entry: dict[str, Any], counted: list[int], clock: float
    ) -> None:
        """A forwarded exchange is over: close its upstream, log it with its byte counts."""
        upstream.close()
        entry["bytes_sent"], entry["bytes_received"] = counted
        self._finish(entry, clock, None)
        self.server.proxy.track(upstream, False)

    def _body_length(self) -> int:
        """The request body's length, refused before any of it is read when too large or
        of no declared length."""
        if self.headers.get("Transfer-Encoding"):
            raise _Refusal(411, "refused", "a request body needs a Content-Length")
        text = self.headers.get("Content-Length", "0").strip() or "0"
        if not text.isdigit() or len(text) > 15:
            raise _Refusal(400, "refused", "a malformed Content-Length")
        if int(text) > self.server.proxy.max_request_bytes:
            limit = self.server.proxy.max_request_bytes
            raise _Refusal(413, "refused", f"a request body over {limit} bytes")
        return int(text)

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _plain
