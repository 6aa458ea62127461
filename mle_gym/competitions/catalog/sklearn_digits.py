"""The offline demo: handwritten digits bundled with scikit-learn, graded like a Kaggle task.

Its data ships inside a declared dependency, so it runs with no download. No human
leaderboard exists, so its thresholds come from a fixed panel of reference models
(`REFERENCE_PANEL`), ranked by Kaggle's progression rule exactly as a real leaderboard would
be; `mle-gym reference-panel sklearn-digits` recomputes them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_rules import public_as_raw
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import np, pd, train_test_split

PIXELS = [f"pixel_{i}" for i in range(64)]


def fetch_raw(dest: Path) -> None:
    """Write scikit-learn's bundled digits as the competition's raw file."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    frame = pd.DataFrame(digits.data.astype(int), columns=PIXELS)
    frame.insert(0, "id", [f"img_{i:04d}" for i in range(len(frame))])
    frame["label"] = digits.target
    frame.to_csv(dest / "digits.csv", index=False)


def prepare(raw: Path, public: Path, private: Path) -> None:
    """The MLE-bench recipe: 20% of the labelled images become the hidden test set."""
    original = read_csv(raw / "digits.csv")
    train, test = train_test_split(original, test_size=0.2, random_state=0)
    train.to_csv(public / "train.csv", index=False)
    test.drop(columns="label").to_csv(public / "test.csv", index=False)
    sample = test[["id"]].copy()
    sample["label"] = 0
    sample.to_csv(public / "sample_submission.csv", index=False)
    test[["id", "label"]].to_csv(private / "test.csv", index=False)


#: The panel whose accuracies form this competition's leaderboard. Every model is fitted on
#: public/train.csv with fixed seeds; changing this list changes the thresholds.
PANEL = (
    "majority-class",
    "bernoulli-nb",
    "gaussian-nb",
    "nearest-centroid",
    "decision-tree-depth-4",
    "decision-tree-depth-8",
    "decision-tree",
    "perceptron",
    "ridge-classifier",
    "lda",
    "random-forest-10",
    "random-forest-200",
    "extra-trees-200",
    "hist-gradient-boosting",
    "logistic-regression",
    "linear-svc",
    "knn-1",
    "knn-5",
    "knn-15",
    "mlp",
    "svc-rbf",
    "svc-rbf-raw",
)


def _panel_model(name: str) -> Any:
    """A fresh, unfitted model of the panel (scikit-learn is imported only here)."""
    from sklearn import discriminant_analysis, ensemble, linear_model, naive_bayes, neighbors
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC, LinearSVC
    from sklearn.tree import DecisionTreeClassifier

    def scaled(model: Any) -> Any:
        return make_pipeline(StandardScaler(), model)

    makers: dict[str, Callable[[], Any]] = {
        "majority-class": _majority,
        "bernoulli-nb": naive_bayes.BernoulliNB,
        "gaussian-nb": naive_bayes.GaussianNB,
        "nearest-centroid": neighbors.NearestCentroid,
        "decision-tree-depth-4": lambda: DecisionTreeClassifier(max_depth=4, random_state=0),
        "decision-tree-depth-8": lambda: DecisionTreeClassifier(max_depth=8, random_state=0),
        "decision-tree": lambda: DecisionTreeClassifier(random_state=0),
        "perceptron": lambda: scaled(linear_model.Perceptron(random_state=0)),
        "ridge-classifier": linear_model.RidgeClassifier,
        "lda": discriminant_analysis.LinearDiscriminantAnalysis,
        "random-forest-10": lambda: ensemble.RandomForestClassifier(
            n_estimators=10, random_state=0
        ),
        "random-forest-200": lambda: ensemble.RandomForestClassifier(
            n_estimators=200, random_state=0
        ),
        "extra-trees-200": lambda: ensemble.ExtraTreesClassifier(n_estimators=200, random_state=0),
        "hist-gradient-boosting": lambda: ensemble.HistGradientBoostingClassifier(random_state=0),
        "logistic-regression": lambda: scaled(linear_model.LogisticRegression(max_iter=2000)),
        "linear-svc": lambda: scaled(LinearSVC(random_state=0)),
        "knn-1": lambda: neighbors.KNeighborsClassifier(n_neighbors=1),
        "knn-5": lambda: neighbors.KNeighborsClassifier(n_neighbors=5),
        "knn-15": lambda: neighbors.KNeighborsClassifier(n_neighbors=15),
        "mlp": lambda: scaled(
            MLPClassifier(hidden_layer_sizes=(64,), max_iter=1000, random_state=0)
        ),
        "svc-rbf": lambda: scaled(SVC()),
        "svc-rbf-raw": lambda: SVC(gamma=0.001),
    }
    return makers[name]()


def _majority() -> Any:
    """Predicts the most frequent training label: the panel's floor."""
    from sklearn.base import ClassifierMixin

    class Majority(ClassifierMixin):
        def fit(self, x: np.ndarray, y: np.ndarray) -> Majority:
            values, counts = np.unique(y, return_counts=True)
            self.label_ = values[np.argmax(counts)]
            return self

        def predict(self, x: np.ndarray) -> np.ndarray:
            return np.full(len(x), self.label_)

    return Majority()


REFERENCE_PANEL: dict[str, Callable[[], Any]] = {
    name: partial(_panel_model, name) for name in PANEL
}


STATEMENT = """\
# Handwritten digits (offline demo)

Recognise handwritten digits from 8x8 greyscale scans. The images are the UCI optical
recognition of handwritten digits data that ships with scikit-learn, split into a
labelled training set and a hidden test set.

## Data (read-only, in {data_dir})
- `train.csv`: `id` (e.g. `img_0042`), `pixel_0` ... `pixel_63` (the 8x8 image row by row,
  integer intensities 0-16), and `label`, the digit 0-9.
- `test.csv`: the same without `label`.
- `sample_submission.csv`: a valid submission that predicts 0 for every image.

## Metric
Classification accuracy on the test images. Higher is better.

This competition has no human leaderboard: its medal thresholds are the accuracies of a
fixed panel of 22 scikit-learn reference models (naive Bayes, trees, forests, boosting,
linear models, nearest neighbours, SVMs, a small MLP), ranked with Kaggle's medal rule.

## Submission
Write a CSV file to `{submission_path}` with one row per test image:

```
id,label
img_0003,7
img_0011,2
```

`label` must be an integer from 0 to 9. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="sklearn-digits",
    name="Handwritten digits (offline demo)",
    split="demo",
    metric="accuracy",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("label", "label", labels=tuple(str(d) for d in range(10))),),
    ),
    raw_files=("digits.csv",),
    prepare=prepare,
    fetch_raw=fetch_raw,
    num_teams=len(REFERENCE_PANEL),
    thresholds=Thresholds(gold=0.98889, silver=0.98056, bronze=0.96944, median=0.94861),
    sample_score=0.075,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "62e8ec43a788e1ee9c77699e6a56e32a",
            "test.csv": "7ac51fd95635cef9b385aef154e6022d",
            "train.csv": "8353fd866702bbf5a08d1ff098f850b6",
        },
        private={"test.csv": "077dc8ff5cc6ceeffc44e172ffefb00c"},
    ),
    thresholds_source="panel of 22 scikit-learn reference models (no human leaderboard)",
    reference_panel=REFERENCE_PANEL,
    dev_variant=DevVariant(prepare=public_as_raw(prepare, links={"digits.csv": "train.csv"})),
)
