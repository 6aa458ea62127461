"""The egress proxy of network="proxy" against a direct local fetch, same run.

    python benchmarks/net_proxy.py [--backend local|docker] [--requests N] [--megabytes M]

A server on this machine's loopback stands in for the internet (the proxy's resolver is
mapped to it by the test-only hook `egress_setup.test_upstreams`). The same Python client
(urllib) runs twice:
- through the proxy: inside an episode's sandbox, whose only way out is the relay on its
  loopback, the host's proxy (policy check, resolution, log line) and the upstream;
- direct: on the host, straight to the upstream at 127.0.0.1 (no proxy).
Rows: per-request latency of a small GET (median and 95th percentile over N) and download
throughput of one M-megabyte body; ratio = proxy / direct (latency) or direct / proxy
(throughput): how many times slower the proxy is.
"""

from __future__ import annotations

import argparse
import http.server
import json
import shlex
import subprocess
import sys
import threading

import gymnasium as gym

import mle_gym  # noqa: F401
from mle_gym.envs import egress_setup

#: The client both ways run: timings of N small GETs and one large one, as JSON.
CLIENT = """
import json, sys, time, urllib.request
base, n, proxied = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
opener = urllib.request.build_opener(*([] if proxied else [urllib.request.ProxyHandler({})]))
small = []
for _ in range(n):
    start = time.perf_counter()
    opener.open(base + "/small").read()
    small.append(time.perf_counter() - start)
start = time.perf_counter()
size = len(opener.open(base + "/big").read())
print(json.dumps({"small": small, "big_seconds": time.perf_counter() - start, "size": size}))
"""


def _server(megabytes: int) -> http.server.ThreadingHTTPServer:
    big = b"x" * (megabytes * 1024**2)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_args: object) -> None:
            pass

        def do_GET(self) -> None:
            body = big if self.path == "/big" else b"ok"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("local", "docker"), default="local")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--megabytes", type=int, default=256)
    args = parser.parse_args()
    server = _server(args.megabytes)
    port = server.server_address[1]
    direct = json.loads(
        subprocess.run(
            [sys.executable, "-c", CLIENT, f"http://127.0.0.1:{port}", str(args.requests), "0"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    egress_setup.test_upstreams["bench.test"] = ("127.0.0.1", port)
    with gym.make(
        "mle/sklearn-digits-v0",
        backend=args.backend,
        network="proxy",
        network_policy={"allow": ["bench.test"]},
        max_output_chars=100_000,
    ) as env:
        env.reset(seed=0)
        command = f"python3 -c {shlex.quote(CLIENT)} http://bench.test {args.requests} 1 | tail -1"
        observation, *_, info = env.step({"tool": "bash", "command": command})
        proxied = json.loads(observation.strip().splitlines()[-1])
        requests = info["network"]["requests"]
    server.shutdown()
    assert proxied["size"] == direct["size"] == args.megabytes * 1024**2

    print(f"[{args.backend}] {args.requests} small GETs, one {args.megabytes} MB GET")
    for name, share in (("latency p50", 0.5), ("latency p95", 0.95)):
        ours, anchor = _percentile(proxied["small"], share), _percentile(direct["small"], share)
        print(
            f"{name:<12} proxy {ours * 1000:8.2f} ms | direct {anchor * 1000:8.2f} ms | "
            f"ratio {ours / anchor:6.2f}"
        )
    mb = args.megabytes
    ours, anchor = mb / proxied["big_seconds"], mb / direct["big_seconds"]
    print(
        f"{'throughput':<12} proxy {ours:8.1f} MB/s | direct {anchor:8.1f} MB/s | "
        f"ratio {anchor / ours:6.2f}"
    )
    print(f"requests logged by the proxy: {requests}")


if __name__ == "__main__":
    main()
