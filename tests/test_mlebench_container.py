"""MLE-bench's container paths and validation endpoint in task="mlebench", on both backends:
its files read-only at its paths (the public data's own folder untouched), the variables its
agents expect, and localhost:5000 answering as its grading server does, with no network."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import gymnasium as gym
import pytest

import mle_gym  # noqa: F401  (registers the envs)
from mle_gym.data.cache import CompetitionDirs
from tests.prerequisites import require_shared

ID = "spaceship-titanic"


@pytest.fixture(scope="module")
def checkout() -> Path:
    return require_shared("mlebench", "environment", module=True).parent


def _fingerprint(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.md5(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _run(env, command: str) -> str:
    observation, *_ = env.step(command)
    return observation


def _curl_json(env, arguments: str) -> dict:
    out = _run(env, f"curl -s {arguments}; echo")
    return json.loads(out.strip().splitlines()[0])


def test_mlebench_paths_variables_and_endpoint(backend, checkout, spaceship_home):
    public = CompetitionDirs.of(ID).public
    before = _fingerprint(public)
    assert before
    env = gym.make(f"mle/{ID}-v0", backend=backend, task="mlebench", mlebench_dir=checkout,
                   max_steps=30, time_limit=7200)  # fmt: skip
    try:
        env.reset(seed=0)
        competition = checkout / "mlebench" / "competitions" / ID
        for path, source in (
            ("/home/instructions.txt", checkout / "environment" / "instructions.txt"),
            ("/home/instructions_obfuscated.txt",
             checkout / "environment" / "instructions_obfuscated.txt"),
            ("/home/validate_submission.sh", checkout / "environment" / "validate_submission.sh"),
            ("/home/data/description.md", competition / "description.md"),
        ):  # fmt: skip
            assert (
                _run(env, f"md5sum < {path}").split()[0]
                == hashlib.md5(source.read_bytes()).hexdigest()
            ), path
        # the public data is all there, beside the description, and nothing is writable
        listing = _run(env, "ls /home/data").split()
        assert sorted(listing) == sorted([*before, "description.md"])
        for target in ("/home/data/description.md", "/home/data/new.csv",
                       "/home/instructions.txt", "/home/data/train.csv"):  # fmt: skip
            assert "ok" not in _run(env, f"echo x >> {target} && echo ok"), target
        variables = _run(env, "env")
        for expected in ("COMPETITION_ID=spaceship-titanic", "SUBMISSION_DIR=/home/submission",
                         "LOGS_DIR=/home/logs", "CODE_DIR=/home/code", "TIME_LIMIT_SECS=7200",
                         "TIME_LIMIT=2hrs 0mins 0secs", "STEP_LIMIT=30", "HARDWARE=a CPU",
                         "AGENT_DIR="):  # fmt: skip
            assert expected in variables, expected
        # MLE-bench's grading server: health, a valid file, an invalid one (never a score)
        assert _curl_json(env, "http://localhost:5000/health") == {"status": "running"}
        _run(env, "cp /home/data/sample_submission.csv /tmp/sample.csv")
        answer = _curl_json(env, "-X POST -F file=@/tmp/sample.csv http://localhost:5000/validate")
        assert answer == {"result": "Submission is valid."}
        _run(env, "head -3 /home/data/sample_submission.csv > /tmp/short.csv")
        out = _run(env, "bash /home/validate_submission.sh /tmp/short.csv 2>/dev/null")
        short = json.loads(out.strip().splitlines()[-1])
        assert short["result"].startswith("Submission invalid! The attempt to grade")
        # the network stays off: only the sandbox's own loopback answers
        assert "reached" not in _run(env, "curl -s -m 5 http://1.1.1.1 && echo reached")
        # the env's own submission is graded as in every other mode
        _run(env, "cp /home/data/sample_submission.csv /home/submission/submission.csv")
        *_, info = env.step({"tool": "submit"})
        assert info["report"]["valid_submission"]
    finally:
        env.close()
    assert _fingerprint(public) == before  # the prepared folder is untouched


def test_obfuscated_task_hides_the_plain_text(backend, checkout, spaceship_home):
    env = gym.make(f"mle/{ID}-v0", backend=backend, task="mlebench-obfuscated",
                   mlebench_dir=checkout, max_steps=10)  # fmt: skip
    try:
        env.reset(seed=0)
        competition = checkout / "mlebench" / "competitions" / ID
        hidden = hashlib.md5((competition / "description_obfuscated.md").read_bytes()).hexdigest()
        assert _run(env, "md5sum < /home/data/description.md").split()[0] == hidden
        instructions = checkout / "environment" / "instructions_obfuscated.txt"
        assert (
            _run(env, "md5sum < /home/instructions.txt").split()[0]
            == hashlib.md5(instructions.read_bytes()).hexdigest()
        )
        # neither plain text is anywhere in the sandbox's /home
        shown = _run(env, "md5sum /home/*.txt /home/*.sh /home/data/*")
        for plain in (competition / "description.md", checkout / "environment/instructions.txt"):
            assert hashlib.md5(plain.read_bytes()).hexdigest() not in shown
        assert "description_obfuscated" not in _run(env, "ls /home/data")
        assert "instructions_obfuscated" not in _run(env, "ls /home")
    finally:
        env.close()


def test_endpoint_answers_again_after_a_new_shell(backend, checkout, spaceship_home):
    """The agent's shell may exit (on the local backend its whole sandbox process does): the
    endpoint is back on the next step."""
    env = gym.make(f"mle/{ID}-v0", backend=backend, task="mlebench", mlebench_dir=checkout)
    try:
        env.reset(seed=0)
        assert "new shell" in _run(env, "exit")
        assert _curl_json(env, "http://localhost:5000/health") == {"status": "running"}
    finally:
        env.close()


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("/etc/x.txt", "directly in /home or /home/data"),
        ("/home/data/sub/x.md", "directly in /home or /home/data"),
        ("/home/../etc/x", "directly in /home or /home/data"),
        ("/home/code", "cannot go at /home/code"),
        ("/home/data/train.csv", "would hide the public data's own train.csv"),
    ],
)
def test_files_cannot_shadow_the_sandbox_or_the_data(tmp_path, target, why):
    from mle_gym.sandbox.base import ReadOnlyFile, SandboxSpec

    public = tmp_path / "public"
    public.mkdir()
    (public / "train.csv").write_text("id\n")
    source = tmp_path / "x"
    source.write_text("x")
    with pytest.raises(ValueError, match=re.escape(why)):
        SandboxSpec(public_dir=public, files=(ReadOnlyFile(source, target),))
