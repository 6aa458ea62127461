"""Random Acts of Pizza: will a Reddit request for a free pizza succeed? Graded by ROC AUC.

Kaggle's test labels were never released, so MLE-bench splits its own test set off the
labelled train.json, the same share of rows as Kaggle's test set, and shows the test
requests only with the fields Kaggle's test.json has.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from mle_gym.competitions.dev_ids import json_ids
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.competitions.zip_members import add_file
from mle_gym.lazy import pd, train_test_split

TARGET = "requester_received_pizza"


def _load(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def _write_json(records: list[dict], public: Path, stem: str) -> None:
    """The JSON file (4-space indent, ASCII escapes) and a zip holding just that file
    (stamped with a fixed time, so that a preparation is reproducible)."""
    path = public / f"{stem}.json"
    with path.open("w", encoding="utf-8") as handle:
        json.dump(records, handle, indent=4)
    with zipfile.ZipFile(public / f"{stem}.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        add_file(zf, path, path.name, zipfile.ZIP_DEFLATED)


def prepare(raw: Path, public: Path, private: Path) -> None:
    """Split train.json (random_state=0) with Kaggle's test share; strip the test fields."""
    labelled = _load(raw / "train.json")
    kaggle_test = _load(raw / "test.json")
    test_share = len(kaggle_test) / (len(labelled) + len(kaggle_test))
    test_fields = list(kaggle_test[0])

    train, test = train_test_split(labelled, test_size=test_share, random_state=0)
    _write_json(train, public, "train")
    _write_json([{key: row[key] for key in test_fields} for row in test], public, "test")

    answers = pd.DataFrame(
        {
            "request_id": [row["request_id"] for row in test],
            TARGET: [int(row[TARGET]) for row in test],
        }
    )
    answers.to_csv(private / "test.csv", index=False)
    answers.assign(**{TARGET: 0}).to_csv(public / "sampleSubmission.csv", index=False)


STATEMENT = """\
# Random Acts of Pizza

On the Reddit community Random Acts of Pizza, people post a request explaining why they
would like a stranger to buy them a pizza. Predict, for each request, the probability that
its author received a pizza.

## Data (read-only, in {data_dir})
- `train.json` (also zipped as `train.zip`): a JSON list of labelled requests. Each is an
  object with fields such as:
  - `request_id` (e.g. `t3_i8iy4`), `request_title`, `request_text`,
    `request_text_edit_aware` (the text with later edits that thank a giver removed),
    `requester_username`, `unix_timestamp_of_request`, `unix_timestamp_of_request_utc`.
  - facts about the requester when posting, ending in `_at_request` (account age, number
    of posts and comments on Reddit and on the community, karma, subreddits posted in).
  - the same facts and the request's votes and comments at the time the data was
    collected, ending in `_at_retrieval`, plus `post_was_edited`, `requester_user_flair`
    and `giver_username_if_known`.
  - `requester_received_pizza`: the target, `true` or `false`.
- `test.json` (also zipped as `test.zip`): the requests to predict, with fewer fields:
  `request_id`, `request_title`, `request_text_edit_aware`, `requester_username`, the two
  timestamps, the `_at_request` facts and `giver_username_if_known` (no `_at_retrieval`
  fields, no `request_text`, no `post_was_edited`, no flair, no target).
- `sampleSubmission.csv`: a valid submission predicting 0 for every request.

## Metric
Area under the ROC curve between your predicted probabilities and whether the request was
fulfilled. Only the ranking of the predictions matters. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per request in
`test.json`:

```
request_id,requester_received_pizza
t3_1aw5zf,0.31
t3_roiuw,0.08
```

`requester_received_pizza` must be a probability between 0 and 1. Put your code in
`{code_dir}`.
"""

COMPETITION = Competition(
    id="random-acts-of-pizza",
    name="Random Acts of Pizza",
    split="lite",
    metric="roc_auc",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="request_id",
        columns=(Column(TARGET, "probability"),),
        answers_file="test.csv",
        sample_file="sampleSubmission.csv",
    ),
    raw_files=("train.json", "test.json"),
    prepare=prepare,
    num_teams=462,
    thresholds=Thresholds(gold=0.97908, silver=0.76482, bronze=0.6921, median=0.599595),
    sample_score=0.5,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sampleSubmission.csv": "6d7556c9a2f353b5d83ab0424a1bc914",
            "test.json": "f86bbac7e5eb9658632ac51ccef06042",
            "train.json": "67a72ab0b01bb8fabb81f8406cc485f1",
        },
        private={"test.csv": "b7a9c13b5f063dcfff7102f39f8c95ca"},
    ),
    dev_variant=DevVariant(train_ids=json_ids("train.json", "request_id")),
)
