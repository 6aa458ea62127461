"""Leaf Classification: which of 99 plant species a leaf belongs to."""

from __future__ import annotations

import zipfile
from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_rules import public_as_raw
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd, train_test_split

#: The 99 species, in the sample submission's order.
SPECIES = (
    "Acer_Capillipes",
    "Acer_Circinatum",
    "Acer_Mono",
    "Acer_Opalus",
    "Acer_Palmatum",
    "Acer_Pictum",
    "Acer_Platanoids",
    "Acer_Rubrum",
    "Acer_Rufinerve",
    "Acer_Saccharinum",
    "Alnus_Cordata",
    "Alnus_Maximowiczii",
    "Alnus_Rubra",
    "Alnus_Sieboldiana",
    "Alnus_Viridis",
    "Arundinaria_Simonii",
    "Betula_Austrosinensis",
    "Betula_Pendula",
    "Callicarpa_Bodinieri",
    "Castanea_Sativa",
    "Celtis_Koraiensis",
    "Cercis_Siliquastrum",
    "Cornus_Chinensis",
    "Cornus_Controversa",
    "Cornus_Macrophylla",
    "Cotinus_Coggygria",
    "Crataegus_Monogyna",
    "Cytisus_Battandieri",
    "Eucalyptus_Glaucescens",
    "Eucalyptus_Neglecta",
    "Eucalyptus_Urnigera",
    "Fagus_Sylvatica",
    "Ginkgo_Biloba",
    "Ilex_Aquifolium",
    "Ilex_Cornuta",
    "Liquidambar_Styraciflua",
    "Liriodendron_Tulipifera",
    "Lithocarpus_Cleistocarpus",
    "Lithocarpus_Edulis",
    "Magnolia_Heptapeta",
    "Magnolia_Salicifolia",
    "Morus_Nigra",
    "Olea_Europaea",
    "Phildelphus",
    "Populus_Adenopoda",
    "Populus_Grandidentata",
    "Populus_Nigra",
    "Prunus_Avium",
    "Prunus_X_Shmittii",
    "Pterocarya_Stenoptera",
    "Quercus_Afares",
    "Quercus_Agrifolia",
    "Quercus_Alnifolia",
    "Quercus_Brantii",
    "Quercus_Canariensis",
    "Quercus_Castaneifolia",
    "Quercus_Cerris",
    "Quercus_Chrysolepis",
    "Quercus_Coccifera",
    "Quercus_Coccinea",
    "Quercus_Crassifolia",
    "Quercus_Crassipes",
    "Quercus_Dolicholepis",
    "Quercus_Ellipsoidalis",
    "Quercus_Greggii",
    "Quercus_Hartwissiana",
    "Quercus_Ilex",
    "Quercus_Imbricaria",
    "Quercus_Infectoria_sub",
    "Quercus_Kewensis",
    "Quercus_Nigra",
    "Quercus_Palustris",
    "Quercus_Phellos",
    "Quercus_Phillyraeoides",
    "Quercus_Pontica",
    "Quercus_Pubescens",
    "Quercus_Pyrenaica",
    "Quercus_Rhysophylla",
    "Quercus_Rubra",
    "Quercus_Semecarpifolia",
    "Quercus_Shumardii",
    "Quercus_Suber",
    "Quercus_Texana",
    "Quercus_Trojana",
    "Quercus_Variabilis",
    "Quercus_Vulcanica",
    "Quercus_x_Hispanica",
    "Quercus_x_Turneri",
    "Rhododendron_x_Russellianum",
    "Salix_Fragilis",
    "Salix_Intergra",
    "Sorbus_Aria",
    "Tilia_Oliveri",
    "Tilia_Platyphyllos",
    "Tilia_Tomentosa",
    "Ulmus_Bergmanniana",
    "Viburnum_Tinus",
    "Viburnum_x_Rhytidophylloides",
    "Zelkova_Serrata",
)


def one_hot(frame: pd.DataFrame) -> pd.DataFrame:
    """The answers as the submission is shaped: id, then a 0/1 column per species."""
    unknown = set(frame["species"]) - set(SPECIES)
    if unknown:
        raise ValueError(f"unexpected species in train.csv: {sorted(unknown)}")
    columns = {name: (frame["species"] == name).astype("int64") for name in SPECIES}
    return pd.DataFrame({"id": frame["id"], **columns})


def _copy_images(ids: pd.Series, archive: zipfile.ZipFile, dest: Path) -> None:
    """Copy `images/<id>.jpg` out of Kaggle's images.zip, unchanged."""
    for image_id in ids:
        (dest / f"{image_id}.jpg").write_bytes(archive.read(f"images/{image_id}.jpg"))


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 10% of Kaggle's labelled leaves become the hidden test set.

    The images of both new splits go to public/images; like MLE-bench, an empty
    private/images folder is created too.
    """
    with zipfile.ZipFile(raw / "train.csv.zip") as archive, archive.open("train.csv") as handle:
        original = read_csv(handle)
    train, test = train_test_split(original, test_size=0.1, random_state=0)
    answers = one_hot(test)

    (public / "images").mkdir(exist_ok=True)
    (private / "images").mkdir(exist_ok=True)
    with zipfile.ZipFile(raw / "images.zip") as archive:
        _copy_images(pd.concat([train["id"], test["id"]]), archive, public / "images")

    uniform = dict.fromkeys(SPECIES, 1 / len(SPECIES))
    sample = pd.DataFrame({"id": answers["id"], **uniform})

    train.to_csv(public / "train.csv", index=False)
    answers.to_csv(private / "test.csv", index=False)
    test.drop(columns="species").to_csv(public / "test.csv", index=False)
    sample.to_csv(public / "sample_submission.csv", index=False)


STATEMENT = """\
# Leaf Classification

Each sample is the leaf of a plant from one of 99 species. For every test leaf, predict the
probability of each species.

## Data (read-only, in {data_dir})
- `train.csv`: leaves with their species. Columns `id` (an integer), `species` (e.g.
  `Acer_Opalus`), then 192 numeric features computed from the leaf image: `margin1` to
  `margin64` (fine-scale margin), `shape1` to `shape64` (contour) and `texture1` to
  `texture64` (interior texture).
- `test.csv`: the leaves to classify, same columns without `species`.
- `images/`: a binary silhouette of every leaf of both files, `images/<id>.jpg`
  (black background, white leaf; sizes vary).
- `sample_submission.csv`: a valid submission in the right format (it gives every species
  probability 1/99); its header lists the 99 species columns.

## Metric
Multi-class logarithmic loss: the mean over test leaves of `-log(p)`, where `p` is the
probability you gave to the true species. Probabilities are clipped to
[2.2e-16, 1 - 2.2e-16] before taking the logarithm, so a confident wrong answer is very
costly. Lower is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per leaf in
`test.csv`: the `id` column, then one column per species, named exactly as in
`sample_submission.csv`:

```
id,Acer_Capillipes,Acer_Circinatum,Acer_Mono,...,Zelkova_Serrata
4,0.001,0.9,0.002,...,0.0005
```

Every probability must lie in [0, 1] and the 99 values of a row must sum to one (within
1e-5); they are not rescaled for you. Write no columns besides these. Put your code in
`{code_dir}`.
"""

COMPETITION = Competition(
    id="leaf-classification",
    name="Leaf Classification",
    split="lite",
    metric="multiclass_log_loss",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="id",
        columns=tuple(Column(name, "probability") for name in SPECIES),
        answers_file="test.csv",
        allow_extra_columns=False,
    ),
    raw_files=("train.csv.zip", "images.zip"),
    prepare=prepare,
    num_teams=1596,
    thresholds=Thresholds(gold=0.0, silver=0.00791, bronze=0.01526, median=0.108345),
    sample_score=4.59512,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "e9fbff4eafce74b4905feffdaa9e5859",
            "test.csv": "52a1b1a2b6fb392986b9579dd52036c7",
            "train.csv": "02920a969976f89192a3d1c03a30cd2c",
        },
        private={"test.csv": "028b4798af4eeafc69ab98b22dc2c70a"},
    ),
    dev_variant=DevVariant(
        prepare=public_as_raw(
            prepare,
            zips={"train.csv.zip": {"train.csv": "train.csv"}, "images.zip": {"images": "images"}},
        )
    ),
)
