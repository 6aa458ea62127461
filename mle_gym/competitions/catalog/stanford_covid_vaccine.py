"""OpenVaccine: COVID-19 mRNA degradation per base, graded by MCRMSE over three targets.

MLE-bench holds out a tenth as many sequences as Kaggle's train.json has, drawn only from
those that pass the signal-to-noise filter, and writes the answers one row per position
(`<id>_<pos>`), with all five targets and a `keep` flag on the first `seq_scored` (68)
positions; the other positions are zeros, required in submissions but never scored.

Grading (metric `openvaccine_mcrmse`): mean over reactivity, deg_Mg_pH10 and deg_Mg_50C of
the RMSE on scored positions. The metric tells scored positions by number (below 68), the
value every sequence of Kaggle's labelled data has; prepare refuses data where a test
sequence has another `seq_scored`, so that rule and MLE-bench's `keep` flag always agree.

Decisions where MLE-bench's grader is fragile:
- MLE-bench sorts submission and answers by `id_seqpos` but then selects the scored rows
  of the sorted submission with the answers' `keep` flags aligned by the original row
  numbers, so a submission in another row order is scored on the wrong positions. Here
  rows are matched by `id_seqpos`: any row order scores what MLE-bench gives the rows in
  the answers' order (the order of the sample submission).
- deg_pH10 and deg_50C must be present but are not checked, as in MLE-bench. The three
  scored columns must hold numbers on every row, also on the unscored positions where
  MLE-bench would accept anything.
"""

from __future__ import annotations

from pathlib import Path

from mle_gym.competitions.dev_ids import ids_in, json_ids
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd

TARGETS = ("reactivity", "deg_Mg_pH10", "deg_pH10", "deg_Mg_50C", "deg_50C")
#: Share of the labelled sequences held out, counted over all of them.
TEST_SHARE = 0.1
#: Positions 0..67 of every sequence carry measurements (seq_scored in Kaggle's data).
SCORED_POSITIONS = 68


def _answers(test: pd.DataFrame) -> pd.DataFrame:
    """One row per position: measured values on the scored ones, zeros (keep False) after."""
    ids, keep = [], []
    values: dict[str, list[float]] = {t: [] for t in TARGETS}
    for row in test.itertuples(index=False):
        scored, length = row.seq_scored, row.seq_length
        if scored != SCORED_POSITIONS or length <= scored:
            raise ValueError(f"sequence {row.id}: {scored} scored of {length} positions")
        ids += [f"{row.id}_{pos}" for pos in range(length)]
        keep += [True] * scored + [False] * (length - scored)
        for target in TARGETS:
            measured = list(getattr(row, target))
            if len(measured) != scored:
                raise ValueError(f"sequence {row.id}: {len(measured)} values of {target}")
            values[target] += measured + [0.0] * (length - scored)
    return pd.DataFrame({"id_seqpos": ids, **values, "keep": keep})


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: int(10% of all sequences) drawn from those with SN_filter > 0."""
    train = pd.read_json(raw / "train.json", lines=True)
    test_columns = pd.read_json(raw / "test.json", lines=True, nrows=1).columns
    count = int(len(train) * TEST_SHARE)
    held_out = train.index.isin(train[train["SN_filter"] > 0].sample(n=count, random_state=0).index)
    new_train, test = train[~held_out].copy(), train[held_out].copy()

    answers = _answers(test)
    answers.to_csv(private / "test.csv", index=False, float_format="%.10f")
    sample = answers[["id_seqpos", *TARGETS]].assign(**{t: 0.0 for t in TARGETS})
    sample.to_csv(public / "sample_submission.csv", index=False, float_format="%.10f")

    new_train["index"] = range(len(new_train))
    new_train.to_json(public / "train.json", orient="records", lines=True)
    public_test = test[test_columns].copy()
    public_test["index"] = range(len(public_test))
    public_test.to_json(public / "test.json", orient="records", lines=True)


STATEMENT = """\
# OpenVaccine: COVID-19 mRNA Vaccine Degradation Prediction

mRNA vaccines degrade quickly, which makes them hard to store and ship. Stanford's Eterna
project measured, base by base, how likely RNA molecules are to degrade under several
conditions. Predict these degradation rates for each base of the test RNA sequences.

## Data (read-only, in {data_dir})
- `train.json`: one JSON object per line, one per RNA sequence, with fields:
  - `index`, `id`.
  - `sequence`: the bases (A, G, U, C), 107 of them; `seq_length` (107) and `seq_scored`
    (68): measurements exist only for the first 68 bases.
  - `structure`: the estimated pairing of the bases in dot-bracket notation (`(` and `)`
    pair with each other, `.` is unpaired).
  - `predicted_loop_type`: per base, the structural context predicted by bpRNA: S stem,
    M multiloop, I internal loop, B bulge, H hairpin loop, E dangling end, X external loop.
  - `reactivity`, `deg_Mg_pH10`, `deg_pH10`, `deg_Mg_50C`, `deg_50C`: 68 measured values
    each: reactivity, and degradation after incubation with or without magnesium (Mg) at
    pH 10 or at 50 degrees Celsius. These are the targets.
  - `reactivity_error`, `deg_error_Mg_pH10`, ...: the measurement error of each value.
  - `signal_to_noise`, `SN_filter`: data quality; `SN_filter` is 1 for sequences that pass
    the quality filter (all test sequences do), 0 otherwise. Some training values are
    negative or noisy.
- `test.json`: the sequences to predict: `index`, `id`, `sequence`, `structure`,
  `predicted_loop_type`, `seq_length`, `seq_scored`.
- `sample_submission.csv`: a valid submission with every expected row (it predicts 0).

## Metric
MCRMSE: the root mean squared error of each of `reactivity`, `deg_Mg_pH10` and
`deg_Mg_50C` over the first 68 positions of every test sequence, averaged over the three
columns. `deg_pH10` and `deg_50C` and positions 68 to 106 are not scored. Lower is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per position of
every test sequence (107 per sequence, positions numbered from 0), `id_seqpos` being
`<id>_<position>`:

```
id_seqpos,reactivity,deg_Mg_pH10,deg_pH10,deg_Mg_50C,deg_50C
id_00073f8be_0,0.1,0.3,0.2,0.5,0.4
id_00073f8be_1,0.3,0.2,0.5,0.4,0.2
```

All five target columns are required. The three scored ones must hold numbers on every
row, including the unscored positions. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="stanford-covid-vaccine",
    name="OpenVaccine: COVID-19 mRNA Vaccine Degradation Prediction",
    split="high",
    metric="openvaccine_mcrmse",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="id_seqpos",
        columns=(
            Column("reactivity", "number"),
            Column("deg_Mg_pH10", "number"),
            Column("deg_pH10", "text"),
            Column("deg_Mg_50C", "number"),
            Column("deg_50C", "text"),
        ),
        answers_file="test.csv",
    ),
    raw_files=("train.json", "test.json"),
    prepare=prepare,
    num_teams=1636,
    thresholds=Thresholds(gold=0.34728, silver=0.35175, bronze=0.3534, median=0.363095),
    sample_score=0.63824,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "5d6a8da1eae26187ec3158b68ec7d666",
            "test.json": "86e2201a0168275ccadd49cafa6cab66",
            "train.json": "0081f791ac8730984c147955a0c7bba9",
        },
        private={"test.csv": "41f284c21e1f7e112f29e1d7b7c1fd73"},
    ),
    dev_variant=DevVariant(
        train_ids=json_ids("train.json", "id"),
        test_ids=ids_in("test.csv", "id_seqpos", form=lambda row: row.rsplit("_", 1)[0]),
    ),
)
