"""What keeping /home/code costs at the end of an episode, same run: ten small scripts (the
baseline), the same beside 40 sparse 7 GiB files (`truncate -s`), and 2,000 one-line files
(the file-count bound).

    python benchmarks/kept_code_cost.py [--backend local|docker|both]

Sizes come from mle_gym's own listing and every choice is made on them before a byte is
read (mle_gym/envs/kept_code.py): the sparse files cost one listed entry each, never a read
or a hash; each kept file costs one copy through the sandbox's file API (one exec each in
docker), within the 120 s bound.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from mle_gym.envs import CompetitionEnv

CASES = {
    "10 scripts (baseline)": "",
    "+ 40 sparse 7 GiB files": "for i in $(seq 1 40); do truncate -s 7G big_$i.bin; done",
    "+ 2,000 one-line files": "mkdir many && for i in $(seq 1 2000); do echo $i > many/$i.py; done",
}
SCRIPTS = 'for i in $(seq 1 10); do echo "print($i)" > script_$i.py; done'


def bench(backend: str) -> None:
    print(f"{backend}:")
    baseline = None
    for name, extra in CASES.items():
        env = CompetitionEnv("sklearn-digits", backend=backend, step_timeout=600)
        try:
            env.reset(seed=0)
            env.step(f"cd /home/code && {SCRIPTS} && {extra or 'true'}")
            with tempfile.TemporaryDirectory() as scratch:
                start = time.perf_counter()
                index = env.keep_code(Path(scratch) / "code")
                seconds = time.perf_counter() - start
        finally:
            env.close()
        baseline = baseline or seconds
        kept = sum(f["kept"] for f in index["files"])
        print(
            f"  {name:26} {seconds:7.2f} s ({seconds / baseline:5.1f}x baseline), "
            f"{len(index['files'])} listed, {kept} kept, {index['kept_bytes']:,} bytes"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["local", "docker", "both"], default="both")
    args = parser.parse_args()
    for backend in ("local", "docker") if args.backend == "both" else (args.backend,):
        bench(backend)


if __name__ == "__main__":
    main()
