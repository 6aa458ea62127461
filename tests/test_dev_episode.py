"""Episodes on a competition's development variant (data="dev"): the agent sees the variant's
public files, every grade uses its answers and never opens the real private/, validate
reports the development score, and the dense reward pays the changes of the normalised
development score. data="test" stays as it was: no score before the end, no dense reward."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import gymnasium as gym
import pytest

from mle_gym.competitions import get_competition
from mle_gym.data import CompetitionDirs
from mle_gym.data.dev_variant import DevVariantUnavailable, require_dev_variant
from mle_gym.envs import episode
from mle_gym.envs.config import EnvConfig
from mle_gym.evaluation import evaluate as mle_gym_evaluate
from mle_gym.grading.metrics import METRICS
from tests.batch_support import mle_gym
from tests.conftest import require_bwrap

ID = "sklearn-digits"
SUBMISSION = "/home/submission/submission.csv"
#: A nearest-neighbour classifier trained on the first N rows of /home/data/train.csv.
TRAIN = (
    'python -c "import sys, pandas as pd; from sklearn.neighbors import KNeighborsClassifier as K;'
    "t = pd.read_csv('/home/data/train.csv').head(int(sys.argv[1])); "
    "x = pd.read_csv('/home/data/test.csv'); f = [c for c in x.columns if c != 'id']; "
    "m = K(1).fit(t[f], t['label']); "
    "pd.DataFrame({'id': x['id'], 'label': m.predict(x[f])})"
    f".to_csv('{SUBMISSION}', index=False)\" "
)


@pytest.fixture
def dev_home(digits_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of the demo's cache with its development variant carved, whose real
    private/ is then swapped for an empty folder: a grade or a size read that opened the real
    answers would find none (tests run as root, so an unreadable mode would not stop them).
    Returns the folder holding the real answers, now out of the cache."""
    root = tmp_path / "cache"
    shutil.copytree(digits_home, root, copy_function=shutil.copy)
    require_dev_variant(ID, root)
    private = CompetitionDirs.of(ID, root).private
    away = tmp_path / "real-private"
    private.rename(away)
    private.mkdir()
    monkeypatch.setenv("MLE_GYM_HOME", str(root))
    return away


def _make(backend: str = "local", **options):
    if backend == "local":
        require_bwrap()
    return gym.make(f"mle/{ID}-v0", backend=backend, data="dev", step_timeout=120, **options)


def test_validate_scores_on_the_dev_answers_and_the_real_private_stays_shut(dev_home: Path):
    dev = CompetitionDirs.of(ID).root / "dev"
    with _make(max_steps=20) as env:
        observation, _ = env.reset(seed=0)
        assert "development variant" in observation
        out, *_ = env.step("wc -l < /home/data/test.csv; ls /home/data")
        dev_rows = sum(1 for _ in (dev / "public" / "test.csv").open()) - 1
        assert out.split() == [str(dev_rows + 1), "sample_submission.csv", "test.csv", "train.csv"]
        env.step(f"cp /home/data/sample_submission.csv {SUBMISSION}")
        observation, reward, terminated, _, info = env.step({"tool": "validate"})
        assert observation.startswith("The submission is valid. Development score: ")
        assert 0 < info["dev_score"] < 0.5 and reward == 0.0 and not terminated
        assert "dev_score" not in env.step("true")[4]  # only on the step that validated
        env.step(TRAIN + "300")
        _, _, _, _, info = env.step({"tool": "validate"})
        assert info["dev_score"] > 0.8
        _, reward, terminated, _, info = env.step({"tool": "submit"})
    assert terminated and info["report"]["valid_submission"]
    normalised = max(0.0, info["report"]["normalized_score"])
    assert info["report"]["score"] > 0.8 and reward == pytest.approx(normalised)
    assert info["data_variant"] == "dev" and "approximation" in info["data_note"]
    integrity = info["integrity"]
    assert integrity["data_variant"] == "dev" and integrity["dev_grades"] == 2
    assert integrity["grades_before_end"] == 0 and not integrity["score_exposed_during_episode"]
    # the real answers were out of the cache the whole time, and nothing was written there
    assert list(CompetitionDirs.of(ID).private.iterdir()) == []
    assert (dev_home / "test.csv").is_file()


def test_dense_rewards_sum_to_the_final_normalised_score(dev_home: Path):
    """Three improvements of the submission, a validate and an unchanged step between them:
    only the changes pay, and the rewards add up to the terminal normalised score."""
    with _make(max_steps=20, reward_mode="dense") as env:
        env.reset(seed=0)
        steps = [
            f"cp /home/data/sample_submission.csv {SUBMISSION}",
            "echo unchanged",
            TRAIN + "20",
            {"tool": "validate"},
            TRAIN + "100",
            TRAIN + "1000",
            "true",
            {"tool": "submit"},
        ]
        rewards, infos = [], []
        for action in steps:
            _, reward, terminated, _, info = env.step(action)
            rewards.append(reward)
            infos.append(info)
    assert terminated
    final = infos[-1]["report"]["normalized_score"]
    assert final > 0.5 and sum(rewards) == pytest.approx(max(0.0, final), abs=1e-9)
    assert rewards[1] == rewards[3] == rewards[6] == 0.0 and rewards[7] == pytest.approx(0.0)
    assert sum(1 for r in rewards if r != 0.0) >= 2
    # the validate and the dense reward graded the same file once
    assert infos[-1]["integrity"]["dev_grades"] == 4
    # an episode the step budget ends pays the rest on its last step, and says why it ended
    with _make(max_steps=2, reward_mode="dense") as env:
        env.reset(seed=0)
        first = env.step(TRAIN + "50")[1]
        observation, last, _, truncated, info = env.step(TRAIN + "500")
    assert truncated and "budget is spent" in observation and first > 0
    assert first + last == pytest.approx(max(0.0, info["report"]["normalized_score"]), abs=1e-9)


def test_on_the_test_data_no_metric_runs_before_submit(
    digits_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """data="test": validate checks the format only, with no score in its answer or info;
    the metric runs once, for the final grade, and the record names the test data."""
    require_bwrap()
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    calls = tmp_path / "metric-calls"
    name = get_competition(ID).metric
    original = METRICS[name]

    def counted(*args, **kwargs):  # graders run in forks of this process, which inherit it
        with calls.open("a") as handle:
            handle.write("metric\n")
        return original(*args, **kwargs)

    monkeypatch.setitem(METRICS._all(), name, counted)
    with gym.make(f"mle/{ID}-v0", backend="local", max_steps=10) as env:
        env.reset(seed=0)
        env.step(TRAIN + "100")
        for _ in range(3):
            observation, *_, info = env.step({"tool": "validate"})
            assert observation == "The submission is valid." and "dev_score" not in info
        assert not calls.exists()
        *_, info = env.step({"tool": "submit"})
    assert calls.read_text() == "metric\n" and info["report"]["valid_submission"]
    assert info["data_variant"] == "test" and "data_note" not in info
    assert info["integrity"]["data_variant"] == "test" and info["integrity"]["dev_grades"] == 0


def test_test_data_is_unchanged_and_refuses_the_dense_reward(spaceship_home: Path):
    with pytest.raises(ValueError, match="needs data='dev'"):
        gym.make("mle/spaceship-titanic-v0", reward_mode="dense")
    with pytest.raises(ValueError, match="data must be one of test, dev"):
        EnvConfig(data="train")
    assert EnvConfig().data == "test"
    with pytest.raises(ValueError, match="pass data='dev'"):
        mle_gym_evaluate("spaceship-titanic", "missing.csv", "dense")


def test_a_competition_without_a_variant_is_refused_at_make(
    mle_home: Path, monkeypatch: pytest.MonkeyPatch
):
    """Refused before anything is prepared, with the spec's reason."""
    comp = get_competition(ID)
    why = "its public training table has too few rows"
    refused = replace(comp, dev_variant=replace(comp.dev_variant, refused=why))
    monkeypatch.setattr(episode, "get_competition", lambda _id: refused)
    with pytest.raises(DevVariantUnavailable, match=f"{ID} has no development variant: {why}"):
        gym.make(f"mle/{ID}-v0", data="dev")
    assert list(mle_home.iterdir()) == []


def test_the_agent_cannot_reach_the_dev_answers(dev_home: Path, backend: str):
    """The development answers stay on the host: neither their path nor the cache is in the
    sandbox, on either backend."""
    dev_private = CompetitionDirs.of(ID).root / "dev" / "private"
    with _make(backend, max_steps=5) as env:
        env.reset(seed=0)
        out, *_ = env.step(
            f"cat {dev_private}/test.csv {dev_home}/test.csv | head -c 40; "
            f"ls {CompetitionDirs.of(ID).root}; ls /home/data"
        )
    assert out.count("No such file or directory") == 3, out
    listed = out.split()[-3:]
    assert "id,label" not in out and listed == ["sample_submission.csv", "test.csv", "train.csv"]


@pytest.fixture(scope="module")
def dev_and_test_runs(digits_home: Path, tmp_path_factory: pytest.TempPathFactory):
    """One scripted episode of the demo on its development variant (dense reward) and one on
    its test data, each a batch run of the CLI."""
    require_bwrap()
    root = tmp_path_factory.mktemp("dev-runs")
    dev, test = root / "dev", root / "test"
    common = ("run", ID, "--policy", "scripted", "--seeds", "1")
    mle_gym(*common, "--run-dir", str(dev), "--data", "dev", "--reward-mode", "dense",
            home=digits_home)  # fmt: skip
    mle_gym(*common, "--run-dir", str(test), home=digits_home)
    return dev, test


def test_a_batch_on_the_dev_variant_records_it(dev_and_test_runs) -> None:
    dev, test = dev_and_test_runs
    result = json.loads((dev / "episodes" / ID / "seed-0" / "result.json").read_text())
    assert result["integrity"]["data_variant"] == "dev" and result["integrity"]["dev_grades"] >= 1
    assert result["total_reward"] == pytest.approx(max(0.0, result["normalized_score"]))
    # its snapshots are graded after the episode on the same development answers
    graded = json.loads((dev / "episodes" / ID / "seed-0" / "snapshots.json").read_text())
    assert graded[-1]["final"] and graded[-1]["score"] == result["score"]
    provenance = json.loads((dev / "provenance.json").read_text())
    assert provenance["invocations"][0]["env"]["data"] == "dev"
    other = json.loads((test / "episodes" / ID / "seed-0" / "result.json").read_text())
    assert other["integrity"]["data_variant"] == "test"


def test_reports_keep_the_dev_variant_apart(dev_and_test_runs, digits_home: Path) -> None:
    dev, test = dev_and_test_runs
    out = mle_gym("report", str(dev), home=digits_home).stdout
    assert "data: the development variant" in out
    refused = mle_gym("report", str(dev), "--compare", "published", home=digits_home, ok=False)
    assert refused.returncode != 0 and "never put beside MLE-bench's published" in refused.stderr
    exported = mle_gym("report", str(dev), "--format", "mlebench", home=digits_home, ok=False)
    assert exported.returncode != 0 and "never put beside MLE-bench's published" in exported.stderr
    mixed = mle_gym("report", str(test), str(dev), home=digits_home, ok=False)
    assert mixed.returncode != 0 and "ran on different data" in mixed.stderr
    plain = mle_gym("report", str(test), home=digits_home).stdout
    assert "data: the development variant" not in plain


def test_make_vec_takes_the_variant_and_the_dense_reward(dev_home: Path) -> None:
    """Each sub-env runs on the variant: the sample submission pays next to nothing (its
    normalised score is about 0), a trained one its normalised development score the step it
    is written."""
    import mle_gym

    require_bwrap()
    env = mle_gym.make_vec(
        f"mle/{ID}-v0",
        2,
        vectorization_mode="sync",
        data="dev",
        reward_mode="dense",
        step_timeout=120,
    )
    try:
        env.reset(seed=0)
        _, rewards, *_ = env.step(
            [f"cp /home/data/sample_submission.csv {SUBMISSION}", TRAIN + "300"]
        )
        assert 0.0 <= rewards[0] < 0.1 and rewards[1] > 0.5
        _, _, terminated, _, info = env.step([{"tool": "submit"}] * 2)
        assert list(terminated) == [True, True] and list(info["data_variant"]) == ["dev", "dev"]
    finally:
        env.close()


def test_a_resumed_dense_episode_still_sums_to_its_final_score(dev_home: Path, tmp_path: Path):
    """Checkpointed after two paid improvements and resumed in another env: the potential
    paid goes with the checkpoint, so the unchanged submission pays nothing after the resume
    and the rewards of both segments sum to the final normalised score."""
    with _make(max_steps=20, reward_mode="dense") as env:
        env.reset(seed=0)
        first = [env.step(action)[1] for action in (TRAIN + "20", TRAIN + "100")]
        folder = env.unwrapped.checkpoint(tmp_path / "store")
    assert first[0] > 0 and first[1] != 0
    meta = json.loads((folder / "manifest.json").read_text())["meta"]
    assert meta["dev_feedback"]["potential"] == pytest.approx(sum(first))
    with _make(max_steps=20, reward_mode="dense") as env:
        env.reset(options={"checkpoint": folder})
        second = []
        for action in ("true", TRAIN + "1000", {"tool": "submit"}):
            _, reward, terminated, _, info = env.step(action)
            second.append(reward)
    assert terminated and second[0] == 0.0 and second[1] != 0
    final = max(0.0, info["report"]["normalized_score"])
    assert sum(first) + sum(second) == pytest.approx(final, abs=1e-9)
    # the development grades of both segments are counted: 20 and 100 rows, then 1000
    assert info["integrity"]["dev_grades"] == 3
