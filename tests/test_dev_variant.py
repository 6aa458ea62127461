"""The development variant of every competition with a raw-file fixture, and of spaceship-titanic
on its real Kaggle files: carved deterministically from public/ alone, a clean split of the
public training ids, laid out like the public test, its sample submission graded on its own
answers. Competitions without a development rule yet must refuse with a clear error and store
nothing."""

from __future__ import annotations

import json
import math
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest

from mle_gym.competitions import Competition, all_competitions, get_competition
from mle_gym.data import CompetitionDirs, dev_variant, prepare
from mle_gym.data.dev_variant import (
    DevDirs,
    DevVariantLeak,
    DevVariantUnavailable,
    check_dev_variant,
    require_dev_variant,
)
from mle_gym.grading import grade
from tests.fixtures.prepared import prepared_fixture
from tests.fixtures.raw import generator_for

#: Competitions whose development variant is carved and checked on their fixture.
COVERED = {
    "3d-object-detection-for-autonomous-vehicles",
    "aerial-cactus-identification",
    "AI4Code",
    "alaska2-image-steganalysis",
    "aptos2019-blindness-detection",
    "billion-word-imputation",
    "bms-molecular-translation",
    "cassava-leaf-disease-classification",
    "cdiscount-image-classification-challenge",
    "chaii-hindi-and-tamil-question-answering",
    "champs-scalar-coupling",
    "denoising-dirty-documents",
    "detecting-insults-in-social-commentary",
    "dog-breed-identification",
    "dogs-vs-cats-redux-kernels-edition",
    "facebook-recruiting-iii-keyword-extraction",
    "freesound-audio-tagging-2019",
    "google-quest-challenge",
    "google-research-identify-contrails-reduce-global-warming",
    "h-and-m-personalized-fashion-recommendations",
    "herbarium-2020-fgvc7",
    "herbarium-2021-fgvc8",
    "herbarium-2022-fgvc9",
    "histopathologic-cancer-detection",
    "hms-harmful-brain-activity-classification",
    "hotel-id-2021-fgvc8",
    "hubmap-kidney-segmentation",
    "icecube-neutrinos-in-deep-ice",
    "imet-2020-fgvc7",
    "inaturalist-2019-fgvc6",
    "invasive-species-monitoring",
    "iwildcam-2019-fgvc6",
    "iwildcam-2020-fgvc7",
    "jigsaw-toxic-comment-classification-challenge",
    "jigsaw-unintended-bias-in-toxicity-classification",
    "kuzushiji-recognition",
    "leaf-classification",
    "learning-agency-lab-automated-essay-scoring-2",
    "lmsys-chatbot-arena",
    "ml2021spring-hw2",
    "mlsp-2013-birds",
    "movie-review-sentiment-analysis-kernels-only",
    "multi-modal-gesture-recognition",
    "new-york-city-taxi-fare-prediction",
    "nfl-player-contact-detection",
    "nomad2018-predict-transparent-conductors",
    "osic-pulmonary-fibrosis-progression",
    "paddy-disease-classification",
    "petfinder-pawpularity-score",
    "plant-pathology-2020-fgvc7",
    "plant-pathology-2021-fgvc8",
    "plant-seedlings-classification",
    "playground-series-s3e18",
    "predict-volcanic-eruptions-ingv-oe",
    "random-acts-of-pizza",
    "ranzcr-clip-catheter-line-classification",
    "rsna-2022-cervical-spine-fracture-detection",
    "rsna-breast-cancer-detection",
    "rsna-miccai-brain-tumor-radiogenomic-classification",
    "seti-breakthrough-listen",
    "siim-covid19-detection",
    "siim-isic-melanoma-classification",
    "smartphone-decimeter-2022",
    "spaceship-titanic",
    "spooky-author-identification",
    "stanford-covid-vaccine",
    "statoil-iceberg-classifier-challenge",
    "tabular-playground-series-dec-2021",
    "tabular-playground-series-may-2022",
    "tensorflow-speech-recognition-challenge",
    "tensorflow2-question-answering",
    "text-normalization-challenge-english-language",
    "text-normalization-challenge-russian-language",
    "tgs-salt-identification-challenge",
    "the-icml-2013-whale-challenge-right-whale-redux",
    "tweet-sentiment-extraction",
    "us-patent-phrase-to-phrase-matching",
    "uw-madison-gi-tract-image-segmentation",
    "ventilator-pressure-prediction",
    "vesuvius-challenge-ink-detection",
    "vinbigdata-chest-xray-abnormalities-detection",
    "whale-categorization-playground",
}

WITH_FIXTURES = [c for c in all_competitions() if generator_for(c) is not None]


def _ids(path: Path, column: str) -> set[str]:
    return set(pd.read_csv(path, usecols=[column], dtype=str, keep_default_na=False)[column])


def _answer_ids(comp: Competition, private: Path) -> set[str]:
    fmt = comp.submission
    if fmt.load_answers is not None:
        return set(fmt.load_answers(private)[fmt.id_column].astype(str))
    return _ids(private / fmt.answers_file, fmt.id_column)


def _headers(folder: Path) -> dict[str, list[str]]:
    return {p.name: list(pd.read_csv(p, nrows=0).columns) for p in sorted(folder.glob("*.csv"))}


def assert_clean_variant(comp: Competition, main: CompetitionDirs) -> None:
    """Deterministic, a clean split, laid out like the public test, its sample graded."""
    fmt = comp.submission
    root = main.root.parent
    dev = require_dev_variant(comp, root)
    first = json.loads(dev.manifest.read_text())
    again = json.loads(require_dev_variant(comp, root, force=True).manifest.read_text())
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


@pytest.mark.parametrize("comp", WITH_FIXTURES, ids=lambda c: c.id)
def test_dev_variant_on_fixture(comp: Competition, tmp_path_factory) -> None:
    main = prepared_fixture(comp, tmp_path_factory)
    if comp.id in COVERED:
        assert_clean_variant(comp, main)
        return
    with pytest.raises(DevVariantUnavailable, match=comp.id):
        require_dev_variant(comp, main.root.parent)
    assert not (main.root / "dev").exists(), "a refused variant must store nothing"


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


def test_refused_and_unprepared_competitions_say_why(tmp_path: Path) -> None:
    comp = get_competition("spaceship-titanic")
    from mle_gym.data.cache import NotPrepared

    with pytest.raises(NotPrepared, match="mle-gym prepare spaceship-titanic"):
        require_dev_variant(comp, tmp_path)
    refused = [c for c in all_competitions() if c.dev_variant.refused]
    for c in refused:
        with pytest.raises(DevVariantUnavailable, match=c.dev_variant.refused[:20]):
            require_dev_variant(c, tmp_path)


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
