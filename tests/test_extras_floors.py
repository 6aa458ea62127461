"""The oldest versions our extras allow still prepare and grade, beside MLE-bench's pins.

.ci/setup.d/floors.sh installs `mle-gym[competitions]` with every floor of the `images`,
`archives` and `detection` extras pinned (`py7zr>=1.0` becomes `py7zr==1.0`, ...) and
pandas 2.2.2, numpy 1.26.4, scikit-learn 1.5.1, as MLE-bench pins them. In that venv, one
competition per extra (all three 7z ones) is prepared from its fixture and its sample
submission graded; the scores must equal those of the suite's own environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from tests.prerequisites import REPO, require, setup_piece

FLOORS_VENV = setup_piece("MLE_GYM_FLOORS_VENV", "venv-floors")
#: One competition per extra; every 7z one, since py7zr's floor is the one that moved.
COMPETITIONS = (
    "invasive-species-monitoring",
    "statoil-iceberg-classifier-challenge",
    "tensorflow-speech-recognition-challenge",
    "cdiscount-image-classification-challenge",
    "denoising-dirty-documents",
    "vinbigdata-chest-xray-abnormalities-detection",
    "3d-object-detection-for-autonomous-vehicles",
)

_SCRIPT = """
import json, sys, tempfile
from importlib.metadata import version
from pathlib import Path
from mle_gym.competitions import get_competition
from mle_gym.data import prepare
from mle_gym.grading import grade
from tests.fixtures.raw import generator_for

scores = {}
for competition_id in sys.argv[1:]:
    comp = get_competition(competition_id)
    with tempfile.TemporaryDirectory() as scratch:
        raw = Path(scratch) / "raw"
        raw.mkdir()
        generator_for(comp).make_raw(raw)
        dirs = prepare(comp, raw, root=Path(scratch) / "cache").dirs
        report = grade(comp, dirs.public / comp.submission.sample_file, dirs.private)
        scores[competition_id] = report.score if report.valid_submission else report.error
names = ("py7zr", "pymongo", "pillow", "pycocotools", "shapely", "numpy", "pandas",
         "scikit-learn", "pyarrow")
print(json.dumps({"scores": scores, "versions": {n: version(n) for n in names}}))
"""


def _run(python: Path) -> dict:
    result = subprocess.run(
        [str(python), "-c", _SCRIPT, *COMPETITIONS],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def _floors() -> dict[str, str]:
    lines = (FLOORS_VENV / "floors.txt").read_text().split()
    return dict(line.split("==") for line in lines)


@pytest.mark.timeout(1800)
def test_the_extras_floors_prepare_and_grade_as_the_suite_does() -> None:
    python = FLOORS_VENV / "bin" / "python"
    require(
        python.is_file() and (FLOORS_VENV / "floors.txt").is_file(),
        f"no venv with the extras' floors at {FLOORS_VENV}: run bash .ci/setup.d/floors.sh "
        "(or set MLE_GYM_FLOORS_VENV)",
    )
    floors = _run(python)
    for name, floor in _floors().items():
        assert Version(floors["versions"][name.lower()]) == Version(floor), name
    assert floors["scores"] == _run(Path(sys.executable))["scores"]
