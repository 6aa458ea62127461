"""Text Normalization Challenge (English): write each token the way it is spoken.

MLE-bench splits Kaggle's labelled corpus by sentence (10% of the sentences become the test
set), renumbers the sentences of both parts, and grades exact-match accuracy of the
`after` strings. The Russian competition shares this preparation (`prepare_for`).

The development variant is that prepare on the public training corpus (`dev_variant_for`).
Its sentences are renumbered again, so each is traced by its tokens' `before` and `after`
strings, read from the training corpus or from the answers and the private sample (which
holds `before` as its prediction).
"""

from __future__ import annotations

import csv
import functools
import hashlib
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    IdsFn,
    PrepareFn,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.competitions.streamed_split import (
    Make,
    NotStreamable,
    Output,
    order_of_parts,
    read_column,
    split_csv,
)
from mle_gym.competitions.zip_members import add_file
from mle_gym.lazy import pd, train_test_split

#: MLE-bench writes every file of these competitions with all text cells quoted.
QUOTED = {"index": False, "quotechar": '"', "quoting": csv.QUOTE_NONNUMERIC}
#: Our own plain copy of the sample submission: MLE-bench only publishes it zipped, and
#: an agent needs a CSV it can copy as a submission.
PLAIN_SAMPLE = "sample_submission.csv"


def _renumbered(tokens: pd.DataFrame) -> pd.DataFrame:
    """Sentence ids become 0, 1, ... in order of first appearance."""
    codes, _ = pd.factorize(tokens["sentence_id"])
    return tokens.assign(sentence_id=codes)


def _token_ids(tokens: pd.DataFrame) -> pd.Series:
    return tokens["sentence_id"].astype(str) + "_" + tokens["token_id"].astype(str)


def _split_by_sentence(corpus: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(train, test) with no sentence in both, each renumbered from 0."""
    sentences = corpus["sentence_id"].unique()
    train_ids, test_ids = train_test_split(sentences, test_size=0.1, random_state=0)
    train = corpus[corpus["sentence_id"].isin(train_ids)]
    test = corpus[corpus["sentence_id"].isin(test_ids)]
    return _renumbered(train), _renumbered(test)


def _write_zipped(frame: pd.DataFrame, public: Path, name: str) -> None:
    frame.to_csv(public / name, **QUOTED)
    _zip(public, name)


def prepare_for(prefix: str) -> PrepareFn:
    """The preparation of the `<prefix>_*` files (`en` or `ru`), streamed (see
    `streamed_split`): the bytes of `prepare_in_memory_for(prefix)` in bounded memory."""

    def prepare(raw: Path, public: Path, private: Path) -> None:
        name = f"{prefix}_train.csv"
        with tempfile.TemporaryDirectory(prefix=".corpus-", dir=private.parent) as scratch:
            with zipfile.ZipFile(raw / f"{name}.zip") as archive:
                corpus = Path(archive.extract(name, scratch))
            try:
                _split_streamed(corpus, public, private, prefix)
            except NotStreamable:
                _prepare_in_memory(prefix, raw, public, private)

    return prepare


def _split_streamed(corpus: Path, public: Path, private: Path, prefix: str) -> None:
    """`_prepare_in_memory`'s files, from the corpus read in chunks: the split keeps the
    corpus' order, so each row's part and renumbered sentence come from its sentence id."""
    import numpy as np

    sentences = read_column(corpus, "sentence_id", {})
    _, test_ids = train_test_split(pd.unique(sentences), test_size=0.1, random_state=0)
    in_test = np.isin(sentences, test_ids)
    positions = [np.flatnonzero(~in_test), np.flatnonzero(in_test)]
    # Kept through the pass: 4 bytes a row for the new sentence ids, 5 for the order.
    renumbered = [pd.factorize(sentences[rows])[0].astype(np.int32) for rows in positions]
    order = order_of_parts(len(sentences), positions)
    del sentences, in_test, positions

    def numbered(part: int) -> Make:
        return lambda rows, rank: rows.assign(sentence_id=renumbered[part][rank])

    def answers(rows: pd.DataFrame, rank: np.ndarray) -> pd.DataFrame:
        test = numbered(1)(rows, rank)
        return pd.DataFrame({"id": _token_ids(test), "after": test["after"]})

    def sample(rows: pd.DataFrame, rank: np.ndarray) -> pd.DataFrame:
        test = numbered(1)(rows, rank)
        return pd.DataFrame({"id": _token_ids(test), "after": test["before"]})

    quoted = {k: v for k, v in QUOTED.items() if k != "index"}
    names = [f"{prefix}_train.csv", f"{prefix}_test_2.csv", f"{prefix}_sample_submission_2.csv"]
    split_csv(
        corpus,
        order,
        [
            [Output(public / names[0], numbered(0), quoted)],
            [
                Output(private / "answers.csv", answers, quoted),
                Output(private / "sample_submission.csv", sample, quoted),
                Output(
                    public / names[1],
                    lambda rows, rank: numbered(1)(rows, rank).drop(columns=["after", "class"]),
                    quoted,
                ),
                Output(public / names[2], sample, quoted),
                Output(public / PLAIN_SAMPLE, sample),
            ],
        ],
    )
    for name in names:
        _zip(public, name)


def _zip(public: Path, name: str) -> None:
    """`<name>.zip` holding `<name>` (stored, not compressed), as MLE-bench publishes it;
    stamped with a fixed time, so that a preparation is reproducible."""
    path = public / name
    with zipfile.ZipFile(public / f"{name}.zip", "w") as archive:
        add_file(archive, path, name, zipfile.ZIP_STORED)
    path.unlink()


def prepare_in_memory_for(prefix: str) -> PrepareFn:
    """The reference: the whole corpus in memory, as MLE-bench does."""
    return functools.partial(_prepare_in_memory, prefix)


def _prepare_in_memory(prefix: str, raw: Path, public: Path, private: Path) -> None:
    name = f"{prefix}_train.csv"
    with zipfile.ZipFile(raw / f"{name}.zip") as archive, archive.open(name) as handle:
        train, test = _split_by_sentence(read_csv(handle))
    ids = _token_ids(test)
    answers = pd.DataFrame({"id": ids, "after": test["after"]})
    sample = pd.DataFrame({"id": ids, "after": test["before"]})

    answers.to_csv(private / "answers.csv", **QUOTED)
    sample.to_csv(private / "sample_submission.csv", **QUOTED)
    _write_zipped(train, public, name)
    _write_zipped(test.drop(columns=["after", "class"]), public, f"{prefix}_test_2.csv")
    _write_zipped(sample, public, f"{prefix}_sample_submission_2.csv")
    sample.to_csv(public / PLAIN_SAMPLE, index=False)


#: Rows read at a time when tracing sentences: the corpus has about ten million tokens.
TRACE_ROWS = 500_000
#: The training corpus' columns a sentence is traced by.
TRACED = ("sentence_id", "before", "after")


def _sentence_digests(tokens: Iterable[tuple[str, str, str]]) -> set[str]:
    """A digest per sentence of its tokens' (before, after), from (sentence, before, after)
    rows in file order, where each sentence's tokens are contiguous and in order."""
    digests: set[str] = set()
    current, digest = None, hashlib.md5(usedforsecurity=False)
    for sentence, before, after in tokens:
        if sentence != current:
            if current is not None:
                digests.add(digest.hexdigest()[:16])
            current, digest = sentence, hashlib.md5(usedforsecurity=False)
        digest.update(f"{before}\x1f{after}\x1e".encode())
    if current is not None:
        digests.add(digest.hexdigest()[:16])
    return digests


def _chunks(path: Path, columns: list[str]) -> Iterator[pd.DataFrame]:
    return pd.read_csv(
        path, usecols=columns, dtype=str, keep_default_na=False, chunksize=TRACE_ROWS
    )


def _training_sentences(prefix: str) -> IdsFn:
    def read(public: Path) -> set[str]:
        chunks = _chunks(public / f"{prefix}_train.csv.zip", list(TRACED))
        return _sentence_digests(
            row
            for chunk in chunks
            for row in zip(*(chunk[c].tolist() for c in TRACED), strict=True)
        )

    return read


def _answer_sentences(private: Path) -> set[str]:
    """The answers' sentences, `before` read from the private sample (same rows, same order)."""

    def rows() -> Iterator[tuple[str, str, str]]:
        answers = _chunks(private / "answers.csv", ["id", "after"])
        samples = _chunks(private / "sample_submission.csv", ["id", "after"])
        for answer, sample in zip(answers, samples, strict=True):
            ids = answer["id"].tolist()
            if ids != sample["id"].tolist():
                raise ValueError(f"{private}: answers and sample list different token ids")
            sentences = [i.rpartition("_")[0] for i in ids]
            before, after = sample["after"].tolist(), answer["after"].tolist()
            yield from zip(sentences, before, after, strict=True)

    return _sentence_digests(rows())


def dev_variant_for(prefix: str) -> DevVariant:
    """The `<prefix>` competition's prepare on its public files, sentences traced by content."""
    return DevVariant(train_ids=_training_sentences(prefix), test_ids=_answer_sentences)


STATEMENT = """\
# Text Normalization Challenge - English Language

Speech systems must turn written text into the words a speaker would say: `12:47` is
read "twelve forty-seven", `6ft` "six feet". Given English sentences split into tokens,
predict the spoken (normalised) form of every token.

## Data (read-only, in {data_dir})
Each file is a zip archive holding one CSV of the same name (all text cells quoted):
- `en_train.csv.zip`: columns `sentence_id`, `token_id` (position within the sentence,
  from 0), `class` (the token's kind, e.g. PLAIN, PUNCT, DATE, CARDINAL, LETTERS,
  MEASURE, VERBATIM, ...), `before` (the written token) and `after` (its normalised
  form, the target). Most tokens are unchanged (`after` equals `before`).
- `en_test_2.csv.zip`: the tokens to normalise: `sentence_id`, `token_id`, `before`
  (no `class`).
- `en_sample_submission_2.csv.zip`, and the same unzipped (unquoted) as
  `sample_submission.csv`: a valid submission in the right format (it copies `before`
  unchanged as the prediction).

Sentences of the test set do not appear in the training set; both are numbered from 0.
A few tokens that a CSV reader takes for missing (such as `None` or `NA`) are stored as
empty strings.

## Metric
Accuracy: the share of test tokens whose predicted string equals the expected one
exactly (case, spacing and punctuation included, as written in the file).
As in MLE-bench, the spellings pandas reads as a missing value (an empty cell, `NA`,
`N/A`, `None`, `null`, `nan`, ...) all count as the same value. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test
token. The id is `<sentence_id>_<token_id>`; quote cells that contain commas or quotes:

```
id,after
0_0,the
0_1,quick
0_2,one hundred fifty pounds
0_3,.
```

Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="text-normalization-challenge-english-language",
    name="Text Normalization Challenge - English Language",
    split="lite",
    metric="text_accuracy",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("after", "text"),),
        answers_file="answers.csv",
        sample_file=PLAIN_SAMPLE,
    ),
    raw_files=("en_train.csv.zip",),
    prepare=prepare_for("en"),
    num_teams=261,
    thresholds=Thresholds(gold=0.99724, silver=0.99135, bronze=0.99038, median=0.99037),
    sample_score=0.93326,
    statement=STATEMENT,
    checksums=Checksums(
        private={
            "answers.csv": "9cdf7a9f064c7476c74b8e7b90c72398",
            "sample_submission.csv": "e4d1b5d86abed38e6ef37cb7996c3f2c",
        },
    ),
    dev_variant=dev_variant_for("en"),
)
