"""H&M Personalized Fashion Recommendations: the articles each customer buys next week, MAP@12.

MLE-bench holds out the transactions of the last 7 days before the final date, inclusive
(8 calendar days, `t_dat >= max - 7 days`); the answers list, per customer who bought in that
window, the article ids bought (as pandas writes integers, without Kaggle's leading zero),
joined by spaces. Kaggle's sample submission, with every customer, becomes the public sample.

Grading: MLE-bench accepts any superset of the buying customers and ignores the rest. We ask
for exactly the sample's customers (all of them), and score only those who bought (an empty
answer marks the others; `map_at_12` skips them). So the buyers stay hidden, as in MLE-bench,
and a submission that covers the customers in the sample scores exactly as there.
The predictions are compared as text: `0108775015` is not `108775015` (the answers have no
leading zero), as in MLE-bench, which reads predictions as text whenever a row holds more than
one id.

transactions_train.csv is ~3.5 GB (~32M rows), so it is read twice in chunks (the final date
first, then the split); the test period (~1% of rows) is the only part kept in memory. Files
MLE-bench copies unchanged (the sample, articles, customers, ~30 GB of images) are hard-linked.

The development variant is the same split of the public transactions (their last 8 days
held out). Its clean-split check compares purchases, not customers (the same customers buy
in both periods): each split also keeps its held-out (customer, day) pairs in private/.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mle_gym.competitions.dev_ids import ids_in
from mle_gym.competitions.hardlink_helpers import place_file, place_tree
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    IdsFn,
    SubmissionFormat,
    Thresholds,
)

if TYPE_CHECKING:
    import pandas as pd

TRANSACTIONS = "transactions_train.csv"
#: The types pandas infers for the whole file, given up front so that every chunk agrees.
TRANSACTION_TYPES = {
    "t_dat": str,
    "customer_id": str,
    "article_id": "int64",
    "price": "float64",
    "sales_channel_id": "int64",
}
CHUNK_ROWS = 250_000
HELD_OUT_DAYS = 7
#: Every customer a submission must have a row for (the sample's), in the private folder.
CUSTOMERS_FILE = "sample_customers.csv"
#: The (customer, day) pairs of the held-out purchases, in the private folder.
HELD_OUT_FILE = "held_out_purchases.csv"
UNCHANGED = ("sample_submission.csv", "articles.csv", "customers.csv")


def _chunks(path: Path, **kwargs):
    from mle_gym.competitions.csv_io import read_csv

    return read_csv(path, chunksize=CHUNK_ROWS, **kwargs)


def first_held_out_date(transactions: Path) -> pd.Timestamp:
    """The first date held out: the last transaction's date minus 7 days."""
    import pandas as pd

    dates = (pd.to_datetime(c["t_dat"]).max() for c in _chunks(transactions, usecols=["t_dat"]))
    return max(dates) - pd.Timedelta(days=HELD_OUT_DAYS)


def split_transactions(transactions: Path, public_file: Path) -> pd.DataFrame:
    """Write the rows before the test period to `public_file`; return the test period's rows."""
    import pandas as pd

    start = first_held_out_date(transactions)
    held_out = []
    with public_file.open("w", newline="") as out:
        for number, chunk in enumerate(_chunks(transactions, dtype=TRANSACTION_TYPES)):
            late = pd.to_datetime(chunk["t_dat"]) >= start
            chunk[~late].to_csv(out, index=False, header=number == 0)
            held_out.append(chunk[late])
    return pd.concat(held_out)


def purchases_by_customer(test: pd.DataFrame) -> pd.DataFrame:
    """One row per buying customer (sorted), the article ids bought, in order, space-joined."""
    articles = test["article_id"].astype(str).groupby(test["customer_id"]).agg(" ".join)
    return articles.rename("prediction").reset_index()


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split by date (see the module docstring), streamed."""
    from mle_gym.competitions.csv_io import read_csv

    test = split_transactions(raw / TRANSACTIONS, public / TRANSACTIONS)
    purchases_by_customer(test).to_csv(private / "answers.csv", index=False)
    test[["customer_id", "t_dat"]].drop_duplicates().to_csv(private / HELD_OUT_FILE, index=False)
    for name in UNCHANGED:
        place_file(raw / name, public / name)
    place_tree(raw / "images", public / "images")
    customers = read_csv(raw / "sample_submission.csv", usecols=["customer_id"], dtype=str)
    customers.to_csv(private / CUSTOMERS_FILE, index=False)


def _text(path: Path) -> pd.DataFrame:
    import pandas as pd

    return pd.read_csv(path, dtype=str, keep_default_na=False)


def load_answers(private: Path) -> pd.DataFrame:
    """Every customer of the sample, with the articles bought in the test period or ''."""
    answers = _text(private / CUSTOMERS_FILE).merge(
        _text(private / "answers.csv"), on="customer_id", how="left"
    )
    return answers.fillna({"prediction": ""})


def _purchases(file: str) -> IdsFn:
    """The (customer, day) pairs of a transactions file, as `<customer_id>_<t_dat>`."""
    read = ids_in(file, "customer_id", "t_dat")

    def purchases(folder: Path) -> set[str]:
        if not (folder / file).is_file():
            raise FileNotFoundError(
                f"no {file} in {folder}: it was prepared before the development variant "
                "existed; prepare the competition again"
            )
        return read(folder)

    return purchases


STATEMENT = """\
# H&M Personalized Fashion Recommendations

H&M Group sells clothing online and in stores. From two years of purchase history and the
metadata of customers and articles (including text descriptions and product images),
recommend for each customer the articles they will buy in the test period: the 8 days that
follow the end of `transactions_train.csv`.

## Data (read-only, in {data_dir})
- `transactions_train.csv`: one row per purchase (a repeated row is the same article bought
  more than once), up to the start of the test period. Columns: `t_dat` (date, `YYYY-MM-DD`),
  `customer_id` (64 hexadecimal characters), `article_id` (an integer, written without a
  leading zero, e.g. `663713001`), `price` (scaled), `sales_channel_id` (1 or 2).
- `articles.csv`: metadata of each article: `article_id` (10 digits with a leading zero,
  e.g. `0663713001`), `product_code`, `prod_name`, product type and group, graphical
  appearance, colour group and perceived colour, department, index, section, garment group
  (each as a number and a name), and `detail_desc`, a text description.
- `customers.csv`: `customer_id`, `FN`, `Active`, `club_member_status`,
  `fashion_news_frequency`, `age`, `postal_code` (hashed). Values may be missing.
- `images/<first 3 digits>/<article_id>.jpg`: product photos, named with the leading zero
  (not every article has one).
- `sample_submission.csv`: a valid submission in the right format, with every customer to
  predict (its predictions are written with leading zeros, so they match nothing).

## Metric
Mean average precision at 12 (MAP@12). For a customer who bought m distinct articles in the
test period and a ranked list of predictions, AP@12 = (1 / min(m, 12)) * sum over the first 12
ranks k that hold a bought article (not already listed) of the precision at k. The score is
the mean over the customers who bought something in the test period; the others are not
scored, and which customers they are is not given. More than 12 predictions are ignored;
there is no penalty for predicting 12. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per customer in
`sample_submission.csv`, the predicted article ids separated by single spaces, most likely
first, written as in `transactions_train.csv` (without the leading zero: `663713001` is
not `0663713001`):

```
customer_id,prediction
00000dbacae5abe5e23885899a1fa44253a17956c6d1c3d25f88aa139fdfc657,706016001 706016002 372860001
0000423b00ade91418cceaf3b26c6af3dd342b51fd051eec9c12fb36984420fa,706016001 610776002
```

Write only these two columns. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="h-and-m-personalized-fashion-recommendations",
    name="H&M Personalized Fashion Recommendations",
    split="medium",
    metric="map_at_12",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="customer_id",
        columns=(Column("prediction", "text"),),
        answers_file="answers.csv",
        load_answers=load_answers,
        # MLE-bench refuses any column besides customer_id and prediction.
        allow_extra_columns=False,
    ),
    raw_files=(TRANSACTIONS, *UNCHANGED, "images"),
    prepare=prepare,
    num_teams=2954,
    thresholds=Thresholds(gold=0.03354, silver=0.02517, bronze=0.02394, median=0.02177),
    sample_score=0.0,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "articles.csv": "f193ef0f582e8476ebb613d143742d0f",
            "customers.csv": "3aa1713831590115fffc667ba6c187a7",
            "sample_submission.csv": "004eaa20317d414d62f23165293c4a7b",
            "transactions_train.csv": "2a6e1b3ad8f550894341e4bc78a8279d",
        },
        private={"answers.csv": "46123d4726564502bb3bb546f647fb42"},
    ),
    dev_variant=DevVariant(
        train_ids=_purchases(TRANSACTIONS), test_ids=_purchases(HELD_OUT_FILE), seed=None
    ),
)
