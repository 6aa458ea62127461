"""A batch episode's checkpoint store stays bounded (the newest few checkpoints and the
contents they name), and a rerun picks the newest intact checkpoint, or none with
`resume_from="start"`, keeping or clearing the episode's folder to match."""

from __future__ import annotations

import json
import time
from pathlib import Path

from mle_gym.batch.checkpoints import lineage, resume_point
from mle_gym.batch.runner import resumed
from mle_gym.batch.spec import BatchSpec
from mle_gym.checkpoints.retention import intact, newest, prune
from mle_gym.checkpoints.store import CHECKSUM, FORMAT, CheckpointStore
from mle_gym.runs.layout import CHECKPOINTS_DIR, KEPT_ON_RESUME, TRAJECTORY_FILE
from mle_gym.runs.store import RunStore


def _blob(store: CheckpointStore, content: bytes) -> str:
    scratch = store.root / f".scratch-{len(content)}"
    store.root.mkdir(parents=True, exist_ok=True)
    scratch.write_bytes(content)
    return store.add_blob(scratch)[0]


def _checkpoint(store: CheckpointStore, name: str, steps: int, *contents: bytes) -> Path:
    """A checkpoint whose workspace holds `contents` and whose meta names a snapshot blob."""
    files = [
        {"path": f"f{i}", "type": "file", "mode": 0o644, "size": len(c), "sha256": _blob(store, c)}
        for i, c in enumerate(contents)
    ]
    snapshot = _blob(store, f"snapshot {steps}".encode())
    meta = {"steps": steps, "snapshots": {"kept": [{"file": "s.csv", "sha256": snapshot}]}}
    manifest = {"format": FORMAT, "created": time.time(), "meta": meta,
                "places": {"/home/code": files}, "logs": []}  # fmt: skip
    return store.write(name, manifest)


def test_prune_keeps_the_newest_checkpoints_and_the_blobs_they_name(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "store")
    _checkpoint(store, "a", 2, b"old only", b"shared")
    kept = [_checkpoint(store, "b", 4, b"shared"), _checkpoint(store, "c", 6, b"shared", b"new")]
    broken = store.root / "killed-mid-write"  # a capture killed before its checksum
    broken.mkdir()
    (broken / "manifest.json").write_text("{}")
    (store.root / ".snapshot-left").write_bytes(b"scratch")

    removed = prune(store, 2)

    assert sorted(p.name for p in removed) == ["a", "killed-mid-write"]
    assert [folder for folder, _ in intact(store)] == kept and newest(store) == kept[-1]
    blobs = {p.read_bytes() for p in store.blobs.glob("*/*")}
    assert blobs == {b"shared", b"new", b"snapshot 4", b"snapshot 6"}
    assert sorted(p.name for p in store.root.iterdir()) == ["b", "blobs", "c"]


def test_a_rerun_resumes_from_the_newest_intact_checkpoint_or_from_the_start(
    tmp_path: Path,
) -> None:
    spec = BatchSpec(("sklearn-digits",), (0,), "scripted")
    task = spec.tasks()[0]
    runs = RunStore(tmp_path / "run")
    directory = runs.episode_dir(task)
    assert resumed(spec, runs, task).resume_checkpoint is None  # nothing to resume from
    store = CheckpointStore(directory / CHECKPOINTS_DIR)
    _checkpoint(store, "older", 2, b"x")
    newer = _checkpoint(store, "newer", 4, b"y")
    damaged = _checkpoint(store, "damaged", 6, b"z")
    (damaged / CHECKSUM).write_text("0" * 64 + "\n")
    (directory / TRAJECTORY_FILE).write_text(json.dumps({"event": "reset"}) + "\n")
    (directory / "report.json").write_text("{}")

    again = resumed(spec, runs, task)
    assert again == resume_point(task, directory) and again.resume_checkpoint == newer.name
    runs.begin(again, KEPT_ON_RESUME)
    assert sorted(p.name for p in directory.iterdir()) == sorted(
        ["checkpoints", "trajectory.jsonl", "task.json", "status.json"]
    )
    assert json.loads((directory / "task.json").read_text())["resume_checkpoint"] == "newer"

    fresh = BatchSpec(("sklearn-digits",), (0,), "scripted", resume_from="start")
    assert resumed(fresh, runs, task) == task
    runs.begin(task)
    assert sorted(p.name for p in directory.iterdir()) == ["status.json", "task.json"]


def test_the_lineage_splits_the_episode_into_segments_at_each_resume() -> None:
    first = {"checkpoint": "/s/a", "id": "a", "steps": 6, "seconds": 60.0, "parent": None}
    second = {"checkpoint": "/s/b", "id": "b", "steps": 9, "seconds": 100.0, "parent": first}
    assert lineage(None, 5, 10.0) is None
    assert lineage(second, 12, 130.5) == {
        "checkpoints": [
            {"id": "a", "steps": 6, "seconds": 60.0},
            {"id": "b", "steps": 9, "seconds": 100.0},
        ],
        "segments": [
            {"from": None, "steps": 6, "seconds": 60.0},
            {"from": "a", "steps": 3, "seconds": 40.0},
            {"from": "b", "steps": 3, "seconds": 30.5},
        ],
        "steps": 12,
        "seconds": 130.5,
    }
