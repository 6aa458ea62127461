"""Kept code: /home/code copied to the host after the episode, bounded whatever the agent
put there, big files listed with size and sha256 (huge ones by size alone, never read); the
listing is mle_gym's own, so a shadowed `find` hides nothing from the plagiarism audit."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from mle_gym.analysis.plagiarism import DolosUnavailable, check_dolos
from mle_gym.cli import main
from mle_gym.envs import CompetitionEnv
from mle_gym.envs.kept_code import CodeBounds
from tests.prerequisites import require
from tests.test_audit_plagiarism import KERNELS

KIB, MIB = 1024, 1024**2
SCRIPT = "import sklearn\nprint('train')\n"


@pytest.fixture
def digits_env_home(digits_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    return digits_home


def _disk_use(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def test_huge_and_many_files_in_code_stay_within_the_bounds(
    digits_env_home: Path, backend: str, tmp_path: Path
) -> None:
    bounds = CodeBounds(max_bytes=2 * MIB, max_file_bytes=256 * KIB, max_files=300)
    env = CompetitionEnv("sklearn-digits", backend=backend, step_timeout=120)
    try:
        env.reset(seed=0)
        env.step({"tool": "create", "path": "/home/code/a_main.py", "file_text": SCRIPT})
        env.step(
            "cd /home/code && head -c $((20*1024*1024)) /dev/zero > big_weights.bin && "
            "mkdir many && for i in $(seq 1 40); do head -c 200000 /dev/zero > many/$i.npy; "
            "done && for i in $(seq 1 500); do echo $i > many/s$i.txt; done && "
            "ln -s /etc/passwd link && ln -s / root_link"
        )
        dest = tmp_path / "episode" / "code"
        index = env.keep_code(dest, bounds)
        assert _disk_use(dest) <= bounds.max_bytes
        assert json.loads((tmp_path / "episode" / "code.json").read_text()) == index
        files = {f["path"]: f for f in index["files"]}
        assert len(files) <= bounds.max_files and index["listing_truncated"]
        assert (dest / "a_main.py").read_text() == SCRIPT and files["a_main.py"]["kept"]
        weights = files["big_weights.bin"]
        assert not weights["kept"] and weights["bytes"] == 20 * MIB
        assert weights["sha256"] == hashlib.sha256(bytes(20 * MIB)).hexdigest()
        assert not (dest / "big_weights.bin").exists()
        assert "link" not in files and "root_link" not in files  # links are not followed
        assert sum(f["kept"] for f in files.values()) < len(files)
    finally:
        env.close()


def test_a_forged_listing_reads_nothing_outside_code(
    digits_env_home: Path, backend: str, tmp_path: Path
) -> None:
    """The agent shadows `find` and `head` in its shell to name files outside /home/code:
    the listing does not come from its shell, so only its own file is kept."""
    env = CompetitionEnv("sklearn-digits", backend=backend, step_timeout=60)
    try:
        env.reset(seed=0)
        env.step(
            "echo mine > /home/code/ok.py; "
            "find() { printf '../data/train.csv\\t5\\0' ; printf '/etc/passwd\\t9\\0'; "
            "printf 'ok.py\\t3\\0'; printf '../../../../etc/hostname\\t7\\0'; }; "
            "head() { cat; }"
        )
        dest = tmp_path / "code"
        index = env.keep_code(dest)
        assert [f["path"] for f in index["files"]] == ["ok.py"]
        assert sorted(p.name for p in dest.rglob("*")) == ["ok.py"]
        # names that look like options or hold a newline are kept as names, nothing runs
        env.step(
            "cd /home/code && echo a > '--to-command=touch pwned' && echo b > $'two\\nlines.py'"
        )
        index = env.keep_code(tmp_path / "odd" / "code")
        kept = {f["path"]: f["kept"] for f in index["files"]}
        assert kept == {"--to-command=touch pwned": True, "ok.py": True, "two\nlines.py": True}
        assert (tmp_path / "odd" / "code" / "two\nlines.py").read_text() == "b\n"
    finally:
        env.close()


def test_a_shadowed_find_hides_no_copy_from_the_audit(
    digits_env_home: Path, backend: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """A copied notebook saved as solution.txt, then `find`, `sort`, `head` and `sha256sum`
    shadowed and PATH emptied in the agent's shell: the copy is kept and flagged."""
    try:
        check_dolos()
    except DolosUnavailable as exc:
        require(False, str(exc))
    kernel = (KERNELS / "kernel_titanic_forest.py").read_text()
    env = CompetitionEnv("sklearn-digits", backend=backend, step_timeout=60)
    episode = tmp_path / "run" / "episodes" / "spaceship-titanic" / "seed-0"
    try:
        env.reset(seed=0)
        env.step({"tool": "create", "path": "/home/code/solution.txt", "file_text": kernel})
        env.step(
            "find() { :; }; sort() { :; }; head() { :; }; sha256sum() { :; }; "
            "alias find=: ; export PATH=/nonexistent"
        )
        index = env.keep_code(episode / "code")
    finally:
        env.close()
    assert [f["path"] for f in index["files"]] == ["solution.txt"] and index["files"][0]["kept"]
    (episode / "status.json").write_text(json.dumps({"state": "done", "attempt": 1}))
    result = {"submission": "submission.csv", "code": {"files": 1}}
    (episode / "result.json").write_text(json.dumps(result))
    run = str(tmp_path / "run")
    assert main(["audit", "plagiarism", run, "--kernels", str(KERNELS), "--json"]) == 1
    finding = json.loads(capsys.readouterr().out)["episodes"][0]
    assert finding["flagged"] and finding["similarity"] > 0.99 and not finding["review"]
    assert finding["agent_file"] == "solution.txt"


def test_sparse_huge_files_are_skipped_by_size_without_being_read(
    digits_env_home: Path, backend: str, tmp_path: Path
) -> None:
    """Three sparse 6 GiB files (`truncate -s`): listed by size, neither copied nor hashed,
    their access times untouched; a 2 MiB file beside them is hashed (so reading does move
    an access time here, and the check can fail). Past the time bound nothing is taken."""
    env = CompetitionEnv("sklearn-digits", backend=backend, step_timeout=60)
    times = "stat -c '%n %x' /home/code/*.bin"
    try:
        env.reset(seed=0)
        env.step(
            "cd /home/code && truncate -s 6G w1.bin w2.bin w3.bin && "
            "head -c $((2*1024*1024)) /dev/urandom > small.bin && echo 'print(1)' > a.py"
        )
        before = env.step(times)[0]
        index = env.keep_code(tmp_path / "code")
        after = env.step(times)[0]
        late = env.keep_code(tmp_path / "late" / "code", CodeBounds(max_seconds=0))
    finally:
        env.close()
    # past the time bound every file is still listed, with the reason, and none is taken
    reasons = {f["path"]: f["reason"] for f in late["files"] if not (f["kept"] or f["sha256"])}
    assert len(reasons) == len(late["files"]) == 5
    assert "past the time bound" in reasons["a.py"]
    assert "past the hashing bounds" in reasons["small.bin"]
    moved = {line.split()[0] for line in set(after.splitlines()) - set(before.splitlines())}
    assert moved == {"/home/code/small.bin"}, (before, after)
    files = {f["path"]: f for f in index["files"]}
    for name in ("w1.bin", "w2.bin", "w3.bin"):
        entry = files[name]
        assert entry["bytes"] == 6 * 1024**3 and not entry["kept"] and entry["sha256"] is None
        assert "not hashed" in entry["reason"]
    assert len(files["small.bin"]["sha256"]) == 64
