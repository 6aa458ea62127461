"""Movie Review Sentiment Analysis (Kernels Only): sentiment (0-4) of parsed review phrases.

MLE-bench holds out 30% of Kaggle's labelled phrases (about the share of Kaggle's own test
set) and grades accuracy per `PhraseId`. The split is by phrase, not by sentence, so the
test phrases come from sentences whose other phrases are in train. Its grader types the
submitted column with pandas, so `2.0` counts as 2 and any other whole number is accepted
and scored as wrong, while a fractional value makes scikit-learn refuse the file; the
`open_labels` column reads them the same way. The public tables are zipped as Kaggle's
(`train.tsv.zip`, `test.tsv.zip`); MLE-bench's archives carry their time of writing, ours a
fixed time, so only the files inside them match MLE-bench's byte for byte.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_ids import ids_in
from mle_gym.competitions.holdout import holdout
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.competitions.zip_members import fixed_member
from mle_gym.lazy import pd

SENTIMENTS = ("0", "1", "2", "3", "4")


def _write_zipped_tsv(frame: pd.DataFrame, archive: Path) -> None:
    """`<name>.tsv.zip` holding `<name>.tsv` (deflated), as MLE-bench archives it; stamped
    with a fixed time, so that a preparation is reproducible."""
    member = fixed_member(archive.name.removesuffix(".zip"), zipfile.ZIP_DEFLATED)
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(member, frame.to_csv(index=False, sep="\t"))


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 30% of the labelled phrases become the test set."""
    with zipfile.ZipFile(raw / "train.tsv.zip") as zf, zf.open("train.tsv") as handle:
        phrases = read_csv(handle, sep="\t")
    train, test = holdout(phrases, test_size=0.3)

    test.to_csv(private / "answers.csv", index=False)
    _write_zipped_tsv(train, public / "train.tsv.zip")
    _write_zipped_tsv(test.drop(columns="Sentiment"), public / "test.tsv.zip")
    sample = test[["PhraseId"]].assign(Sentiment=2)
    sample.to_csv(public / "sampleSubmission.csv", index=False)


STATEMENT = """\
# Movie Review Sentiment Analysis (Kernels Only)

Sentences from Rotten Tomatoes movie reviews were parsed into a tree of phrases (the
Stanford Sentiment Treebank), and each phrase was labelled with its sentiment:
`0` negative, `1` somewhat negative, `2` neutral, `3` somewhat positive, `4` positive.
Predict the sentiment of each test phrase.

## Data (read-only, in {data_dir})
Tab-separated files, each zipped (`train.tsv.zip` holds `train.tsv`, and so on):
- `train.tsv`: labelled phrases. Columns `PhraseId` (an integer), `SentenceId` (the
  sentence the phrase comes from), `Phrase` (tokenised text: punctuation split off,
  brackets written `-LRB-`/`-RRB-`) and `Sentiment` (the target, 0 to 4).
  Each sentence appears as a whole and as many of its sub-phrases; a phrase repeated
  across sentences (such as a single word) is labelled only once.
- `test.tsv`: the phrases to label, columns `PhraseId`, `SentenceId` and `Phrase`. They
  were drawn at random from the same phrases, so their sentences also have phrases in
  train.
- `sampleSubmission.csv`: a valid submission in the right format (it predicts 2,
  neutral, for every phrase).

## Metric
Classification accuracy: the share of test phrases whose sentiment you predict exactly.
Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per `PhraseId`
in `test.tsv`:

```
PhraseId,Sentiment
156061,2
156062,3
```

`Sentiment` must be a whole number (0 to 4; `2.0` counts as 2). Put your code in
`{code_dir}`.
"""

COMPETITION = Competition(
    id="movie-review-sentiment-analysis-kernels-only",
    name="Movie Review Sentiment Analysis (Kernels Only)",
    split="dev",
    metric="accuracy",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="PhraseId",
        columns=(Column("Sentiment", "label", labels=SENTIMENTS, open_labels=True),),
        answers_file="answers.csv",
        sample_file="sampleSubmission.csv",
    ),
    raw_files=("train.tsv.zip",),
    prepare=prepare,
    num_teams=410,
    thresholds=Thresholds(gold=0.69344, silver=0.68095, bronze=0.6732, median=0.6415),
    sample_score=0.51314,
    statement=STATEMENT,
    checksums=Checksums(
        public={"sampleSubmission.csv": "2da66116279038cc280e8cafcb27a6ea"},
        private={"answers.csv": "82f44bb7f0a1b075afdadfd356c3644b"},
    ),
    dev_variant=DevVariant(train_ids=ids_in("train.tsv.zip", "PhraseId", sep="\t")),
)
