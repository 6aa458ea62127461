"""Cold start and step overhead of each sandbox: local (bubblewrap), docker, docker + gVisor.

    python benchmarks/sandbox_overhead.py [--repeats N] [--starts N]

All three are measured in one run, on the same machine and the demo competition, with the
host itself (`bash -c CMD` in a subprocess, no sandbox) as the baseline of each command:

- cold start: the median of reset() + start() (a fresh workspace, bwrap process or container);
- step: the median env.step(CMD) for a no-op (`true`: the harness's own cost per step), a
  Python start (`python3 -c pass`: hundreds of file system calls), 100,000 `stat` calls
  (where gVisor's kernel in user space costs most) and pure Python arithmetic (few system
  calls). The same commands on every sandbox: the host's Python locally, the image's in
  docker (both Debian's python3).

Every command must succeed, or the run stops: a failing command would be timed as fast.
The sandboxes take turns, one sample each in every round, so a change in the machine's load
falls on all of them alike. On a busy machine they still compete differently for the CPU
(containers sit in Docker's own cgroup, the host's commands and the local sandbox do not):
docker and docker + runsc are placed alike, so their ratio is the steadier figure.

docker + runsc needs the engine to know the runtime (.ci/docker-up.sh registers it); without
it that column says why and the others are still measured.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import gymnasium as gym

import mle_gym  # noqa: F401

SANDBOXES = {
    "local": {"backend": "local"},
    "docker": {"backend": "docker"},
    "docker+runsc": {"backend": "docker", "sandbox_options": {"runtime": "runsc"}},
}
COMMANDS = {
    "true": "true",
    "python3 -c pass": "python3 -c pass",
    "100k stat calls": "python3 -c 'import os; [os.stat(\"/tmp\") for _ in range(100_000)]'",
    "python arithmetic": "python3 -c 'sum(i * i for i in range(2_000_000))'",
}


def timed_ms(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def on_host(command: str, repeats: int) -> float:
    run = ["bash", "-c", command]
    return statistics.median(
        timed_ms(lambda: subprocess.run(run, check=True, capture_output=True))
        for _ in range(repeats)
    )


def succeeded(env: gym.Env, command: str) -> None:
    *_, info = env.step(command)
    if info["exit_code"] != 0:
        raise RuntimeError(f"{command!r} failed in the sandbox (exit {info['exit_code']})")


def cold_start(env: gym.Env) -> None:
    env.reset()
    env.unwrapped.start()


def measure(envs: dict[str, gym.Env], repeats: int, starts: int) -> dict[str, dict[str, float]]:
    """{sandbox: {"cold start": ms, command name: ms, ...}}, the sandboxes taking turns."""
    samples: dict[str, dict[str, list[float]]] = {label: {} for label in envs}
    for _ in range(starts):
        for label, env in envs.items():
            samples[label].setdefault("cold start", []).append(timed_ms(partial(cold_start, env)))
    for name, command in COMMANDS.items():
        for env in envs.values():
            succeeded(env, command)  # and warm: the first run of a command reads its files
        for _ in range(_repeats(name, repeats)):
            for label, env in envs.items():
                samples[label].setdefault(name, []).append(timed_ms(partial(env.step, command)))
    return {
        label: {row: statistics.median(values) for row, values in rows.items()}
        for label, rows in samples.items()
    }


def _repeats(name: str, repeats: int) -> int:
    return repeats if name == "true" else max(3, repeats // 10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=50, help="steps of `true` per sandbox")
    parser.add_argument("--starts", type=int, default=5, help="cold starts per sandbox")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ.setdefault("MLE_GYM_HOME", str(Path(home)))
        host = {name: on_host(cmd, _repeats(name, args.repeats)) for name, cmd in COMMANDS.items()}
        envs: dict[str, gym.Env] = {}
        for label, options in SANDBOXES.items():
            try:
                envs[label] = gym.make("mle/sklearn-digits-v0", step_timeout=600, **options)
            except Exception as exc:  # one sandbox missing must not lose the others' figures
                print(f"[{label}] not measured: {exc}")
        try:
            results = measure(envs, args.repeats, args.starts)
        finally:
            for env in envs.values():
                env.close()
    rows = ["cold start", *COMMANDS]
    labels = list(results)
    print(f"{'median ms':<20}{'host':>10}" + "".join(f"{label:>14}" for label in labels))
    for row in rows:
        cells = "".join(f"{results[label][row]:14.1f}" for label in labels)
        print(f"{row:<20}{host.get(row, float('nan')):10.1f}{cells}")
    if "local" in results:
        print("\nratio against local (same run):")
        for row in rows:
            ratios = "".join(
                f"{results[label][row] / results['local'][row]:14.2f}" for label in labels
            )
            print(f"{row:<30}{ratios}")
    if "docker" in results and "docker+runsc" in results:
        print("\nratio docker+runsc / docker (same run):")
        for row in rows:
            print(f"{row:<30}{results['docker+runsc'][row] / results['docker'][row]:14.2f}")


if __name__ == "__main__":
    main()
