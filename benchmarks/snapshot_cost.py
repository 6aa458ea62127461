"""What submission snapshots cost per step, same run: env.step("true") with an unchanged
submission present, snapshots on against snapshots off, and a step that changes it.

    python benchmarks/snapshot_cost.py [--backend local|docker|both] [--repeats N] [--rows N]

An unchanged submission costs one stat of the file after the step (the stamp matches);
a changed one costs a copy out and a sha256 of the file; looks after steps are spaced
so they take at most 5% of the episode's time (mle_gym/envs/snapshots.py). Steps alternate
between the two envs so drift in the machine's load falls on both alike.
"""

from __future__ import annotations

import argparse
import statistics
import time

from mle_gym.envs import CompetitionEnv

SUBMISSION = "/home/submission/submission.csv"


def _ms(env: CompetitionEnv, action: str) -> float:
    start = time.perf_counter()
    env.step(action)
    return (time.perf_counter() - start) * 1000


def bench(backend: str, repeats: int, rows: int) -> None:
    envs = {
        on: CompetitionEnv(
            "sklearn-digits", backend=backend, max_steps=10 * repeats + 10, snapshots=on
        )
        for on in (True, False)
    }
    try:
        write = f"seq 1 {rows} | sed 's/^/img_,/' > {SUBMISSION}"
        for env in envs.values():
            env.reset(seed=0)
            env.step(write)
        unchanged: dict[bool, list[float]] = {True: [], False: []}
        changed: dict[bool, list[float]] = {True: [], False: []}
        for i in range(repeats):
            for on, env in envs.items():
                unchanged[on].append(_ms(env, "true"))
                changed[on].append(_ms(env, f"echo {i} >> {SUBMISSION}"))
        med = {k: {on: statistics.median(v) for on, v in d.items()}
               for k, d in (("unchanged", unchanged), ("changed", changed))}  # fmt: skip
        print(f"{backend}: {repeats} steps each, submission of {rows:,} rows")
        for kind, figures in med.items():
            extra = figures[True] - figures[False]
            print(
                f"  step, submission {kind:9}: off {figures[False]:7.2f} ms, "
                f"on {figures[True]:7.2f} ms, cost {extra:+.2f} ms/step"
            )
        env = envs[True]
        looks = []
        for _ in range(repeats // 4 or 1):
            start = time.perf_counter()
            env._snapshot(force=True)
            looks.append((time.perf_counter() - start) * 1000)
        print(
            f"  one look at an unchanged file (validate's, never skipped): "
            f"{statistics.median(looks):.2f} ms"
        )
        print(
            f"  snapshots kept: {len(env._snapshots.kept)} (looks after steps are spaced "
            "to take at most 5% of the time)"
        )
    finally:
        for env in envs.values():
            env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", choices=("local", "docker", "both"), default="local")
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    for backend in ("local", "docker") if args.backend == "both" else (args.backend,):
        bench(backend, args.repeats, args.rows)


if __name__ == "__main__":
    main()
