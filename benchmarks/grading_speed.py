"""Grading time and peak memory on large synthetic submissions, against MLE-bench's grader.

    python benchmarks/grading_speed.py [--rows 1000000] [--scaling 1000000 3000000 10000000]
                                       [--only COMPETITION ...] [--repeats 3]

For each competition this writes answers in the competition's private format and a valid,
shuffled submission of `--rows` rows, then, each in a fresh child process:
- mle_gym: `grade_bounded` (validation and metric in the bounded grading child, as the env
  grades). "cold" is the first grade on a machine, in a process of its own: it also builds
  the competition's answer key and writes it to the private folder, once. "warm" is the
  median of `--repeats` grades in a fresh process, which read that key, as every later
  grade does; its memory is theirs alone.
- MLE-bench: its `read_csv` of both files and the competition's `grade` function, as its
  `grade_csv` does (median of `--repeats`), from a copy of openai/mle-bench found through
  $MLEBENCH_SRC, an installed `mlebench`, or ../mlebench-src; without one, that column is
  skipped with a message.
With `--checkout DIR`, another mle_gym checkout (a git worktree of an older commit) grades
the same files in the same run, in a column of its own. CPU is each grade's CPU time (the
grading child's, for mle_gym), which other work on a shared machine inflates far less than
the wall-clock time.
Memory is the peak resident memory above the process's own after imports (for mle_gym, the
grading child's peak above that of a fork doing nothing, so library pages a grade touches
count, as they do in MLE-bench's process). Ratios are mle_gym / MLE-bench.
`--scaling` repeats the first competition at growing sizes, to show growth stays linear.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from grade_timing import run_child, time_grades

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


def _text_ids(n: int, rng: np.random.Generator, width: int = 16) -> list[str]:
    import numpy as np

    order = rng.permutation(n)  # ids not in file order, as in real test sets
    return [f"{x:0{width}x}" for x in np.asarray(order) * 7919 + 104729]


def spaceship(n: int, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    import pandas as pd

    ids = [f"{p // 3:07d}_{p % 3 + 1:02d}" for p in rng.permutation(n)]
    answers = pd.DataFrame({"PassengerId": ids, "Transported": rng.random(n) < 0.5})
    guess = answers.assign(Transported=rng.random(n) < 0.5)
    return answers, guess


def taxi(n: int, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    import pandas as pd

    seconds = rng.permutation(n) * 37 + 1_230_000_000
    stamps = pd.to_datetime(seconds, unit="s").strftime("%Y-%m-%d %H:%M:%S")
    keys = [f"{s}.{k % 7 + 1:07d}" for k, s in enumerate(stamps)]
    fares = rng.gamma(2.0, 6.0, n).round(2)
    answers = pd.DataFrame({"key": keys, "fare_amount": fares})
    return answers, answers.assign(fare_amount=fares + rng.normal(0, 3, n))


def jigsaw_toxic(n: int, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    import numpy as np
    import pandas as pd

    classes = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]
    labels = (rng.random((n, len(classes))) < 0.1).astype(int)
    labels[rng.random(n) < 0.3] = -1  # rows Kaggle never scored
    answers = pd.DataFrame(labels, columns=classes)
    answers.insert(0, "id", _text_ids(n, rng))
    scores = np.clip(labels + rng.normal(0, 0.6, labels.shape), 0, 1)
    return answers, pd.DataFrame({"id": answers["id"], **dict(zip(classes, scores.T, strict=True))})


def tps_dec(n: int, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    import pandas as pd

    ids = rng.permutation(n) + 4_000_000
    answers = pd.DataFrame({"Id": ids, "Cover_Type": rng.integers(1, 8, n)})
    return answers, answers.assign(Cover_Type=rng.integers(1, 8, n))


def champs(n: int, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    import pandas as pd

    types = ["1JHC", "1JHN", "2JHC", "2JHH", "2JHN", "3JHC", "3JHH", "3JHN"]
    answers = pd.DataFrame(
        {
            "id": rng.permutation(n) + 4_658_147,
            "molecule_name": [f"dsgdb9nsd_{k // 20:06d}" for k in range(n)],
            "atom_index_0": rng.integers(0, 29, n),
            "atom_index_1": rng.integers(0, 29, n),
            "type": rng.choice(types, n),
            "scalar_coupling_constant": rng.normal(15, 30, n).round(5),
        }
    )
    guess = answers[["id"]].assign(
        scalar_coupling_constant=answers["scalar_coupling_constant"] + rng.normal(0, 2, n)
    )
    return answers, guess


def ventilator(n: int, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    import pandas as pd

    answers = pd.DataFrame(
        {
            "id": rng.permutation(n) + 1,
            "breath_id": rng.integers(1, n // 80 + 2, n),
            "R": rng.choice([5, 20, 50], n),
            "C": rng.choice([10, 20, 50], n),
            "time_step": rng.random(n) * 3,
            "u_in": rng.random(n) * 100,
            "u_out": (rng.random(n) < 0.6).astype(int),
            "pressure": rng.normal(11, 8, n),
        }
    )
    return answers, answers[["id"]].assign(pressure=answers["pressure"] + rng.normal(0, 1, n))


def text_normalization(n: int, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    import pandas as pd

    words = ["the", "of", "twenty", "one", "sil", "a", "John", "street", "b c", "dollars"]
    after = rng.choice(words, n)
    ids = [f"{p // 12}_{p % 12}" for p in rng.permutation(n)]
    answers = pd.DataFrame({"id": ids, "after": after})
    guess = answers.assign(
        after=[a if r < 0.9 else "sil" for a, r in zip(after, rng.random(n), strict=True)]
    )
    return answers, guess


def icecube(n: int, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    import numpy as np
    import pandas as pd

    azimuth, zenith = rng.random(n) * 2 * np.pi, rng.random(n) * np.pi
    answers = pd.DataFrame(
        {"event_id": rng.choice(20 * n, n, replace=False), "azimuth": azimuth, "zenith": zenith}
    )
    guess = answers.assign(
        azimuth=(azimuth + rng.normal(0, 0.5, n)) % (2 * np.pi),
        zenith=np.clip(zenith + rng.normal(0, 0.3, n), 0, np.pi),
    )
    return answers, guess


def h_and_m(n: int, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every customer of the test set is in the submission; one in ten bought something in
    the test week, and only those are in the answers (as in MLE-bench's split)."""
    import pandas as pd

    customers = _text_ids(n, rng, width=64)
    articles = [f"0{a:09d}" for a in rng.integers(108775015, 959461001, 2000)]
    buyers = rng.random(n) < 0.1
    bought = [" ".join(rng.choice(articles, rng.integers(1, 6))) for _ in range(int(buyers.sum()))]
    answers = pd.DataFrame({"customer_id": [c for c, b in zip(customers, buyers, strict=True) if b],
                            "prediction": bought})  # fmt: skip
    guesses = [" ".join(rng.choice(articles, 12)) for _ in range(n)]
    return answers, pd.DataFrame({"customer_id": customers, "prediction": guesses})


def _h_and_m_customers(private: Path, guess: pd.DataFrame) -> None:
    """mle_gym's H&M answers also list every test customer, bought or not."""
    guess[["customer_id"]].to_csv(private / "sample_customers.csv", index=False)


#: competition id -> (writer of answers and a valid submission, answers file name)
CASES: dict[str, tuple[Callable, str]] = {
    "spaceship-titanic": (spaceship, "test.csv"),
    "new-york-city-taxi-fare-prediction": (taxi, "test.csv"),
    "jigsaw-toxic-comment-classification-challenge": (jigsaw_toxic, "test.csv"),
    "tabular-playground-series-dec-2021": (tps_dec, "test.csv"),
    "champs-scalar-coupling": (champs, "answers.csv"),
    "ventilator-pressure-prediction": (ventilator, "test.csv"),
    "text-normalization-challenge-english-language": (text_normalization, "answers.csv"),
    "icecube-neutrinos-in-deep-ice": (icecube, "test.csv"),
    "h-and-m-personalized-fashion-recommendations": (h_and_m, "answers.csv"),
}
#: Private files beyond the answers file that mle_gym's answers reader also reads.
EXTRA_PRIVATE: dict[str, Callable] = {
    "h-and-m-personalized-fashion-recommendations": _h_and_m_customers,
}


def _mlebench_source() -> Path | None:
    candidates = [os.environ.get("MLEBENCH_SRC")]
    try:
        import mlebench

        candidates.append(str(Path(mlebench.__file__).parent.parent))
    except ImportError:
        pass
    here = Path(__file__).resolve().parent.parent
    candidates += [str(here.parent / "mlebench-src"), str(here / "mlebench-src")]
    for found in candidates:
        if found and (Path(found) / "mlebench" / "competitions").is_dir():
            return Path(found)
    return None


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_ours(competition: str, folder: Path, repeats: int) -> dict:
    timed = time_grades(competition, folder, repeats)
    if timed["error"]:
        raise SystemExit(f"{competition}: {timed['error']}")
    return timed


def child_mlebench(competition: str, folder: Path, repeats: int, source: Path) -> dict:
    import importlib

    sys.path.insert(0, str(source))
    import sklearn.metrics  # noqa: F401
    from mlebench.utils import read_csv

    grader = importlib.import_module(f"mlebench.competitions.{competition}.grade")
    answers_file = folder / "private" / CASES[competition][1]
    base = _peak_mib()
    times, cpu, score = [], [], None
    for _ in range(repeats):
        start, used = time.perf_counter(), time.process_time()
        score = grader.grade(read_csv(folder / "submission.csv"), read_csv(answers_file))
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - used)
    return {"warm": statistics.median(times), "warm_cpu": statistics.median(cpu),
            "mib": _peak_mib() - base, "score": float(score)}  # fmt: skip


def _write_case(competition: str, rows: int, folder: Path) -> None:
    """Written in a child, so the measuring children do not inherit this one's peak memory."""
    import numpy as np

    make, answers_file = CASES[competition]
    answers, guess = make(rows, np.random.default_rng(0))
    (folder / "private").mkdir(parents=True)
    answers.to_csv(folder / "private" / answers_file, index=False)
    if competition in EXTRA_PRIVATE:
        EXTRA_PRIVATE[competition](folder / "private", guess)
    guess.sample(frac=1.0, random_state=1).to_csv(folder / "submission.csv", index=False)


def measure(
    competition: str, rows: int, repeats: int, source: Path | None, checkout: str | None = None
) -> None:
    with tempfile.TemporaryDirectory(prefix="mle-gym-grading-") as tmp:
        folder = Path(tmp)
        run_child(__file__, "write", competition, str(rows), str(folder))
        if checkout:  # its own copy: each version builds and reads its own answer key
            other = folder / "other"
            shutil.copytree(folder / "private", other / "private")
            os.link(folder / "submission.csv", other / "submission.csv")
        cold = run_child(__file__, "ours", competition, str(folder), "0")
        ours = run_child(__file__, "ours", competition, str(folder), str(repeats))
        line = (
            f"{competition[:40]:<40} {rows:>10,} | mle_gym warm {ours['warm']:6.2f} s "
            f"(CPU {ours['warm_cpu']:5.2f} s) +{ours['mib']:5.0f} MiB "
            f"(cold {cold['cold']:5.2f} s +{cold['mib']:5.0f} MiB)"
        )
        if checkout:
            run_child(__file__, "ours", competition, str(other), "0", checkout=checkout)
            theirs_ = run_child(
                __file__, "ours", competition, str(other), str(repeats), checkout=checkout
            )
            line += (
                f" | {Path(checkout).name}: warm {theirs_['warm']:6.2f} s "
                f"(CPU {theirs_['warm_cpu']:5.2f} s) +{theirs_['mib']:5.0f} MiB"
            )
        if source is None:
            print(line + " | MLE-bench: not found, column skipped", flush=True)
            return
        try:
            theirs = run_child(
                __file__, "mlebench", competition, str(folder), str(repeats), str(source)
            )
        except RuntimeError as exc:
            print(line + f" | MLE-bench failed: {exc}", flush=True)
            return
        same = "same score" if abs(theirs["score"] - ours["score"]) < 1e-5 else (
            f"SCORES DIFFER: {ours['score']} vs {theirs['score']}")  # fmt: skip
        print(
            line + f" | MLE-bench {theirs['warm']:6.2f} s (CPU {theirs['warm_cpu']:5.2f} s) "
            f"+{theirs['mib']:6.0f} MiB | ratio warm {ours['warm'] / theirs['warm']:4.2f} "
            f"CPU {ours['warm_cpu'] / theirs['warm_cpu']:4.2f} "
            f"cold {cold['cold'] / theirs['warm']:4.2f} "
            f"memory {ours['mib'] / max(theirs['mib'], 1):4.2f} | {same} | "
            f"load {os.getloadavg()[0]:4.1f}",
            flush=True,
        )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, competition, *rest = sys.argv[2:]
        if kind == "write":
            _write_case(competition, int(rest[0]), Path(rest[1]))
            print("{}")
        elif kind == "ours":
            print(json.dumps(child_ours(competition, Path(rest[0]), int(rest[1]))))
        else:
            print(
                json.dumps(child_mlebench(competition, Path(rest[0]), int(rest[1]), Path(rest[2])))
            )
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument(
        "--scaling", type=int, nargs="*", default=[1_000_000, 3_000_000, 10_000_000]
    )
    parser.add_argument("--only", nargs="*", choices=sorted(CASES))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--checkout",
        help="another mle_gym checkout (e.g. a git worktree of an older commit) graded on the "
        "same files in the same run, as a column of its own",
    )
    args = parser.parse_args()
    source = _mlebench_source()
    missing = "not found (set MLEBENCH_SRC to a copy of openai/mle-bench)"
    print(f"MLE-bench's grader: {source or missing}")
    chosen = args.only or list(CASES)
    for competition in chosen:
        measure(competition, args.rows, args.repeats, source, args.checkout)
    if args.scaling:
        print(f"scaling, {chosen[0]}:")
        for rows in args.scaling:
            measure(chosen[0], rows, args.repeats, source, args.checkout)


if __name__ == "__main__":
    main()
