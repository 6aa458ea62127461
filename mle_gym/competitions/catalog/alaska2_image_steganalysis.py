"""ALASKA2 Image Steganalysis: which JPEG photographs carry a hidden message?

Kaggle's 75,000 cover photographs come with a version of each made by three embedding
algorithms (JMiPOD, JUNIWARD, UERD), under the cover's file name. MLE-bench holds out 5,000
covers (`train_test_split` of the sorted names, `random_state=42`), shuffles them with
Python's `random` seeded 0, and for each draws (same generator) whether the test image is
the cover itself (label 0) or, with a further draw among the three algorithms, its stego
version (label 1). Train images are renumbered `00001.jpg`... in split order in all four
folders; test images `0001.jpg`... in shuffled order. Kaggle's own Test/ folder is unused.
The 300,000 training images (~30 GB) are placed by hard link, never read; the test
images are fresh copies in id order, since a link's inode would tell its source folder.

Grading: MLE-bench's weighted AUC (`alaska_weighted_auc`, TPR band [0, 0.4] weighted
twice). Scores only rank, so any finite number is accepted (values outside [0, 1] with a
warning), as MLE-bench accepts them; NaN or infinite scores are refused (MLE-bench refuses
NaN, and fails inside scikit-learn on infinity). Nothing in public/ tells a test image's
source: its other versions are not in the training folders.

The development variant is the same split of the public covers, holding out the share
MLE-bench's 5,000 were of Kaggle's 75,000 (`scaled_count`: about 4,667 of the 70,000).
Both parts are renumbered again, so its clean-split check traces images by their bytes:
each development test image must be a public training image, none of the development
training images nor a real test image.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path

from mle_gym.competitions.dev_ids import file_digests, files_in, ids_in, union
from mle_gym.competitions.dev_rules import scaled_count
from mle_gym.competitions.hardlink_helpers import place_files
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd, train_test_split

COVER = "Cover"
ALGORITHMS = ("JMiPOD", "JUNIWARD", "UERD")
#: The training folders: the covers and each algorithm's version of them.
FOLDERS = (COVER, *ALGORITHMS)
TEST_SIZE = 5000


def cover_names(raw: Path) -> list[str]:
    """The cover images' file names, sorted as MLE-bench sorts their paths."""
    return sorted(e.name for e in os.scandir(raw / COVER) if e.name.endswith(".jpg"))


def draw_test_sources(test: list[str]) -> list[tuple[str, str]]:
    """Shuffle `test` in place and draw each image's source folder; returns (folder, name).

    The draws replay MLE-bench's calls on one generator seeded 0: the shuffle, then per
    image a coin for cover-or-stego and, for stego, the algorithm.
    """
    rng = random.Random(0)
    rng.shuffle(test)
    sources = []
    for name in test:
        folder = COVER if rng.choice([True, False]) else rng.choice(ALGORITHMS)
        sources.append((folder, name))
    return sources


def _train_pairs(raw: Path, public: Path, train: list[str]) -> Iterator[tuple[Path, Path]]:
    for number, name in enumerate(train, start=1):
        for folder in FOLDERS:
            yield raw / folder / name, public / folder / f"{number:05d}.jpg"


def prepare(raw: Path, public: Path, private: Path, *, held_out: int = TEST_SIZE) -> None:
    """MLE-bench's split (see the module docstring); train linked, test copied fresh."""
    train, test = train_test_split(cover_names(raw), test_size=held_out, random_state=42)
    sources = draw_test_sources(test)
    ids = [f"{number:04d}.jpg" for number in range(1, len(sources) + 1)]

    place_files(_train_pairs(raw, public, train), "train images", 4 * len(train))
    place_files(
        (
            (raw / folder / name, public / "Test" / image_id)
            for (folder, name), image_id in zip(sources, ids, strict=True)
        ),
        "test images",
        len(ids),
        fresh=True,
    )
    labels = [int(folder != COVER) for folder, _ in sources]
    answers = pd.DataFrame({"Id": ids, "Label": labels})
    answers.to_csv(private / "test.csv", index=False)
    answers.assign(Label=0).to_csv(public / "sample_submission.csv", index=False)


def prepare_dev(raw: Path, public: Path, private: Path) -> None:
    """The development split of the public covers (see the module docstring)."""
    prepare(raw, public, private, held_out=scaled_count(TEST_SIZE, len(cover_names(raw))))


STATEMENT = """\
# ALASKA2 Image Steganalysis

Steganography hides a message inside an innocuous-looking file. The ALASKA2 photographs
come from about 50 cameras and several processing pipelines; some carry a message hidden
in their JPEG coefficients by one of three algorithms: JMiPOD, J-UNIWARD or UERD. For each
test photograph, give a score that grows with how likely it holds a hidden message.

## Data (read-only, in {data_dir})
- `Cover/`: 70,000 unaltered photographs, `00001.jpg` to `70000.jpg` (512x512 colour
  JPEGs, compressed at quality 75, 90 or 95).
- `JMiPOD/`, `JUNIWARD/`, `UERD/`: the same 70,000 photographs, each with a message hidden
  by that algorithm, under the same file name as its cover (`JMiPOD/00001.jpg` is
  `Cover/00001.jpg` with a message). The message length is not given: it is adapted to the
  image's texture, about 0.4 bit per non-zero AC DCT coefficient on average.
- `Test/`: 5,000 photographs to score, `0001.jpg` to `5000.jpg`. About half are unaltered
  covers; the others carry a message hidden by one of the three algorithms, each equally
  likely. None of them, in any version, is in the training folders.
- `sample_submission.csv`: a valid submission listing every test photograph (it scores
  every one 0).

## Metric
Weighted area under the ROC curve. The area is cut into horizontal bands of true-positive
rate: [0, 0.4] counts twice, [0.4, 1] once, and the total is divided by the weighted area
of a perfect curve, so a perfect ranking scores 1 and a constant score about 0.586.
Detecting hidden messages with few false alarms therefore matters most. Only the order of
your scores matters. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per photograph in
`Test/`:

```
Id,Label
0001.jpg,0.1
0002.jpg,0.99
0003.jpg,1.2
```

`Label` is any finite number (values outside [0, 1] are fine: only their order counts).
Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="alaska2-image-steganalysis",
    name="ALASKA2 Image Steganalysis",
    split="medium",
    metric="alaska_weighted_auc",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="Id",
        columns=(Column("Label", "score"),),
        answers_file="test.csv",
    ),
    raw_files=(f"{COVER}/*.jpg", *(f"{folder}/*.jpg" for folder in ALGORITHMS)),
    prepare=prepare,
    num_teams=1095,
    thresholds=Thresholds(gold=0.928, silver=0.921, bronze=0.915, median=0.904),
    sample_score=0.58571,
    statement=STATEMENT,
    checksums=Checksums(
        public={"sample_submission.csv": "f4623502821bbd1399ecc8f5d66fc243"},
        private={"test.csv": "f90b06076f750fb56ae35c3df715ada1"},
    ),
    dev_variant=DevVariant(
        prepare=prepare_dev,
        train_ids=union(
            *(file_digests(files_in(f, "*.jpg", stem=False), f"{f}/{{}}") for f in FOLDERS)
        ),
        test_ids=file_digests(ids_in("test.csv", "Id"), "Test/{}"),
        seed=42,
    ),
)
