"""How many envs one process can hold, start, step and close at once: N = 64 ... 1024.

    python benchmarks/env_count_scaling.py [--backend local|docker] [--counts 64 128 256 ...]
                                           [--steps 5]

For each N, in this process: make N envs, start each sandbox with a background `sleep` (as
an agent's training job would be), all at once through `areset` and `astep`, then step all
N concurrently for `--steps` rounds of a command that waits 0.5 s, then close all N at once
(`aclose`). Prints, per N: the start time of all N and per env, host memory per env
(proportional set size of this process and everything it runs, over N), steps per second
against linear (N envs each waiting 0.5 s: N / 0.5 steps per second if every wait
overlaps), the close time of all N and per env, the CPU time per env (this process and the
sandbox processes it reaped: on a shared machine the figure that other work does not
inflate), the load average, and the first failure with its message (an observation that is
not the command's output counts as a failure).

Beside each N, measured in the same run: N bare sandboxes of the backend's own tool, all
started at once and waited for (`bwrap ... true`, or `docker run --rm IMAGE true` with at
most 8 at a time, the cap mle_gym's docker starts have): the floor a start can approach.
Run it with PYTHONPATH pointing at another checkout to measure that version the same way
(a version without `aclose` closes its envs one after the other, as it did).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import tempfile
import time

import gymnasium as gym
from throughput import tree_pss_bytes

import mle_gym

STEP_WAIT = 0.5


def cpu_seconds() -> float:
    """CPU time of this process and of the processes it has reaped (sandboxes, once closed)."""
    own, reaped = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime


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
    cpu = cpu_seconds()
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
        if envs and hasattr(envs[0], "aclose"):
            await asyncio.gather(*(e.aclose() for e in envs), return_exceptions=True)
        else:  # a version without aclose
            for env in envs:
                env.close()
        figures["close_s"] = time.perf_counter() - begin
        figures["cpu_s"] = cpu_seconds() - cpu
    return figures


async def bare_starts(argv: list[str], count: int, at_once: int | None) -> tuple[float, float]:
    """Seconds (wall and CPU) to run `argv` `count` times, at most `at_once` at a time
    (None: all)."""
    gate = asyncio.Semaphore(at_once or count)

    async def one() -> None:
        async with gate:
            proc = await asyncio.create_subprocess_exec(
                *argv, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
            )
            _, err = await proc.communicate()
            if proc.returncode != 0:
                raise RuntimeError(f"{' '.join(argv)}: {err.decode(errors='replace')[-300:]}")

    begin, cpu = time.perf_counter(), cpu_seconds()
    await asyncio.gather(*(one() for _ in range(count)))
    return time.perf_counter() - begin, cpu_seconds() - cpu


def bare_argv(env_id: str, backend: str) -> tuple[list[str], int | None]:
    """The backend's own tool starting an empty sandbox, and how many run at once."""
    if backend == "docker":
        env = gym.make(env_id, backend="docker").unwrapped
        image = env.sandbox.image
        env.close()
        return [shutil.which("docker") or "docker", "run", "--rm", "--network", "none", image,
                "true"], 8  # fmt: skip
    bwrap = ["bwrap", "--die-with-parent", "--unshare-all", "--ro-bind", "/usr", "/usr"]
    for name in ("bin", "lib", "lib64"):
        top = f"/{name}"
        if os.path.islink(top):
            bwrap += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            bwrap += ["--ro-bind", top, top]
    return [*bwrap, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "true"], None


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
        bare, at_once = bare_argv(env_id, args.backend)
        print(f"bare: {' '.join(bare[:3])} ... {' '.join(bare[-2:])}, "
              f"{f'at most {at_once}' if at_once else 'all'} at once")  # fmt: skip
        for count in args.counts:
            got = asyncio.run(one_count(env_id, args.backend, count, args.steps))
            floor, floor_cpu = asyncio.run(bare_starts(bare, count, at_once))
            rate = got.get("steps_per_s")
            linear = f"{rate / (count / STEP_WAIT):5.2f} of linear" if rate else "-"
            start = got.get("start_s", float("nan"))
            print(
                f"N={count:5d}: start {start:7.1f} s ({start / count * 1000:5.1f} ms/env; "
                f"bare {floor:6.1f} s, {floor / count * 1000:5.1f} ms each) | "
                f"{got.get('mib_per_env', float('nan')):6.2f} MiB/env | "
                f"{rate or float('nan'):8.1f} steps/s ({linear}) | "
                f"close {got['close_s']:6.1f} s ({got['close_s'] / count * 1000:5.1f} ms/env) | "
                f"CPU {got['cpu_s'] / count * 1000:5.1f} ms/env "
                f"(bare {floor_cpu / count * 1000:5.1f}) | "
                f"load {os.getloadavg()[0]:4.1f} | "
                f"failure: {got.get('failure', 'none')}",
                flush=True,
            )


if __name__ == "__main__":
    main()
