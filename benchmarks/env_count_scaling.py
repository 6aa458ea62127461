"""How many envs one process can hold and step at once (issue 29): N = 64 ... 1024.

    python benchmarks/env_count_scaling.py [--backend local|docker] [--counts 64 128 256 ...]
                                           [--steps 5]

For each N, in this process: make N envs, start each sandbox with a background `sleep` (as
an agent's training job would be), then step all N concurrently through `astep` for
`--steps` rounds of a command that waits 0.5 s. Prints, per N: the start time of all N,
host memory per env (proportional set size of this process and everything it runs, over N),
steps per second against linear (N envs each waiting 0.5 s: N / 0.5 steps per second if
every wait overlaps), the time to close all N,
and the first failure with its message (an observation that is not the command's output
counts as a failure). Run it with PYTHONPATH pointing at another checkout to measure that
version the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time

import gymnasium as gym
from throughput import tree_pss_bytes

import mle_gym

STEP_WAIT = 0.5


class Failure(Exception):
    """A step that did not give the command's output."""


async def _step_all(envs: list, action: str, expect: str) -> None:
    results = await asyncio.gather(*(e.astep(action) for e in envs), return_exceptions=True)
    for index, result in enumerate(results):
        if isinstance(result, BaseException):
            raise Failure(f"env {index}: {type(result).__name__}: {result}")
        observation = result[0]
        if expect not in observation:
            raise Failure(f"env {index}: {observation.strip()[-300:]}")


async def one_count(env_id: str, backend: str, count: int, steps: int) -> dict:
    figures: dict = {"count": count}
    envs: list = []
    start = time.perf_counter()
    try:
        envs = [gym.make(env_id, backend=backend).unwrapped for _ in range(count)]
        await asyncio.gather(*(e.areset(seed=i) for i, e in enumerate(envs)))
        await _step_all(envs, "(sleep 3600 &) ; echo started", "started")
        figures["start_s"] = time.perf_counter() - start
        figures["mib_per_env"] = tree_pss_bytes(os.getpid()) / count / 2**20
        begin = time.perf_counter()
        for _ in range(steps):
            await _step_all(envs, f"sleep {STEP_WAIT}; echo stepped", "stepped")
        figures["steps_per_s"] = count * steps / (time.perf_counter() - begin)
    except Exception as exc:  # the first failure is the figure this benchmark looks for
        figures["failure"] = f"{type(exc).__name__}: {exc}"[:400]
    finally:
        begin = time.perf_counter()
        for env in envs:
            env.close()
        figures["close_s"] = time.perf_counter() - begin
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="local", choices=["local", "docker"])
    parser.add_argument("--counts", type=int, nargs="+", default=[64, 128, 256, 512, 1024])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--competition", default="sklearn-digits")
    args = parser.parse_args()
    env_id = f"mle/{args.competition}-v0"
    print(f"mle_gym from {os.path.dirname(mle_gym.__file__)}, backend {args.backend}")
    with tempfile.TemporaryDirectory() as home:
        os.environ.setdefault("MLE_GYM_HOME", home)
        gym.make(env_id).close()  # prepares the demo competition when needed
        for count in args.counts:
            got = asyncio.run(one_count(env_id, args.backend, count, args.steps))
            rate = got.get("steps_per_s")
            linear = f"{rate / (count / STEP_WAIT):5.2f} of linear" if rate else "-"
            print(
                f"N={count:5d}: start {got.get('start_s', float('nan')):7.1f} s | "
                f"{got.get('mib_per_env', float('nan')):6.2f} MiB/env | "
                f"{rate or float('nan'):8.1f} steps/s ({linear}) | "
                f"close {got['close_s']:6.1f} s | "
                f"failure: {got.get('failure', 'none')}",
                flush=True,
            )


if __name__ == "__main__":
    main()
