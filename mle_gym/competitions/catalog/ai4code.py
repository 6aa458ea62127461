"""Google AI4Code: restore the order of a notebook's cells, pooled Kendall tau.

MLE-bench builds its test set of exactly 20,000 notebooks from Kaggle's training notebooks
so that no fork family spans both sides: it shuffles train_ancestors.csv (random_state 0),
groups the notebooks by `ancestor_id` in order of first appearance, and takes each whole
group into the test set while it still fits. The notebooks' JSON files are placed unchanged
(hard links where possible); the sample submission lists each test notebook's cells in
file order (code cells in their true order, then the shuffled markdown cells).

Grading (`mle_gym.grading.metrics.kendall_tau`) requires every row to be a permutation of
the notebook's cells, as MLE-bench's grader does in effect.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_ids import ids_in
from mle_gym.competitions.dev_rules import scaled_count
from mle_gym.competitions.hardlink_helpers import link_or_copy
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd

TEST_NOTEBOOKS = 20_000


def _split_by_family(ancestors: pd.DataFrame, size: int) -> tuple[list[str], list[str]]:
    """(train ids, test ids): whole ancestor groups, greedily, until the test set is full."""
    families: dict[str, list[str]] = {}
    for notebook, ancestor in zip(ancestors["id"], ancestors["ancestor_id"], strict=True):
        families.setdefault(ancestor, []).append(notebook)
    train: list[str] = []
    test: list[str] = []
    for family in families.values():
        fits = len(test) + len(family) <= size
        (test if fits else train).extend(family)
    if len(test) != size:
        raise ValueError(f"{len(test)} notebooks in the test set, expected {size}")
    return train, test


def _place_notebooks(raw: Path, ids: list[str], folder: Path) -> None:
    # Plain string paths: pathlib's overhead dominates over 100,000+ small files.
    folder.mkdir()
    source, dest = str(raw / "train"), str(folder)
    for notebook in ids:
        name = f"{notebook}.json"
        link_or_copy(os.path.join(source, name), os.path.join(dest, name))


def _file_order(folder: str, notebook: str) -> str:
    """The notebook's cell ids in the order its JSON file lists them."""
    with open(os.path.join(folder, f"{notebook}.json")) as handle:
        return " ".join(json.load(handle)["cell_type"])


def _kaggle_count(notebooks: int) -> int:
    return TEST_NOTEBOOKS


def prepare(
    raw: Path, public: Path, private: Path, *, held_out: Callable[[int], int] = _kaggle_count
) -> None:
    """MLE-bench's family-aware split (see the module docstring); `held_out` gives the test
    set's size from the number of notebooks."""
    ancestors = read_csv(raw / "train_ancestors.csv").sample(frac=1, random_state=0)
    ancestors = ancestors.reset_index(drop=True)
    train_ids, test_ids = _split_by_family(ancestors, held_out(len(ancestors)))
    _place_notebooks(raw, train_ids, public / "train")
    _place_notebooks(raw, test_ids, public / "test")

    orders = read_csv(raw / "train_orders.csv")
    orders[orders["id"].isin(train_ids)].to_csv(public / "train_orders.csv", index=False)
    test_orders = orders[orders["id"].isin(test_ids)]
    test_orders.to_csv(private / "test_orders.csv", index=False)
    ancestors[~ancestors["id"].isin(test_ids)].to_csv(public / "train_ancestors.csv", index=False)
    sample = pd.DataFrame(
        {
            "id": test_orders["id"],
            "cell_order": [_file_order(str(public / "test"), i) for i in test_orders["id"]],
        }
    )
    sample.to_csv(public / "sample_submission.csv", index=False)


def prepare_dev(raw: Path, public: Path, private: Path) -> None:
    """The development split: MLE-bench's, run on the public notebooks (laid out as Kaggle's
    training ones), holding out the share its 20,000 notebooks were of Kaggle's."""
    prepare(raw, public, private, held_out=lambda n: scaled_count(TEST_NOTEBOOKS, n))


STATEMENT = """\
# Google AI4Code - Understand Code in Python Notebooks

Kaggle notebooks mix code cells and markdown (prose) cells. In each notebook here the code
cells are in their original order but the markdown cells were shuffled and moved after
them. Predict the original order of all cells.

## Data (read-only, in {data_dir})
- `train/<id>.json`: about 119,000 notebooks, one JSON file each:
  `{{"cell_type": {{"<cell id>": "code" | "markdown", ...}}, "source": {{"<cell id>": "<text>",
  ...}}}}`. Cell ids are 8 hexadecimal characters; cells are listed code first (in their
  true order), then markdown (shuffled).
- `train_orders.csv`: `id` (the notebook) and `cell_order`, its cell ids in the correct
  order, separated by spaces.
- `train_ancestors.csv`: `id`, `ancestor_id` (notebooks forked from a common original
  share it) and `parent_id` (the notebook it was forked from, often empty or absent from
  the data). No test notebook shares an ancestor with a training notebook, so group by
  `ancestor_id` when you make a validation split.
- `test/<id>.json`: the 20,000 notebooks to order, in the same format.
- `sample_submission.csv`: a valid submission in the right format (each notebook's cells
  in the order of its JSON file).

## Metric
Kendall tau correlation between your orders and the true ones, pooled over the test
set: with S_i the number of adjacent swaps that turn your order of notebook i into the true
one and n_i its number of cells, score = 1 - 4 * sum(S_i) / sum(n_i * (n_i - 1)).
1 is perfect, 0 is as good as chance, -1 is every order reversed. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test
notebook; `cell_order` lists every cell id of that notebook exactly once, separated by
spaces:

```
id,cell_order
0009d135ece78d,ddfd239c c6cd22db 1372ae9b 90ed07ab 7f388a41 2843a25a 06dbf8cf
```

Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="AI4Code",
    name="Google AI4Code - Understand Code in Python Notebooks",
    split="medium",
    metric="pooled_kendall_tau",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("cell_order", "text"),),
        answers_file="test_orders.csv",
    ),
    raw_files=("train_ancestors.csv", "train_orders.csv", "train"),
    prepare=prepare,
    num_teams=1025,
    thresholds=Thresholds(gold=0.9006, silver=0.8598, bronze=0.8534, median=0.8257),
    sample_score=0.39187,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "dc03df9d2f67ead372ce0a244360268a",
            "train_ancestors.csv": "5a4c8b08ea96ac4039515cba1832da4f",
            "train_orders.csv": "b537c96c54e435385363b670b7672cba",
        },
        private={"test_orders.csv": "58e1e03e110aa2d805cd84f6e6a6477f"},
    ),
    dev_variant=DevVariant(prepare=prepare_dev, train_ids=ids_in("train_orders.csv", "id")),
)
