"""UW-Madison GI Tract Image Segmentation: outline the stomach and bowels on MRI slices,
graded by 0.4 x mean Dice + 0.6 x (1 - mean 3D Hausdorff distance).

MLE-bench's split: 10% of the cases (train_test_split(random_state=42) over the cases in
order of appearance) go to the test set whole; of every other case, the scan days after
its first four (by day number) go to the test set too. The ~38,500 scan PNGs are
hard-linked into public/train or public/test, never copied.

Grading decisions:
- MLE-bench pairs submission rows with answer rows by position, so its score depends on
  the row order, and `zip` lets a truncated file through. We require exactly one row per
  test (id, class) in any order and score them matched by (id, class), which equals
  MLE-bench's score for the same rows in the answers' order;
- each RLE checked (integers in pairs, inside the slice, starts increasing, runs
  disjoint) and refused with the reason; MLE-bench silently clips runs past the slice.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from mle_gym.competitions.hardlink_helpers import place_files
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd, train_test_split

CLASSES = ("large_bowel", "small_bowel", "stomach")
_KEPT_DAYS = 4


def _test_days(rows: pd.DataFrame, test_cases: set[str]) -> set[tuple[str, str]]:
    """(case, day) of every test scan: all days of test cases, days after the 4th of others."""
    days = rows.groupby("case", sort=False)["day"].unique()
    chosen = set()
    for case, case_days in days.items():
        ordered = sorted(case_days, key=lambda day: int(day[len("day") :]))
        moved = ordered if case in test_cases else ordered[_KEPT_DAYS:]
        chosen.update((case, day) for day in moved)
    return chosen


def _scan_files(
    raw: Path, public: Path, cases: Iterable[str], test_cases: set[str], test_days: set[str]
) -> Iterator[tuple[Path, Path]]:
    """Every file of each case, under public/test when its case or its day folder is test."""
    for case in cases:
        for path in sorted((raw / "train" / case).rglob("*")):
            if path.is_dir():
                continue
            relative = path.relative_to(raw / "train")
            day_folder = relative.parts[1] if len(relative.parts) > 2 else None
            to_test = case in test_cases or day_folder in test_days
            yield path, public / ("test" if to_test else "train") / relative


def _slice_sizes(raw: Path, test: pd.DataFrame) -> pd.DataFrame:
    """(width, height) of each test row's slice, from its scan's file name
    `slice_<nnnn>_<width>_<height>_<spacing>_<spacing>.png`."""
    sizes = {}
    for case, day in set(zip(test["case"], test["day"], strict=True)):
        for scan in (raw / "train" / case / f"{case}_{day}" / "scans").glob("slice_*.png"):
            parts = scan.stem.split("_")
            key = (case, day, parts[1])
            if key in sizes:
                raise ValueError(f"two scans for slice {parts[1]} of {case}_{day}")
            sizes[key] = (int(parts[2]), int(parts[3]))
    keys = zip(test["case"], test["day"], test["slice"], strict=True)
    found = [sizes[key] for key in keys]
    return pd.DataFrame(found, columns=["image_width", "image_height"], index=test.index)


def prepare(raw: Path, public: Path, private: Path) -> None:
    rows = pd.read_csv(raw / "train.csv")
    parts = rows["id"].str.split("_")
    rows["case"], rows["day"], rows["slice"] = parts.str[0], parts.str[1], parts.str[-1]
    cases = rows["case"].drop_duplicates().to_numpy(dtype=object)  # in order of appearance
    _, test_cases = train_test_split(cases, test_size=0.1, random_state=42)
    test_cases = set(test_cases)
    test_days = _test_days(rows, test_cases)
    is_test = pd.Series(
        [(c, d) in test_days for c, d in zip(rows["case"], rows["day"], strict=True)],
        index=rows.index,
    )
    folders = {f"{case}_{day}" for case, day in test_days}
    for split in ("train", "test"):
        (public / split).mkdir(exist_ok=True)
    place_files(_scan_files(raw, public, cases, test_cases, folders), "UW-Madison scans")

    train, test = rows[~is_test], rows[is_test]
    # MLE-bench fills these in row by row into new (hence float) columns: 266.0, ...
    test = test.join(_slice_sizes(raw, test).astype(float))
    columns = ["id", "class", "segmentation"]
    test = test[[*columns, "image_width", "image_height"]].rename(
        columns={"segmentation": "predicted"}
    )
    sample = test[["id", "class"]].assign(predicted="1 1 5 2")
    sample.to_csv(public / "sample_submission.csv", index=False, na_rep="")
    test.to_csv(private / "test.csv", index=False, na_rep="")
    train[columns].to_csv(public / "train.csv", index=False, na_rep="")
    test[["id", "class"]].to_csv(public / "test.csv", index=False, na_rep="")


def load_answers(private: Path) -> pd.DataFrame:
    """Test rows and true masks, each carrying its slice's shape (see `uw_madison_score`)."""
    from mle_gym.formats.csv_text import read_as_text
    from mle_gym.formats.rle import with_shape

    answers = read_as_text(private / "test.csv")
    heights = answers["image_height"].astype(float).astype(int)
    widths = answers["image_width"].astype(float).astype(int)
    cells = map(with_shape, heights, widths, answers["predicted"])
    return answers[["id", "class"]].assign(predicted=list(cells))


STATEMENT = """\
# UW-Madison GI Tract Image Segmentation

Radiation therapy for gastrointestinal cancers must aim at the tumour while sparing the
stomach and bowels, which move from day to day. On MRI scans of patients taken on
different days of their treatment, outline the large bowel, the small bowel and the
stomach on every slice.

## Data (read-only, in {data_dir})
- `train/<case>/<case>_<day>/scans/slice_<nnnn>_<width>_<height>_<sx>_<sy>.png`: the
  training scans, one 16-bit grayscale PNG per axial slice (e.g. `case123`, `day20`,
  slice `0001`); `width` and `height` are the slice's size in pixels (e.g. 266 x 266 or
  360 x 310), `sx`, `sy` the pixel spacing in mm. Slices are 3 mm apart.
- `train.csv`: the training masks, three rows per slice (one per class). Columns `id`
  (`<case>_<day>_slice_<nnnn>`), `class` (`large_bowel`, `small_bowel` or `stomach`) and
  `segmentation`, the mask in run-length encoding (empty when the organ is not on the
  slice).
- `test/<case>/<case>_<day>/scans/...`: the scans to segment, same layout. Some test
  scans are later days of training patients, others come from patients not seen in
  training.
- `test.csv`: the rows to predict: `id` and `class`, three rows per test slice.
- `sample_submission.csv`: a valid submission listing every test row (it predicts the
  same three pixels everywhere).

## Metric
0.4 x Dice + 0.6 x (1 - Hausdorff), higher is better:
- Dice: 2 |X ∩ Y| / (|X| + |Y|) between your pixels X and the true pixels Y of each test
  row, averaged over rows; rows where both masks are empty are skipped.
- Hausdorff: for each scan (case and day), the masks of all classes are merged and the
  slices stacked into a 3D volume; the symmetric Hausdorff distance between your volume
  and the true one is measured with coordinates divided by the volume's size along each
  axis (slices, rows, columns) and then divided by sqrt(3), so it lies in [0, 1]. It is
  0 for identical volumes and 1 when exactly one is empty or yours has more than ten
  times the true voxels; scans empty on both sides are skipped. Distances are averaged
  over scans.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per row of
`test.csv` (each `id` with each of the three classes), in any order:

```
id,class,predicted
case123_day20_slice_0065,large_bowel,
case123_day20_slice_0065,small_bowel,28094 3 28358 7
case123_day20_slice_0065,stomach,17533 4 17797 8
```

`predicted` is a run-length encoding like `segmentation` in `train.csv`: pairs
`start length` separated by spaces, meaning pixels `start` to `start+length-1` of the
slice flattened the same way as in `train.csv`; empty means the organ is absent. Starts
must be increasing, runs must not overlap, and every run must lie inside the slice's
width x height pixels. For the 3D distance the grader places pixel `k` at row
`(k-1) mod height`, column `(k-1) div height`, for your masks and the true ones alike.
Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="uw-madison-gi-tract-image-segmentation",
    name="UW-Madison GI Tract Image Segmentation",
    split="medium",
    metric="uw_madison_score",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("class", "label", labels=CLASSES), Column("predicted", "text")),
        load_answers=load_answers,
    ),
    raw_files=("train.csv", "train/*/*/scans/*.png"),
    prepare=prepare,
    num_teams=1548,
    thresholds=Thresholds(gold=0.87917, silver=0.87139, bronze=0.86699, median=0.85499),
    sample_score=0.24608,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "96d669ecf7556353b7203a31f54edd1e",
            "test.csv": "fe823b73f539d27fd2e5c16f2775940f",
            "train.csv": "289c63c9dfb86e7d776cda60f2f1313b",
        },
        private={"test.csv": "ab8cd8e48b4c72df3e4933c04dc08740"},
    ),
)
