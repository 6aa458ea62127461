"""iNaturalist 2019 at FGVC6: which of 1,010 species a citizen-science photograph shows.

MLE-bench holds out 12% of each species' training images (`per_category_split`, with its
one / two-to-four / five-or-more rules). Test images keep their ids and annotations but
move to `test2019/<file name>`; the public JSON files are written with a four-space indent
and sorted keys. MLE-bench unpacks Kaggle's `train_val2019.tar.gz`, copies the images into
folders and packs each folder into an uncompressed tar named `.tar.gz` (no directory
entries, names relative to the folder). We read the archive once as a stream and write
each training image straight into its new tar, never unpacking the 80 GB set; the test
images (about 10 GB) are spooled to a scratch folder and packed afterwards in name order,
all with one fixed time, since the archive's order (folder by folder) and times would tell
their species. The members' names and bytes are MLE-bench's; the training members' order
and header fields are the source archive's (MLE-bench's order is its directory listing
order). Validation images, which MLE-bench does not copy either, are skipped;
`val2019.json` is placed as is.

The sample submission repeats one class for every image: MLE-bench seeds a new
`random.Random(42)` for each row. Grading is top-1 error (`top1_error`): the first of the
space-separated guesses in `predicted` counts, as in MLE-bench.

Test image ids are Kaggle's training ids, kept as MLE-bench keeps them; the training
images keep theirs too. Should Kaggle's ids run in category order, a test id's neighbours
among the training ids would hint at its species.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

from mle_gym.competitions.hardlink_helpers import place_file
from mle_gym.competitions.per_category_split import (
    categories_of,
    flat,
    load_metadata,
    split_per_category,
    write_answers,
    write_json,
)
from mle_gym.competitions.prepare_progress import Progress
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.competitions.zip_members import FIXED_TIME

ARCHIVE = "train_val2019.tar.gz"
#: The folder of Kaggle's archive that public/'s copy of it leaves out.
FOLDER = "train_val2019/"


def split_archive(
    archive: Path, public: Path, train: set[str], test: dict[str, str], prefix: str = ""
) -> None:
    """Stream `archive` once; images named in `train` go to `train_val2019.tar.gz` without
    their `train_val2019/` prefix, those keyed in `test` to `test2019.tar.gz` under their
    new base name. Raises when an image is missing from the archive. Members are named
    `prefix` + their name in `archive` (a public archive lacks the `train_val2019/`);
    gzip-compressed or not, the archive is read alike.

    The archive lists its images folder by folder, that is species by species, so test
    images are spooled beside `public` and packed afterwards in name order with one time
    (`_pack_in_name_order`): neither their order nor their times tell their species.
    """
    import tarfile
    import tempfile

    wanted = len(train) + len(test)
    modes: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix=".test2019-", dir=public.parent) as scratch:
        with (
            tarfile.open(archive, "r|*") as source,
            tarfile.open(public / "train_val2019.tar.gz", "w") as train_tar,
            Progress("images", wanted) as progress,
        ):
            for member in source:
                name = prefix + member.name.removeprefix("./")
                if not member.isfile() or (name not in train and name not in test):
                    continue
                if name in train:
                    info = tarfile.TarInfo(name.removeprefix("train_val2019/"))
                    info.size, info.mtime, info.mode = member.size, member.mtime, member.mode
                    train_tar.addfile(info, source.extractfile(member))
                else:
                    arcname = test[name].removeprefix("test2019/")
                    with open(Path(scratch, arcname), "wb") as out:
                        shutil.copyfileobj(source.extractfile(member), out)
                    modes[arcname] = member.mode
                progress.add(member.size)
        if progress.files != wanted:
            raise FileNotFoundError(
                f"{archive.name} holds {progress.files} of the {wanted} images train2019.json names"
            )
        _pack_in_name_order(Path(scratch), modes, public / "test2019.tar.gz")


def _pack_in_name_order(scratch: Path, modes: dict[str, int], dest: Path) -> None:
    """Tar `scratch/<name>` for each name of `modes`, sorted, all stamped with one fixed
    time (so two preparations give the same bytes)."""
    import tarfile

    with tarfile.open(dest, "w") as tar, Progress("test images", len(modes)) as progress:
        for arcname in sorted(modes):
            path = scratch / arcname
            info = tarfile.TarInfo(arcname)
            info.size, info.mtime, info.mode = (
                path.stat().st_size,
                FIXED_TIME,
                modes[arcname],
            )
            with path.open("rb") as handle:
                tar.addfile(info, handle)
            progress.add(info.size)


def prepare(raw: Path, public: Path, private: Path) -> None:
    """Per-species 88:12 hold-out of Kaggle's training images."""
    _split(raw, public, private)


def dev_prepare(folder: Path, public: Path, private: Path) -> None:
    """The same hold-out of the public training images (`folder` holds the public files):
    public train_val2019.tar.gz is Kaggle's archive uncompressed and without its
    `train_val2019/` folder, so its members are read under that folder again."""
    _split(folder, public, private, prefix=FOLDER)


def _train_ids(public: Path) -> set[str]:
    """The image ids of a public train2019.json (for the development variant)."""
    return {str(image["id"]) for image in load_metadata(public / "train2019.json")["images"]}


def _split(raw: Path, public: Path, private: Path, prefix: str = "") -> None:
    metadata = load_metadata(raw / "train2019.json")
    images, annotations = metadata["images"], metadata["annotations"]
    train_by_category, test = split_per_category(categories_of(metadata), test_size=0.12)
    train = flat(train_by_category)

    write_json(
        {
            **metadata,
            "annotations": [annotations[i] for i in train],
            "images": [images[i] for i in train],
        },
        public / "train2019.json",
    )
    place_file(raw / "val2019.json", public / "val2019.json")
    moved = [
        {**images[i], "file_name": "test2019/" + images[i]["file_name"].split("/")[-1]}
        for i in test
    ]
    shown = {k: v for k, v in metadata.items() if k not in ("annotations", "categories")}
    write_json({**shown, "images": moved}, public / "test2019.json")

    ids = [image["id"] for image in moved]
    truth = [annotations[i]["category_id"] for i in test]
    write_answers(private / "answers.csv", ids, truth, ("id", "predicted"))
    guesses = [random.Random(42).randint(0, 1009) for _ in ids]
    write_answers(public / "kaggle_sample_submission.csv", ids, guesses, ("id", "predicted"))

    split_archive(
        raw / ARCHIVE,
        public,
        {images[i]["file_name"] for i in train},
        {images[i]["file_name"]: image["file_name"] for i, image in zip(test, moved, strict=True)},
        prefix,
    )


STATEMENT = """\
# iNaturalist 2019 at FGVC6

Identify the species in photographs taken by the public and verified on iNaturalist:
1,010 species of plants, insects, birds, fungi, reptiles, amphibians, mammals and more,
chosen to include many look-alike species, photographed all over the world. About 268,000
images (265,213 in Kaggle's training set), at most 800 pixels on the longer side.

## Data (read-only, in {data_dir})
- `train2019.json`: COCO-style metadata of the training images (about 88% of Kaggle's
  training set). Keys: `images` (`id`, `file_name`, `width`, `height`, `license`,
  `rights_holder`), `annotations` (`id`, `image_id`, `category_id`), `categories` (`id`,
  `name`, `kingdom`, `phylum`, `class`, `order`, `family`, `genus`), `info`, `licenses`.
- `train_val2019.tar.gz`: the training images, an uncompressed tar archive despite its
  name, with members `<iconic group>/<category id>/<hash>.jpg` (the `file_name` of
  `train2019.json` without its leading `train_val2019/`).
- `val2019.json`: Kaggle's validation metadata; its images are not included.
- `test2019.json`: `images`, `info` and `licenses` of the test images (no annotations or
  categories); `file_name` is `test2019/<hash>.jpg`.
- `test2019.tar.gz`: the test images, an uncompressed tar archive with members
  `<hash>.jpg`.
- `kaggle_sample_submission.csv`: a valid submission (it guesses one class everywhere).

Every species with at least two training images has at least one of them among the test
images. The data folder is read-only: extract the archives somewhere else, e.g. under
`{code_dir}`.

## Metric
Top-1 classification error: the share of test images whose first predicted category is
not the true one. Lower is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test image:
its `id` (the image `id` of `test2019.json`) and `predicted`, the category id; you may
list further guesses after it, separated by spaces, but only the first is scored:

```
id,predicted
268243,912
268244,56 3 1002
```

Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="inaturalist-2019-fgvc6",
    name="iNaturalist 2019 at FGVC6",
    split="medium",
    metric="top1_error",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("predicted", "text"),),
        answers_file="answers.csv",
        sample_file="kaggle_sample_submission.csv",
    ),
    raw_files=(ARCHIVE, "train2019.json", "val2019.json"),
    prepare=prepare,
    num_teams=215,
    thresholds=Thresholds(gold=0.15955, silver=0.26058, bronze=0.39028, median=0.43478),
    sample_score=0.9996,
    statement=STATEMENT,
    dev_variant=DevVariant(prepare=dev_prepare, train_ids=_train_ids),
    checksums=Checksums(
        public={
            "kaggle_sample_submission.csv": "7cc29744e99a9f5ed8299c5e2979a2cc",
            "test2019.json": "c572fca9d6b042b49039d0b87e2a4c98",
            "train2019.json": "558b56eb13ad126127de75e379e299f6",
            "val2019.json": "e5a1d2eb4fd50f2d1ae5ef571be96eb3",
        },
        private={"answers.csv": "6a6ca89c88327fe0071c350e846141d3"},
    ),
)
