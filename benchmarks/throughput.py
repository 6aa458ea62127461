"""Throughput of `mle_gym.make_vec` on the local backend for 1, 2, 4 and 8 parallel envs.

    python benchmarks/throughput.py [--episodes-per-env 3] [--envs 1 2 4 8]

Every sub-env plays the same short scripted episode (look at the data, write a file, copy
the sample submission, validate, submit: 6 steps, no training) again and again through the
vector env's autoreset. Printed per row: agent steps per second and episodes per hour (the
autoreset steps are not counted as agent steps, but their time is), each as a ratio to the
1-env row of the same run; a "sync" row (sub-envs stepped one after the other) shows what the
overlap buys. Memory each env adds: the proportional set size (PSS: shared pages split
between the processes that map them, so the sum is what the processes really hold) of this
process and everything it runs (the worker processes and their sandboxes: bwrap, bash) with
all envs up, minus this process's PSS before the vector env was made, divided by the number
of envs.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

ENV_ID = "mle/sklearn-digits-v0"
EPISODE: list[Any] = [
    "ls /home/data",
    "head -n 3 /home/data/train.csv | cut -c 1-80",
    {"tool": "create", "path": "/home/code/notes.txt", "file_text": "baseline: sample\n"},
    "cp /home/data/sample_submission.csv /home/submission/submission.csv",
    {"tool": "validate"},
    {"tool": "submit"},
]


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def pss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no Pss line for process {pid}")


def tree_pss_bytes(root: int) -> int:
    """PSS of `root` and all its descendants."""
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        try:
            total += pss_bytes(pid)
            stack += _children(pid)
        except OSError:  # ended meanwhile
            continue
    return total


def run(num_envs: int, episodes_per_env: int, mode: str) -> dict[str, float]:
    import mle_gym

    before = pss_bytes(os.getpid())
    env = mle_gym.make_vec(ENV_ID, num_envs, vectorization_mode=mode, step_timeout=60)
    try:
        started = time.perf_counter()
        env.reset(seed=0)
        memory = None  # measured once the first step has started every sandbox
        position = [0] * num_envs  # next action of each sub-env; -1: its next step resets it
        finished = [0] * num_envs
        steps = 0
        while min(finished) < episodes_per_env:
            actions = [EPISODE[p] if p >= 0 else "true" for p in position]
            _, _, terminated, truncated, _ = env.step(actions)
            if memory is None:
                memory = (tree_pss_bytes(os.getpid()) - before) / num_envs
            for i in range(num_envs):
                if position[i] < 0:
                    position[i] = 0
                    continue
                steps += 1
                position[i] += 1
                if terminated[i] or truncated[i]:
                    finished[i] += 1
                    position[i] = -1
        seconds = time.perf_counter() - started
    finally:
        env.close()
    return {
        "steps_per_s": steps / seconds,
        "episodes_per_h": sum(finished) / seconds * 3600,
        "seconds": seconds,
        "pss_per_env": memory,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--episodes-per-env", type=int, default=10)
    parser.add_argument("--envs", type=int, nargs="+", default=[1, 2, 4, 8])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["MLE_GYM_HOME"] = home
        run(1, 1, "sync")  # warm-up: imports and data preparation, so no row pays for them
        rows = [(f"{n}", run(n, args.episodes_per_env, "async")) for n in args.envs]
        sync_n = 4 if 4 in args.envs else args.envs[-1]
        rows.append((f"{sync_n} sync", run(sync_n, args.episodes_per_env, "sync")))
    base = rows[0][1]
    print(
        f"local backend, {len(EPISODE)}-step scripted episode, {args.episodes_per_env} "
        f"episodes per env, {os.cpu_count()} CPUs"
    )
    print(
        f"{'envs':>7} {'steps/s':>9} {'x 1 env':>8} {'episodes/h':>11} {'x 1 env':>8} "
        f"{'wall s':>7} {'PSS/env MiB':>12}"
    )
    for name, r in rows:
        print(
            f"{name:>7} {r['steps_per_s']:9.1f} {r['steps_per_s'] / base['steps_per_s']:8.2f} "
            f"{r['episodes_per_h']:11.0f} {r['episodes_per_h'] / base['episodes_per_h']:8.2f} "
            f"{r['seconds']:7.1f} {r['pss_per_env'] / 2**20:12.1f}"
        )


if __name__ == "__main__":
    main()
