"""Writes tests/mlebench_verdicts.csv: MLE-bench's own verdict on every probe submission.

For every registered competition, the fixture's raw files are prepared by mle_gym (whose
prepared files equal MLE-bench's, checked by md5 elsewhere) and the probes of
`tests/mlebench_probes.py` are written; then MLE-bench's grader, imported from its own
source and run under its pinned libraries, grades each probe as `mlebench grade` does
(`read_csv` with its defaults, the competition's `grade` function, invalid on any
exception, the score rounded to 5 decimals). tests/test_mlebench_verdicts.py compares
our verdicts with the table.

Reproduce (MLE-bench needs Python >= 3.11 and its pins; the venv lives outside the repo):

    python3.12 -m venv /work/mlebench-venv
    /work/mlebench-venv/bin/pip install pandas==2.2.2 numpy==1.26.4 scikit-learn==1.5.1 \
        pyyaml tqdm py7zr appdirs shapely pyquaternion levenshtein
    git clone https://github.com/openai/mle-bench /work/mle-bench   # or a snapshot
    python tests/mlebench_verdicts.py all --mlebench-python /work/mlebench-venv/bin/python \
        --mlebench-repo /work/mle-bench --commit <sha> [--only id ...]

The `grade` step runs in MLE-bench's venv and imports nothing of mle_gym.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
from pathlib import Path

TABLE = Path(__file__).with_name("mlebench_verdicts.csv")
COLUMNS = ("competition", "probe", "valid", "score", "reason")


def prepare_probes(out: Path, only: list[str]) -> Path:
    """Prepare each competition's fixture under `out` and write its probes; returns the
    manifest (JSON) that the `grade` step reads."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from mle_gym.competitions import all_competitions
    from mle_gym.data import prepare
    from tests.fixtures.raw import generator_for
    from tests.mlebench_probes import make_probes

    manifest = []
    for comp in all_competitions():
        fixture = generator_for(comp)
        if fixture is None or (only and comp.id not in only):
            continue
        raw, root = out / comp.id / "raw", out / comp.id / "cache"
        raw.mkdir(parents=True)
        fixture.make_raw(raw)
        dirs = prepare(comp, raw, root=root).dirs
        fmt = comp.submission
        probes = make_probes(
            dirs.public, dirs.private, fmt.sample_file, fmt.answers_file,
            [fmt.id_column, *fmt.target_names],
        )  # fmt: skip
        paths = {}
        for name, data in probes.items():
            path = out / comp.id / "probes" / f"{name}.csv"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            paths[name] = str(path)
        manifest.append({"id": comp.id, "private": str(dirs.private), "probes": paths})
    path = out / "manifest.json"
    path.write_text(json.dumps(manifest, indent=1))
    return path


def _mlebench_verdict(grade, read_csv, answers: Path, submission: str) -> tuple[str, str, str]:
    """(valid, score, reason) as MLE-bench's Grader reports them."""
    from mlebench.grade_helpers import InvalidSubmissionError
    from mlebench.utils import load_answers

    try:
        score = grade(read_csv(submission), load_answers(answers))
    except InvalidSubmissionError:
        return "false", "", "InvalidSubmissionError"
    except Exception as exc:  # MLE-bench logs any other error and gives no score
        return "false", "", type(exc).__name__
    if score is None or score != score:
        return "true", "nan", ""
    return "true", repr(round(float(score), 5)), ""


def grade_probes(manifest: Path, repo: Path, commit: str, table: Path) -> None:
    """Runs in MLE-bench's venv: grade every probe with its grader, write the table."""
    import importlib
    import logging
    import platform

    import numpy
    import pandas
    import sklearn
    import yaml

    sys.path.insert(0, str(repo))
    logging.disable(logging.CRITICAL)
    from mlebench.utils import read_csv

    rows = []
    for entry in json.loads(manifest.read_text()):
        config_path = repo / "mlebench" / "competitions" / entry["id"] / "config.yaml"
        if not config_path.is_file():
            continue
        config = yaml.safe_load(config_path.read_text())
        module, name = config["grader"]["grade_fn"].split(":")
        grade = getattr(importlib.import_module(module), name)
        answers = Path(entry["private"]) / config["dataset"]["answers"].split("/private/", 1)[1]
        for probe, path in entry["probes"].items():
            rows.append((entry["id"], probe, *_mlebench_verdict(grade, read_csv, answers, path)))
        print(entry["id"], flush=True)
    with open(table, "w", newline="") as handle:
        handle.write(
            f"# MLE-bench's verdicts on the probes of tests/mlebench_probes.py, written by "
            f"tests/mlebench_verdicts.py\n# mle-bench commit {commit}; python "
            f"{platform.python_version()}, pandas {pandas.__version__}, numpy "
            f"{numpy.__version__}, scikit-learn {sklearn.__version__}\n"
        )
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(COLUMNS)
        writer.writerows(sorted(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    steps = parser.add_subparsers(dest="step", required=True)
    run_all = steps.add_parser("all", help="prepare and probe here, grade in MLE-bench's venv")
    run_all.add_argument("--mlebench-python", required=True)
    run_all.add_argument("--mlebench-repo", type=Path, required=True)
    run_all.add_argument("--commit", required=True, help="the MLE-bench commit graded with")
    run_all.add_argument("--only", nargs="*", default=[])
    run_all.add_argument("--table", type=Path, default=TABLE)
    grade = steps.add_parser("grade", help="(in MLE-bench's venv) grade a manifest's probes")
    grade.add_argument("manifest", type=Path)
    grade.add_argument("--mlebench-repo", type=Path, required=True)
    grade.add_argument("--commit", required=True)
    grade.add_argument("--table", type=Path, default=TABLE)
    args = parser.parse_args()
    if args.step == "grade":
        grade_probes(args.manifest, args.mlebench_repo, args.commit, args.table)
        return
    with tempfile.TemporaryDirectory() as scratch:
        manifest = prepare_probes(Path(scratch), args.only)
        subprocess.run(
            [args.mlebench_python, __file__, "grade", str(manifest),
             "--mlebench-repo", str(args.mlebench_repo), "--commit", args.commit,
             "--table", str(args.table)],
            check=True,
        )  # fmt: skip


if __name__ == "__main__":
    main()
