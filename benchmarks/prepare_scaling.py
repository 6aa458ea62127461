"""How preparing the largest raw sets scales: time and peak memory at growing sizes.

    python benchmarks/prepare_scaling.py [--sizes 1 2 4] [--repeats 2] [--only COMPETITION ...]

For h-and-m-personalized-fashion-recommendations (transactions_train.csv streamed in chunks),
icecube-neutrinos-in-deep-ice (train_meta.parquet streamed in record batches, batch files
hard-linked) and ml2021spring-hw2 (a float32 matrix written block by block), this writes raw
files in the real Kaggle schema at sizes 1x, 2x, 4x (the largest a few hundred MB), runs the
competition's own `prepare` on each in fresh child processes (twice by default), and prints
the fastest time of `prepare` (measured in the child, imports excluded) and the children's
highest peak resident memory (ru_maxrss from wait4). An "imports only" child gives the memory
floor; the ratios to the previous size show time growing with the data while memory above
the floor stays bounded by the chunk size rather than the file size.

The raw files are written by a child process too: Linux carries a process's peak RSS across
fork and exec, so a parent that had grown while writing data would inflate its children's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

#: Rows of transactions_train.csv at size 1 (~115 bytes a row: ~70 MB).
HM_ROWS = 600_000
#: Events of train_meta.parquet at size 1 (48 bytes a row in memory).
ICECUBE_EVENTS = 2_000_000
ICECUBE_EVENTS_PER_BATCH = 20_000
#: Frames of train_11.npy at size 1 (429 float32 each: ~86 MB).
TIMIT_FRAMES = 50_000

CHILD = """
import sys, time
from pathlib import Path
from mle_gym.competitions import get_competition
comp = get_competition(sys.argv[1])
if sys.argv[2] == "-":  # the floor: what prepare imports, no data
    import pandas, pyarrow.parquet, sklearn.model_selection
else:
    raw, public, private = (Path(p) for p in sys.argv[2:5])
    started = time.perf_counter()
    comp.prepare(raw, public, private)
    print(time.perf_counter() - started)
"""


def _hex_ids(rng: np.random.Generator, count: int) -> np.ndarray:
    import numpy as np

    return np.array([bytes(row).hex() for row in rng.integers(0, 256, (count, 32), np.uint8)])


def hm_raw(dest: Path, size: int, rng: np.random.Generator) -> None:
    import numpy as np
    import pandas as pd

    rows = HM_ROWS * size
    customers = _hex_ids(rng, max(rows // 25, 1000))
    articles = np.array([f"0{n}" for n in rng.integers(108775001, 959461999, 5000)])
    days = np.sort(rng.integers(0, 734, rows))
    dates = (pd.Timestamp("2018-09-20") + pd.to_timedelta(days, unit="D")).strftime("%Y-%m-%d")
    pd.DataFrame(
        {
            "t_dat": dates,
            "customer_id": rng.choice(customers, rows),
            "article_id": rng.choice(articles, rows),
            "price": rng.integers(1, 600, rows) / 5900,
            "sales_channel_id": rng.integers(1, 3, rows),
        }
    ).to_csv(dest / "transactions_train.csv", index=False)
    pd.DataFrame({"customer_id": customers, "prediction": " ".join(articles[:12])}).to_csv(
        dest / "sample_submission.csv", index=False
    )
    pd.DataFrame({"customer_id": customers, "age": 30}).to_csv(dest / "customers.csv", index=False)
    pd.DataFrame({"article_id": articles, "prod_name": "Strap top"}).to_csv(
        dest / "articles.csv", index=False
    )
    for article in articles[:20]:
        (dest / "images" / article[:3]).mkdir(parents=True, exist_ok=True)
        (dest / "images" / article[:3] / f"{article}.jpg").write_bytes(b"\xff\xd8\xff\xd9")


def icecube_raw(dest: Path, size: int, rng: np.random.Generator) -> None:
    import numpy as np
    import pandas as pd

    events = ICECUBE_EVENTS * size
    pulses = rng.integers(5, 60, events)
    last = np.cumsum(pulses) - 1
    batch_ids = np.arange(events) // ICECUBE_EVENTS_PER_BATCH + 1
    pd.DataFrame(
        {
            "batch_id": batch_ids,
            "event_id": np.arange(events) * 3 + 24,
            "first_pulse_index": last - pulses + 1,
            "last_pulse_index": last,
            "azimuth": rng.uniform(0, 2 * np.pi, events),
            "zenith": rng.uniform(0, np.pi, events),
        }
    ).to_parquet(dest / "train_meta.parquet", index=False, row_group_size=500_000)
    (dest / "train").mkdir()
    pulse_table = pd.DataFrame(
        {"sensor_id": np.int16(1), "time": 6000, "charge": 1.0, "auxiliary": False},
        index=pd.Index([24], name="event_id"),
    )
    for batch in np.unique(batch_ids):  # linked, never read: one pulse each is enough
        pulse_table.to_parquet(dest / "train" / f"batch_{batch}.parquet")
    pd.DataFrame({"sensor_id": range(5160), "x": 0.0, "y": 0.0, "z": 0.0}).to_csv(
        dest / "sensor_geometry.csv", index=False
    )


def timit_raw(dest: Path, size: int, rng: np.random.Generator) -> None:
    import numpy as np

    folder = dest / "timit_11" / "timit_11"
    folder.mkdir(parents=True)
    frames = TIMIT_FRAMES * size
    np.save(folder / "train_11.npy", rng.standard_normal((frames, 429), dtype=np.float32))
    np.save(folder / "train_label_11.npy", rng.integers(0, 39, frames).astype(str))
    # Kaggle's test set is 0.367x the training set; prepare reads only its length.
    test = np.lib.format.open_memmap(
        folder / "test_11.npy", "w+", np.float32, (frames * 367 // 1000, 429)
    )
    del test


COMPETITIONS: dict[str, Callable[[Path, int, np.random.Generator], None]] = {
    "h-and-m-personalized-fashion-recommendations": hm_raw,
    "icecube-neutrinos-in-deep-ice": icecube_raw,
    "ml2021spring-hw2": timit_raw,
}


def synthesise(competition_id: str, size: int, dest: str) -> None:
    """Write the raw files of `competition_id` at `size` into `dest` (run in a child)."""
    import numpy as np

    COMPETITIONS[competition_id](Path(dest), size, np.random.default_rng(size))


def run_child(command: list[str]) -> tuple[str, float]:
    """(stdout, peak RSS in MiB) of a Python child running `command`."""
    child = subprocess.Popen([sys.executable, *command], stdout=subprocess.PIPE, text=True)
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise RuntimeError(f"child failed ({child.returncode}): {command}")
    return out, usage.ru_maxrss / 1024  # kB on Linux


def folder_mib(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


def prepare_fastest(
    command: list[str], public: Path, private: Path, repeats: int
) -> tuple[float, float]:
    """(fastest prepare time in s, highest peak RSS in MiB) over `repeats` fresh children."""
    runs = []
    for _ in range(repeats):
        for folder in (public, private):
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
        out, peak = run_child(command)
        runs.append((float(out.strip().splitlines()[-1]), peak))
    return min(t for t, _ in runs), max(p for _, p in runs)


def bench(competition_id: str, sizes: list[int], repeats: int, work: Path) -> None:
    _, floor = run_child(["-c", CHILD, competition_id, "-"])
    print(f"\n{competition_id}  (imports only: peak RSS {floor:.0f} MiB)")
    print(
        f"{'size':>5} {'raw MiB':>9} {'prepare s':>10} {'peak MiB':>9} {'above floor':>12}"
        f" {'x raw':>6} {'x time':>7} {'x above floor':>14}"
    )
    previous = None
    for size in sizes:
        raw, public, private = (work / name for name in ("raw", "public", "private"))
        shutil.rmtree(raw, ignore_errors=True)
        raw.mkdir()
        run_child([__file__, "--synthesise", competition_id, str(size), str(raw)])
        command = ["-c", CHILD, competition_id, str(raw), str(public), str(private)]
        seconds, peak = prepare_fastest(command, public, private, repeats)
        row = (folder_mib(raw), seconds, peak - floor)
        ratios = "".join(
            f" {now / before:{w}.2f}" if before > 0 else f" {'-':>{w}}"
            for now, before, w in zip(row, previous or (), (6, 7, 14), strict=False)
        )
        print(f"{size:>4}x {row[0]:9.0f} {row[1]:10.1f} {peak:9.0f} {row[2]:12.0f}{ratios}")
        previous = row


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--only", choices=sorted(COMPETITIONS), nargs="+")
    parser.add_argument("--repeats", type=int, default=2, help="prepare runs per size (fastest)")
    parser.add_argument("--synthesise", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.synthesise:
        competition_id, size, dest = args.synthesise
        synthesise(competition_id, int(size), dest)
        return
    print(f"{os.cpu_count()} CPUs; ratios are to the previous size")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="prepare-scaling-") as work:
        for competition_id in args.only or COMPETITIONS:
            bench(competition_id, args.sizes, args.repeats, Path(work))
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
