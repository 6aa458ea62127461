"""Start-up cost of `import mle_gym` and `mle-gym --help` against `import gymnasium`, same run.

    python benchmarks/import_time.py [--repeats N]

Each figure is the median wall-clock time of N fresh interpreters (subprocesses), so no
module is cached in memory between samples; the commands alternate so that a busy machine
slows all of them alike. It also names the heavy libraries `import mle_gym` loaded and the
module that first imported each: none is the goal (they load when an env is made).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

HEAVY = ("pandas", "sklearn", "scipy", "rich", "docker", "requests", "PIL", "torch")

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "import gymnasium": [sys.executable, "-c", "import gymnasium"],
    "import mle_gym": [sys.executable, "-c", "import mle_gym"],
    "mle-gym --help": [sys.executable, "-m", "mle_gym.cli", "--help"],
}

#: Run in a fresh interpreter: which heavy libraries `import mle_gym` loads, and from where.
_WHO_IMPORTS = f"""
import sys, traceback
heavy = {HEAVY!r}
seen = {{}}
class Watch:
    def find_spec(self, name, path, target=None):
        top = name.split(".")[0]
        if top in heavy and top not in seen:
            frames = [f for f in traceback.extract_stack() if "/mle_gym/" in f.filename]
            seen[top] = frames[-1].filename.split("/mle_gym/")[-1] if frames else "?"
        return None
sys.meta_path.insert(0, Watch())
import mle_gym
for name, where in seen.items():
    print(name, "first imported by mle_gym/" + where)
"""


def measure(repeats: int) -> dict[str, float]:
    samples: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(repeats):
        for name, argv in COMMANDS.items():
            start = time.perf_counter()
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="interpreters per command")
    args = parser.parse_args()
    figures = measure(args.repeats)
    base = figures["import gymnasium"]
    bare = figures["python -c pass"]
    print(f"median of {args.repeats} fresh interpreters each (seconds)")
    for name, seconds in figures.items():
        print(
            f"  {name:<18} {seconds:6.3f} s   ×{seconds / base:5.2f} of import gymnasium   "
            f"{seconds - base:+.3f} s"
        )
    print(f"  (interpreter start-up alone: {bare:.3f} s)")
    loaded = subprocess.run(
        [sys.executable, "-c", _WHO_IMPORTS], check=True, capture_output=True, text=True
    ).stdout.strip()
    print("heavy libraries loaded by `import mle_gym`:", "none" if not loaded else "")
    for line in loaded.splitlines():
        print(f"  {line}")


if __name__ == "__main__":
    main()
