"""Our verdict and score on every probe equal MLE-bench's, except the documented differences.

tests/mlebench_verdicts.csv holds MLE-bench's own verdicts (its grader, its pinned pandas,
numpy and scikit-learn; see its header and tests/mlebench_verdicts.py, which rewrites it)
on the probes of tests/mlebench_probes.py, built from each competition's fixture. Here
the same probes are graded by mle_gym. A disagreement fails unless it is listed in
`DOCUMENTED` with the docs/fidelity.md row that explains it.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from mle_gym.competitions import all_competitions, get_competition
from mle_gym.grading import grade
from tests.competitions.support import prepared_dirs
from tests.fixtures.raw import generator_for
from tests.mlebench_probes import make_probes

TABLE = Path(__file__).with_name("mlebench_verdicts.csv")
FIDELITY = Path(__file__).resolve().parents[1] / "docs" / "fidelity.md"

#: competition -> (probes, words of the docs/fidelity.md row that explains why ours differ
#: from MLE-bench's on them); the test checks that the words are there.
DOCUMENTED: dict[str, tuple[tuple[str, ...], str]] = {
    "champs-scalar-coupling": (
        ("perfect", "shuffled", "ids_padded", "crlf", "bom", "scientific"),
        "floors each type's MAE at 1e-9 before the log",
    ),
    "google-quest-challenge": (("inf", "nan_cell"), "`inf` is ranked above every number"),
    "hms-harmful-brain-activity-classification": (
        ("shuffled", "nan_cell"),
        "the file scores 0.0, the best KL divergence",
    ),
    "hotel-id-2021-fgvc8": (
        ("inf", "nan_cell", "scientific"),
        "(or one cell such as `nan`, `inf` or `3.6e4`)",
    ),
    "hubmap-kidney-segmentation": (("nan_cell",), "reads only an empty cell as an empty mask"),
    "jigsaw-unintended-bias-in-toxicity-classification": (
        ("nan_cell",),
        "or one pandas reads as missing (`nan`, `NA`), counts as non-toxic",
    ),
    "new-york-city-taxi-fare-prediction": (("ids_padded",), "a padded key is an unknown key"),
    "nomad2018-predict-transparent-conductors": (
        ("shuffled", "header_padded"),
        "the `id` column need not even be there",
    ),
    "osic-pulmonary-fibrosis-progression": (
        ("inf", "nan_cell"),
        "refuses empty and non-finite `FVC` and `Confidence` cells in every row",
    ),
    "rsna-breast-cancer-detection": (
        ("inf", "nan_cell"),
        "scores a NaN prediction anywhere as 0 (NaN precision), clips an infinite one",
    ),
    "smartphone-decimeter-2022": (
        ("shuffled", "inf", "nan_cell"),
        "(so `nan` or `inf` there is scored too)",
    ),
    "stanford-covid-vaccine": (("shuffled",), "a submission in another row order is scored on"),
    "tensorflow-speech-recognition-challenge": (
        ("nan_cell",),
        "when a label cell is empty or reads as missing",
    ),
    "tgs-salt-identification-challenge": (
        ("nan_cell",),
        "reads only an empty cell as an empty mask",
    ),
    "us-patent-phrase-to-phrase-matching": (
        ("sample", "inf", "nan_cell"),
        "empty or non-finite scores pass to scipy, which returns NaN",
    ),
    "uw-madison-gi-tract-image-segmentation": (
        ("shuffled", "ids_padded", "inf", "nan_cell"),
        "and `class` must name one of the three organs (MLE-bench never reads it)",
    ),
    "spaceship-titanic": (("inf",), "and words other than true/false (`yes`)"),
}


def _table() -> dict[tuple[str, str], tuple[bool, float | None, str]]:
    lines = [line for line in TABLE.read_text().splitlines() if not line.startswith("#")]
    verdicts = {}
    for row in csv.DictReader(lines):
        score = float(row["score"]) if row["score"] else None
        verdicts[row["competition"], row["probe"]] = (row["valid"] == "true", score, row["reason"])
    return verdicts


VERDICTS = _table()
COMPETITIONS = sorted({competition for competition, _ in VERDICTS})


def test_the_table_covers_every_competition_with_a_fixture() -> None:
    with_fixture = {c.id for c in all_competitions() if generator_for(c) is not None}
    assert set(COMPETITIONS) == with_fixture
    assert TABLE.read_text().startswith("# MLE-bench's verdicts")


def test_every_documented_difference_names_its_fidelity_row() -> None:
    rows = [line for line in FIDELITY.read_text().splitlines() if line.startswith("| ")]
    for competition, (_probes, words) in DOCUMENTED.items():
        assert any(competition in row and words in row for row in rows), (competition, words)


@pytest.mark.parametrize("competition_id", COMPETITIONS)
def test_our_verdicts_equal_mlebench_or_are_documented(competition_id, tmp_path_factory):
    comp = get_competition(competition_id)
    dirs = prepared_dirs(comp, tmp_path_factory)
    fmt = comp.submission
    probes = make_probes(
        dirs.public, dirs.private, fmt.sample_file, fmt.answers_file,
        [fmt.id_column, *fmt.target_names],
    )  # fmt: skip
    theirs = {p: v for (c, p), v in VERDICTS.items() if c == competition_id}
    assert set(probes) == set(theirs), "the probes changed: rerun tests/mlebench_verdicts.py"
    folder = tmp_path_factory.mktemp(f"{competition_id}-probes")
    differences = []
    for name, data in sorted(probes.items()):
        path = folder / f"{name}.csv"
        path.write_bytes(data)
        report = grade(comp, path, dirs.private)
        valid, score, reason = theirs[name]
        same = report.valid_submission == valid and (
            not valid or score is None or report.score == pytest.approx(score, abs=1e-5)
        )
        if not same and name not in DOCUMENTED.get(competition_id, ((),))[0]:
            ours = report.score if report.valid_submission else f"invalid ({report.error})"
            mlebench = score if valid else f"invalid ({reason})"
            differences.append(f"{name}: ours {ours}, MLE-bench {mlebench}")
    assert differences == []
