"""The development variant of every competition, on its raw-file fixture (sklearn-digits on the
data scikit-learn ships, spaceship-titanic also on its real Kaggle files): carved
deterministically from public/ alone, a clean split of the public training ids, laid out like
the public test, its sample submission graded on its own answers, and an episode of it scoring
validate's development grade with the real private/ emptied."""

from __future__ import annotations

import gzip
import json
import math
import shutil
import threading
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest

from mle_gym.competitions import Competition, all_competitions, get_competition
from mle_gym.data import CompetitionDirs, dev_variant, prepare
from mle_gym.data.cache import NotPrepared
from mle_gym.data.dev_variant import (
    DevDirs,
    DevVariantLeak,
    check_dev_variant,
    require_dev_variant,
)
from mle_gym.envs.config import EnvConfig
from mle_gym.envs.episode import Episode
from mle_gym.grading import grade
from tests.fixtures.prepared import prepared_fixture
from tests.fixtures.raw import generator_for

WITH_FIXTURES = [c for c in all_competitions() if generator_for(c) is not None]
#: The one competition without a raw-file fixture: its data ships with scikit-learn.
BUNDLED = "sklearn-digits"


def _ids(path: Path, column: str) -> set[str]:
    return set(pd.read_csv(path, usecols=[column], dtype=str, keep_default_na=False)[column])


def _answer_ids(comp: Competition, private: Path) -> set[str]:
    fmt = comp.submission
    if fmt.load_answers is not None:
        return set(fmt.load_answers(private)[fmt.id_column].astype(str))
    return _ids(private / fmt.answers_file, fmt.id_column)


def _headers(folder: Path) -> dict[str, list[str]]:
    return {p.name: list(pd.read_csv(p, nrows=0).columns) for p in sorted(folder.glob("*.csv"))}


class _YearOnClock:
    """`time` as zipfile and gzip read it, a year on for anything written from `since`: an
    archive member stamped with its time of writing (or its file's) would then differ
    between two carvings, however close together they ran."""

    YEAR = 365 * 86400

    def __init__(self, since: float) -> None:
        self.since = since

    def time(self) -> float:
        return time.time() + self.YEAR

    def localtime(self, secs: float | None = None) -> time.struct_time:
        if secs is None:
            secs = self.time()
        elif secs >= self.since:
            secs += self.YEAR
        return time.localtime(secs)


def _carve_a_year_on(comp: Competition, root: Path) -> DevDirs:
    """Carve again with archives' clocks moved on (see _YearOnClock)."""
    with pytest.MonkeyPatch.context() as patch:
        clock = _YearOnClock(time.time())
        patch.setattr(zipfile, "time", clock)
        patch.setattr(gzip, "time", clock)
        return require_dev_variant(comp, root, force=True)


def assert_clean_variant(comp: Competition, main: CompetitionDirs) -> None:
    """Deterministic (to the byte, whenever it runs), a clean split, laid out like the
    public test, its sample graded."""
    fmt = comp.submission
    root = main.root.parent
    dev = require_dev_variant(comp, root)
    first = json.loads(dev.manifest.read_text())
    again = json.loads(_carve_a_year_on(comp, root).manifest.read_text())
    assert first["files"] == again["files"], "carving twice gave different files"
    assert first["train_ids"] == again["train_ids"] and first["test_ids"] == again["test_ids"]

    rule = comp.dev_variant
    train_ids = rule.train_ids or (lambda folder: _ids(folder / "train.csv", fmt.id_column))
    test_ids = rule.test_ids or (lambda folder: _answer_ids(comp, folder))
    public_train, train = train_ids(main.public), train_ids(dev.public)
    test = test_ids(dev.private)
    assert train and test
    assert not train & test
    assert train | test <= public_train
    assert not (train | test) & test_ids(main.private)
    assert set(first["train_ids"]) == train and set(first["test_ids"]) == test

    assert sorted(p.name for p in dev.public.iterdir()) == sorted(
        p.name for p in main.public.iterdir()
    )
    assert _headers(dev.public) == _headers(main.public)
    assert all((dev.root / name).is_file() for name in first["files"])
    if fmt.load_answers is None:  # a custom reader may respell ids (`00012` as `12`)
        sample_ids = _ids(dev.public / fmt.sample_file, fmt.id_column)
        assert sample_ids == _ids(dev.private / fmt.answers_file, fmt.id_column)
    report = grade(comp, dev.public / fmt.sample_file, dev.private)
    assert report.valid_submission, report.error
    assert check_dev_variant(comp, root)["test_ids"] == first["test_ids"]


def assert_episode_leaves_private_shut(
    comp: Competition, main: CompetitionDirs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An episode of the variant scores validate's development grade with the real private/
    emptied: a grade, a size read or a check that opened the real answers would find none
    (tests run as root, so an unreadable mode would not stop them)."""
    away = main.root / "private-away"
    main.private.rename(away)
    main.private.mkdir()
    try:
        monkeypatch.setenv("MLE_GYM_HOME", str(main.root.parent))
        episode = Episode.open(comp.id, EnvConfig(data="dev"))
        assert episode.dirs.private == main.root / "dev" / "private"
        episode.reset(seed=0)
        note = episode.feedback.validate_note(episode.dirs.public / comp.submission.sample_file)
        assert "Development score:" in note, note
    finally:
        main.private.rmdir()
        away.rename(main.private)


def test_every_competition_has_a_checked_variant() -> None:
    assert {c.id for c in WITH_FIXTURES} | {BUNDLED} == {c.id for c in all_competitions()}
    assert not [c.id for c in all_competitions() if c.dev_variant.refused]


@pytest.mark.parametrize("comp", WITH_FIXTURES, ids=lambda c: c.id)
def test_dev_variant_on_fixture(
    comp: Competition, tmp_path_factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    main = prepared_fixture(comp, tmp_path_factory)
    assert_clean_variant(comp, main)
    assert_episode_leaves_private_shut(comp, main, monkeypatch)


def test_check_catches_a_real_test_id_and_a_changed_file(tmp_path_factory) -> None:
    comp = get_competition("spaceship-titanic")
    main = prepared_fixture(comp, tmp_path_factory)
    dev = require_dev_variant(comp, main.root.parent, force=True)
    answers = dev.private / comp.submission.answers_file
    kept = answers.read_bytes()
    try:
        real = pd.read_csv(main.private / comp.submission.answers_file, dtype=str).iloc[:1]
        frame = pd.read_csv(answers, dtype=str)
        pd.concat([frame, real]).to_csv(answers, index=False)
        with pytest.raises(DevVariantLeak, match="real test ids"):
            check_dev_variant(comp, main.root.parent)
    finally:
        answers.write_bytes(kept)
    check_dev_variant(comp, main.root.parent)
    sample = dev.public / comp.submission.sample_file
    sample.write_text(sample.read_text() + "\n")
    with pytest.raises(DevVariantLeak, match="differ from the manifest"):
        check_dev_variant(comp, main.root.parent)


def test_an_unprepared_competition_says_how_to_prepare(tmp_path: Path) -> None:
    comp = get_competition("spaceship-titanic")
    with pytest.raises(NotPrepared, match="mle-gym prepare spaceship-titanic"):
        require_dev_variant(comp, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_concurrent_callers_carve_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    comp = get_competition("spaceship-titanic")
    raw = tmp_path / "raw"
    raw.mkdir()
    generator_for(comp).make_raw(raw)
    prepare(comp, raw, root=tmp_path / "cache")
    carvings = []
    real_carve = dev_variant.carve

    def counted(*args, **kwargs):
        carvings.append(threading.get_ident())
        real_carve(*args, **kwargs)

    monkeypatch.setattr(dev_variant, "carve", counted)
    with ThreadPoolExecutor(4) as pool:
        made = list(pool.map(lambda _: require_dev_variant(comp, tmp_path / "cache"), range(4)))
    assert len(carvings) == 1
    assert {d.root for d in made} == {tmp_path / "cache" / comp.id / "dev"}


def test_a_newer_main_preparation_recarves(tmp_path_factory) -> None:
    comp = get_competition("spaceship-titanic")
    main = prepared_fixture(comp, tmp_path_factory)
    dev = require_dev_variant(comp, main.root.parent)
    stamp = json.loads(dev.manifest.read_text())["created_at"]
    record = json.loads(main.marker.read_text())
    main.marker.write_text(json.dumps({**record, "prepared_at": "later"}))
    try:
        again = json.loads(require_dev_variant(comp, main.root.parent).manifest.read_text())
        assert again["created_at"] != stamp and again["main_prepared_at"] == "later"
    finally:
        main.marker.write_text(json.dumps(record))


def test_dev_variant_on_real_spaceship_titanic(spaceship_cache: Path, tmp_path: Path) -> None:
    comp = get_competition("spaceship-titanic")
    root = tmp_path / "cache"
    shutil.copytree(spaceship_cache, root, copy_function=shutil.copy)
    main = CompetitionDirs.of(comp.id, root)
    assert_clean_variant(comp, main)
    dev = DevDirs(main.root / "dev")
    manifest = json.loads(dev.manifest.read_text())
    # the competition's own rule on the public 90%: a tenth of it held out, seed 0
    total = len(manifest["train_ids"]) + len(manifest["test_ids"])
    assert len(manifest["test_ids"]) == math.ceil(0.1 * total)
    assert manifest["seed"] == 0 and "spaceship_titanic.prepare" in manifest["rule"]


def test_dev_variant_of_the_bundled_demo(digits_home: Path, tmp_path: Path) -> None:
    """sklearn-digits has no raw fixture: its data ships with scikit-learn."""
    comp = get_competition("sklearn-digits")
    root = tmp_path / "cache"
    shutil.copytree(digits_home, root, copy_function=shutil.copy)
    assert_clean_variant(comp, CompetitionDirs.of(comp.id, root))


def test_content_traced_ids_catch_a_real_test_row_and_a_shared_one(tmp_path_factory) -> None:
    """Where ids are renumbered, the check compares content: a real test material copied in
    under a development id, or a development training photo reused as a test one, is caught."""
    comp = get_competition("nomad2018-predict-transparent-conductors")
    main = prepared_fixture(comp, tmp_path_factory)
    dev = require_dev_variant(comp, main.root.parent, force=True)
    answers = dev.private / "test.csv"
    kept = answers.read_bytes()
    try:
        real = pd.read_csv(main.private / "test.csv").iloc[:1].assign(id=10_000)
        pd.concat([pd.read_csv(answers), real]).to_csv(answers, index=False)
        with pytest.raises(DevVariantLeak, match="real test ids"):
            check_dev_variant(comp, main.root.parent)
    finally:
        answers.write_bytes(kept)
    check_dev_variant(comp, main.root.parent)

    comp = get_competition("dogs-vs-cats-redux-kernels-edition")
    main = prepared_fixture(comp, tmp_path_factory)
    dev = require_dev_variant(comp, main.root.parent, force=True)
    photo = dev.public / "test" / "1.jpg"
    kept = photo.read_bytes()
    try:
        photo.write_bytes((dev.public / "train" / "cat.0.jpg").read_bytes())
        with pytest.raises(DevVariantLeak, match="in both the dev train and dev test"):
            check_dev_variant(comp, main.root.parent)
    finally:
        photo.write_bytes(kept)
    check_dev_variant(comp, main.root.parent)
