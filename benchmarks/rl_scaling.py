"""What a GRPO group of one competition costs: memory and disk per extra env, and 8 envs
stepped from one asyncio loop against 8 in a `make_vec` vector env (issue 13).

    python benchmarks/rl_scaling.py [--envs 1 2 4 8] [--steps 30] [--competition sklearn-digits]

Memory: N envs of one competition, each with its sandbox started, made in this process;
the proportional set size (PSS) of this process and everything it runs, minus that with one
env, divided by N - 1. Disk: bytes the N envs' own folders hold (workspaces, logs) against
the size of the public tree they all mount read-only: the public data is not copied per env.
Throughput: `--steps` steps of `true` per env, 8 envs through `env.unwrapped.astep` on one
event loop, then 8 envs through `mle_gym.make_vec` (worker processes), in steps per second.
Lazy reset against the eager sandbox start is printed by benchmarks/step_latency.py.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import gymnasium as gym
from throughput import tree_pss_bytes

import mle_gym
from mle_gym.sandbox.scratch import OWNER_FILE, PREFIX


def _tree_bytes(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                continue
    return total


def _own_folders_bytes() -> int:
    """Disk held by this process's scratch folders (the envs' workspaces and logs)."""
    total = 0
    for folder in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        try:
            owner = (folder / OWNER_FILE).read_text()
        except OSError:
            continue
        if owner.startswith(f"{os.getpid()}:"):
            total += _tree_bytes(folder)
    return total


def memory_and_disk(env_id: str, counts: list[int]) -> None:
    public = Path(os.environ["MLE_GYM_HOME"]) / env_id.split("/")[1][:-3] / "public"
    base = None
    for count in counts:
        envs = [gym.make(env_id) for _ in range(count)]
        try:
            for env in envs:
                env.reset()
                env.step("true")
            pss = tree_pss_bytes(os.getpid())
            own = _own_folders_bytes()
            base = base if base is not None else (count, pss)
            extra = (pss - base[1]) / (count - base[0]) if count > base[0] else float("nan")
            print(
                f"{count} envs: tree PSS {pss / 2**20:8.1f} MiB, per extra env "
                f"{extra / 2**20:7.1f} MiB | envs' own folders {own / 2**10:8.1f} KiB in all, "
                f"public tree {_tree_bytes(public) / 2**20:.1f} MiB, mounted in each, not copied",
                flush=True,
            )
        finally:
            for env in envs:
                env.close()


async def _asyncio_steps(env_id: str, count: int, steps: int) -> float:
    envs = [gym.make(env_id).unwrapped for _ in range(count)]
    try:
        await asyncio.gather(*(e.areset(seed=i) for i, e in enumerate(envs)))
        await asyncio.gather(*(e.astep("true") for e in envs))  # start the sandboxes

        async def run(env) -> None:
            for _ in range(steps):
                await env.astep("true")

        start = time.perf_counter()
        await asyncio.gather(*(run(e) for e in envs))
        return count * steps / (time.perf_counter() - start)
    finally:
        for env in envs:
            env.close()


def _vector_steps(env_id: str, count: int, steps: int) -> float:
    env = mle_gym.make_vec(env_id, count)
    try:
        env.reset(seed=0)
        env.step(["true"] * count)
        start = time.perf_counter()
        for _ in range(steps):
            env.step(["true"] * count)
        return count * steps / (time.perf_counter() - start)
    finally:
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--competition", default="sklearn-digits")
    args = parser.parse_args()
    env_id = f"mle/{args.competition}-v0"
    with tempfile.TemporaryDirectory() as home:
        os.environ.setdefault("MLE_GYM_HOME", home)
        gym.make(env_id).close()  # prepares the demo competition when needed
        memory_and_disk(env_id, args.envs)
        loop = asyncio.run(_asyncio_steps(env_id, 8, args.steps))
        vector = _vector_steps(env_id, 8, args.steps)
        print(
            f"8 envs, {args.steps} steps each: asyncio astep {loop:7.1f} steps/s | make_vec "
            f"{vector:7.1f} steps/s | ratio asyncio / make_vec {loop / vector:.2f}"
        )


if __name__ == "__main__":
    main()
