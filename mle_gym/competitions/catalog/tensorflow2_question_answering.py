"""TensorFlow 2.0 Question Answering: find long and short answers to Natural Questions in
Wikipedia pages.

MLE-bench splits Kaggle's labelled `simplified-nq-train.jsonl` (about 17 GB, 307k
examples) 1,000 lines at a time: 10% of each chunk becomes the test set. We stream it the
same way (pandas' chunked JSON-lines reader, one chunk in memory at a time) and write each
chunk through pandas, so the prepared files are MLE-bench's bytes.

Grading is MLE-bench's own "micro F1" (`natural_questions` metric), which its medal
thresholds were computed against: over all `_long` and `_short` rows, the share where a
named answer is among the accepted ones or a blank is right because none exists. It is
matched exactly, not replaced by Kaggle's F1. MLE-bench grades from `test.jsonl` (about
1.7 GB, parsed whole at every grading); we also write `valid_answers.csv` to private/, the
accepted answers of each row taken from the same annotations, and grade from it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mle_gym.competitions.dev_ids import ids_in, json_ids
from mle_gym.competitions.holdout import holdout
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd

TRAIN = "simplified-nq-train.jsonl"
PUBLIC_TEST = "simplified-nq-test.jsonl"
CHUNK_LINES = 1_000
PUBLIC_TEST_KEYS = ["example_id", "question_text", "document_text", "long_answer_candidates"]
SUBMISSION_COLUMNS = ["example_id", "PredictionString"]


def _span(start: int, end: int) -> str:
    return f"{start}:{end}"


def _answer_rows(example_id: str, annotations: list[dict[str, Any]]) -> Iterator[tuple]:
    """(row id, gold answer, accepted answers) for the `_short` then the `_long` row.

    The gold answer is MLE-bench's: yes/no first, else the first short span, else blank;
    the long span, else blank. The accepted answers are every short span plus the yes/no
    answer, and the long span.
    """
    if len(annotations) != 1:
        raise ValueError(f"example {example_id} has {len(annotations)} annotations, not 1")
    note = annotations[0]
    shorts = [_span(s["start_token"], s["end_token"]) for s in note["short_answers"]]
    yes_no = [note["yes_no_answer"]] if note["yes_no_answer"] != "NONE" else []
    gold_short = (yes_no + shorts + [""])[0]
    yield f"{example_id}_short", gold_short, " ".join(shorts + yes_no)
    long = note["long_answer"]
    gold_long = _span(long["start_token"], long["end_token"]) if long["start_token"] != -1 else ""
    yield f"{example_id}_long", gold_long, gold_long


def _write_answers(rows: list[tuple], public: Path, private: Path) -> None:
    gold = pd.DataFrame([row[:2] for row in rows], columns=SUBMISSION_COLUMNS)
    gold.to_csv(private / "gold_submission.csv", index=False)
    gold.assign(PredictionString="").to_csv(public / "sample_submission.csv", index=False)
    accepted = pd.DataFrame([(row[0], row[2]) for row in rows], columns=SUBMISSION_COLUMNS)
    accepted.to_csv(private / "valid_answers.csv", index=False)


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's chunked split (see the module docstring); one chunk in memory at a time."""
    rows: list[tuple] = []
    reader = pd.read_json(raw / TRAIN, orient="records", lines=True, chunksize=CHUNK_LINES)
    with (
        reader,
        open(public / TRAIN, "w", encoding="utf-8") as train_out,
        open(private / "test.jsonl", "w", encoding="utf-8") as answers_out,
        open(public / PUBLIC_TEST, "w", encoding="utf-8") as test_out,
    ):
        for chunk in reader:
            chunk["example_id"] = chunk["example_id"].astype(str)
            train, test = holdout(chunk)
            train_out.write(train.to_json(orient="records", lines=True))
            answers_out.write(test.to_json(orient="records", lines=True))
            test_out.write(test[PUBLIC_TEST_KEYS].to_json(orient="records", lines=True))
            for example_id, annotations in zip(
                test["example_id"], test["annotations"], strict=True
            ):
                rows.extend(_answer_rows(example_id, annotations))
    _write_answers(rows, public, private)


STATEMENT = """\
# TensorFlow 2.0 Question Answering

Real questions people typed into Google (Natural Questions) are paired with a Wikipedia
page. For each question, select from the page a long answer (a paragraph, list, table or
section that answers it) and a short answer (a few words inside the long answer, or YES /
NO), or leave either blank when the page has none.

## Data (read-only, in {data_dir})
JSON-lines files, one example per line:
- `simplified-nq-train.jsonl`: about 277,000 labelled examples (more than 15 GB: stream
  it line by line, or read a subset). Fields:
  - `example_id`: the example's identifier (a string of digits, possibly with a minus
    sign).
  - `question_text`: the question, lower-cased.
  - `document_text`: the page as text with some HTML tags kept (`<P>`, `<Table>`, `<Tr>`,
    `<Li>`, `<H2>`, ...); split it on single spaces to get tokens (tags are tokens).
  - `long_answer_candidates`: the possible long answers, each `start_token`,
    `end_token` (exclusive) and `top_level` (false when nested in another candidate).
  - `annotations`: a list of one annotation: `long_answer` (`start_token`, `end_token`,
    `candidate_index`; all -1 when there is none), `short_answers` (a list of spans,
    possibly empty), `yes_no_answer` (`YES`, `NO` or `NONE`) and `annotation_id`.
  - `document_url`: the page's address (for information only).
- `simplified-nq-test.jsonl`: about 31,000 examples to answer, with `example_id`,
  `question_text`, `document_text` and `long_answer_candidates`.
- `sample_submission.csv`: a valid submission in the right format (every answer blank).

## Metric
Each submission row counts once. A non-blank answer is right when it equals the long
answer's span (for `_long` rows), or one of the short spans or the yes/no answer (for
`_short` rows); a blank is right when there is no such answer. The score is
scikit-learn's micro-averaged F1 over these rows, which equals the share of rows that are
right (this is MLE-bench's reading of the competition's rule, not Kaggle's own F1). Higher
is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly two rows per example in
`simplified-nq-test.jsonl`: `<example_id>_long` and `<example_id>_short`.
`PredictionString` is `start_token:end_token` (token indices as in the data, end
exclusive), `YES` or `NO` (short answers only), or empty for no answer:

```
example_id,PredictionString
-7853356005143141653_long,6:18
-7853356005143141653_short,YES
-545833482873225036_long,105:200
-545833482873225036_short,
```

Any other text makes the file invalid (an empty cell, or a spelling pandas reads as
missing such as `NA`, counts as blank). Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="tensorflow2-question-answering",
    name="TensorFlow 2.0 Question Answering",
    split="medium",
    metric="nq_answer_micro_f1",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="example_id",
        columns=(Column("PredictionString", "text"),),
        answers_file="valid_answers.csv",
    ),
    raw_files=(TRAIN,),
    prepare=prepare,
    num_teams=1234,
    thresholds=Thresholds(gold=0.68578, silver=0.62872, bronze=0.61913, median=0.59639),
    sample_score=0.57117,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "483bdebc6d8e55344c3e0124061eb0ff",
            "simplified-nq-test.jsonl": "3abc9e42896e04f4aeaa493e5944e49a",
            "simplified-nq-train.jsonl": "47ef1135698eb044006d1e65b68916b5",
        },
        private={
            "gold_submission.csv": "544ba606cfb641eed0d222c3d94ffee6",
            "test.jsonl": "86393efdae1c319a8d1d18e36f490e97",
        },
    ),
    dev_variant=DevVariant(
        train_ids=json_ids("simplified-nq-train.jsonl", "example_id"),
        test_ids=ids_in("valid_answers.csv", "example_id", form=lambda row: row.split("_", 1)[0]),
    ),
)
