"""MLSP 2013 Birds: which of 19 species call in a ten-second recording, graded by ROC AUC.

MLE-bench keeps only the contest's training recordings (fold 0), marks 20% of them as
the new test set, renumbers the recordings, and flattens the answers to one row per
(recording, species) pair with `Id = rec_id * 100 + species`. Only the host keeps the
file names of the test recordings (`private/test_recordings.csv`): renumbered ids say
nothing across splits, so a development split is checked by file name.
"""

from __future__ import annotations

import io
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
from mle_gym.lazy import pd

ARCHIVE = "mlsp_contest_dataset.zip"
ESSENTIAL = "mlsp_contest_dataset/essential_data"
SUPPLEMENTAL = "mlsp_contest_dataset/supplemental_data"
NUM_SPECIES = 19
#: Per-recording images, copied for every kept recording; segmentation examples exist
#: for only a few recordings.
IMAGE_FOLDERS = ("filtered_spectrograms", "spectrograms", "supervised_segmentation")
OPTIONAL_IMAGE_FOLDER = "segmentation_examples"
#: Whole-dataset files copied as they are.
SHARED_FILES = ("segment_clusters.bmp", "segment_mosaic.bmp")
#: Supplemental tables keyed by rec_id in their first column; MLE-bench rewrites all three
#: under the histogram file's header.
FEATURE_TABLES = ("histogram_of_segments.txt", "segment_features.txt", "segment_rectangles.txt")
FEATURE_HEADER = "rec_id,[histogram of segment features]"
#: Host-only `rec_id,filename` of the test recordings.
TEST_RECORDINGS = "test_recordings.csv"


class _Contest:
    """Reads members of the contest archive without unpacking it into raw/."""

    def __init__(self, archive: zipfile.ZipFile) -> None:
        self.archive = archive
        self.names = set(archive.namelist())

    def lines(self, member: str) -> list[str]:
        """The member's lines after its header (read as text, any line ending)."""
        with io.TextIOWrapper(self.archive.open(member), encoding="utf-8") as handle:
            return handle.read().splitlines()[1:]

    def table(self, member: str) -> pd.DataFrame:
        with self.archive.open(member) as handle:
            return read_csv(handle)

    def copy(self, member: str, dest: Path) -> None:
        dest.write_bytes(self.archive.read(member))


def _split_folds(folds: pd.DataFrame) -> tuple[pd.DataFrame, dict[int, int]]:
    """Training recordings renumbered 0..n-1, 20% of them re-marked as test (fold 1)."""
    kept = folds[folds["fold"] == 0].reset_index(drop=True)
    kept.loc[kept.sample(frac=0.2, random_state=0).index, "fold"] = 1
    new_ids = {int(old): new for new, old in enumerate(kept["rec_id"])}
    kept["rec_id"] = kept.index
    return kept, new_ids


def _first_field(line: str) -> tuple[int, str]:
    rec_id, _, rest = line.partition(",")
    return int(rec_id), rest


def _write_labels(path: Path, labels: list[tuple[int, str]], test_ids: set[int]) -> None:
    """Public label file: test recordings show `?`; unlabelled ones stand alone on a line."""
    with path.open("w") as out:
        out.write("rec_id,[labels]\n")
        for rec_id, species in labels:
            shown = "?" if rec_id in test_ids else species
            out.write(f"{rec_id},{shown}\n" if shown else f"{rec_id}\n")


def _answers(labels: list[tuple[int, str]], test_ids: set[int]) -> pd.DataFrame:
    rows = []
    for rec_id, species in labels:
        if rec_id in test_ids:
            present = {int(s) for s in species.split(",") if s}
            rows += [(rec_id * 100 + s, int(s in present)) for s in range(NUM_SPECIES)]
    return pd.DataFrame(rows, columns=["Id", "Probability"])


def _write_features(contest: _Contest, member: str, dest: Path, new_ids: dict[int, int]) -> None:
    with dest.open("w") as out:
        out.write(FEATURE_HEADER + "\n")
        for rec_id, rest in map(_first_field, contest.lines(member)):
            if rec_id in new_ids:
                out.write(f"{new_ids[rec_id]},{rest}\n")


def _relabel(contest: _Contest, new_ids: dict[int, int]) -> list[tuple[int, str]]:
    """Label lines of the kept recordings, in file order, under their new ids."""
    lines = contest.lines(f"{ESSENTIAL}/rec_labels_test_hidden.txt")
    return [(new_ids[rec], rest) for rec, rest in map(_first_field, lines) if rec in new_ids]


def _write_essential(
    contest: _Contest, public: Path, private: Path
) -> tuple[pd.Series, dict[int, int]]:
    """Essential files, answers and sample; returns the kept file names and the new ids."""
    essential = public / "essential_data"
    folds, new_ids = _split_folds(contest.table(f"{ESSENTIAL}/CVfolds_2.txt"))
    folds.to_csv(essential / "CVfolds_2.txt", index=False)
    test_ids = {int(i) for i in folds.loc[folds["fold"] == 1, "rec_id"]}

    filenames = contest.table(f"{ESSENTIAL}/rec_id2filename.txt")
    filenames = filenames[filenames["rec_id"].isin(list(new_ids))]
    filenames = filenames.assign(rec_id=filenames["rec_id"].map(new_ids))
    filenames.to_csv(essential / "rec_id2filename.txt", index=False)
    filenames[filenames["rec_id"].isin(test_ids)].to_csv(private / TEST_RECORDINGS, index=False)

    labels = _relabel(contest, new_ids)
    _write_labels(essential / "rec_labels_test_hidden.txt", labels, test_ids)
    _answers(labels, test_ids).to_csv(private / "answers.csv", index=False)
    pd.DataFrame(
        {
            "Id": [rec * 100 + s for rec in sorted(test_ids) for s in range(NUM_SPECIES)],
            "Probability": 0,
        }
    ).to_csv(public / "sample_submission.csv", index=False)
    contest.copy(f"{ESSENTIAL}/species_list.txt", essential / "species_list.txt")
    return filenames["filename"], new_ids


def _copy_media(contest: _Contest, public: Path, filenames: pd.Series) -> None:
    """Each kept recording's wav and images (segmentation examples only where they exist)."""
    wavs = public / "essential_data" / "src_wavs"
    wavs.mkdir()
    folders = (*IMAGE_FOLDERS, OPTIONAL_IMAGE_FOLDER)
    for folder in folders:
        (public / "supplemental_data" / folder).mkdir()
    for name in filenames:
        contest.copy(f"{ESSENTIAL}/src_wavs/{name}.wav", wavs / f"{name}.wav")
        for folder in folders:
            member = f"{SUPPLEMENTAL}/{folder}/{name}.bmp"
            if folder != OPTIONAL_IMAGE_FOLDER or member in contest.names:
                contest.copy(member, public / "supplemental_data" / folder / f"{name}.bmp")


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split of the contest's training fold (see the module docstring)."""
    (public / "essential_data").mkdir()
    supplemental = public / "supplemental_data"
    supplemental.mkdir()
    with zipfile.ZipFile(raw / ARCHIVE) as archive:
        contest = _Contest(archive)
        filenames, new_ids = _write_essential(contest, public, private)
        _copy_media(contest, public, filenames)
        for name in SHARED_FILES:
            contest.copy(f"{SUPPLEMENTAL}/{name}", supplemental / name)
        for name in FEATURE_TABLES:
            _write_features(contest, f"{SUPPLEMENTAL}/{name}", supplemental / name, new_ids)


def _train_recordings(public: Path) -> set[str]:
    """File names of the training-fold recordings of a public folder."""
    essential = public / "essential_data"
    folds = read_csv(essential / "CVfolds_2.txt")
    names = read_csv(essential / "rec_id2filename.txt")
    training = set(folds.loc[folds["fold"] == 0, "rec_id"])
    return set(names.loc[names["rec_id"].isin(training), "filename"].astype(str))


def _test_recordings(private: Path) -> set[str]:
    """File names of the test recordings of a private folder."""
    if not (private / TEST_RECORDINGS).is_file():
        raise FileNotFoundError(
            f"{private / TEST_RECORDINGS} is missing: this split was prepared before the "
            "test recordings' names were recorded; prepare it again"
        )
    return set(read_csv(private / TEST_RECORDINGS)["filename"].astype(str))


STATEMENT = """\
# MLSP 2013 Bird Classification Challenge

Ten-second audio recordings were made in the H. J. Andrews forest (Oregon) over two
years at 13 sites, with rain, wind, insects and several birds often calling at once.
For each test recording, predict the probability that each of 19 bird species is
present (a multi-label problem: a recording may contain none, one or several species).

## Data (read-only, in {data_dir})
`essential_data/`:
- `src_wavs/<filename>.wav`: the recordings (mono, 16 kHz, 16-bit, 10 seconds).
- `rec_id2filename.txt`: CSV `rec_id,filename` linking each recording id to its wav file
  (without the `.wav` extension).
- `CVfolds_2.txt`: CSV `rec_id,fold`; fold 0 is training, fold 1 is the test set.
- `rec_labels_test_hidden.txt`: header `rec_id,[labels]`, then one line per recording:
  the rec_id followed by the ids of the species present (e.g. `14,0,4` means species 0
  and 4), the rec_id alone when no species is present, or `rec_id,?` for test recordings.
- `species_list.txt`: CSV `class_id,code,species` naming the 19 species (ids 0 to 18).

`supplemental_data/` (optional features from a baseline pipeline):
- `spectrograms/`, `filtered_spectrograms/` (noise-filtered), `supervised_segmentation/`
  (segment outlines drawn on the spectrogram): one `<filename>.bmp` per recording;
  `segmentation_examples/`: hand-annotated spectrograms for a few training recordings.
- `segment_features.txt`: one 38-dimensional feature vector per detected segment
  (`rec_id,segment_id,features...`); `segment_rectangles.txt`: each segment's bounding
  box; `histogram_of_segments.txt`: one 100-bin histogram of segment clusters per
  recording. A recording may have no segments. All three files carry the header line
  `rec_id,[histogram of segment features]`; the columns after rec_id differ per file.
- `segment_mosaic.bmp`, `segment_clusters.bmp`: visualisations of all segments.

`sample_submission.csv`: a valid submission in the right format (it predicts 0 for
every pair).

The species, by id: 0 Brown Creeper, 1 Pacific Wren, 2 Pacific-slope Flycatcher,
3 Red-breasted Nuthatch, 4 Dark-eyed Junco, 5 Olive-sided Flycatcher, 6 Hermit Thrush,
7 Chestnut-backed Chickadee, 8 Varied Thrush, 9 Hermit Warbler, 10 Swainson's Thrush,
11 Hammond's Flycatcher, 12 Western Tanager, 13 Black-headed Grosbeak, 14 Golden-crowned
Kinglet, 15 Warbling Vireo, 16 MacGillivray's Warbler, 17 Steller's Jay, 18 Common
Nighthawk.

## Metric
Area under the ROC curve, computed once over all (test recording, species) pairs pooled
together (not averaged per species). Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test
recording and species (19 rows per test recording). `Id` is `rec_id * 100 + species`,
so species 2 of recording 1 has Id 102:

```
Id,Probability
100,0.02
101,0.9
102,0.13
```

`Probability` is the probability that the species is present, between 0 and 1. The Ids
in `sample_submission.csv` are exactly the ones expected. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="mlsp-2013-birds",
    name="MLSP 2013 Bird Classification Challenge",
    split="lite",
    metric="roc_auc",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="Id",
        columns=(Column("Probability", "probability"),),
        answers_file="answers.csv",
        sample_file="sample_submission.csv",
    ),
    raw_files=(ARCHIVE,),
    prepare=prepare,
    num_teams=81,
    thresholds=Thresholds(gold=0.93527, silver=0.90038, bronze=0.87372, median=0.86572),
    sample_score=0.5,
    statement=STATEMENT,
    dev_variant=DevVariant(
        prepare=public_as_raw(
            prepare,
            zips={
                ARCHIVE: {
                    ESSENTIAL: "essential_data",
                    SUPPLEMENTAL: "supplemental_data",
                }
            },
        ),
        train_ids=_train_recordings,
        test_ids=_test_recordings,
    ),
    checksums=Checksums(
        public={"sample_submission.csv": "6c0430ab5959d2e718911c3bd7a26a2f"},
        private={"answers.csv": "f40c0692caff26ca8045b64109371144"},
    ),
)
