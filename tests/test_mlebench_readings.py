"""Submissions MLE-bench's grader scores are scored here too, the same way, with a warning.

The oracle in each test is what MLE-bench's grader computes: the file read by
`pandas.read_csv` (which types each column as a whole) and the scikit-learn metric.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score, roc_auc_score

from mle_gym.competitions import get_competition
from mle_gym.data import CompetitionDirs
from mle_gym.grading import grade
from tests.competitions.support import prepared_dirs

#: The Lite competitions whose ids are integers.
INTEGER_ID_COMPETITIONS = (
    "leaf-classification",
    "dogs-vs-cats-redux-kernels-edition",
    "nomad2018-predict-transparent-conductors",
    "tabular-playground-series-dec-2021",
    "tabular-playground-series-may-2022",
    "mlsp-2013-birds",
)
_PREPARED: dict[str, CompetitionDirs] = {}


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory):
    def dirs_of(competition_id: str) -> CompetitionDirs:
        if competition_id not in _PREPARED:
            comp = get_competition(competition_id)
            _PREPARED[competition_id] = prepared_dirs(comp, tmp_path_factory)
        return _PREPARED[competition_id]

    return dirs_of


def _write(frame: pd.DataFrame, tmp_path: Path) -> Path:
    path = tmp_path / "submission.csv"
    frame.to_csv(path, index=False)
    return path


def _text(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


@pytest.mark.parametrize("competition_id", INTEGER_ID_COMPETITIONS)
def test_integer_ids_written_as_floats_score_as_the_integers(competition_id, prepared, tmp_path):
    comp = get_competition(competition_id)
    dirs = prepared(competition_id)
    sample = dirs.public / comp.submission.sample_file
    expected = grade(comp, sample, dirs.private)
    assert expected.valid_submission, expected.error
    frame = _text(sample)
    id_column = comp.submission.id_column
    frame[id_column] = frame[id_column] + ".0"
    report = grade(comp, _write(frame, tmp_path), dirs.private)
    assert report.valid_submission, report.error
    assert report.score == expected.score
    assert any("read as the integers they equal" in w for w in report.warnings), report.warnings


@pytest.mark.parametrize("competition_id", INTEGER_ID_COMPETITIONS[:2])
def test_an_id_written_twice_in_two_spellings_is_a_duplicate(competition_id, prepared, tmp_path):
    comp = get_competition(competition_id)
    dirs = prepared(competition_id)
    frame = _text(dirs.public / comp.submission.sample_file)
    id_column = comp.submission.id_column
    twin = frame.iloc[:1].assign(**{id_column: frame[id_column].iloc[0] + ".0"})
    report = grade(comp, _write(pd.concat([frame, twin]), tmp_path), dirs.private)
    assert not report.valid_submission and "duplicate" in report.error


def test_a_fractional_id_is_still_unknown(prepared, tmp_path):
    comp = get_competition("tabular-playground-series-dec-2021")
    dirs = prepared(comp.id)
    frame = _text(dirs.public / comp.submission.sample_file)
    frame.loc[0, "Id"] = frame.loc[0, "Id"] + ".5"
    report = grade(comp, _write(frame, tmp_path), dirs.private)
    assert not report.valid_submission and "not in the test set" in report.error


def _sorted(path: Path, id_column: str) -> pd.DataFrame:
    """The file as MLE-bench's grader sees it: pandas' own typing, sorted by id."""
    return pd.read_csv(path).sort_values(id_column).reset_index(drop=True)


def _labels_case(competition_id: str, prepared, tmp_path, values: list[str]):
    comp = get_competition(competition_id)
    dirs = prepared(competition_id)
    column = comp.submission.target_names[0]
    id_column = comp.submission.id_column
    answers = _text(dirs.private / comp.submission.answers_file)[[id_column, column]]
    cycle = [values[i % len(values)] for i in range(len(answers))]
    frame = answers.assign(**{column: cycle})
    path = _write(frame, tmp_path)
    report = grade(comp, path, dirs.private)
    truth = _sorted(dirs.private / comp.submission.answers_file, id_column)[column]
    predicted = _sorted(path, id_column)[column]
    return report, truth, predicted


@pytest.mark.parametrize(
    "values",
    [["2.0", "0.0", "4.0"], ["5", "0", "-1", "2"], ["7.0", "3", "1"]],
    ids=["floats", "outside the grades", "both"],
)
def test_aptos_grades_score_as_mlebench_scores_them(values, prepared, tmp_path):
    report, truth, predicted = _labels_case(
        "aptos2019-blindness-detection", prepared, tmp_path, values
    )
    assert report.valid_submission, report.error
    oracle = cohen_kappa_score(predicted, truth, weights="quadratic")
    assert report.score == round(oracle, 5)
    assert report.warnings


@pytest.mark.parametrize(
    "values", [["2.0", "1.0"], ["8", "0", "2"], ["9.0", "1"]], ids=["floats", "outside", "both"]
)
def test_cover_types_score_as_mlebench_scores_them(values, prepared, tmp_path):
    report, truth, predicted = _labels_case(
        "tabular-playground-series-dec-2021", prepared, tmp_path, values
    )
    assert report.valid_submission, report.error
    assert report.score == round(accuracy_score(truth, predicted), 5)
    assert report.warnings


def test_plant_pathology_scores_above_one_are_ranked(prepared, tmp_path):
    comp = get_competition("plant-pathology-2020-fgvc7")
    dirs = prepared(comp.id)
    answers = _text(dirs.private / "test.csv")
    rng = np.random.default_rng(0)
    classes = comp.submission.target_names
    frame = answers.assign(**{c: rng.normal(0.5, 2.0, len(answers)) for c in classes})
    path = _write(frame, tmp_path)
    report = grade(comp, path, dirs.private)
    assert report.valid_submission, report.error
    truth, predicted = _sorted(dirs.private / "test.csv", "image_id"), _sorted(path, "image_id")
    oracle = np.mean([roc_auc_score(truth[c], predicted[c]) for c in classes])
    assert report.score == round(oracle, 5)
    assert any("outside [0, 1]" in w for w in report.warnings), report.warnings


def test_a_probability_column_elsewhere_still_refuses_values_above_one(prepared, tmp_path):
    comp = get_competition("tabular-playground-series-may-2022")
    dirs = prepared(comp.id)
    frame = _text(dirs.public / comp.submission.sample_file).assign(target="1.5")
    report = grade(comp, _write(frame, tmp_path), dirs.private)
    assert not report.valid_submission and "probabilities in [0, 1]" in report.error


# -- booleans written as 1/0 (spaceship-titanic's format over answers written here) ----------
SPACESHIP = get_competition("spaceship-titanic")


@pytest.fixture
def spaceship_private(tmp_path: Path) -> Path:
    private = tmp_path / "private"
    private.mkdir()
    rng = np.random.default_rng(1)
    pd.DataFrame(
        {
            "PassengerId": [f"{i:04d}_01" for i in range(40)],
            "Transported": rng.integers(0, 2, 40).astype(bool),
        }
    ).to_csv(private / "test.csv", index=False)
    return private


@pytest.mark.parametrize("one, zero", [("1", "0"), ("1.0", "0.0")])
def test_booleans_written_as_one_and_zero_score_as_mlebench(one, zero, spaceship_private, tmp_path):
    answers = pd.read_csv(spaceship_private / "test.csv")
    rng = np.random.default_rng(2)
    guess = rng.integers(0, 2, len(answers))
    frame = answers.assign(Transported=[one if g else zero for g in guess])
    path = _write(frame, tmp_path)
    report = grade(SPACESHIP, path, spaceship_private)
    assert report.valid_submission, report.error
    predicted = _sorted(path, "PassengerId")["Transported"]
    truth = _sorted(spaceship_private / "test.csv", "PassengerId")["Transported"]
    assert report.score == round(accuracy_score(truth, predicted), 5)
    assert any("1/0 rather than True/False" in w for w in report.warnings)


def test_true_false_mixed_with_one_zero_is_read_as_text(spaceship_private, tmp_path):
    """pandas types such a column as text; scikit-learn refuses two text labels against
    booleans (MLE-bench: invalid) and scores three or more as all wrong (MLE-bench: 0.0)."""
    answers = pd.read_csv(spaceship_private / "test.csv")
    words = ["True", "1"] * (len(answers) // 2)
    report = grade(
        SPACESHIP, _write(answers.assign(Transported=words), tmp_path), spaceship_private
    )
    assert not report.valid_submission and "reads the whole column as text" in report.error
    words = ["True", "False", "1"] * (len(answers) // 3) + ["True"] * (len(answers) % 3)
    report = grade(
        SPACESHIP, _write(answers.assign(Transported=words), tmp_path), spaceship_private
    )
    assert report.valid_submission and report.score == 0.0, report.error
    assert any("every row was scored as a wrong prediction" in w for w in report.warnings)


def test_other_numbers_are_not_booleans(spaceship_private, tmp_path):
    answers = pd.read_csv(spaceship_private / "test.csv")
    report = grade(SPACESHIP, _write(answers.assign(Transported=2), tmp_path), spaceship_private)
    assert not report.valid_submission and "must hold True or False" in report.error


def test_a_closed_class_set_refuses_other_integers_but_reads_floats(tmp_path):
    from mle_gym.data import prepare

    comp = get_competition("sklearn-digits")
    dirs = prepare(comp, root=tmp_path / "cache").dirs
    answers = _text(dirs.private / "test.csv")
    as_floats = answers.assign(label=answers["label"] + ".0")
    report = grade(comp, _write(as_floats, tmp_path), dirs.private)
    assert report.valid_submission and report.score == 1.0, report.error
    unknown = answers.assign(label=["12", *answers["label"][1:]])
    report = grade(comp, _write(unknown, tmp_path), dirs.private)
    assert not report.valid_submission and report.error.endswith("found '12'"), report.error
