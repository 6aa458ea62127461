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

    python benchmarks/prepare_scaling.py --against-mlebench [--rows 5000000 20000000]
        [--only COMPETITION ...] [--mlebench-python PY] [--mlebench-src DIR]

measures the competitions whose CSV split is streamed (`mle_gym.competitions.streamed_split`)
beside MLE-bench's own prepare.py on the same raw files: raw files of the real schema are
written with the given numbers of rows, each prepare runs once in a fresh child (MLE-bench's
under the Python of a venv with its pins: pandas 2.2.2, numpy 1.26.4, scikit-learn 1.5.1),
and the table gives both times (prepare only, imports excluded), both peak RSS, the ratios,
and whether every output file has the same md5 in both runs.
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
    import pandas as pd

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
import pandas, sklearn.model_selection  # imported before the clock starts, as MLE-bench's child
if sys.argv[2] == "-":  # the floor: what prepare imports, no data
    import pyarrow.parquet
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


def run_child(command: list[str], python: str = sys.executable) -> tuple[str, float]:
    """(stdout, peak RSS in MiB) of a Python child running `command`."""
    child = subprocess.Popen([python, *command], stdout=subprocess.PIPE, text=True)
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise RuntimeError(f"child failed ({child.returncode}): {command}")
    return out, usage.ru_maxrss / 1024  # kB on Linux


def available_mib() -> float:
    """MemAvailable of /proc/meminfo, in MiB."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no MemAvailable in /proc/meminfo")


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


#: Rows generated and written at a time by the streamed competitions' raw writers.
WRITE_ROWS = 1_000_000

MLEBENCH_CHILD = """
import importlib.util, sys, time, types, zipfile
from pathlib import Path
import pandas as pd

def read_csv(*args, **kwargs):  # mlebench.utils.read_csv without its other imports
    return pd.read_csv(*args, **{"float_precision": "round_trip", **kwargs})

def extract(compressed, dst):  # mlebench.utils.extract for the zips prepare unpacks
    with zipfile.ZipFile(compressed) as archive:
        archive.extractall(dst)

def compress(*args, **kwargs):  # imported by some prepare.py beside extract, used by none here
    raise NotImplementedError("mlebench.utils.compress")

sys.modules["mlebench"] = types.ModuleType("mlebench")
sys.modules["mlebench.utils"] = utils = types.ModuleType("mlebench.utils")
utils.read_csv, utils.extract, utils.compress = read_csv, extract, compress
try:
    import tqdm
except ImportError:  # the pinned venv lacks it: its progress bar only, passed through
    sys.modules["tqdm"] = tqdm = types.ModuleType("tqdm")
    tqdm.tqdm = lambda iterable, *args, **kwargs: iterable
spec = importlib.util.spec_from_file_location("mlebench_prepare", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
import sklearn.model_selection
raw, public, private = (Path(p) for p in sys.argv[2:5])
started = time.perf_counter()
module.prepare(raw, public, private)
print(time.perf_counter() - started)
"""


def _write_in_blocks(
    path: Path,
    rows: int,
    block: Callable[[int, int], object],
    step: int = WRITE_ROWS,
    **options: object,
) -> None:
    """`block(start, count)` frames appended to `path`, `step` rows at a time (`options`
    go to `to_csv`, e.g. Kaggle's quoting)."""
    for start in range(0, rows, step):
        frame = block(start, min(step, rows - start))
        frame.to_csv(
            path, index=False, header=start == 0, mode="w" if start == 0 else "a", **options
        )


def taxi_rows(dest: Path, rows: int, rng: np.random.Generator) -> None:
    import numpy as np
    import pandas as pd

    def block(start: int, n: int) -> pd.DataFrame:
        seconds = rng.integers(0, 6 * 365 * 86_400, n)
        stamp = (pd.Timestamp("2009-01-01") + pd.to_timedelta(seconds, unit="s")).strftime(
            "%Y-%m-%d %H:%M:%S"
        )
        serial = pd.Series(np.arange(start + 1, start + n + 1)).astype(str).str.zfill(7)
        lon = np.round(rng.normal(-73.97, 0.04, (2, n)), 6)
        lat = np.round(rng.normal(40.75, 0.03, (2, n)), 6)
        missing = rng.random(n) < 7e-6  # Kaggle's train.csv lacks 376 drop-offs in 55M
        lon[1, missing] = lat[1, missing] = np.nan
        return pd.DataFrame(
            {
                "key": stamp + "." + serial.to_numpy(),
                "fare_amount": np.round(rng.gamma(2.0, 5.5, n), 2),
                "pickup_datetime": stamp + " UTC",
                "pickup_longitude": lon[0],
                "pickup_latitude": lat[0],
                "dropoff_longitude": lon[1],
                "dropoff_latitude": lat[1],
                "passenger_count": rng.integers(0, 7, n),
            }
        )

    _write_in_blocks(dest / "train.csv", rows, block)
    (dest / "GCP-Coupons-Instructions.rtf").write_text("{\\rtf1\\ansi Coupons.}\n")


def cover_type_rows(dest: Path, rows: int, rng: np.random.Generator) -> None:
    import numpy as np
    import pandas as pd

    def block(start: int, n: int) -> pd.DataFrame:
        columns = {"Id": np.arange(start, start + n)}
        for name, low, high in (
            ("Elevation", 1800, 3900),
            ("Aspect", -30, 400),
            ("Slope", -3, 65),
            ("Horizontal_Distance_To_Hydrology", -90, 1600),
            ("Vertical_Distance_To_Hydrology", -300, 600),
            ("Horizontal_Distance_To_Roadways", -300, 7700),
            ("Hillshade_9am", -4, 300),
            ("Hillshade_Noon", 50, 280),
            ("Hillshade_3pm", -50, 270),
            ("Horizontal_Distance_To_Fire_Points", -300, 8000),
        ):
            columns[name] = rng.integers(low, high, n)
        for number in range(1, 5):
            columns[f"Wilderness_Area{number}"] = (rng.random(n) < 0.25).astype(np.int64)
        for number in range(1, 41):
            columns[f"Soil_Type{number}"] = (rng.random(n) < 0.05).astype(np.int64)
        columns["Cover_Type"] = (
            rng.choice(7, n, p=[0.37, 0.56, 0.05, 1e-4, 1e-5, 0.003, 0.01689]) + 1
        )
        return pd.DataFrame(columns)

    _write_in_blocks(dest / "train.csv", rows, block)


def manufacturing_rows(dest: Path, rows: int, rng: np.random.Generator) -> None:
    import numpy as np
    import pandas as pd

    letters = np.array(list("ABCDEFGHIJKLMNOPQRST"))

    def block(start: int, n: int) -> pd.DataFrame:
        columns: dict[str, object] = {"id": np.arange(start, start + n)}
        for number in range(31):
            if number == 27:
                codes = letters[rng.integers(0, 20, (n, 10))]
                columns["f_27"] = codes.view("<U10").ravel()
            elif 7 <= number <= 18 or number in (29, 30):
                columns[f"f_{number:02d}"] = rng.integers(0, 15, n)
            else:
                columns[f"f_{number:02d}"] = rng.normal(0, 1.5, n)
        columns["target"] = rng.integers(0, 2, n)
        return pd.DataFrame(columns)

    _write_in_blocks(dest / "train.csv", rows, block)


def breath_rows(dest: Path, rows: int, rng: np.random.Generator) -> None:
    import numpy as np
    import pandas as pd

    steps = 80
    breaths = max(rows // steps, 1)
    # Kaggle's breath ids rise with gaps; the per-block generator keeps whole breaths.
    breath_ids = np.cumsum(rng.integers(1, 4, breaths))

    def block(start: int, n: int) -> pd.DataFrame:
        first = start // steps
        ids = np.repeat(breath_ids[first : first + n // steps], steps)
        count = len(ids)
        return pd.DataFrame(
            {
                "id": np.arange(start + 1, start + count + 1),
                "breath_id": ids,
                "R": rng.choice([5, 20, 50], count),
                "C": rng.choice([10, 20, 50], count),
                "time_step": np.tile(np.arange(steps) * 0.0339, count // steps)
                + rng.uniform(0, 0.002, count),
                "u_in": rng.uniform(0, 100, count),
                "u_out": rng.integers(0, 2, count),
                "pressure": np.round(rng.uniform(-2, 64, count), 6),
            }
        )

    _write_in_blocks(dest / "train.csv", breaths * steps, block)


#: Conversations written at a time (a few KB each).
CHAT_WRITE_ROWS = 20_000
#: Model names, as in the arena (six sizes of eight families).
CHAT_MODELS = [
    f"{family}-{size}"
    for family in ("gpt", "claude", "llama", "vicuna", "mistral", "gemini", "qwen", "yi")
    for size in ("7b", "13b", "70b", "pro", "turbo", "mini")
]
#: The words of the generated conversations, space-separated.
CHAT_WORDS = (
    "the a of to and is in that it for you this with as be on are can or not your if but"
    " function return value data model answer question example code python list string"
    ' "quoted" it\'s, however, café naïve 日本語 данные émoji 🙂 {key: 1} [0, 1] 3.14 -2 null'
)


def chat_rows(dest: Path, rows: int, rng: np.random.Generator) -> None:
    """lmsys-chatbot-arena's train.csv: prompts and replies as JSON lists of turns, about
    3.5 KB a row as in Kaggle's file (~0.4 KB of prompts, ~1.5 KB a reply); replies come in
    paragraphs, a third of the cells with their line breaks written as such (the rest
    escaped, `\\n`), a reply `null` now and then."""
    import json

    import numpy as np
    import pandas as pd

    words = np.array(CHAT_WORDS.split(), dtype=object)
    paragraphs = [
        " ".join(words[rng.integers(0, len(words), rng.integers(5, 70))]) for _ in range(4096)
    ]

    def cell(turns: int, per_turn: tuple[int, int], reply: bool) -> str:
        texts = [
            "\n\n".join(paragraphs[i] for i in rng.integers(0, 4096, rng.integers(*per_turn)))
            for _ in range(turns)
        ]
        if reply and rng.random() < 0.03:
            texts[-1] = None
        text = json.dumps(texts, ensure_ascii=False)
        return text.replace("\\n", "\n") if rng.random() < 1 / 3 else text

    def block(start: int, n: int) -> pd.DataFrame:
        turns = np.minimum(rng.geometric(0.8, n), 8)
        verdicts = np.eye(3, dtype=np.int64)[rng.choice(3, n, p=[0.35, 0.34, 0.31])]
        replies = [[cell(k, (3, 11), True) for k in turns] for _ in range(2)]
        return pd.DataFrame(
            {
                "id": 30192 + 74_713 * np.arange(start, start + n),
                "model_a": rng.choice(CHAT_MODELS, n),
                "model_b": rng.choice(CHAT_MODELS, n),
                "prompt": [cell(k, (1, 3), False) for k in turns],
                "response_a": replies[0],
                "response_b": replies[1],
                "winner_model_a": verdicts[:, 0],
                "winner_model_b": verdicts[:, 1],
                "winner_tie": verdicts[:, 2],
            }
        )

    _write_in_blocks(dest / "train.csv", rows, block, CHAT_WRITE_ROWS)


#: CHAMPS' coupling types, their shares of train.csv's 4,658,147 rows and typical constants.
COUPLING_TYPES = ("1JHC", "1JHN", "2JHC", "2JHH", "2JHN", "3JHC", "3JHH", "3JHN")
COUPLING_SHARES = (0.153, 0.009, 0.245, 0.081, 0.026, 0.325, 0.127, 0.034)
COUPLING_CENTRES = (95.0, 48.0, -0.3, -10.3, 3.1, 3.7, 4.8, 0.99)
#: Molecules generated and written at a time (about a million coupling pairs).
MOLECULES_PER_BLOCK = 20_000


def coupling_rows(dest: Path, rows: int, rng: np.random.Generator) -> None:
    """CHAMPS' raw set with `rows` coupling pairs in train.csv. Kaggle's shape: QM9 molecules
    of 9 to 27 atoms (18 on average), 3 pairs an atom in a training molecule (~55 each),
    Kaggle's own test molecules (0.54 per training one) only in structures.csv and
    structures/, every table sorted by molecule name, names numbered with a few gaps."""
    import numpy as np
    import pandas as pd

    count = int(rows / 54 * 1.6) + 64  # molecules, train and test, enough for `rows` pairs
    atoms = rng.integers(9, 28, count)
    pairs = np.where(rng.random(count) < 0.65, 3 * atoms, 0)  # 0: a Kaggle test molecule
    ends = np.cumsum(pairs)
    last = int(np.searchsorted(ends, rows))
    if last >= count:
        raise RuntimeError("too few molecules drawn for the rows asked")
    atoms, pairs = atoms[: last + 1], pairs[: last + 1]
    pairs[last] -= ends[last] - rows
    numbers = np.cumsum(1 + (rng.random(last + 1) < 0.02))
    names = np.char.add("dsgdb9nsd_", np.char.zfill(numbers.astype(str), 6)).astype(object)
    (dest / "structures").mkdir()
    first_id = 0
    for start in range(0, last + 1, MOLECULES_PER_BLOCK):
        block = np.arange(start, min(start + MOLECULES_PER_BLOCK, last + 1))
        structures = _molecule_atoms(rng, names[block], atoms[block])
        _write_xyz(dest / "structures", structures)
        train = block[pairs[block] > 0]
        kept = structures[structures["molecule_name"].isin(set(names[train]))]
        pair_rows = _coupling_pairs(rng, names[train], atoms[train], pairs[train], first_id)
        first_id += len(pair_rows)
        n_train, n_atoms, n_pairs = len(train), len(kept), len(pair_rows)
        tables = {
            "train.csv": pair_rows,
            "structures.csv": structures,
            "dipole_moments.csv": pd.DataFrame(
                {"molecule_name": names[train]}
                | {axis: np.round(rng.normal(0, 1.5, n_train), 4) for axis in "XYZ"}
            ),
            "magnetic_shielding_tensors.csv": kept[["molecule_name", "atom_index"]].assign(
                **{f"{a}{b}": np.round(rng.normal(0, 40, n_atoms), 4) for b in "XYZ" for a in "XYZ"}
            ),
            "mulliken_charges.csv": kept[["molecule_name", "atom_index"]].assign(
                mulliken_charge=np.round(rng.normal(0, 0.25, n_atoms), 6)
            ),
            "potential_energy.csv": pd.DataFrame(
                {
                    "molecule_name": names[train],
                    "potential_energy": np.round(-rng.uniform(40, 720, n_train), 5),
                }
            ),
            "scalar_coupling_contributions.csv": pair_rows.drop(
                columns=["id", "scalar_coupling_constant"]
            ).assign(
                fc=np.round(pair_rows["scalar_coupling_constant"] - rng.normal(0, 1, n_pairs), 4),
                sd=np.round(rng.normal(0, 0.1, n_pairs), 6),
                pso=np.round(rng.normal(0, 1, n_pairs), 5),
                dso=np.round(rng.normal(0, 1, n_pairs), 6),
            ),
        }
        for name, frame in tables.items():
            frame.to_csv(dest / name, index=False, header=start == 0, mode="a")


def _molecule_atoms(rng: np.random.Generator, names: np.ndarray, atoms: np.ndarray) -> pd.DataFrame:
    """structures.csv's rows of these molecules: element and coordinates of each atom."""
    import numpy as np
    import pandas as pd

    total = int(atoms.sum())
    starts = np.repeat(np.cumsum(atoms) - atoms, atoms)
    xyz = np.round(rng.normal(0, 1.5, (3, total)), 10)
    return pd.DataFrame(
        {
            "molecule_name": np.repeat(names, atoms),
            "atom_index": np.arange(total) - starts,
            "atom": rng.choice(
                np.array(list("CHNOF"), dtype=object), total, p=[0.35, 0.51, 0.055, 0.08, 0.005]
            ),
            "x": xyz[0],
            "y": xyz[1],
            "z": xyz[2],
        }
    )


def _write_xyz(folder: Path, structures: pd.DataFrame) -> None:
    """One `<molecule>.xyz` per molecule: its atom count, a blank line, an atom a line."""
    lines = (
        structures["atom"]
        + structures[["x", "y", "z"]].apply(lambda c: c.map(" {:.10f}".format)).sum(axis=1)
    ).to_numpy()
    bounds = structures.groupby("molecule_name", sort=False).size().cumsum()
    begin = 0
    for name, end in bounds.items():
        body = "\n".join(lines[begin:end])
        (folder / f"{name}.xyz").write_text(f"{end - begin}\n\n{body}\n")
        begin = end


def _coupling_pairs(
    rng: np.random.Generator, names: np.ndarray, atoms: np.ndarray, pairs: np.ndarray, first: int
) -> pd.DataFrame:
    """train.csv's rows for these molecules, ids from `first` on."""
    import numpy as np
    import pandas as pd

    total = int(pairs.sum())
    size = np.repeat(atoms, pairs)
    kind = rng.choice(len(COUPLING_TYPES), total, p=COUPLING_SHARES)
    return pd.DataFrame(
        {
            "id": np.arange(first, first + total),
            "molecule_name": np.repeat(names, pairs),
            "atom_index_0": rng.integers(0, size),
            "atom_index_1": rng.integers(0, size),
            "type": np.array(COUPLING_TYPES, dtype=object)[kind],
            "scalar_coupling_constant": np.round(
                np.array(COUPLING_CENTRES)[kind] + rng.normal(0, 4, total), 4
            ),
        }
    )


#: Token classes of Kaggle's text-normalisation corpora and their shares of the rows (in
#: en_train.csv: 74% PLAIN, 18% PUNCT; dates, letters and numbers most of the rest).
TOKEN_CLASSES = ("PLAIN", "PUNCT", "DATE", "LETTERS", "CARDINAL", "VERBATIM", "MEASURE", "DIGIT")
TOKEN_SHARES = (0.74, 0.18, 0.026, 0.017, 0.022, 0.009, 0.003, 0.003)
ENGLISH_UNITS = (
    *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"),
    *("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen"),
    *("eighteen", "nineteen"),
)
ENGLISH_TENS = ("", "", "twenty", "thirty", "forty", "fifty")
ENGLISH_TENS += ("sixty", "seventy", "eighty", "ninety")
RUSSIAN_DIGITS = ("ноль", "один", "два", "три", "четыре", "пять", "шесть", "семь", "восемь")
RUSSIAN_DIGITS += ("девять",)


def _english_number(n: int) -> str:
    """`n` (below a million) as spoken: 1862 -> "one thousand eight hundred sixty two"."""
    if n < 20:
        return ENGLISH_UNITS[n]
    if n < 100:
        return ENGLISH_TENS[n // 10] + ("" if n % 10 == 0 else " " + ENGLISH_UNITS[n % 10])
    if n < 1000:
        rest = "" if n % 100 == 0 else " " + _english_number(n % 100)
        return f"{ENGLISH_UNITS[n // 100]} hundred{rest}"
    rest = "" if n % 1000 == 0 else " " + _english_number(n % 1000)
    return f"{_english_number(n // 1000)} thousand{rest}"


def _russian_number(n: int) -> str:
    """`n` read digit by digit in Russian: the length of a spoken number, not its grammar."""
    return " ".join(RUSSIAN_DIGITS[int(d)] for d in str(n))


def _token_pools(language: str, rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """(before, after) pools of each of TOKEN_CLASSES, in `language` ("en" or "ru"). Words
    include the few a CSV reader takes for missing (`None`, `NA`, `null`), as Kaggle's do."""
    import numpy as np

    english = language == "en"
    letters = "abcdefghijklmnopqrstuvwxyz" if english else "абвгдежзийклмнопрстуфхцчшщыэюя"
    spoken = _english_number if english else _russian_number
    words = [
        "".join(rng.choice(list(letters), int(length))) for length in rng.integers(2, 11, 30_000)
    ]
    words = [w.capitalize() if i % 8 == 0 else w for i, w in enumerate(words)]
    words += ["None", "null", "NaN"]
    acronyms = [
        "".join(rng.choice(list(letters.upper()), int(length)))
        for length in rng.integers(2, 5, 3000)
    ]
    acronyms.append("NA")
    numbers = [int(n) for n in rng.integers(0, 100_000, 5000)]
    years = range(1000, 2030)
    year_word = "" if english else " год"
    units = ("km", "kg", "ft", "%") if english else ("км", "кг", "м", "%")
    unit_words = (
        ("kilometers", "kilograms", "feet", "percent")
        if english
        else ("километров", "килограммов", "метров", "процентов")
    )
    measures = [(n, rng.integers(0, len(units))) for n in numbers[:1000]]
    pairs = [
        [(w, w) for w in words],
        [(p, p) for p in (".", ",", '"', "'", "(", ")", "-", ":", ";", "?", "!", "«", "»")],
        [(f"{y}{year_word}", spoken(y) + year_word) for y in years],
        [(a, " ".join(a.lower())) for a in acronyms],
        [(f"{n:,}" if n % 3 == 0 else str(n), spoken(n)) for n in numbers],
        [(g, g) for g in "αβγδ–—/&#@"],
        [(f"{n} {units[u]}", f"{spoken(n)} {unit_words[u]}") for n, u in measures],
        [(f"{n:03d}", " ".join(spoken(int(d)) for d in f"{n:03d}")) for n in numbers[:500]],
    ]
    return [
        (np.array([b for b, _ in pool], dtype=object), np.array([a for _, a in pool], dtype=object))
        for pool in pairs
    ]


def _sentence_ends(rows: int, rng: np.random.Generator) -> np.ndarray:
    """The end row of each sentence of a corpus of `rows` tokens (3 to 24 tokens a
    sentence, about 13 on average as in Kaggle's corpora)."""
    import numpy as np

    lengths = rng.integers(3, 25, rows // 13 + 64)
    while lengths.sum() < rows:
        lengths = np.concatenate([lengths, rng.integers(3, 25, len(lengths))])
    ends = np.cumsum(lengths)
    last = int(np.searchsorted(ends, rows))
    ends = ends[: last + 1]
    ends[last] = rows
    return ends


def _tokens(
    start: int,
    count: int,
    ends: np.ndarray,
    pools: list[tuple[np.ndarray, np.ndarray]],
    rng: np.random.Generator,
) -> pd.DataFrame:
    """Rows `start` to `start + count` of a corpus: each sentence ends with a full stop."""
    import numpy as np
    import pandas as pd

    rows = np.arange(start, start + count)
    sentence = np.searchsorted(ends, rows, side="right")
    first = np.concatenate([[0], ends])[sentence]
    kind = rng.choice(len(TOKEN_CLASSES), count, p=TOKEN_SHARES)
    kind[rows == ends[sentence] - 1] = 1
    before = np.empty(count, dtype=object)
    after = np.empty(count, dtype=object)
    for number, (befores, afters) in enumerate(pools):
        mine = np.flatnonzero(kind == number)
        picked = rng.integers(0, len(befores), len(mine))
        if number == 1:  # the full stop ends each sentence; other marks inside it
            picked[rows[mine] == ends[sentence[mine]] - 1] = 0
        before[mine], after[mine] = befores[picked], afters[picked]
    return pd.DataFrame(
        {
            "sentence_id": sentence,
            "token_id": rows - first,
            "class": np.array(TOKEN_CLASSES, dtype=object)[kind],
            "before": before,
            "after": after,
        }
    )


def corpus_rows(language: str) -> Callable[[Path, int, np.random.Generator], None]:
    """The raw writer of text-normalization-challenge-<language>: `<language>_train.csv.zip`
    with `rows` tokens, and the second-stage test and sample (a tenth as many rows, which
    MLE-bench's prepare unzips but does not use), each a deflated zip of one CSV with
    every text cell quoted, as Kaggle ships them."""

    def write(dest: Path, rows: int, rng: np.random.Generator) -> None:
        import csv
        import zipfile

        pools = _token_pools(language, rng)
        quoted = {"quoting": csv.QUOTE_NONNUMERIC}
        train = dest / f"{language}_train.csv"
        ends = _sentence_ends(rows, rng)
        _write_in_blocks(train, rows, lambda s, n: _tokens(s, n, ends, pools, rng), **quoted)
        test, sample = dest / f"{language}_test_2.csv", dest / f"{language}_sample_submission_2.csv"
        ends = _sentence_ends(max(rows // 10, 1), rng)
        for start in range(0, int(ends[-1]), WRITE_ROWS):
            tokens = _tokens(start, min(WRITE_ROWS, int(ends[-1]) - start), ends, pools, rng)
            ids = tokens["sentence_id"].astype(str) + "_" + tokens["token_id"].astype(str)
            options = {"index": False, "header": start == 0, "mode": "a", **quoted}
            tokens[["sentence_id", "token_id", "before"]].to_csv(test, **options)
            tokens.assign(id=ids)[["id", "before"]].rename(columns={"before": "after"}).to_csv(
                sample, **options
            )
        for path in (train, test, sample):
            with zipfile.ZipFile(f"{path}.zip", "w", zipfile.ZIP_DEFLATED) as archive:
                archive.write(path, arcname=path.name)
            path.unlink()

    return write


#: Streamed competitions and their raw writers, `writer(dest, rows, rng)`.
STREAMED: dict[str, Callable[[Path, int, np.random.Generator], None]] = {
    "new-york-city-taxi-fare-prediction": taxi_rows,
    "tabular-playground-series-dec-2021": cover_type_rows,
    "tabular-playground-series-may-2022": manufacturing_rows,
    "ventilator-pressure-prediction": breath_rows,
    "lmsys-chatbot-arena": chat_rows,
    "champs-scalar-coupling": coupling_rows,
    "text-normalization-challenge-english-language": corpus_rows("en"),
    "text-normalization-challenge-russian-language": corpus_rows("ru"),
}


def synthesise_rows(competition_id: str, rows: int, dest: str) -> None:
    import numpy as np

    STREAMED[competition_id](Path(dest), rows, np.random.default_rng(rows))


def md5s(folder: Path) -> dict[str, str]:
    """Each file's md5; a zip's over its members' names and bytes, as a zip also stores the
    time each member was written."""
    import hashlib
    import zipfile

    sums = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest = hashlib.md5()
        if path.suffix == ".zip":
            with zipfile.ZipFile(path) as archive:
                for member in archive.infolist():
                    digest.update(member.filename.encode() + b"\0")
                    with archive.open(member) as source:
                        while block := source.read(1 << 24):
                            digest.update(block)
        else:
            with open(path, "rb") as source:
                while block := source.read(1 << 24):
                    digest.update(block)
        sums[str(path.relative_to(folder))] = digest.hexdigest()
    return sums


def bench_against_mlebench(
    competition_id: str, rows_list: list[int], work: Path, python: str, src: Path
) -> None:
    script = src / "mlebench" / "competitions" / competition_id / "prepare.py"
    print(f"\n{competition_id}")
    print(
        f"{'rows':>11} {'raw MiB':>8} {'ours s':>7} {'ours MiB':>9} {'MLE-bench s':>12}"
        f" {'MLE-bench MiB':>14} {'x time':>7} {'x MiB':>6}  same md5s"
    )
    theirs_per_row = 0.0  # MLE-bench's peak MiB a row at the previous size
    for rows in rows_list:
        raw = work / "raw"
        shutil.rmtree(raw, ignore_errors=True)
        raw.mkdir()
        run_child([__file__, "--synthesise-rows", competition_id, str(rows), str(raw)])
        raw_mib = folder_mib(raw)  # before MLE-bench's prepare unzips into it
        # MLE-bench's peak grows linearly with the rows; a size it cannot fit would take the
        # machine down with it, so it is skipped and the linear estimate printed instead.
        estimate = theirs_per_row * rows
        runs = [("ours", ["-c", CHILD, competition_id], sys.executable)]
        if estimate < 0.8 * available_mib():
            runs.append(("mlebench", ["-c", MLEBENCH_CHILD, str(script)], python))
        results = []
        for name, command, interpreter in runs:
            out = work / name
            shutil.rmtree(out, ignore_errors=True)
            public, private = out / "public", out / "private"
            public.mkdir(parents=True)
            private.mkdir()
            text, peak = run_child([*command, str(raw), str(public), str(private)], interpreter)
            results.append((float(text.strip().splitlines()[-1]), peak, md5s(out)))
        if len(results) == 1:
            ours_s, ours_mib, _ = results[0]
            print(
                f"{rows:>11,} {raw_mib:8.0f} {ours_s:7.1f} {ours_mib:9.0f}"
                f"  MLE-bench not run: its linear estimate, {estimate:,.0f} MiB, exceeds"
                f" 80% of the {available_mib():,.0f} MiB available",
                flush=True,
            )
            for name in ("raw", "ours"):
                shutil.rmtree(work / name, ignore_errors=True)
            continue
        (ours_s, ours_mib, ours_sums), (theirs_s, theirs_mib, theirs_sums) = results
        theirs_per_row = theirs_mib / rows
        # Files only we write (text-normalization's plain sample) are named, not compared.
        differing = sorted(k for k in theirs_sums if ours_sums.get(k) != theirs_sums[k])
        same = "yes" if not differing else "NO: " + ", ".join(differing)
        if extra := sorted(ours_sums.keys() - theirs_sums.keys()):
            same += " (ours only: " + ", ".join(extra) + ")"
        print(
            f"{rows:>11,} {raw_mib:8.0f} {ours_s:7.1f} {ours_mib:9.0f} {theirs_s:12.1f}"
            f" {theirs_mib:14.0f} {ours_s / theirs_s:7.2f} {ours_mib / theirs_mib:6.2f}  {same}",
            flush=True,
        )
        for name in ("raw", "ours", "mlebench"):
            shutil.rmtree(work / name, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--only", choices=sorted({*COMPETITIONS, *STREAMED}), nargs="+")
    parser.add_argument("--repeats", type=int, default=2, help="prepare runs per size (fastest)")
    parser.add_argument("--against-mlebench", action="store_true")
    parser.add_argument("--rows", type=int, nargs="+", default=[5_000_000, 20_000_000])
    parser.add_argument("--mlebench-python", default="/work/mlebench-venv-prepare/bin/python")
    parser.add_argument("--mlebench-src", type=Path, default=Path("/work/mlebench-src"))
    parser.add_argument("--work", type=Path, help="scratch folder (default: the temp folder)")
    parser.add_argument("--synthesise", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--synthesise-rows", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.synthesise:
        competition_id, size, dest = args.synthesise
        synthesise(competition_id, int(size), dest)
        return
    if args.synthesise_rows:
        competition_id, rows, dest = args.synthesise_rows
        synthesise_rows(competition_id, int(rows), dest)
        return
    print(f"{os.cpu_count()} CPUs; ratios are to the previous size")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="prepare-scaling-", dir=args.work) as work:
        if args.against_mlebench:
            for competition_id in args.only or STREAMED:
                bench_against_mlebench(
                    competition_id, args.rows, Path(work), args.mlebench_python, args.mlebench_src
                )
        else:
            for competition_id in args.only or COMPETITIONS:
                bench(competition_id, args.sizes, args.repeats, Path(work))
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
