"""Lyft 3D Object Detection for Autonomous Vehicles (id `3d-object-detection-for-autonomous-
vehicles`; a module name cannot start with a digit): 3D boxes from lidar and cameras.

Kaggle's test labels were never released, so MLE-bench holds out 20% of the 180 driving
logs (`train_test_split` over the tokens of `log.json`, `random_state=0`); samples follow
their scene (Lyft's scene tokens are the log tokens, which MLE-bench relies on), and every
nuScenes-style table follows its samples: `sample_data`, `ego_pose` (one entry per
sample_data, as listed), `calibrated_sensor` (each once, in order of first use), `scene`,
and for train only `sample_annotation` and `instance`. Tables without split (attribute,
category, sensor, visibility) and the one map raster go to both sides. MLE-bench's
`map.json` lists the test logs on both sides (a shallow-copy slip; harmless, since the test
logs are public in `test_data/log.json`); we write the same bytes. Images and lidar sweeps
(about 85 GB) are placed by hard link. The JSON tables are loaded whole (the largest,
`sample_annotation.json`, is a few hundred MB) and membership is tested with sets, not by
scanning arrays as MLE-bench does.

Grading: `mle_gym.grading.metrics.lyft_3d_map`, Lyft's per-sample 3D mAP averaged over
samples and the IoU thresholds 0.5-0.95, equal to MLE-bench's. Deviations
(docs/fidelity.md): every test sample exactly once, non-finite numbers refused with the
reason (MLE-bench crashes on NaN coordinates and ranks NaN confidences arbitrarily).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.hardlink_helpers import place_file, place_files
from mle_gym.competitions.holdout import holdout
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    SubmissionFormat,
    Thresholds,
)

#: Tables the same on both sides, placed unchanged.
SHARED_TABLES = ("attribute.json", "category.json", "sensor.json", "visibility.json")
MAP = "map_raster_palo_alto.png"
#: Raw folder and public folder stem of each sample_data file format.
FOLDERS = {"jpeg": "images", "bin": "lidar"}


def _load(raw: Path, table: str) -> Any:
    with open(raw / "train_data" / table) as handle:
        return json.load(handle)


def _dump(rows: Any, public: Path, side: str, table: str) -> None:
    """One table as MLE-bench writes it (json.dump defaults)."""
    with open(public / f"{side}_data" / table, "w") as handle:
        json.dump(rows, handle)


def _split(rows: list[dict], key: str, train: set, test: set, what: str) -> tuple[list, list]:
    """Rows whose `key` is in `train` / in `test`; any other row is an error."""
    sides: tuple[list, list] = ([], [])
    for row in rows:
        if row[key] in train:
            sides[0].append(row)
        elif row[key] in test:
            sides[1].append(row)
        else:
            raise ValueError(f"{what} {row[key]} belongs to neither split")
    return sides


def _with_confidence(boxes: str) -> str:
    """`x y z w l h yaw class` groups, each given the confidence `1.0` in front."""
    tokens = boxes.split(" ")
    assert len(tokens) % 8 == 0, f"expected 8 tokens per box, got {len(tokens)}"
    return " ".join(" ".join(["1.0", *tokens[i : i + 8]]) for i in range(0, len(tokens), 8))


def _first_uses(data: list[dict], key: str, table: list[dict]) -> list[dict]:
    """Rows of `table` referenced by `data[key]`, each once, in order of first use."""
    by_token = {row["token"]: row for row in table}
    seen = dict.fromkeys(datum[key] for datum in data)
    return [by_token[token] for token in seen]


def _sensor_files(raw: Path, public: Path, data: list[dict], test: set) -> Iterator:
    """(raw file, placed file) of every image and lidar sweep, each file once."""
    placed: set[Path] = set()
    for datum in data:
        stem = FOLDERS[datum["fileformat"]]
        name = Path(datum["filename"]).name
        side = "test" if datum["sample_token"] in test else "train"
        target = public / f"{side}_{stem}" / name
        if target not in placed:
            placed.add(target)
            yield raw / f"train_{stem}" / name, target


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split (see the module docstring)."""
    for side in ("train", "test"):
        for folder in ("data", "maps", "images", "lidar"):
            (public / f"{side}_{folder}").mkdir(parents=True, exist_ok=True)

    logs = _load(raw, "log.json")
    log_ids = [log["token"] for log in logs]
    train_logs, test_logs = holdout(log_ids, 0.2)
    train_set, test_set = set(train_logs), set(test_logs)
    _dump([log for log in logs if log["token"] in train_set], public, "train", "log.json")
    _dump([log for log in logs if log["token"] in test_set], public, "test", "log.json")

    samples = _split(_load(raw, "sample.json"), "scene_token", train_set, test_set, "sample")
    for side, rows in zip(("train", "test"), samples, strict=True):
        _dump(rows, public, side, "sample.json")
    train_samples = {s["token"] for s in samples[0]}
    test_samples = {s["token"] for s in samples[1]}

    labels = read_csv(raw / "train.csv")
    labels[labels["Id"].isin(train_samples)].to_csv(public / "train.csv", index=False)
    answers = labels[labels["Id"].isin(test_samples)]
    answers = answers.assign(PredictionString=answers["PredictionString"].map(_with_confidence))
    answers.to_csv(private / "test.csv", index=False)
    answers[["Id"]].assign(PredictionString="").to_csv(
        public / "sample_submission.csv", index=False
    )

    data = _load(raw, "sample_data.json")
    data_sides = _split(data, "sample_token", train_samples, test_samples, "sample_data")
    sensors, poses = _load(raw, "calibrated_sensor.json"), _load(raw, "ego_pose.json")
    pose_by_token = {pose["token"]: pose for pose in poses}
    for side, rows in zip(("train", "test"), data_sides, strict=True):
        _dump(rows, public, side, "sample_data.json")
        used = _first_uses(rows, "calibrated_sensor_token", sensors)
        _dump(used, public, side, "calibrated_sensor.json")
        _dump([pose_by_token[d["ego_pose_token"]] for d in rows], public, side, "ego_pose.json")

    for side in ("train", "test"):
        place_file(raw / "train_maps" / MAP, public / f"{side}_maps" / MAP)
        for table in SHARED_TABLES:
            place_file(raw / "train_data" / table, public / f"{side}_data" / table)
        # MLE-bench's map.json names the test logs on both sides (module docstring).
        (the_map,) = _load(raw, "map.json")
        _dump([{**the_map, "log_tokens": test_logs}], public, side, "map.json")

    scenes = _split(_load(raw, "scene.json"), "log_token", train_set, test_set, "scene")
    for side, rows in zip(("train", "test"), scenes, strict=True):
        _dump(rows, public, side, "scene.json")

    annotations = _load(raw, "sample_annotation.json")
    train_annotations, test_annotations = _split(
        annotations, "sample_token", train_samples, test_samples, "sample_annotation"
    )
    _dump(train_annotations, public, "train", "sample_annotation.json")
    instances = _split(
        _load(raw, "instance.json"),
        "token",
        {a["instance_token"] for a in train_annotations},
        {a["instance_token"] for a in test_annotations},
        "instance",
    )
    _dump(instances[0], public, "train", "instance.json")
    del annotations, train_annotations, test_annotations

    place_files(_sensor_files(raw, public, data, test_samples), "images and lidar sweeps")


STATEMENT = """\
# Lyft 3D Object Detection for Autonomous Vehicles

Lyft's self-driving cars recorded drives around Palo Alto with lidar and seven cameras.
Find the objects around the car in each sample (a moment of a drive, about 5 per second):
for each, a 3D box in world coordinates and its class.

## Data (read-only, in {data_dir})
The tables follow the nuScenes format (JSON lists of records linked by `token` fields):
a `log` is one drive, its `scene` lists the samples, each `sample` has `sample_data`
(one image per camera and one or more lidar sweeps, each with its `ego_pose`, the car's
position, and `calibrated_sensor`, the sensor's mounting).
- `train_data/*.json`: the training tables (about 144 drives, 18,000 samples), including
  `sample_annotation.json` (every labelled box, with `translation`, `size` as width,
  length, height, and `rotation` as a quaternion, in world coordinates) and
  `instance.json` (objects tracked across samples); `category.json` names the 9 classes:
  car, pedestrian, animal, other_vehicle, bus, motorcycle, truck, emergency_vehicle,
  bicycle. `map.json` lists the test drives on both sides (harmless).
- `train.csv`: one row per training sample: `Id` (the sample token) and
  `PredictionString`, its boxes as `center_x center_y center_z width length height yaw
  class_name` groups.
- `test_data/*.json`: the same tables for the test drives (about 36 drives, 4,500
  samples), without annotations or instances.
- `train_lidar/`, `test_lidar/`: lidar sweeps, `.bin` files of float32 values, 5 per point
  (x, y, z, intensity, ring index) in the sensor's frame.
- `train_images/`, `test_images/`: camera images (`.jpeg`).
- `train_maps/`, `test_maps/`: the semantic map raster of the area (the same file).
- `sample_submission.csv`: a valid submission with every test sample and no boxes.

## Metric
For each test sample and each IoU threshold 0.5, 0.55, ..., 0.95: for each class present
in the sample's answers, predictions of that class are taken by confidence (highest first);
each is compared with the answer box it overlaps most and is a hit if that IoU is above the
threshold and the box was not already found, else a false positive; the class's average
precision is the area under the precision envelope (VOC style), and a class you did not
predict in that sample scores 0. The sample's value is the mean over its classes. The score
is the mean over all samples and thresholds. 3D IoU = overlap of the ground footprints
(rotated by yaw) times overlap of the vertical extents, divided by the union of the two
volumes. Predicted classes that a sample does not contain are ignored. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test sample:
`Id` and `PredictionString`, groups of `confidence center_x center_y center_z width length
height yaw class_name` separated by single spaces (nine tokens per box; leave the cell
empty for no boxes):

```
Id,PredictionString
<sample token>,0.9 2742.15 673.16 -18.65 1.834 4.609 1.648 2.619 car
<another sample token>,
```

where a sample token is the 64-hex-character `token` of a test sample.

Numbers must be finite and sizes positive. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    extras=("detection",),
    id="3d-object-detection-for-autonomous-vehicles",
    name="Lyft 3D Object Detection for Autonomous Vehicles",
    split="high",
    metric="lyft_3d_map",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="Id",
        columns=(Column("PredictionString", "text"),),
        answers_file="test.csv",
    ),
    raw_files=(
        "train.csv",
        "train_data/*.json",
        f"train_maps/{MAP}",
        "train_images/*.jpeg",
        "train_lidar/*.bin",
    ),
    prepare=prepare,
    num_teams=546,
    thresholds=Thresholds(gold=0.139, silver=0.053, bronze=0.046, median=0.042),
    sample_score=0.0,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "4057929857ceb634ecb3875f93ac1688",
            "train.csv": "687b1288965d6efa35ea29c3adff5557",
        },
        private={"test.csv": "1972edf2739f010c260822761b94b1df"},
    ),
)
