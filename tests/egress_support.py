"""Stand-ins for the internet behind the egress proxy: an HTTP server on this machine that
answers every GET with its path, and serves a one-package Python index under /simple."""

from __future__ import annotations

import http.server
import io
import socket
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: The package the local index holds, and what importing it prints.
PACKAGE = "mlegymtiny"
GREETING = "tiny package from the local index"


def tiny_wheel() -> tuple[str, bytes]:
    """A pure-Python wheel of `PACKAGE` (its name and bytes)."""
    info = f"{PACKAGE}-0.1.dist-info"
    files = {
        f"{PACKAGE}.py": f"GREETING = {GREETING!r}\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {PACKAGE}\nVersion: 0.1\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    files[f"{info}/RECORD"] = "".join(f"{name},,\n" for name in files) + f"{info}/RECORD,,\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return f"{PACKAGE}-0.1-py3-none-any.whl", buffer.getvalue()


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wheel = tiny_wheel()

    def log_message(self, *_args: object) -> None:
        pass

    def do_GET(self) -> None:
        name, data = self.wheel
        if self.path.rstrip("/") == f"/simple/{PACKAGE}":
            body = f'<html><body><a href="/packages/{name}">{name}</a></body></html>'.encode()
            kind = "text/html"
        elif self.path == f"/packages/{name}":
            body, kind = data, "application/octet-stream"
        elif self.path == "/host":
            body, kind = f"HOST {self.headers.get_all('Host')}".encode(), "text/plain"
        else:
            body, kind = f"HELLO {self.path}".encode(), "text/plain"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def upstream() -> Iterator[int]:
    """The stand-in server on every IPv4 address of this machine; yields its port."""
    server = http.server.ThreadingHTTPServer(("0.0.0.0", 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def ask(socket_path: Path, raw: bytes, timeout: float = 20.0) -> bytes:
    """Send `raw` to the proxy's socket as its own user would; everything it answers."""
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(timeout)
        client.connect(str(socket_path))
        answer = b""
        try:
            client.sendall(raw)
            while chunk := client.recv(1 << 16):
                answer += chunk
        except (TimeoutError, ConnectionResetError, BrokenPipeError):
            pass
        return answer
