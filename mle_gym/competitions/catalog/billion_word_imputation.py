"""Billion Word Imputation: put back the one word removed from each test sentence.

MLE-bench streams Kaggle's train_v2.txt (30,301,028 sentences, about 4 GB) line by line
with one `np.random.RandomState(0)`: a draw of `uniform() <= 0.01` sends a sentence of more
than two words to the test set, where a second draw removes one word that is neither the
first nor the last. We stream the same way, straight out of and into the zip archives, so
nothing of the corpus is held in memory and no unzipped copy is left on disk.

MLE-bench keeps its sample submission in private/ only (a copy of the public test file);
we also write it to public/sample_submission.csv with an unquoted header, so the agent has a
plain CSV to start from (the rows are the public test file's). Grading refuses cells pandas
reads as missing, where MLE-bench's grader fails (see `mle_gym.grading.metrics.levenshtein`).

The development variant is the same streamed split of the public corpus (whose archive has
the raw one's layout). Test sentences are numbered from 0 again, so each sentence is traced
by its text: a training line's, or the answer's full sentence.
"""

from __future__ import annotations

import io
import zipfile
from contextlib import ExitStack
from pathlib import Path
from typing import TextIO

from mle_gym.competitions.dev_ids import digest, ids_in, mapped
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.competitions.zip_members import fixed_member

CORPUS = "train_v2.txt"
PUBLIC_TEST = "test_v2.txt"
#: The corpus' line count; MLE-bench reads no further.
TOTAL_LINES = 30_301_028
TEST_SHARE = 0.01
QUOTED_HEADER = '"id","sentence"\n'


def _zip_member(stack: ExitStack, archive: Path, name: str) -> TextIO:
    """A text stream writing `name` into a new deflated zip `archive` (stamped with a fixed
    time, so that a preparation is reproducible)."""
    zf = stack.enter_context(zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED))
    member = fixed_member(name, zipfile.ZIP_DEFLATED)
    binary = stack.enter_context(zf.open(member, "w", force_zip64=True))
    return stack.enter_context(io.TextIOWrapper(binary, encoding="utf-8", newline="\n"))


def _text_file(stack: ExitStack, path: Path) -> TextIO:
    return stack.enter_context(path.open("w", encoding="utf-8", newline="\n"))


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's streamed split (see the module docstring)."""
    import numpy as np

    rng = np.random.RandomState(0)
    with ExitStack() as stack:
        corpus_zip = stack.enter_context(zipfile.ZipFile(raw / f"{CORPUS}.zip"))
        corpus = stack.enter_context(
            io.TextIOWrapper(corpus_zip.open(CORPUS), encoding="utf-8", newline=None)
        )
        train = _zip_member(stack, public / f"{CORPUS}.zip", CORPUS)
        test = _zip_member(stack, public / f"{PUBLIC_TEST}.zip", PUBLIC_TEST)
        answers = _text_file(stack, private / "test.csv")
        samples = [_text_file(stack, private / "sample_submission.csv"), test]
        plain_sample = _text_file(stack, public / "sample_submission.csv")
        for out in (answers, *samples):
            out.write(QUOTED_HEADER)
        plain_sample.write("id,sentence\n")

        test_id = 0
        for count, line in enumerate(corpus, start=1):
            if rng.uniform() <= TEST_SHARE and len(line.strip().split()) > 2:
                sentence = line.strip().replace('"', '""')
                words = sentence.split()
                cut = rng.randint(1, len(words) - 1)
                shortened = " ".join(words[:cut] + words[cut + 1 :])
                answers.write(f'{test_id},"{sentence}"\n')
                for out in (*samples, plain_sample):
                    out.write(f'{test_id},"{shortened}"\n')
                test_id += 1
            else:
                train.write(line)
            if count >= TOTAL_LINES:
                break


def training_sentences(public: Path) -> set[str]:
    """The digest of each line of the public corpus, stripped as the split strips it."""
    with (
        zipfile.ZipFile(public / f"{CORPUS}.zip") as archive,
        io.TextIOWrapper(archive.open(CORPUS), encoding="utf-8", newline=None) as lines,
    ):
        return {digest(line.strip().encode()) for line in lines}


STATEMENT = """\
# Billion Word Imputation

One word was removed from each sentence of the test set, never the first or the last.
Put the missing word back, in the right place.

## Data (read-only, in {data_dir})
- `train_v2.txt.zip`: holds `train_v2.txt`, about 30 million English sentences (about
  4 GB unzipped), one per line, tokenised: words and punctuation are separated by single
  spaces (e.g. `He said : " No . "`). Stream it rather than loading it whole.
- `test_v2.txt.zip`: holds `test_v2.txt`, a CSV with columns `id` and `sentence`: about
  300,000 sentences, each missing one word, every text cell in double quotes (a `"` inside
  a sentence is written `""`).
- `sample_submission.csv`: the same rows as `test_v2.txt`, a valid submission in the
  right format (it leaves every sentence as it is).

The test sentences were drawn from the same corpus (about 1% of its sentences with more
than two words) and removed from the training file.

## Metric
The Levenshtein (character edit) distance between your sentence and the original one,
averaged over the test sentences: the number of single-character insertions, deletions
and substitutions turning one into the other. Lower is better. Leaving a sentence
unchanged costs the length of the missing word plus one (its space).

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per `id` in
`test_v2.txt`; quote the sentences, doubling any `"` inside them:

```
id,sentence
0,"He went to the market ."
1,"She said "" hello "" ."
```

A sentence cell must not be empty (nor a lone `NA`, `null` or another word pandas reads as
missing). Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="billion-word-imputation",
    name="Billion Word Imputation",
    split="medium",
    metric="mean_levenshtein",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("sentence", "text"),),
        answers_file="test.csv",
    ),
    raw_files=(f"{CORPUS}.zip",),
    prepare=prepare,
    num_teams=88,
    thresholds=Thresholds(gold=5.37017, silver=5.54372, bronze=5.55209, median=5.55211),
    sample_score=5.56118,
    statement=STATEMENT,
    checksums=Checksums(
        private={
            "sample_submission.csv": "b734f937cbff4fbc88b2cfccc5d12d58",
            "test.csv": "5340d30e22b84bf14de19b9c877b16e3",
        },
    ),
    dev_variant=DevVariant(
        train_ids=training_sentences,
        test_ids=mapped(ids_in("test.csv", "sentence"), lambda s: digest(s.encode())),
    ),
)
