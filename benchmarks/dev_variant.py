"""What carving the development variant costs beside the competition's main prepare.

    python benchmarks/dev_variant.py [--only COMPETITION ...] [--repeats 2] [--scale 100]

For spaceship-titanic on its real Kaggle files (../shared/data/spaceship-titanic/raw, when
present), the same rows repeated `--scale` times under new ids (the largest table here), and
for the covered competitions with the largest raw fixtures, this prepares the
main split from the raw files, then carves the development variant from the prepared public
files (`require_dev_variant(force=True)`: split, layout check, id check, md5 of every file,
manifest), each in a fresh child process, and prints the fastest time of each step (measured
in the child, imports excluded), each child's peak resident memory (ru_maxrss from wait4),
an imports-only child as the memory floor, and the ratios dev/main.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SPACESHIP_RAW = REPO.parent / "shared" / "data" / "spaceship-titanic" / "raw"
#: Covered competitions whose fixtures are among the largest (and spaceship's real files).
DEFAULT = [
    "spaceship-titanic",
    "facebook-recruiting-iii-keyword-extraction",
    "champs-scalar-coupling",
    "hms-harmful-brain-activity-classification",
    "icecube-neutrinos-in-deep-ice",
    "smartphone-decimeter-2022",
    "h-and-m-personalized-fashion-recommendations",
    "ventilator-pressure-prediction",
    "billion-word-imputation",
    "jigsaw-unintended-bias-in-toxicity-classification",
]

CHILD = """
import sys, time
from pathlib import Path
import pandas, sklearn.model_selection  # imported before the clock starts
from mle_gym.competitions import get_competition
from mle_gym.data import prepare, require_dev_variant
comp = get_competition(sys.argv[1])
step, root = sys.argv[2], Path(sys.argv[3])
started = time.perf_counter()
if step == "main":
    prepare(comp, Path(sys.argv[4]), root=root, force=True)
elif step == "dev":
    require_dev_variant(comp, root, force=True)
print(time.perf_counter() - started)
"""


def _child(*args: str) -> tuple[float, float]:
    """(seconds the step took, peak RSS in MB) of one fresh child process."""
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, *args], stdout=subprocess.PIPE, env=env, text=True
    )
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"child {args} failed with exit status {proc.returncode}")
    return float(out.strip().splitlines()[-1]), usage.ru_maxrss / 1024


def _raw_source(competition_id: str, into: Path) -> tuple[Path, str]:
    """Real files for spaceship-titanic where ../shared has them, else the fixture's."""
    if competition_id == "spaceship-titanic" and SPACESHIP_RAW.is_dir():
        return SPACESHIP_RAW, "real"
    sys.path.insert(0, str(REPO))
    from mle_gym.competitions import get_competition
    from tests.fixtures.raw import generator_for

    into.mkdir()
    generator_for(get_competition(competition_id)).make_raw(into)
    return into, "fixture"


def _scaled_spaceship(times: int, into: Path) -> Path:
    """The real spaceship-titanic files with train.csv repeated `times` times, ids made unique."""
    import pandas as pd

    into.mkdir()
    train = pd.read_csv(SPACESHIP_RAW / "train.csv")
    copies = [train.assign(PassengerId=f"{k}-" + train["PassengerId"]) for k in range(times)]
    pd.concat(copies).to_csv(into / "train.csv", index=False)
    for name in ("test.csv", "sample_submission.csv"):
        (into / name).write_bytes((SPACESHIP_RAW / name).read_bytes())
    return into


def _size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=DEFAULT)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--scale", type=int, default=100, help="0: no scaled spaceship run")
    args = parser.parse_args()
    cases = [(c, c) for c in args.only]
    if args.scale and SPACESHIP_RAW.is_dir():
        cases.insert(1, (f"spaceship-titanic x{args.scale}", "spaceship-titanic"))
    with tempfile.TemporaryDirectory() as scratch:
        _, floor = _child("spaceship-titanic", "floor", scratch)
        print(f"memory floor (imports only): {floor:.0f} MB")
        print(
            f"{'competition':45} {'data':8} {'public MB':>9} {'main s':>8} {'dev s':>8} "
            f"{'dev/main':>8} {'main MB':>8} {'dev MB':>8}"
        )
        for label, competition_id in cases:
            base = Path(scratch) / label.replace(" ", "-")
            base.mkdir()
            if label == competition_id:
                raw, kind = _raw_source(competition_id, base / "raw-source")
            else:
                raw, kind = _scaled_spaceship(args.scale, base / "raw-source"), "real xN"
            root = base / "cache"
            main_runs = [_child(competition_id, "main", str(root), str(raw))]
            dev_runs = [_child(competition_id, "dev", str(root))]
            for _ in range(args.repeats - 1):
                main_runs.append(_child(competition_id, "main", str(root), str(raw)))
                dev_runs.append(_child(competition_id, "dev", str(root)))
            main_s, dev_s = min(t for t, _ in main_runs), min(t for t, _ in dev_runs)
            main_mb, dev_mb = max(m for _, m in main_runs), max(m for _, m in dev_runs)
            public = _size_mb(root / competition_id / "public")
            print(
                f"{label:45} {kind:8} {public:9.1f} {main_s:8.2f} {dev_s:8.2f} "
                f"{dev_s / main_s:8.2f} {main_mb:8.0f} {dev_mb:8.0f}"
            )


if __name__ == "__main__":
    main()
