"""Text Normalization Challenge (Russian): the English competition's task on Russian text.

Prepared exactly like the English one (same split by sentence, same file layout), and its
development variant is carved and traced the same way (`dev_variant_for`).
"""

from __future__ import annotations

from mle_gym.competitions.catalog.text_normalization_challenge_english_language import (
    PLAIN_SAMPLE,
    dev_variant_for,
    prepare_for,
)
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    SubmissionFormat,
    Thresholds,
)

STATEMENT = """\
# Text Normalization Challenge - Russian Language

Speech systems must turn written text into the words a speaker would say. Given Russian
sentences split into tokens, predict the spoken (normalised) form of every token:
numbers, dates, times, measures, abbreviations and so on written out in words, in the
grammatical case the sentence requires.

## Data (read-only, in {data_dir})
Each file is a zip archive holding one CSV of the same name (UTF-8, all text cells
quoted):
- `ru_train.csv.zip`: columns `sentence_id`, `token_id` (position within the sentence,
  from 0), `class` (the token's kind, e.g. PLAIN, PUNCT, DATE, CARDINAL, LETTERS,
  MEASURE, VERBATIM, ...), `before` (the written token) and `after` (its normalised
  form, the target). Most tokens are unchanged (`after` equals `before`); a date such
  as `1862 год` becomes `тысяча восемьсот шестьдесят второй год`.
- `ru_test_2.csv.zip`: the tokens to normalise: `sentence_id`, `token_id`, `before`
  (no `class`).
- `ru_sample_submission_2.csv.zip`, and the same unzipped (unquoted) as
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
Write a UTF-8 CSV file to `{submission_path}` with a header and exactly one row per test
token. The id is `<sentence_id>_<token_id>`; quote cells that contain commas or quotes:

```
id,after
0_0,в
0_1,две тысячи первом году
0_2,.
```

Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="text-normalization-challenge-russian-language",
    name="Text Normalization Challenge - Russian Language",
    split="lite",
    metric="text_accuracy",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("after", "text"),),
        answers_file="answers.csv",
        sample_file=PLAIN_SAMPLE,
    ),
    raw_files=("ru_train.csv.zip",),
    prepare=prepare_for("ru"),
    num_teams=163,
    thresholds=Thresholds(gold=0.99012, silver=0.98232, bronze=0.97592, median=0.97591),
    sample_score=0.87501,
    statement=STATEMENT,
    checksums=Checksums(
        private={
            "answers.csv": "22913afbc4db4599fa201655efb4906b",
            "sample_submission.csv": "d815d621314754ed7b886b5d16f91d93",
        },
    ),
    dev_variant=dev_variant_for("ru"),
)
