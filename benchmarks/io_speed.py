"""Large outputs and the file tools, against the cheapest way to do the same work, same run.

    python benchmarks/io_speed.py [--backend local|docker|both] [--repeats N]

Rows (medians; ratio = mle_gym time / anchor time, lower is better):
- a step printing 100 MB      vs the same command captured by `subprocess` (local) or one
                                `docker exec` reading its output (docker)
- `create` of a 1 MB file     vs `bash -c 'cat > f'` fed the bytes on stdin
- `view` of a 10k-line file   vs `cat -n` run by subprocess
- `str_replace` in that file  vs spawning a Python editor (read, replace, write) in the sandbox
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable

import gymnasium as gym

import mle_gym  # noqa: F401

BIG = "head -c 100000000 /dev/zero | tr '\\0' 'x'"
ONE_MB = ("0123456789abcdef" * 4 + "\n") * (1_000_000 // 65)
TEN_K_LINES = "".join(f"line {i:05d} " + "y" * 48 + "\n" for i in range(10_000))
EDITOR = (
    "import sys; p = sys.argv[1]; t = open(p).read(); "
    "open(p, 'w').write(t.replace('line 05000 ', 'LINE 05000 ', 1))"
)


def median_s(fn: Callable[[], object], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def row(backend: str, name: str, ours: float, anchor: float, anchor_name: str) -> None:
    print(
        f"[{backend}] {name:<22} {ours * 1000:9.1f} ms | {anchor_name:<34} "
        f"{anchor * 1000:9.1f} ms | ratio {ours / anchor:5.2f}"
    )


def bench(backend: str, repeats: int) -> None:
    env = gym.make("mle/sklearn-digits-v0", backend=backend, max_output_chars=20_000)
    env.reset(seed=0)
    env.unwrapped.start()
    sandbox = env.unwrapped.sandbox
    if backend == "local":

        def run_anchor(argv: list[str], data: bytes | None = None) -> None:
            subprocess.run(argv, input=data, capture_output=True, check=True)

        scratch = tempfile.mkdtemp()
        target = os.path.join(scratch, "f")
    else:
        container = sandbox.container
        api = container.client.api

        def run_anchor(argv: list[str], data: bytes | None = None) -> None:
            if data is None:
                container.exec_run(argv, user="1000:1000")
                return
            exec_id = api.exec_create(container.id, argv, stdin=True, user="1000:1000")
            sock = api.exec_start(exec_id, socket=True)
            raw = getattr(sock, "_sock", sock)
            raw.sendall(data)
            raw.shutdown(1)
            while raw.recv(1 << 16):
                pass
            sock.close()

        target = "/tmp/anchor"

    ours = median_s(lambda: env.step(BIG), max(3, repeats // 4))
    anchor = median_s(lambda: run_anchor(["bash", "-c", BIG]), max(3, repeats // 4))
    row(backend, "step printing 100 MB", ours, anchor, "subprocess / exec capture")
    rates = f"mle_gym {100 / ours:6.0f} MB/s, anchor {100 / anchor:6.0f} MB/s"
    print(f"[{backend}]   throughput: {rates}")

    def create() -> None:
        env.step("rm -f /home/code/one_mb.txt")
        env.step({"tool": "create", "path": "/home/code/one_mb.txt", "file_text": ONE_MB})

    removal = median_s(lambda: env.step("rm -f /home/code/one_mb.txt"), repeats)
    ours = median_s(create, repeats) - removal
    anchor = median_s(
        lambda: run_anchor(["bash", "-c", f"cat > {target}"], ONE_MB.encode()), repeats
    )
    row(backend, "create 1 MB", ours, anchor, "bash -c 'cat > f' on stdin")

    env.step("rm -f /home/code/lines.txt")
    env.step({"tool": "create", "path": "/home/code/lines.txt", "file_text": TEN_K_LINES})
    run_anchor(["bash", "-c", f"cat > {target}"], TEN_K_LINES.encode())
    view = {"tool": "view", "path": "/home/code/lines.txt"}
    ours = median_s(lambda: env.step(view), repeats)
    anchor = median_s(lambda: run_anchor(["cat", "-n", target]), repeats)
    row(backend, "view 10k lines", ours, anchor, "cat -n by subprocess")

    flip = [("line 05000 ", "LINE 05000 "), ("LINE 05000 ", "line 05000 ")]
    state = {"i": 0}

    def replace() -> None:
        old, new = flip[state["i"] % 2]
        state["i"] += 1
        env.step(
            {"tool": "str_replace", "path": "/home/code/lines.txt", "old_str": old, "new_str": new}
        )

    ours = median_s(replace, repeats)
    anchor = median_s(lambda: run_anchor(["python3", "-c", EDITOR, target]), repeats)
    row(backend, "str_replace in 10k lines", ours, anchor, "python editor spawned")
    env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", choices=("local", "docker", "both"), default="both")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ.setdefault("MLE_GYM_HOME", home)
        for backend in ("local", "docker") if args.backend == "both" else (args.backend,):
            bench(backend, args.repeats)


if __name__ == "__main__":
    main()
