"""What can be checked of Kaggle downloads without Kaggle: the advice, and progress reports."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from mle_gym.competitions import get_competition
from mle_gym.data import CompetitionDirs, prepare
from mle_gym.data.kaggle_download import KaggleUnavailable, _GrowthWatcher


def test_missing_credentials_say_what_to_do_and_leave_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KAGGLE_USERNAME", raising=False)
    monkeypatch.setenv("KAGGLE_CONFIG_DIR", str(tmp_path / "no-kaggle"))
    with pytest.raises(KaggleUnavailable) as info:
        prepare(get_competition("aerial-cactus-identification"), root=tmp_path)
    text = str(info.value)
    assert "kaggle.json" in text and "competitions/aerial-cactus-identification/rules" in text
    assert "--raw" in text and "mle-gym[kaggle]" in text
    dirs = CompetitionDirs.of("aerial-cactus-identification", tmp_path)
    assert not dirs.is_prepared() and not dirs.raw.exists()


def test_growth_watcher_reports_a_growing_download(tmp_path: Path) -> None:
    reports: list[tuple[int, int | None]] = []

    def write() -> None:
        with open(tmp_path / "c.zip.part", "wb") as handle:
            for _ in range(4):
                handle.write(b"x" * 1000)
                handle.flush()
                time.sleep(0.3)

    with _GrowthWatcher(tmp_path, 4000, lambda done, total: reports.append((done, total))):
        writer = threading.Thread(target=write)
        writer.start()
        writer.join()
    assert reports[-1] == (4000, 4000)
    sizes = [done for done, _ in reports]
    assert sizes == sorted(sizes) and len(set(sizes)) >= 2
