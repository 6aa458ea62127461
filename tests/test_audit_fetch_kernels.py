"""`mle-gym audit fetch-kernels`: MLE-bench's per-competition notebook lists, and without
Kaggle credentials a message saying how to get them (with them it calls Kaggle's client,
which this machine cannot reach)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mle_gym.cli import main
from mle_gym.data.kernels import kernel_refs
from tests.prerequisites import require_shared


def test_the_lists_are_read_from_an_mlebench_checkout() -> None:
    lists = require_shared("mlebench")
    refs = kernel_refs(lists, "spaceship-titanic")
    assert len(refs) == 50 and all(ref.count("/") == 1 for ref in refs)
    assert refs == kernel_refs(lists / "mlebench" / "competitions", "spaceship-titanic")
    with pytest.raises(FileNotFoundError, match=r"no kernels\.txt for not-a-competition"):
        kernel_refs(lists, "not-a-competition")


def test_without_credentials_it_says_how(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    lists = require_shared("mlebench")
    for name in ("KAGGLE_USERNAME", "KAGGLE_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KAGGLE_CONFIG_DIR", str(tmp_path / "no-kaggle"))
    out = tmp_path / "kernels"
    code = main(["audit", "fetch-kernels", "spaceship-titanic", "--lists", str(lists),
                 "--out", str(out)])  # fmt: skip
    said = " ".join(capsys.readouterr().out.split())
    assert code == 2 and not out.exists()
    assert "50 notebooks MLE-bench lists for 'spaceship-titanic'" in said
    assert "kaggle.json" in said and "kaggle kernels pull" in said
