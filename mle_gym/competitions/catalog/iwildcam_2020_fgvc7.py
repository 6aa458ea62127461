"""iWildCam 2020 - FGVC7: which of about 270 species a camera-trap image shows.

MLE-bench holds out whole camera locations: `train_test_split` over the distinct locations
(test share 0.22, seed 0), then moves locations one at a time (the last of one list to the
end of the other) until `test / (all + test)` no longer falls below, then no longer
exceeds, 0.22. That ratio counts the test images twice in its denominator, so the final
test share is somewhat above 22%; we keep the rule as it is, since it decides the split.

The metadata JSON files are rebuilt through pandas exactly as MLE-bench does
(`DataFrame(records)`, filtered, `to_dict("records")`, `json.dump` without indent), which
fixes their bytes: keys in first-seen order, a key a record lacks written as `NaN`. The
megadetector results and every image are placed by hard link where possible.

Grading is accuracy on the integer `Category`. Values are read as MLE-bench reads them
(`12.0` is 12); a category outside 0-675 is scored as a wrong answer with a warning, as
MLE-bench scores it. Rows are matched by id, so nothing in its reading can be gamed.
"""

from __future__ import annotations

import json
from pathlib import Path

from mle_gym.competitions.dev_ids import files_in
from mle_gym.competitions.hardlink_helpers import place_file, place_files
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import np, pd, train_test_split

TRAIN_JSON = "iwildcam2020_train_annotations.json"
TEST_JSON = "iwildcam2020_test_information.json"
DETECTIONS = "iwildcam2020_megadetector_results.json"
TEST_SHARE = 0.22
#: The sample submission draws categories uniformly from 0-675, the range of the ids.
CATEGORIES = tuple(str(i) for i in range(676))


def held_out_locations(images: pd.DataFrame) -> list:
    """MLE-bench's held-out locations: a seeded split, then locations moved to fit 0.22."""
    train, test = (
        list(side)
        for side in train_test_split(
            images["location"].unique(), test_size=TEST_SHARE, random_state=0
        )
    )
    per_location = images["location"].value_counts()
    total, held = len(images), int(per_location[test].sum())
    while held / (total + held) < TEST_SHARE:
        test.append(train.pop())
        held += int(per_location[test[-1]])
    while held / (total + held) > TEST_SHARE:
        train.append(test.pop())
        held -= int(per_location[train[-1]])
    return test


def _write_json(value: dict, path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f)


def prepare(raw: Path, public: Path, private: Path) -> None:
    """Hold out about a fifth of the camera locations with all of their images."""
    with open(raw / TRAIN_JSON, encoding="utf-8") as f:
        original = json.load(f)
    with open(raw / TEST_JSON, encoding="utf-8") as f:
        kaggle_test = json.load(f)
    images = pd.DataFrame(original["images"])
    annotations = pd.DataFrame(original["annotations"])
    held_out = images["location"].isin(held_out_locations(images))
    train_images, test_images = images[~held_out], images[held_out]
    train_ids, test_ids = train_images["id"].unique(), test_images["id"].unique()

    _write_json(
        {
            "annotations": annotations[annotations["image_id"].isin(train_ids)].to_dict("records"),
            "images": train_images.to_dict("records"),
            "categories": pd.DataFrame(original["categories"]).to_dict("records"),
            "info": original["info"],
        },
        public / TRAIN_JSON,
    )
    _write_json(
        {
            "images": test_images.to_dict("records"),
            "categories": pd.DataFrame(kaggle_test["categories"]).to_dict("records"),
            "info": kaggle_test["info"],
        },
        public / TEST_JSON,
    )
    place_file(raw / DETECTIONS, public / DETECTIONS)

    answers = annotations.loc[annotations["image_id"].isin(test_ids), ["image_id", "category_id"]]
    answers = answers.rename(columns={"image_id": "Id", "category_id": "Category"})
    answers.to_csv(private / "answers.csv", index=False)
    guesses = np.random.RandomState(0).randint(0, len(CATEGORIES), size=len(answers))
    answers.assign(Category=guesses).to_csv(public / "sample_submission.csv", index=False)

    for side, ids in (("train", train_ids), ("test", test_ids)):
        (public / side).mkdir()
        place_files(
            ((raw / "train" / f"{i}.jpg", public / side / f"{i}.jpg") for i in ids),
            f"{side} images",
            len(ids),
        )


STATEMENT = """\
# iWildCam 2020 - FGVC7

Camera traps photograph whatever passes in front of them. Label each image with the
species it shows (or `empty`). The images come from the Wildlife Conservation Society's
camera traps at several hundred locations around the world (217,959 images in all); the
test images are from locations that never appear in the training images, so a model must
work at new sites.

## Data (read-only, in {data_dir})
- `iwildcam2020_train_annotations.json`: COCO-style metadata of the training images.
  Keys: `images` (`id`, `file_name`, `location`, `seq_id`, `seq_num_frames`, `frame_num`,
  `datetime`, `width`, `height`), `annotations` (`id`, `image_id`, `category_id`),
  `categories` (`id`, `name`, `count`) and `info`.
- `train/<id>.jpg`: the training images, JPEG.
- `iwildcam2020_test_information.json`: `images` (same fields), `categories` and `info`
  for the test images; no annotations.
- `test/<id>.jpg`: the test images.
- `iwildcam2020_megadetector_results.json`: boxes of a general animal / person / vehicle
  detector (MegaDetector) run over the images, with their confidences.
- `sample_submission.csv`: a valid submission with random categories.

## Metric
Accuracy: the share of test images whose predicted category id equals the true one.
Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test image:
its `Id` (the image `id`) and the predicted integer `Category` (a category `id`):

```
Id,Category
8b1d6a8e-21bc-11ea-a13a-137349068a90,0
8c5a3a0e-21bc-11ea-a13a-137349068a90,372
```

Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="iwildcam-2020-fgvc7",
    name="iWildCam 2020 - FGVC7",
    split="medium",
    metric="accuracy",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="Id",
        columns=(Column("Category", "label", labels=CATEGORIES, open_labels=True),),
        answers_file="answers.csv",
    ),
    raw_files=(TRAIN_JSON, TEST_JSON, DETECTIONS, "train/*.jpg"),
    prepare=prepare,
    num_teams=122,
    thresholds=Thresholds(gold=0.778, silver=0.688, bronze=0.594, median=0.524),
    sample_score=0.00117,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            DETECTIONS: "1b9ece07ab63b920bf8a9ae8f05bd38c",
            TEST_JSON: "88143d613e565e6ce875c222b9d49ebc",
            TRAIN_JSON: "d67abd02833d86fcf7f08e5655c34cae",
            "sample_submission.csv": "0b664574b369e81790f7f092fbb8ae11",
        },
        private={"answers.csv": "88adac005790552cbd7530e14c88525a"},
    ),
    dev_variant=DevVariant(train_ids=files_in("train")),
)
