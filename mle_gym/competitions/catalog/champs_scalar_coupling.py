"""Predicting Molecular Properties (CHAMPS): the scalar coupling constant of atom pairs.

MLE-bench splits Kaggle's labelled train.csv by molecule (10% of the molecules held out, see
`mle_gym.competitions.group_holdout`). Every other table (structures and
the train-only extras: dipole moments, shielding tensors, Mulliken charges, potential
energies, coupling contributions) is cut down to the training molecules, and so are the
xyz files (hard-linked here). That removes the test molecules' structures too (MLE-bench's
known issue 70): kept as is, so that the public files are MLE-bench's; the statement says so.

Grading: mean over coupling types of log(MAE), with Kaggle's floor of 1e-9 on each type's MAE
(see `mle_gym.grading.metrics.log_mae_by_type`: MLE-bench's log(0) gives -inf for a type
predicted exactly; the floor keeps every reward finite). The type of each test row comes from
the answers, packed with the value by `load_answers`. Extra submission columns are ignored,
as MLE-bench ignores them.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from mle_gym.competitions.group_holdout import split_groups
from mle_gym.competitions.hardlink_helpers import place_file
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    SubmissionFormat,
    Thresholds,
)

if TYPE_CHECKING:
    import pandas as pd

TARGET = "scalar_coupling_constant"
#: Tables with a molecule_name column, cut down to the training molecules, in this order.
MOLECULE_TABLES = (
    "structures.csv",
    "dipole_moments.csv",
    "magnetic_shielding_tensors.csv",
    "mulliken_charges.csv",
    "potential_energy.csv",
    "scalar_coupling_contributions.csv",
)


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split by molecule (see the module docstring), streamed (see
    `streamed_split`): the bytes of `prepare_in_memory` in bounded memory."""
    import numpy as np

    from mle_gym.competitions.streamed_split import (
        NotStreamable,
        Output,
        column_codes,
        column_isin,
        filter_order,
        group_holdout_order,
        split_csv,
    )

    try:
        # Molecules as codes, 4 bytes a row: the split depends only on their sorted order.
        codes, molecules = column_codes(raw / "train.csv", "molecule_name")
        order = group_holdout_order(codes)
        kept = molecules[np.unique(codes[order.part == 0])]
        del codes
        split_csv(
            raw / "train.csv",
            order,
            [
                [Output(public / "train.csv")],
                [
                    Output(private / "answers.csv"),
                    Output(public / "test.csv", lambda rows, _: rows.drop(columns=TARGET)),
                    Output(
                        public / "sample_submission.csv",
                        lambda rows, _: rows[["id"]].assign(**{TARGET: 0}),
                    ),
                ],
            ],
        )
        del order
        for name in MOLECULE_TABLES:
            in_train = column_isin(raw / name, "molecule_name", kept)
            split_csv(raw / name, filter_order(in_train), [[Output(public / name)]])
    except NotStreamable:
        prepare_in_memory(raw, public, private)
        return
    _place_structures(raw, public, kept)


def _place_structures(raw: Path, public: Path, molecules: Iterable[str]) -> None:
    for molecule in molecules:
        place_file(
            raw / "structures" / f"{molecule}.xyz", public / "structures" / f"{molecule}.xyz"
        )


def prepare_in_memory(raw: Path, public: Path, private: Path) -> None:
    """The reference: every table in memory, as MLE-bench does."""
    from mle_gym.competitions.csv_io import read_csv

    train, answers = split_groups(read_csv(raw / "train.csv"), "molecule_name")
    kept = set(train["molecule_name"])
    answers.to_csv(private / "answers.csv", index=False)
    train.to_csv(public / "train.csv", index=False)
    answers.drop(columns=TARGET).to_csv(public / "test.csv", index=False)
    answers[["id"]].assign(**{TARGET: 0}).to_csv(public / "sample_submission.csv", index=False)
    for name in MOLECULE_TABLES:
        table = read_csv(raw / name)
        table[table["molecule_name"].isin(kept)].to_csv(public / name, index=False)
    _place_structures(raw, public, train["molecule_name"].unique())


def load_answers(private: Path) -> pd.DataFrame:
    """The test ids, with each answer and its coupling type packed for the metric."""
    import pandas as pd

    from mle_gym.formats.packed_answers import pack

    answers = pd.read_csv(
        private / "answers.csv", usecols=["id", "type", TARGET], dtype=str, keep_default_na=False
    )
    return pd.DataFrame({"id": answers["id"], TARGET: pack(answers[TARGET], answers["type"])})


STATEMENT = """\
# Predicting Molecular Properties

Nuclear magnetic resonance (NMR) spectroscopy infers the structure of molecules from the
magnetic interaction between pairs of atoms, the scalar coupling constant. Computing it
from quantum mechanics is accurate but slow. Predict the scalar coupling constant of the
listed atom pairs of small organic molecules (atoms C, H, N, O, F).

## Data (read-only, in {data_dir})
- `train.csv`: labelled atom pairs: `id`, `molecule_name`, `atom_index_0`, `atom_index_1`
  (the pair's atoms, numbered from 0 within the molecule), `type` (the coupling type, e.g.
  `2JHC`: the number of bonds between the atoms, then the two elements), and the target
  `scalar_coupling_constant` (Hz).
- `test.csv`: the pairs to predict, same columns without the target. Test molecules do not
  appear in the training data.
- `sample_submission.csv`: a valid submission in the right format (0 everywhere).
- `structures.csv` (`molecule_name`, `atom_index`, `atom`, `x`, `y`, `z`, in ångström) and
  `structures/<molecule_name>.xyz` (the same data in XYZ format: the number of atoms, a
  blank line, then one line per atom with its element and coordinates).
- Extra quantities, given for training molecules only: `dipole_moments.csv` (`X`, `Y`,
  `Z`), `magnetic_shielding_tensors.csv` (`XX` ... `ZZ` per atom),
  `mulliken_charges.csv` (per atom), `potential_energy.csv` (per molecule) and
  `scalar_coupling_contributions.csv` (the four terms the constant is the sum of: `fc`,
  `sd`, `pso`, `dso`, per pair).

As in MLE-bench, `structures.csv` and `structures/` hold only the training molecules: the
test molecules' geometry is not given, only the pairs' atom indices and coupling types.

## Metric
For each coupling type, the log of the mean absolute error of your predictions on the test
pairs of that type (floored at 1e-9 before the log); the score is the mean over types, so
each type weighs the same whatever its number of pairs. Lower is better (it can be negative).

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per `id` in
`test.csv`:

```
id,scalar_coupling_constant
4658147,85.2
4658148,-10.1
```

`scalar_coupling_constant` must be a finite number. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="champs-scalar-coupling",
    name="Predicting Molecular Properties",
    split="medium",
    metric="log_mae_by_type",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column(TARGET, "number"),),
        answers_file="answers.csv",
        load_answers=load_answers,
    ),
    raw_files=("train.csv", *MOLECULE_TABLES, "structures/*.xyz"),
    prepare=prepare,
    num_teams=2739,
    thresholds=Thresholds(gold=-2.87509, silver=-2.03119, bronze=-1.90122, median=-0.9529),
    sample_score=1.99777,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "dipole_moments.csv": "e9227539164f9d43b1150121ae727940",
            "magnetic_shielding_tensors.csv": "9a495d3d556092a7bf96f087187ee181",
            "mulliken_charges.csv": "3bdc6ff0f3f451796923d4659eb6766d",
            "potential_energy.csv": "b30f3b3b2889e433487c3abdab6b6814",
            "sample_submission.csv": "fbb4313c3052857027152c871900a0c4",
            "scalar_coupling_contributions.csv": "233037169b2a8f8ee1519c19c6eb7b6e",
            "structures.csv": "6082e6a941b90bcabb7325f3bee64622",
            "test.csv": "2c8b2fd3060697f3be78489290f40768",
            "train.csv": "bc4222feab583532854367a124d93aaa",
        },
        private={"answers.csv": "d41126a1d909d1e5c33d0a4828f2694d"},
    ),
)
