"""The sandbox's one network route: TCP on its own loopback, relayed to the host's proxy.

The sandbox has no network interface but its loopback, so the harness cannot reach the
host's proxy over TCP. This script runs *inside* the sandbox (with whatever Python 3 is
there: it imports the standard library only) and listens on 127.0.0.1:PORT; each
connection is piped, byte for byte, to the proxy's unix socket, which reaches the sandbox
through a read-only bind of its directory (connecting to a socket needs no write access).
It knows nothing of HTTP: the proxy on the host decides what is answered.

    python3 -I relay.py HOST PORT SOCKET_PATH

The command returns once the port listens (the relay goes on in a session of its own), so
whatever runs next can connect at once.
"""

from __future__ import annotations

import os
import socket
import sys
import threading

_CHUNK = 1 << 16


def _pump(source: socket.socket, sink: socket.socket) -> None:
    """Copy until `source` ends, then tell `sink` that nothing more comes."""
    try:
        while data := source.recv(_CHUNK):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        try:
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def _relay(client: socket.socket, path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:  # the proxy is gone (the episode is over): the client sees a reset
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_relay, args=(client, path), daemon=True).start()


def main(argv: list[str]) -> None:
    host, port, path = argv
    listener = socket.create_server((host, int(port)), backlog=128)
    if os.fork():  # the parent returns once the port listens
        os._exit(0)
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    _serve(listener, path)


if __name__ == "__main__":
    main(sys.argv[1:])
