"""`mle-gym audit plagiarism` with the real Dolos (Node and @dodona/dolos-lib, installed by
.ci/setup.d/dolos.sh): a copied-then-edited script is flagged, an independent one is not,
and notebooks are compared by their code cells."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mle_gym.analysis.plagiarism import DolosUnavailable, check_dolos, notebook_code
from mle_gym.cli import main
from tests.prerequisites import REPO, require

KERNELS = REPO / "tests" / "fixtures" / "plagiarism"

INDEPENDENT = '''\
"""A logistic regression over one-hot columns, written for this test."""
import pandas as pd
from sklearn.compose import make_column_transformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

data_dir = "/home/data"
labelled = pd.read_csv(f"{data_dir}/train.csv")
unlabelled = pd.read_csv(f"{data_dir}/test.csv")
numbers = ["Age", "RoomService", "FoodCourt", "ShoppingMall", "Spa", "VRDeck"]
words = ["HomePlanet", "Destination", "CryoSleep", "VIP"]
prepare = make_column_transformer(
    (make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), numbers),
    (make_pipeline(SimpleImputer(strategy="most_frequent"), OneHotEncoder(handle_unknown="ignore")),
     words),
)
classifier = make_pipeline(prepare, LogisticRegression(C=0.5, max_iter=2000))
classifier.fit(labelled[numbers + words].astype({w: str for w in words}), labelled["Transported"])
guesses = classifier.predict(unlabelled[numbers + words].astype({w: str for w in words}))
out = unlabelled[["PassengerId"]].assign(Transported=guesses)
out.to_csv("/home/submission/submission.csv", index=False)
print(out.head())
'''


def _copied_then_edited() -> str:
    """The kernel's script with names, comments, paths and settings changed, as an agent
    that copied it would leave it."""
    text = (KERNELS / "kernel_titanic_forest.py").read_text()
    for old, new in (
        ("# Spaceship Titanic: feature engineering and a random forest", "# my solution"),
        ("/kaggle/input/spaceship-titanic", "/home/data"),
        ("engineer", "make_features"),
        ("frame", "df"),
        ("model", "clf"),
        ("n_estimators=400", "n_estimators=500"),
        ("random_state=7", "random_state=0"),
        ('"submission.csv"', '"/home/submission/submission.csv"'),
    ):
        text = text.replace(old, new)
    return text + 'print("done")\n'


def _notebook_copy() -> str:
    """An agent notebook whose code cells are the kernel notebook's, lightly edited, with
    markdown cells of its own."""
    kernel = json.loads((KERNELS / "kernel_lgbm_folds.ipynb").read_text())
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["## My own plan\n"] * 40}]
    for cell in kernel["cells"]:
        if cell["cell_type"] == "code":
            source = "".join(cell["source"]).replace("../input/spaceship-titanic", "/home/data")
            cells.append({**cell, "source": source.replace("models", "boosters")})
    return json.dumps({**kernel, "cells": cells})


def _run_dir(root: Path, codes: dict[int, dict[str, str]]) -> Path:
    for seed, files in codes.items():
        episode = root / "episodes" / "spaceship-titanic" / f"seed-{seed}"
        (episode / "code").mkdir(parents=True)
        (episode / "status.json").write_text(json.dumps({"state": "done", "attempt": 1}))
        for name, text in files.items():
            (episode / "code" / name).write_text(text)
    return root


@pytest.fixture(scope="module")
def dolos() -> None:
    try:
        check_dolos()
    except DolosUnavailable as exc:
        require(False, str(exc))


def test_notebooks_are_read_by_their_code_cells() -> None:
    code = notebook_code(KERNELS / "kernel_lgbm_folds.ipynb")
    assert "import lightgbm as lgb" in code and "StratifiedKFold(n_splits=10" in code
    assert "Some notes" not in code and "ok\n" not in code.split("import")[0]


def test_a_copied_script_is_flagged_and_an_independent_one_is_not(
    dolos: None, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    run = _run_dir(
        tmp_path / "run",
        {
            0: {"solution.py": _copied_then_edited()},
            1: {"solution.py": INDEPENDENT},
            2: {"explore.ipynb": _notebook_copy(), "notes.txt": "not code"},
        },
    )
    code = main(["audit", "plagiarism", str(run), "--kernels", str(KERNELS), "--json"])
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((run / "audits" / "plagiarism.json").read_text())
    assert code == 1 and printed["threshold"] == 0.6
    by_seed = {e["seed"]: e for e in printed["episodes"]}
    copied, independent, notebook = by_seed[0], by_seed[1], by_seed[2]
    assert copied["flagged"] and copied["similarity"] > 0.6
    assert copied["agent_file"] == "solution.py"
    assert copied["notebook"] == "kernel_titanic_forest.py"
    assert not independent["flagged"] and independent["similarity"] < 0.45
    assert notebook["flagged"] and notebook["notebook"] == "kernel_lgbm_folds.ipynb"
    assert notebook["agent_file"] == "explore.ipynb" and notebook["agent_files"] == 1


def test_without_kept_code_the_audit_says_so(dolos: None, tmp_path: Path) -> None:
    run = _run_dir(tmp_path / "run", {0: {}})
    assert main(["audit", "plagiarism", str(run), "--kernels", str(KERNELS), "--json"]) == 0
    finding = json.loads((run / "audits" / "plagiarism.json").read_text())["episodes"][0]
    assert finding["similarity"] is None and "no kept code" in finding["note"]
