"""`mle-gym audit plagiarism` with the real Dolos (Node and @dodona/dolos-lib, installed by
.ci/setup.d/dolos.sh): a copied-then-edited script is flagged, an independent one is not,
and notebooks are compared by their code cells. A hostile episode can neither end the
audit of the run (a file that breaks Dolos fails that file alone) nor slip a copy past it
(decoys, another suffix, kept code cut short or missing: flagged for review)."""

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


def _run_dir(root: Path, codes: dict[int, dict[str, str]], submitted: bool = False) -> Path:
    for seed, files in codes.items():
        episode = root / "episodes" / "spaceship-titanic" / f"seed-{seed}"
        (episode / "code").mkdir(parents=True)
        (episode / "status.json").write_text(json.dumps({"state": "done", "attempt": 1}))
        if submitted:
            result = {"submission": "submission.csv", "code": {"files": len(files)}}
            (episode / "result.json").write_text(json.dumps(result))
        for name, text in files.items():
            (episode / "code" / name).parent.mkdir(parents=True, exist_ok=True)
            (episode / "code" / name).write_text(text)
    return root


def _audit(run: Path) -> tuple[int, dict[int, dict]]:
    """The audit's exit status and its written findings by seed."""
    code = main(["audit", "plagiarism", str(run), "--kernels", str(KERNELS), "--json"])
    written = json.loads((run / "audits" / "plagiarism.json").read_text())
    return code, {e["seed"]: e for e in written["episodes"]}


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
    assert notebook["agent_file"] == "explore.ipynb" and notebook["agent_files"] == 2


def test_without_kept_code_the_audit_says_so(dolos: None, tmp_path: Path) -> None:
    run = _run_dir(tmp_path / "run", {0: {}})
    assert main(["audit", "plagiarism", str(run), "--kernels", str(KERNELS), "--json"]) == 0
    finding = json.loads((run / "audits" / "plagiarism.json").read_text())["episodes"][0]
    assert finding["similarity"] is None and "no kept code" in finding["note"]


def test_a_file_that_breaks_dolos_fails_that_file_and_no_other_finding(
    dolos: None, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """100,000 nested parentheses (200 KB) overflow Dolos's recursive tokenizer: the run's
    report is still written, a verbatim copy in another episode is still found, and the
    breaking file is reported and sends its episode to review."""
    kernel = (KERNELS / "kernel_titanic_forest.py").read_text()
    parentheses = "x = " + "(" * 100_000 + ")" * 100_000 + "\n"
    run = _run_dir(
        tmp_path / "run",
        {
            0: {"deep.py": parentheses, "model.py": INDEPENDENT},
            1: {"solution.py": kernel},
            2: {"solution.py": INDEPENDENT},
        },
    )
    code, by_seed = _audit(run)
    capsys.readouterr()
    assert code == 1
    broken, copied, independent = by_seed[0], by_seed[1], by_seed[2]
    assert copied["similarity"] > 0.99 and copied["flagged"] and not copied["review"]
    assert not independent["flagged"] and independent["similarity"] < 0.45
    assert broken["flagged"] and list(broken["not_compared"]) == ["deep.py"]
    assert "Dolos failed" in broken["not_compared"]["deep.py"]
    assert broken["agent_files"] == 1 and broken["agent_file"] == "model.py"
    assert "audit failed for 1 file(s), e.g. deep.py" in broken["review"][0]


def test_decoys_and_other_suffixes_do_not_hide_a_copy(
    dolos: None, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """500 one-line decoys named to sort first, and a copy saved as .txt (run with exec)
    or as a notebook that is not JSON: every text file is compared."""
    kernel = (KERNELS / "kernel_titanic_forest.py").read_text()
    decoys = {f"000_{i:03d}.py": f"print({i})\n" for i in range(500)}
    run = _run_dir(
        tmp_path / "run",
        {
            0: {**decoys, "zz_solution.py": kernel},
            1: {"solution.txt": kernel, "run.py": "exec(open('solution.txt').read())\n"},
            2: {"notes.ipynb": kernel, "weights.bin": "\0" * 64},
        },
    )
    code, by_seed = _audit(run)
    capsys.readouterr()
    assert code == 1
    assert by_seed[0]["agent_files"] == 501 and by_seed[0]["agent_file"] == "zz_solution.py"
    assert by_seed[1]["agent_file"] == "solution.txt"
    assert by_seed[2]["agent_file"] == "notes.ipynb" and by_seed[2]["binary"] == 1
    for finding in by_seed.values():
        assert finding["flagged"] and finding["similarity"] > 0.99 and not finding["review"]


def test_kept_code_cut_short_or_missing_is_sent_to_review(
    dolos: None, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The audit reads the episode's code.json: a listing cut short, a small file that was
    not kept, or no code at all beside a submission flags the episode with the reason."""
    run = _run_dir(tmp_path / "run", {0: {}, 1: {"a.py": INDEPENDENT}, 2: {"a.py": INDEPENDENT}},
                   submitted=True)  # fmt: skip
    episodes = run / "episodes" / "spaceship-titanic"
    kept = {"path": "a.py", "bytes": 1500, "kept": True}
    left = {"path": "b.py", "bytes": 900, "kept": False, "reason": "Permission denied"}
    for seed, index in (
        (1, {"files": [kept], "listing_truncated": True}),
        (2, {"files": [kept, left], "listing_truncated": False}),
    ):
        (episodes / f"seed-{seed}" / "code.json").write_text(json.dumps(index))
    code, by_seed = _audit(run)
    capsys.readouterr()
    assert code == 1 and all(f["flagged"] for f in by_seed.values())
    assert by_seed[0]["review"] == ["no kept code, but the episode made a submission"]
    assert by_seed[1]["review"] == ["kept code incomplete: the listing stopped at 1 files"]
    assert "b.py (Permission denied)" in by_seed[2]["review"][0]
    assert by_seed[1]["similarity"] < 0.45  # still compared
