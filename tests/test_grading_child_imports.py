"""The grading child imports nothing: the env imports what grading uses before it forks.

An import in a forked child can wait forever on an import lock that another thread of the
host held at the fork, and what a child imports it imports again at every grade. Each
case runs in a fresh interpreter (this one has imported too much to notice), with an
import hook that records every import made in a process other than the one it was
installed in.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.prerequisites import REPO

SCRIPT = """
import json, os, sys
from pathlib import Path
from mle_gym.grading.bounded import grade_bounded, warm_up

competition, folder, record = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
parent = os.getpid()

class RecordChildImports:
    def find_spec(self, name, path=None, target=None):
        if os.getpid() != parent:
            with open(record, "a") as out:
                out.write(name + "\\n")
        return None

warm_up()
sys.meta_path.insert(0, RecordChildImports())
report = grade_bounded(competition, folder / "submission.csv", folder / "private")
print(json.dumps({"score": report.score, "error": report.error}))
"""

#: competition -> (header, answer rows, submitted rows): one metric family each
CASES = {
    "spaceship-titanic": (
        "PassengerId,Transported",
        ["0001_01,True", "0002_01,False", "0003_01,True", "0004_01,False"],
        ["0003_01,True", "0001_01,True", "0004_01,True", "0002_01,False"],
    ),
    "new-york-city-taxi-fare-prediction": (
        "key,fare_amount",
        ["2015-01-27 13:08:24.0000002,11.5", "2015-01-27 13:08:24.0000003,7.0"],
        ["2015-01-27 13:08:24.0000003,6.0", "2015-01-27 13:08:24.0000002,11.5"],
    ),
    "tabular-playground-series-may-2022": (
        "id,target",
        ["900000,1", "900001,0", "900002,1", "900003,0"],
        ["900002,0.9", "900000,0.7", "900003,0.2", "900001,0.4"],
    ),
}


@pytest.mark.parametrize("competition", sorted(CASES))
def test_a_grade_imports_nothing_in_the_grading_child(competition, tmp_path):
    header, answers, submitted = CASES[competition]
    private = tmp_path / "private"
    private.mkdir()
    (private / "test.csv").write_text("\n".join([header, *answers]) + "\n")
    (tmp_path / "submission.csv").write_text("\n".join([header, *submitted]) + "\n")
    record = tmp_path / "child_imports.txt"
    for _ in range(2):  # the first grade also builds the answer key
        out = subprocess.run(
            [sys.executable, "-c", SCRIPT, competition, str(tmp_path), str(record)],
            capture_output=True, text=True, cwd=REPO, check=False, timeout=300,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
        report = json.loads(out.stdout.strip().splitlines()[-1])
        assert report["error"] is None and report["score"] is not None, report
    imported = sorted(set(record.read_text().split())) if record.exists() else []
    assert imported == [], f"the grading child imported {imported}"


def test_the_hook_sees_an_import_made_in_a_child(tmp_path):
    """The check itself: a module first imported after a fork is recorded."""
    script = SCRIPT.replace(
        "report = grade_bounded(", "pid = os.fork()\n"
        "if pid == 0:\n    import wave\n    os._exit(0)\nos.waitpid(pid, 0)\n"
        "report = grade_bounded(",
    )  # fmt: skip
    header, answers, submitted = CASES["spaceship-titanic"]
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "test.csv").write_text("\n".join([header, *answers]) + "\n")
    (tmp_path / "submission.csv").write_text("\n".join([header, *submitted]) + "\n")
    record = tmp_path / "child_imports.txt"
    out = subprocess.run(
        [sys.executable, "-c", script, "spaceship-titanic", str(tmp_path), str(record)],
        capture_output=True, text=True, cwd=REPO, check=False, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert "wave" in Path(record).read_text().split()
