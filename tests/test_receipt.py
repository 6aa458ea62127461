"""`mle-gym receipt RUN`: a training run on the development variant gets a passing receipt
whose manifest figures are the files' own; a planted test id, an edited file or a variant
carved differently since the run fails it; a run on the test data is an evaluation run."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from mle_gym.data import CompetitionDirs
from mle_gym.data.checksums import md5_of
from mle_gym.data.dev_variant import require_dev_variant
from tests.batch_support import mle_gym
from tests.conftest import require_bwrap

ID = "sklearn-digits"


@pytest.fixture(scope="module")
def runs(digits_home: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A cache of its own (the tests change its variant), one scripted episode on the
    development variant with the dense reward and one on the test data, each a batch run."""
    require_bwrap()
    root = tmp_path_factory.mktemp("receipt")
    home = root / "cache"
    shutil.copytree(digits_home, home, copy_function=shutil.copy)
    dev, test = root / "dev", root / "test"
    common = ("run", ID, "--policy", "scripted", "--seeds", "1")
    mle_gym(*common, "--run-dir", str(dev), "--data", "dev", "--reward-mode", "dense", home=home)
    mle_gym(*common, "--run-dir", str(test), home=home)
    return home, dev, test


@pytest.fixture
def home(runs, tmp_path: Path) -> Path:
    """A copy of the runs' cache, for a test to change."""
    copy = tmp_path / "cache"
    shutil.copytree(runs[0], copy, copy_function=shutil.copy)
    return copy


def _receipt(run: Path, home: Path, *options: str):
    return mle_gym("receipt", str(run), *options, home=home, ok=False)


def test_a_dev_run_gets_a_passing_receipt(runs) -> None:
    home, dev, _ = runs
    shown = _receipt(dev, home)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    out = " ".join(shown.stdout.split())
    assert f"{ID}/seed-0: done, development variant, manifest md5" in out
    assert "used by the run: this very carving" in out and "RECEIPT OK" in out
    receipt = json.loads(_receipt(dev, home, "--json").stdout)
    assert receipt["verdict"] == "pass" and receipt["kind"] == "batch"
    [variant] = receipt["variants"]
    manifest = variant["manifest"]
    # the figures are the files' own: every md5, and the id counts of the two parts
    stored = CompetitionDirs.of(ID, home).root / "dev"
    assert (
        manifest["files"] == {name: md5_of(stored / name) for name in manifest["files"]}
        and "public/train.csv" in manifest["files"]
    )
    with (stored / "public" / "train.csv").open() as handle:
        assert manifest["train_ids"] == sum(1 for _ in csv.DictReader(handle))
    assert manifest["test_ids"] > 0 and manifest["seed"] is not None and manifest["rule"]
    assert variant["check"] == {"ok": True, "error": None} and variant["used"]["match"] == "same"
    [episode] = receipt["episodes"]
    assert episode["dev_variant"]["manifest_md5"] == manifest["manifest_md5"]


def test_a_planted_test_id_fails_the_receipt(runs, home: Path) -> None:
    """A real test id added to the development answers (the manifest left as it was)."""
    dirs = CompetitionDirs.of(ID, home)
    with (dirs.private / "test.csv").open() as handle:
        real = next(csv.DictReader(handle))["id"]
    answers = dirs.root / "dev" / "private" / "test.csv"
    with answers.open() as handle:
        header = next(csv.reader(handle))
    with answers.open("a") as handle:
        csv.writer(handle).writerow([real if c == "id" else "0" for c in header])
    failed = _receipt(runs[1], home)
    assert failed.returncode == 1
    out = " ".join(failed.stdout.split())
    assert "1 dev id(s) are real test ids" in out and "RECEIPT FAILED" in out


def test_an_edited_dev_file_fails_the_receipt(runs, home: Path) -> None:
    train = CompetitionDirs.of(ID, home).root / "dev" / "public" / "train.csv"
    train.write_text(train.read_text().replace(",0\n", ",1\n", 1))
    failed = _receipt(runs[1], home, "--json")
    assert failed.returncode == 1
    receipt = json.loads(failed.stdout)
    assert receipt["verdict"] == "fail"
    assert "development files differ from the manifest" in receipt["variants"][0]["check"]["error"]


def test_a_variant_carved_again_is_told_from_the_one_used(runs, home: Path) -> None:
    """Carved again the same way it passes, said so; edited with its manifest made to match
    (so the fresh check alone passes) it is another variant than the run's, and fails."""
    require_dev_variant(ID, home, force=True)
    again = _receipt(runs[1], home)
    assert again.returncode == 0, again.stdout
    assert "the same split, carved again since" in " ".join(again.stdout.split())
    dev = CompetitionDirs.of(ID, home).root / "dev"
    train = dev / "public" / "train.csv"
    train.write_text(train.read_text().replace(",0\n", ",1\n", 1))
    manifest = json.loads((dev / "manifest.json").read_text())
    manifest["files"]["public/train.csv"] = md5_of(train)
    (dev / "manifest.json").write_text(json.dumps(manifest))
    failed = _receipt(runs[1], home, "--json")
    assert failed.returncode == 1
    variant = json.loads(failed.stdout)["variants"][0]
    assert variant["check"]["ok"] and variant["used"]["match"] == "different"


def test_a_test_data_run_is_an_evaluation_run(runs) -> None:
    home, _, test = runs
    shown = _receipt(test, home)
    assert shown.returncode == 3
    out = " ".join(shown.stdout.split())
    assert f"{ID}/seed-0: done, TEST data (evaluation)" in out
    assert "EVALUATION DATA: 1 episode(s) ran on the competitions' test data" in out
    receipt = json.loads(_receipt(test, home, "--json").stdout)
    assert receipt["verdict"] == "evaluation" and receipt["variants"] == []


def test_a_folder_that_is_no_run_is_an_error(tmp_path: Path, mle_home: Path) -> None:
    refused = _receipt(tmp_path, mle_home)
    assert refused.returncode == 2 and "is not a run made by `mle-gym run`" in refused.stderr


def test_a_damaged_or_missing_manifest_fails_the_receipt(runs, home: Path) -> None:
    manifest = CompetitionDirs.of(ID, home).root / "dev" / "manifest.json"
    manifest.write_text("{not json")
    damaged = _receipt(runs[1], home, "--json")
    assert damaged.returncode == 1
    variant = json.loads(damaged.stdout)["variants"][0]
    assert not variant["check"]["ok"] and variant["used"]["match"] == "gone"
    manifest.unlink()
    missing = _receipt(runs[1], home)
    assert missing.returncode == 1 and "has no development variant" in missing.stdout
