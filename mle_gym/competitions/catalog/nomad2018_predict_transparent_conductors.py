"""Nomad2018 Predicting Transparent Conductors: two material properties, graded by RMSLE.

MLE-bench holds out 10% of Kaggle's labelled materials, renumbers each side's ids from 1,
and copies every material's geometry file under its new id.

Its development variant is that prepare run on the public training table and geometries,
zipped back into Kaggle's archives. Both parts come out renumbered from 1 again, so their
materials are traced to the public training table by their rows' content (`row_digests`).
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_ids import row_digests
from mle_gym.competitions.dev_rules import public_as_raw
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import np, pd, train_test_split

TARGETS = ("formation_energy_ev_natom", "bandgap_energy_ev")
#: MLE-bench's sample submission: the same guess for every material.
SAMPLE_GUESS = {"formation_energy_ev_natom": 0.1779, "bandgap_energy_ev": 1.8892}
#: A geometry file inside train.zip: train/<original id>/<name>.xyz
_GEOMETRY = re.compile(r"train/([^/]+)/[^/]+\.xyz")


def _renumber(frame: pd.DataFrame) -> dict[int, int]:
    """Give the rows ids 1..n in their current order; return old id -> new id."""
    new_ids = np.arange(1, len(frame) + 1)
    mapping = dict(zip(frame["id"].tolist(), new_ids.tolist(), strict=True))
    frame["id"] = new_ids
    return mapping


def _copy_geometries(archive: Path, public: Path, ids: dict[str, dict[int, int]]) -> None:
    """Write each material's .xyz as <side>/<new id>/geometry.xyz, in sorted member order."""
    with zipfile.ZipFile(archive) as zf:
        for name in sorted(zf.namelist()):
            match = _GEOMETRY.fullmatch(name)
            if match is None:
                continue
            old_id = int(match.group(1))
            for side, mapping in ids.items():
                if old_id in mapping:
                    folder = public / side / str(mapping[old_id])
                    folder.mkdir(parents=True, exist_ok=True)
                    (folder / "geometry.xyz").write_bytes(zf.read(name))


def prepare(raw: Path, public: Path, private: Path) -> None:
    """Split train.csv 90/10 (random_state=0), renumber ids, copy the geometry files."""
    with zipfile.ZipFile(raw / "train.csv.zip") as zf, zf.open("train.csv") as handle:
        materials = read_csv(handle)
    train, test = train_test_split(materials, test_size=0.1, random_state=0)
    ids = {"train": _renumber(train), "test": _renumber(test)}

    train.to_csv(public / "train.csv", index=False)
    test.to_csv(private / "test.csv", index=False)
    test.drop(columns=list(TARGETS)).to_csv(public / "test.csv", index=False)
    _copy_geometries(raw / "train.zip", public, ids)

    sample = pd.DataFrame({"id": test["id"], **SAMPLE_GUESS})
    sample.to_csv(public / "sample_submission.csv", index=False)


STATEMENT = """\
# Nomad2018 Predicting Transparent Conductors

Transparent conductors combine electrical conductivity with transparency to light. The
materials here are sesquioxides (Al_x Ga_y In_z)_2 O_3 with x + y + z = 1. For each
material, predict two properties computed with density-functional theory: its formation
energy per atom (how stable it is) and its band gap (how transparent it is).

## Data (read-only, in {data_dir})
- `train.csv`: materials with both targets. Columns:
  - `id`: the material's number (1, 2, ...).
  - `spacegroup`: the crystal's space group (symmetry), an integer.
  - `number_of_total_atoms`: atoms in the unit cell.
  - `percent_atom_al`, `percent_atom_ga`, `percent_atom_in`: the fractions x, y, z of the
    metal sites held by aluminium, gallium and indium.
  - `lattice_vector_1_ang`, `lattice_vector_2_ang`, `lattice_vector_3_ang`: lengths of
    the unit cell's vectors, in angstroms.
  - `lattice_angle_alpha_degree`, `lattice_angle_beta_degree`,
    `lattice_angle_gamma_degree`: the angles between them, in degrees.
  - `formation_energy_ev_natom`: target, formation energy in eV per atom.
  - `bandgap_energy_ev`: target, band gap in eV.
- `test.csv`: the materials to predict, same columns without the two targets.
- `train/<id>/geometry.xyz` and `test/<id>/geometry.xyz`: each material's structure: a
  few `#` comment lines, three `lattice_vector x y z` lines, then one `atom x y z element`
  line per atom (Cartesian coordinates in angstroms); `<id>` is the `id` of the matching
  CSV row.
- `sample_submission.csv`: a valid submission predicting the same two values everywhere.

## Metric
For each target, the root mean squared logarithmic error
`sqrt(mean((log(1 + predicted) - log(1 + true))^2))`; the score is the mean of the two.
Lower is better. Predictions must be greater than -1.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per material in
`test.csv`:

```
id,formation_energy_ev_natom,bandgap_energy_ev
1,0.1779,1.8892
2,0.2034,2.4101
```

Both targets must be numbers. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="nomad2018-predict-transparent-conductors",
    name="Nomad2018 Predicting Transparent Conductors",
    split="lite",
    metric="rmsle",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="id",
        columns=tuple(Column(name, "number") for name in TARGETS),
        answers_file="test.csv",
    ),
    raw_files=("train.zip", "train.csv.zip"),
    prepare=prepare,
    num_teams=879,
    thresholds=Thresholds(gold=0.05589, silver=0.06229, bronze=0.06582, median=0.06988),
    sample_score=0.21174,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "f6ca859f7a81041cad0594cf31f171d9",
            "test.csv": "be4e478c19d962eae8ffde95163fe8b1",
            "train.csv": "27ef5faad359d2dd4ac872fab5c9010d",
        },
        private={"test.csv": "fc17cf7adf422874ce65f2b1b1265d98"},
    ),
    dev_variant=DevVariant(
        prepare=public_as_raw(
            prepare,
            zips={"train.csv.zip": {"train.csv": "train.csv"}, "train.zip": {"train": "train"}},
        ),
        train_ids=row_digests("train.csv"),
        test_ids=row_digests("test.csv"),
    ),
)
