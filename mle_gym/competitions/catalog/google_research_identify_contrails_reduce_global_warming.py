"""Identify Contrails: segment aviation contrails in GOES-16 infrared image sequences.

Kaggle's test set was hidden (a code competition), so MLE-bench holds out as many labelled
training records as the validation set has (`train_test_split`, seed 0) and keeps the
validation set public. Every per-record `.npy` file (hundreds of GB in all) is hard-linked
into place (copied only where a link is impossible); the answers are RLE strings of the
held-out `human_pixel_masks.npy`, encoded as MLE-bench encodes them.

Grading decisions: every test record must have exactly one row. RLE strings are checked
before anything is counted (see `rle`): MLE-bench silently clips runs past the image's
end, accepts starts past it and reads signs (`+5`), which we refuse with the reason,
since no correct encoder writes them. An empty or missing cell is refused as MLE-bench
refuses it (`-` is the empty mask).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from mle_gym.competitions.dev_ids import dirs_in
from mle_gym.competitions.hardlink_helpers import place_file, place_files, place_tree
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

BANDS = tuple(f"band_{k:02}.npy" for k in range(8, 17))
MASKS = ("human_individual_masks.npy", "human_pixel_masks.npy")
#: The two guesses the sample submission draws from, with Python's `random` seeded 0.
SAMPLE_GUESSES = ("1 3 10 5", "-")


def _record_files(raw: Path, dest: Path, ids: list[str], names: tuple[str, ...]) -> Iterator:
    for record in ids:
        for name in names:
            yield raw / "train" / record / name, dest / record / name


def _answer(record: Path) -> dict[str, object]:
    """The record's true mask as MLE-bench's RLE ('-' when empty) and its image size."""
    import numpy as np

    from mle_gym.formats.rle import encode_rle

    mask = np.load(record / "human_pixel_masks.npy")[:, :, 0] == 1
    height, width, _ = np.load(record / "band_08.npy", mmap_mode="r").shape
    rle = encode_rle(mask, order="F") or "-"
    return {"record_id": record.name, "encoded_pixels": rle, "height": height, "width": width}


def _sample_guesses(count: int) -> list[str]:
    import random

    random.seed(0)
    return [random.choice(SAMPLE_GUESSES) for _ in range(count)]


def prepare(raw: Path, public: Path, private: Path) -> None:
    """Hold out as many training records as the validation set has; place every file."""
    train_meta = json.loads((raw / "train_metadata.json").read_text())
    validation_meta = json.loads((raw / "validation_metadata.json").read_text())
    train, test = holdout(train_meta, len(validation_meta))
    train_ids = [str(r["record_id"]) for r in train]
    test_ids = [str(r["record_id"]) for r in test]

    answers = pd.DataFrame([_answer(raw / "train" / record) for record in test_ids])
    pairs = _record_files(raw, public / "train", train_ids, BANDS + MASKS)
    place_files(pairs, "contrails train records", len(train_ids) * len(BANDS + MASKS))
    pairs = _record_files(raw, public / "test", test_ids, BANDS)
    place_files(pairs, "contrails test records", len(test_ids) * len(BANDS))
    (public / "validation").mkdir(exist_ok=True)
    if (raw / "validation").is_dir():
        place_tree(raw / "validation", public / "validation")
    place_file(raw / "validation_metadata.json", public / "validation_metadata.json")
    (public / "train_metadata.json").write_text(json.dumps(train))

    answers.to_csv(private / "answers.csv", index=False)
    sample = answers.assign(encoded_pixels=_sample_guesses(len(answers)))
    sample.to_csv(public / "sample_submission.csv", index=False)


def load_answers(private: Path) -> pd.DataFrame:
    """Record ids and answers, each answer carrying its image shape (see `rle_shapes`)."""
    from mle_gym.formats.rle import load_shaped_answers

    return load_shaped_answers(private / "answers.csv", "record_id", "encoded_pixels")


STATEMENT = """\
# Google Research - Identify Contrails to Reduce Global Warming

Contrails are the line-shaped clouds aircraft leave behind; they trap heat and contribute
to warming. Each record is a sequence of infrared satellite images of one scene from the
GOES-16 ABI imager, reprojected to 256 x 256 pixels. For every test record, mark the
pixels that are contrails in the labelled frame.

## Data (read-only, in {data_dir})
- `train/<record_id>/`: one folder per training record.
  - `band_08.npy` ... `band_16.npy`: one infrared channel each (brightness temperatures,
    float32), shape `H x W x 8`: eight frames 10 minutes apart; the labelled frame is the
    fifth (index 4), with four frames before and three after.
  - `human_pixel_masks.npy`: the ground truth of the labelled frame, `H x W x 1`, 1 for a
    contrail pixel (more than half of the annotators marked it), else 0.
  - `human_individual_masks.npy`: each annotator's mask, `H x W x 1 x R` (R varies).
- `validation/<record_id>/`: more labelled records, with bands and `human_pixel_masks.npy`
  only; you may train on them too.
- `test/<record_id>/`: the records to segment, bands only.
- `train_metadata.json`, `validation_metadata.json`: per-record timestamps and projection
  parameters.
- `sample_submission.csv`: a valid submission listing every test record (random guesses);
  its `height` and `width` columns give each record's image size and are not needed in
  your submission.

Contrails are rare: most pixels, and many records, have none. Labelling rules: a contrail
covers at least 10 pixels, is at some point at least three times longer than wide,
appears suddenly or enters from the image's edge, and is visible in at least two frames.

## Metric
Global Dice coefficient: 2 |X ∩ Y| / (|X| + |Y|), where X is the set of all predicted
contrail pixels over all test records together and Y the set of all true ones. Higher is
better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test record:

```
record_id,encoded_pixels
1000834164244036115,1 1 5 1
1002653297254493116,-
```

`encoded_pixels` is the run-length encoding of the binary mask: space-separated pairs
`start length`, with pixels numbered from 1 top to bottom, then left to right (down each
column first), starts increasing and runs not overlapping and inside the image. Write `-`
for a record without contrails. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="google-research-identify-contrails-reduce-global-warming",
    name="Google Research - Identify Contrails to Reduce Global Warming",
    split="high",
    metric="contrails_dice",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="record_id",
        columns=(Column("encoded_pixels", "text"),),
        answers_file="answers.csv",
        load_answers=load_answers,
    ),
    raw_files=(
        "train_metadata.json",
        "validation_metadata.json",
        "train/*/human_pixel_masks.npy",
        "validation/*/band_08.npy",
    ),
    prepare=prepare,
    num_teams=954,
    thresholds=Thresholds(gold=0.71059, silver=0.6936, bronze=0.67929, median=0.63819),
    sample_score=6e-05,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "76f1e9892ad523bd23909fd41bc47734",
            "train_metadata.json": "c1904919eceebb2ff92e05e384e52eba",
            "validation_metadata.json": "fbba4a0196aecfea9749f347a407519d",
        },
        private={"answers.csv": "19bcf4d920a7b6edb1ce5bbda2299437"},
    ),
    dev_variant=DevVariant(train_ids=dirs_in("train")),
)
