"""Step and reset latency of the env against the cheapest way to run a command, same run.

    python benchmarks/step_latency.py [--backend local|docker|both] [--repeats N]

local:  median env.step("true") against spawning `bash -c true` directly (subprocess),
        median reset() (lazy: no sandbox yet) against reset() + start() (eager), and close().
docker: median env.step("true") against a raw `docker exec <container> true` through the
        SDK, median reset() against reset() + start() (a container start), and close().

Run it with PYTHONPATH pointing at another checkout to measure that version the same way.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym

import mle_gym  # noqa: F401


def median_ms(fn: Callable[[], object], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def bench(backend: str, repeats: int) -> None:
    env = gym.make("mle/sklearn-digits-v0", backend=backend)
    env.reset(seed=0)
    env.unwrapped.start()
    step = median_ms(lambda: env.step("true"), repeats)
    if backend == "local":
        baseline_name = "subprocess bash -c true"
        baseline = median_ms(lambda: subprocess.run(["bash", "-c", "true"], check=True), repeats)
    else:
        container = env.unwrapped.sandbox.container
        baseline_name = "docker exec <container> true"
        baseline = median_ms(lambda: container.exec_run(["true"]), repeats)
    resets = max(5, repeats // 20)
    reset = median_ms(lambda: env.reset(), resets)

    def eager() -> None:
        env.reset()
        env.unwrapped.start()

    eager_reset = median_ms(eager, resets)
    closes = []
    for _ in range(resets):
        env.reset()
        env.unwrapped.start()
        start = time.perf_counter()
        env.close()
        closes.append((time.perf_counter() - start) * 1000)
    print(f"[{backend}] env.step('true')      median {step:8.2f} ms  ({repeats} steps)")
    print(f"[{backend}] {baseline_name:<24} median {baseline:8.2f} ms")
    print(f"[{backend}] ratio step / baseline: {step / baseline:.2f}")
    print(f"[{backend}] env.reset() (lazy)     median {reset:8.2f} ms  ({resets} resets)")
    print(
        f"[{backend}] reset() + start()      median {eager_reset:8.2f} ms  (the sandbox started "
        f"at reset, as before issue 13); lazy / eager {reset / eager_reset:.3f}"
    )
    print(f"[{backend}] env.close()            median {statistics.median(closes):8.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", choices=("local", "docker", "both"), default="both")
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        import os

        os.environ.setdefault("MLE_GYM_HOME", str(Path(home)))
        for backend in ("local", "docker") if args.backend == "both" else (args.backend,):
            bench(backend, args.repeats)


if __name__ == "__main__":
    main()
