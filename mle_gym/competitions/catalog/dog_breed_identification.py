"""Dog Breed Identification: which of 120 breeds a dog photograph shows."""

from __future__ import annotations

import shutil
from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_ids import ids_in
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd, train_test_split

#: The 120 breeds of the Stanford Dogs subset of ImageNet, in the sample submission's order.
BREEDS = (
    "affenpinscher",
    "afghan_hound",
    "african_hunting_dog",
    "airedale",
    "american_staffordshire_terrier",
    "appenzeller",
    "australian_terrier",
    "basenji",
    "basset",
    "beagle",
    "bedlington_terrier",
    "bernese_mountain_dog",
    "black-and-tan_coonhound",
    "blenheim_spaniel",
    "bloodhound",
    "bluetick",
    "border_collie",
    "border_terrier",
    "borzoi",
    "boston_bull",
    "bouvier_des_flandres",
    "boxer",
    "brabancon_griffon",
    "briard",
    "brittany_spaniel",
    "bull_mastiff",
    "cairn",
    "cardigan",
    "chesapeake_bay_retriever",
    "chihuahua",
    "chow",
    "clumber",
    "cocker_spaniel",
    "collie",
    "curly-coated_retriever",
    "dandie_dinmont",
    "dhole",
    "dingo",
    "doberman",
    "english_foxhound",
    "english_setter",
    "english_springer",
    "entlebucher",
    "eskimo_dog",
    "flat-coated_retriever",
    "french_bulldog",
    "german_shepherd",
    "german_short-haired_pointer",
    "giant_schnauzer",
    "golden_retriever",
    "gordon_setter",
    "great_dane",
    "great_pyrenees",
    "greater_swiss_mountain_dog",
    "groenendael",
    "ibizan_hound",
    "irish_setter",
    "irish_terrier",
    "irish_water_spaniel",
    "irish_wolfhound",
    "italian_greyhound",
    "japanese_spaniel",
    "keeshond",
    "kelpie",
    "kerry_blue_terrier",
    "komondor",
    "kuvasz",
    "labrador_retriever",
    "lakeland_terrier",
    "leonberg",
    "lhasa",
    "malamute",
    "malinois",
    "maltese_dog",
    "mexican_hairless",
    "miniature_pinscher",
    "miniature_poodle",
    "miniature_schnauzer",
    "newfoundland",
    "norfolk_terrier",
    "norwegian_elkhound",
    "norwich_terrier",
    "old_english_sheepdog",
    "otterhound",
    "papillon",
    "pekinese",
    "pembroke",
    "pomeranian",
    "pug",
    "redbone",
    "rhodesian_ridgeback",
    "rottweiler",
    "saint_bernard",
    "saluki",
    "samoyed",
    "schipperke",
    "scotch_terrier",
    "scottish_deerhound",
    "sealyham_terrier",
    "shetland_sheepdog",
    "shih-tzu",
    "siberian_husky",
    "silky_terrier",
    "soft-coated_wheaten_terrier",
    "staffordshire_bullterrier",
    "standard_poodle",
    "standard_schnauzer",
    "sussex_spaniel",
    "tibetan_mastiff",
    "tibetan_terrier",
    "toy_poodle",
    "toy_terrier",
    "vizsla",
    "walker_hound",
    "weimaraner",
    "welsh_springer_spaniel",
    "west_highland_white_terrier",
    "whippet",
    "wire-haired_fox_terrier",
    "yorkshire_terrier",
)


def one_hot(frame: pd.DataFrame) -> pd.DataFrame:
    """The answers as the submission is shaped: id, then a 0/1 column per breed."""
    unknown = set(frame["breed"]) - set(BREEDS)
    if unknown:
        raise ValueError(f"unexpected breeds in labels.csv: {sorted(unknown)}")
    columns = {breed: (frame["breed"] == breed).astype("int64") for breed in BREEDS}
    return pd.DataFrame({"id": frame["id"], **columns})


def _copy_images(ids: pd.Series, source: Path, dest: Path) -> None:
    dest.mkdir(exist_ok=True)
    for image_id in ids:
        shutil.copyfile(source / f"{image_id}.jpg", dest / f"{image_id}.jpg")


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 10% of Kaggle's labelled photos become the hidden test set."""
    labels = read_csv(raw / "labels.csv")
    train, test = train_test_split(labels, test_size=0.1, random_state=0)
    answers = one_hot(test)

    train.to_csv(public / "labels.csv", index=False)
    answers.to_csv(private / "test.csv", index=False)
    _copy_images(train["id"], raw / "train", public / "train")
    _copy_images(test["id"], raw / "train", public / "test")

    uniform = dict.fromkeys(BREEDS, 1 / len(BREEDS))
    sample = pd.DataFrame({"id": answers["id"], **uniform})
    sample.to_csv(public / "sample_submission.csv", index=False)


STATEMENT = """\
# Dog Breed Identification

Each photograph shows a dog of one of 120 breeds (the dog subset of ImageNet). For every
test photograph, predict the probability of each breed.

## Data (read-only, in {data_dir})
- `train/`: training photographs, `<id>.jpg`, where `<id>` is a 32-character hexadecimal
  string. Photographs vary in size and framing.
- `labels.csv`: the breed of every training photograph. Columns `id` and `breed` (e.g.
  `boston_bull`, `dingo`, `pekinese`).
- `test/`: the photographs to classify, `<id>.jpg`.
- `sample_submission.csv`: a valid submission in the right format (it gives every breed
  probability 1/120); its header lists the 120 breed columns.

## Metric
Multi-class logarithmic loss: the mean over test photographs of `-log(p)`, where `p` is
the probability you gave to the true breed. Probabilities are clipped to
[2.2e-16, 1 - 2.2e-16] before taking the logarithm, so a confident wrong answer is very
costly. Lower is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per photograph in
`test/` (its `id` is the file name without `.jpg`): the `id` column, then one column per
breed, named exactly as in `sample_submission.csv`:

```
id,affenpinscher,afghan_hound,african_hunting_dog,...,yorkshire_terrier
000621fb3cbb32d8935728e48679680e,0.01,0.002,0.0005,...,0.03
```

Every probability must lie in [0, 1] and the 120 values of a row must sum to one (within
1e-5); they are not rescaled for you. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="dog-breed-identification",
    name="Dog Breed Identification",
    split="lite",
    metric="multiclass_log_loss",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="id",
        columns=tuple(Column(breed, "probability") for breed in BREEDS),
        answers_file="test.csv",
    ),
    raw_files=("labels.csv", "train/*.jpg"),
    prepare=prepare,
    num_teams=1281,
    thresholds=Thresholds(gold=0.0005, silver=0.00539, bronze=0.04598, median=0.47205),
    sample_score=4.78749,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "labels.csv": "0ab1a234cd6b80e9efd617e305a4eda5",
            "sample_submission.csv": "30c85225fcd6e22dc51a7d94a333575f",
        },
        private={"test.csv": "83d0c48056db066d07102ee13aaecc08"},
    ),
    dev_variant=DevVariant(train_ids=ids_in("labels.csv", "id")),
)
