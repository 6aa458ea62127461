"""reset() time against the number of public files, and image placing against image count.

    python benchmarks/reset_vs_data_size.py [--backend local|docker|both] [--resets 5]
        [--files 1000 100000 1000000] [--images 1000 10000 100000]

Image competitions have public trees of 1-2.5 million files. The public folder is bind-mounted
read-only into the sandbox (bubblewrap or a container), never copied, so reset() should not
grow with it. For each size this prepares the demo competition into a fresh MLE_GYM_HOME, adds
that many empty files under public/images/ (in folders of 1,000), and prints the median
reset() and the first step that lists the folder, with the ratio to the smallest size.

Then it times `place_files` (the hard-link placing image competitions use) on growing sets of
small files in a child process each, printing time, files per second and the child's peak
memory (making the files included): it should stay flat as the count grows.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PER_FOLDER = 1000


def _fill(folder: Path, count: int) -> None:
    for start in range(0, count, PER_FOLDER):
        sub = folder / f"{start // PER_FOLDER:05d}"
        sub.mkdir(parents=True)
        for k in range(start, min(start + PER_FOLDER, count)):
            os.close(os.open(sub / f"{k:07d}.jpg", os.O_CREAT | os.O_WRONLY, 0o644))


def _reset_times(backend: str, files: int, resets: int) -> tuple[float, float]:
    import gymnasium as gym

    import mle_gym  # noqa: F401
    from mle_gym.competitions import get_competition
    from mle_gym.data.prepare import prepare

    with tempfile.TemporaryDirectory(prefix="mle-gym-reset-") as home:
        os.environ["MLE_GYM_HOME"] = home
        dirs = prepare(get_competition("sklearn-digits")).dirs
        _fill(dirs.public / "images", files)
        env = gym.make("mle/sklearn-digits-v0", backend=backend)
        samples, first = [], []
        try:
            for _ in range(resets):
                start = time.perf_counter()
                env.reset()
                samples.append(time.perf_counter() - start)
                start = time.perf_counter()
                env.step("ls /home/data/images | wc -l")
                first.append(time.perf_counter() - start)
        finally:
            env.close()
    return statistics.median(samples), statistics.median(first)


def _place_child(count: int) -> dict:
    from mle_gym.competitions.hardlink_helpers import place_files

    with tempfile.TemporaryDirectory(prefix="mle-gym-place-") as tmp:
        source = Path(tmp) / "raw"
        _fill(source, count)
        pairs = ((p, Path(tmp) / "public" / p.parent.name / p.name) for p in source.rglob("*.jpg"))
        start = time.perf_counter()
        placed = place_files(pairs, "placing images", count)
        seconds = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"placed": placed, "seconds": seconds, "mib": peak}


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--place-child":
        print(json.dumps(_place_child(int(sys.argv[2]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("local", "docker", "both"), default="both")
    parser.add_argument("--files", type=int, nargs="*", default=[1000, 100_000, 1_000_000])
    parser.add_argument("--images", type=int, nargs="*", default=[1000, 10_000, 100_000])
    parser.add_argument("--resets", type=int, default=5)
    args = parser.parse_args()
    for backend in ("local", "docker") if args.backend == "both" else (args.backend,):
        smallest = None
        for files in args.files:
            reset, first = _reset_times(backend, files, args.resets)
            smallest = smallest or reset
            print(
                f"[{backend}] {files:>9,} public files: reset() median {reset * 1000:8.1f} ms "
                f"(x{reset / smallest:4.2f} of the smallest), first `ls | wc` step "
                f"{first * 1000:8.1f} ms",
                flush=True,
            )
    for count in args.images:
        out = subprocess.run(
            [sys.executable, __file__, "--place-child", str(count)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        got = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"place_files: {got['placed']:>8,} images in {got['seconds']:7.2f} s "
            f"({got['placed'] / got['seconds']:9,.0f} files/s), process peak {got['mib']:.1f} MiB",
            flush=True,
        )


if __name__ == "__main__":
    main()
