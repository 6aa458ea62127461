"""place_images: flat and label-filed layouts, hard links, and folders made for no files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mle_gym.competitions.held_out_images import place_images


@pytest.fixture
def source(tmp_path: Path) -> Path:
    for label, name in (("cat", "a.png"), ("cat", "b.png"), ("dog", "c.png")):
        (tmp_path / "raw" / label).mkdir(parents=True, exist_ok=True)
        (tmp_path / "raw" / label / name).write_text(name)
    return tmp_path / "raw"


def test_label_folders_kept_or_dropped(source: Path, tmp_path: Path) -> None:
    names, labels = ["a.png", "c.png"], ["cat", "dog"]
    place_images(source, tmp_path / "train", names, labels, keep_labels=True)
    place_images(source, tmp_path / "test", ["b.png"], ["cat"])
    kept = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.glob("train/*/*"))
    assert kept == ["train/cat/a.png", "train/dog/c.png"]
    assert [p.name for p in (tmp_path / "test").iterdir()] == ["b.png"]
    assert (tmp_path / "test" / "b.png").read_text() == "b.png"


def test_flat_source_is_hard_linked(tmp_path: Path) -> None:
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "x.jpg").write_bytes(b"\xff\xd8")
    place_images(tmp_path / "raw", tmp_path / "out", ["x.jpg"])
    assert os.path.samefile(tmp_path / "raw" / "x.jpg", tmp_path / "out" / "x.jpg")


def test_no_names_still_makes_the_folder(tmp_path: Path) -> None:
    place_images(tmp_path, tmp_path / "empty", [])
    assert (tmp_path / "empty").is_dir() and not any((tmp_path / "empty").iterdir())
