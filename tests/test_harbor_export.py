"""`mle-gym export harbor`: Harbor loads the tasks, the agent's side has no answers, the export
is deterministic, and a real Harbor trial earns the reward the env gives the same file.

Harbor needs Python >= 3.12, so everything Harbor does runs in its own venv
(.ci/setup.d/harbor.sh) through subprocesses; trials use mle_gym's Harbor environment
provider (mle_gym.integrations.harbor) on the Docker engine.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import textwrap
from pathlib import Path

import pytest

import mle_gym
from mle_gym.cli import main
from mle_gym.competitions import all_competitions
from mle_gym.data.cache import CompetitionDirs
from mle_gym.export.grader_image import grader_tag
from mle_gym.export.harbor import HarborOptions, export_harbor
from tests.prerequisites import require, setup_piece

OFFLINE = "mle-gym-agent:offline"
HARBOR_VENV = setup_piece("MLE_GYM_HARBOR_VENV", "venv-harbor")
HARBOR_PYTHON = HARBOR_VENV / "bin" / "python"
PROVIDER = "mle_gym.integrations.harbor:MleGymDockerEnvironment"


def harbor_python() -> Path:
    require(
        HARBOR_PYTHON.exists(),
        f"no Python 3.12 venv with Harbor at {HARBOR_PYTHON}: run bash .ci/setup.d/harbor.sh "
        "(or set MLE_GYM_HARBOR_VENV)",
    )
    return HARBOR_PYTHON


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(f"{path.relative_to(root)}|{path.stat().st_mode:o}\n".encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def test_harbor_loads_every_exported_task(tmp_path: Path, mle_home: Path) -> None:
    python = harbor_python()
    ids = [c.id for c in all_competitions()]
    out = tmp_path / "tasks"
    export_harbor(ids, out, HarborOptions(image=OFFLINE))
    check = textwrap.dedent(
        """
        import json, sys
        from pathlib import Path
        from harbor.models.task.task import Task
        from harbor.models.task.verifier_mode import resolve_verifier_environment_definition
        seen = {}
        for d in sorted(Path(sys.argv[1]).iterdir()):
            task = Task(d)
            verifier = resolve_verifier_environment_definition(task.config, task.paths)
            seen[d.name] = {
                "name": task.name,
                "valid": Task.is_valid_dir(d),
                "verifier_dir": verifier.directory.name,
                "agent_network": task.config.environment.network_mode.value,
                "verifier_network": verifier.config.network_mode.value,
                "artifacts": task.config.artifacts,
                "metadata": task.config.metadata,
                "instruction": task.instruction,
            }
        print(json.dumps(seen))
        """
    )
    done = subprocess.run(
        [str(python), "-c", check, str(out)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout)
    assert sorted(seen) == sorted(ids)
    for cid, task in seen.items():
        assert task["name"] == f"mle-gym/{cid}" and task["valid"], cid
        assert task["verifier_dir"] == "tests"  # the separate verifier's own image
        assert task["agent_network"] == task["verifier_network"] == "no-network"
        assert task["artifacts"] == ["/home/submission"]
        assert task["metadata"]["competition_id"] == cid
        assert task["metadata"]["data_prepared"] is False
        assert "/home/submission/submission.csv" in task["instruction"]


def test_export_is_deterministic_and_fast_to_rerun(tmp_path: Path, mle_home: Path) -> None:
    args = ["export", "harbor", "--split", "lite", "sklearn-digits", "--image", OFFLINE]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    assert main([*args, "--out", str(tmp_path / "a")]) == 0  # replaces its own export
    tasks = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert len(tasks) == 1 + sum(c.split == "lite" for c in all_competitions())
    assert tree_digest(tmp_path / "a") == tree_digest(tmp_path / "b")
    verifier = (tmp_path / "a" / "sklearn-digits" / "tests" / "Dockerfile").read_text()
    assert f"FROM {grader_tag(OFFLINE)}\n" in verifier  # the grader of this mle_gym
    (tmp_path / "c" / "sklearn-digits").mkdir(parents=True)
    with pytest.raises(FileExistsError):  # a directory the export did not make stays
        export_harbor(["sklearn-digits"], tmp_path / "c")


def test_copy_mode_links_the_data_and_skips_what_is_not_prepared(
    tmp_path: Path, mle_home: Path
) -> None:
    from mle_gym.competitions import get_competition
    from mle_gym.data import prepare

    prepare(get_competition("sklearn-digits"), root=mle_home)
    options = HarborOptions(image=OFFLINE, data="copy")
    done = [
        export_harbor(["sklearn-digits", "spaceship-titanic"], tmp_path / d, options) for d in "ab"
    ]
    assert [(e.competition_id, e.skipped) for e in done[0]] == [
        ("sklearn-digits", None),
        ("spaceship-titanic", "not prepared, nothing to copy"),
    ]
    assert tree_digest(tmp_path / "a") == tree_digest(tmp_path / "b")
    task = done[0][0].path
    dirs = CompetitionDirs.of("sklearn-digits")
    for name in ("train.csv", "test.csv"):  # hard links, not copies
        assert (task / "environment" / "data" / name).samefile(dirs.public / name)
    assert (task / "tests" / "answers" / "test.csv").samefile(dirs.private / "test.csv")
    assert "COPY data/ /home/data/" in (task / "environment" / "Dockerfile").read_text()
    assert not (task / "environment" / "docker-compose.yaml").exists()


def leak_probe(dirs: CompetitionDirs, out: str) -> str:
    """Shell that looks for the answers everywhere in the agent's container, writes to `out`."""
    public = {
        line for p in dirs.public.rglob("*") if p.is_file() for line in p.read_text().splitlines()
    }
    answers = [
        line
        for p in sorted(dirs.private.rglob("*"))
        if p.is_file() and p.suffix == ".csv"
        for line in p.read_text().splitlines()[1:]
        if line not in public
    ][:5]
    assert answers, "the probe needs answer rows the public files do not have"
    patterns = " ".join(f"-e {json.dumps(a)}" for a in answers)
    return (
        f"grep -rlF {patterns} / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev "
        "--exclude-dir=solution "
        f"> {out} 2>/dev/null || true\n"
        f"grep -F {json.dumps(str(dirs.private))} /proc/self/mountinfo >> {out} || true\n"
    )


SOLVERS = {
    "sklearn-digits": """
        import pandas as pd
        from sklearn.neighbors import KNeighborsClassifier
        train = pd.read_csv("/home/data/train.csv")
        test = pd.read_csv("/home/data/test.csv")
        x = [c for c in train.columns if c.startswith("pixel_")]
        model = KNeighborsClassifier(3).fit(train[x], train["label"])
        pd.DataFrame({"id": test["id"], "label": model.predict(test[x])}).to_csv(
            "/home/submission/submission.csv", index=False)
    """,
    "spaceship-titanic": """
        import pandas as pd
        test = pd.read_csv("/home/data/test.csv")
        transported = test["CryoSleep"].fillna(False).astype(bool)
        pd.DataFrame({"PassengerId": test["PassengerId"], "Transported": transported}).to_csv(
            "/home/submission/submission.csv", index=False)
    """,
}


@pytest.fixture(scope="module")
def grader_image(docker_engine) -> str:
    from mle_gym.export.grader_image import build_grader_image

    return build_grader_image(OFFLINE, log=lambda _line: None)


def run_trial(task_dir: Path, trials: Path) -> Path:
    """A Harbor trial with the oracle agent (it runs the task's solution/solve.sh)."""
    harbor = harbor_python().parent / "harbor"
    done = subprocess.run(
        [str(harbor), "trial", "start", "-p", str(task_dir), "-a", "oracle", "-e", PROVIDER,
         "--trials-dir", str(trials)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (trial,) = [p for p in trials.iterdir() if p.is_dir()]
    return trial


@pytest.mark.parametrize(
    ("competition", "data"),
    [("sklearn-digits", "mount"), ("sklearn-digits", "copy"), ("spaceship-titanic", "mount")],
)
def test_harbor_trial_earns_the_env_reward_and_never_sees_answers(
    competition: str, data: str, grader_image: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    harbor_python()
    if competition == "spaceship-titanic":
        request.getfixturevalue("spaceship_home")
    else:
        home = tmp_path / "cache"
        request.getfixturevalue("monkeypatch").setenv("MLE_GYM_HOME", str(home))
        from mle_gym.competitions import get_competition
        from mle_gym.data import prepare

        prepare(get_competition(competition), root=home)
    dirs = CompetitionDirs.of(competition)
    # The grader just built (its tag is a digest of mle_gym's source, which may be edited
    # while tests run); a default export names the same tag for the same source.
    options = HarborOptions(image=OFFLINE, grader_image=grader_image, data=data)
    (task,) = export_harbor([competition], tmp_path / "tasks", options)

    # The agent's build context and image: no answers in either (the image: the probe below).
    answers = [p.read_bytes() for p in dirs.private.rglob("*") if p.is_file()]
    for path in (p for p in (task.path / "environment").rglob("*") if p.is_file()):
        text = path.read_bytes()
        assert str(dirs.private).encode() not in text and not any(a in text for a in answers)

    solution = task.path / "solution" / "solve.sh"
    solution.parent.mkdir()
    solver = textwrap.dedent(SOLVERS[competition])
    solution.write_text(
        "#!/bin/bash\nset -e\n"
        + leak_probe(dirs, "/logs/agent/leaks.txt")
        + f"python3 - <<'PY'\n{solver}PY\n"
    )
    trial = run_trial(task.path, tmp_path / "trials")

    assert (trial / "agent" / "leaks.txt").read_text() == ""  # probed, found nothing
    rewards = json.loads((trial / "verifier" / "reward.json").read_text())
    result = json.loads((trial / "result.json").read_text())
    assert result["verifier_result"]["rewards"] == rewards
    submission = trial / "artifacts" / "home" / "submission" / "submission.csv"
    expected = mle_gym.evaluate(competition, submission)
    assert expected["valid"] and expected["error"] is None
    assert rewards == {
        "reward": expected["reward"],
        "score": expected["score"],
        "valid": 1,
        "above_median": int(expected["above_median"]),
        "any_medal": int(expected["any_medal"]),
    }


@pytest.mark.parametrize("link", ["symbolic", "none"])
def test_verifier_refuses_a_submission_that_links_to_the_answers(
    link: str, grader_image: str, docker_engine, tmp_path: Path
) -> None:
    """The verifier container holds the answers at /home/answers; a submission that is a
    link to them (made by the agent, copied over by a provider that keeps links) must be
    an invalid submission, not a perfect score."""
    from mle_gym.competitions import get_competition
    from mle_gym.data import prepare

    prepare(get_competition("sklearn-digits"), root=tmp_path / "cache")
    dirs = CompetitionDirs.of("sklearn-digits", tmp_path / "cache")
    submission, out = tmp_path / "submission", tmp_path / "out"
    submission.mkdir()
    out.mkdir()
    if link == "symbolic":
        (submission / "submission.csv").symlink_to("/home/answers/test.csv")
    else:  # the control: the same answers as a file of its own are graded (perfectly)
        (submission / "submission.csv").write_bytes((dirs.private / "test.csv").read_bytes())
    docker_engine.containers.run(
        grader_image,
        ["python3", "-m", "mle_gym.export.verify", "--competition", "sklearn-digits",
         "--submission", "/home/submission/submission.csv", "--answers", "/home/answers",
         "--out", "/out"],
        volumes={
            str(dirs.private): {"bind": "/home/answers", "mode": "ro"},
            str(submission): {"bind": "/home/submission", "mode": "ro"},
            str(out): {"bind": "/out", "mode": "rw"},
        },
        network_mode="none", remove=True,
    )  # fmt: skip
    rewards = json.loads((out / "reward.json").read_text())
    report = json.loads((out / "report.json").read_text())
    if link == "symbolic":
        assert rewards == {"reward": 0.0, "valid": 0, "above_median": 0, "any_medal": 0}
        assert "symbolic link" in report["error"]
    else:
        assert rewards["valid"] == 1 and rewards["any_medal"] == 1
