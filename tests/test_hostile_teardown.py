"""A hostile agent against teardown and the host's inodes (issue 24, items 1 and 8).

Teardown never fails and never poisons later episodes: a tree 1,500 levels deep, a
`chmod 000` folder or a folder that cannot be removed at all must not make close(), the
scratch sweep of every later process, `mle-gym gc` or a vector env's autoreset raise. The
writable workspace is bounded in files as well as bytes, and its files never reach the
host's disk.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

import mle_gym
from mle_gym.sandbox.scratch import OWNER_FILE, owned_dir, owner_alive, sweep
from tests.conftest import require_bwrap

ENV_ID = "mle/sklearn-digits-v0"
DEPTH = 1500
# Inside the sandbox: a tree DEPTH levels deep with a file at the bottom, and a folder
# locked with `chmod 000` holding files and a locked folder of its own.
HOSTILE = (
    f"cd /home/code && python3 -c \"import os\nfor _ in range({DEPTH}): os.mkdir('d'); "
    "os.chdir('d')\nopen('bottom', 'w').close()\" && mkdir -p locked/inner && "
    "touch locked/a locked/inner/b && chmod 000 locked/inner locked && echo planted"
)
BENIGN = f"""
import gymnasium as gym, mle_gym
env = gym.make({ENV_ID!r}, step_timeout=60)
env.reset(seed=1)
observation, *_ = env.step("echo benign-ok")
env.close()
print(observation)
"""
NOBODY = 65534


@pytest.fixture
def private_tmp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temp dir of the test's own (the sweep's and the workspaces' parent), usable by
    uid 65534 and passed to child processes as TMPDIR."""
    root = Path(tempfile.mkdtemp(prefix="hostile-teardown-"))
    root.chmod(0o1777)  # as /tmp: a helper uid removes its own folders
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    monkeypatch.setenv("TMPDIR", str(root))
    yield root
    subprocess.run(["chmod", "-R", "u+rwx", str(root)], capture_output=True)
    subprocess.run(["rm", "-rf", str(root)], capture_output=True)


def _leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir())


def _dead_owners_folder(parent: Path) -> Path:
    """A scratch folder whose owner process has ended without cleaning up (as after
    SIGKILL)."""
    code = (
        "import os, sys\nfrom pathlib import Path\nfrom mle_gym.sandbox.scratch import owned_dir\n"
        f"print(owned_dir('episode', Path({str(parent)!r})))\nsys.stdout.flush(); os._exit(0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    folder = Path(out.stdout.strip())
    assert owner_alive(folder) is False
    return folder


def _deep_tree(top: Path, depth: int = DEPTH) -> None:
    """`depth` nested folders under `top`, made through descriptors (no path gets long)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        below = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = below
    os.close(os.open("bottom", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
    os.close(fd)


def _new_process_starts_an_episode_and_gc_works() -> None:
    """What a later process on the host does: start a benign episode, then `mle-gym gc`."""
    episode = subprocess.run(
        [sys.executable, "-c", BENIGN], capture_output=True, text=True, timeout=300
    )
    assert episode.returncode == 0, episode.stderr[-3000:]
    assert episode.stdout.strip().splitlines()[-1] == "benign-ok", episode.stdout[-2000:]
    gc = subprocess.run(
        [sys.executable, "-m", "mle_gym.cli", "gc"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "DOCKER_HOST": f"unix://{tempfile.gettempdir()}/no-docker.sock"},
    )
    assert gc.returncode == 0, gc.stdout + gc.stderr
    assert "scratch folder(s)" in gc.stdout


def _as_user(uid: int, action) -> int:
    """Run `action()` in a forked child with `uid` as its only identity; its exit code
    (0: it returned True)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        code = 1
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            code = 0 if action() else 1
        except BaseException:
            code = 2
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def _require_root_to_drop() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to drop to a helper uid (as a user, the other tests run as one)")


# -- item 1: teardown is total --------------------------------------------------------------------
@pytest.mark.timeout(600)
@pytest.mark.parametrize("isolation", ["bwrap", "none"])
@pytest.mark.filterwarnings("ignore:.*NOT ISOLATED:RuntimeWarning")
def test_deep_tree_and_locked_folder_then_close_leave_nothing_and_a_new_process_starts(
    mle_home: Path, private_tmp: Path, isolation: str
) -> None:
    """close() after the agent planted a 1,500-deep tree and a chmod 000 folder: it
    returns, nothing of the episode is left in the temp dir, and a new process on the host
    starts an episode and runs `mle-gym gc`. ("none" keeps the files in host folders, so
    the removal itself is exercised end to end; bubblewrap keeps them in a tmpfs.)"""
    if isolation == "bwrap":
        require_bwrap()
    env = gym.make(ENV_ID, step_timeout=120, sandbox_options={"isolation": isolation})
    try:
        env.reset(seed=0)
        observation, *_ = env.step(HOSTILE)
        assert observation.strip().endswith("planted"), observation
    finally:
        env.close()
    assert _leftovers(private_tmp) == []
    _new_process_starts_an_episode_and_gc_works()
    assert _leftovers(private_tmp) == []


@pytest.mark.timeout(600)
def test_a_dead_owners_deep_tree_never_breaks_a_later_start_or_gc(
    mle_home: Path, private_tmp: Path
) -> None:
    """A scratch folder left by a killed process holds a 1,500-deep tree: the next
    process's first sandbox start sweeps it (that sweep used to raise RecursionError in
    every later process), and `mle-gym gc` works."""
    require_bwrap()
    orphan = _dead_owners_folder(private_tmp)
    (orphan / "code").mkdir()
    _deep_tree(orphan / "code")
    _new_process_starts_an_episode_and_gc_works()
    assert _leftovers(private_tmp) == []


def test_the_sweep_removes_locked_folders_as_a_user(private_tmp: Path) -> None:
    """As a non-root host (a helper uid), a dead owner's folder holding chmod 000 folders
    with files, a deep tree and symlinks out is removed whole; what the links point at is
    not touched."""
    _require_root_to_drop()
    outside = private_tmp / "outside"
    outside.mkdir()
    (outside / "keep").write_text("kept")
    orphan = _dead_owners_folder(private_tmp)
    locked = orphan / "code" / "locked"
    (locked / "inner").mkdir(parents=True)
    (locked / "a").write_text("a")
    (locked / "inner" / "b").write_text("b")
    (orphan / "code" / "out").symlink_to(outside)
    (locked / "keep-link").symlink_to(outside / "keep")
    _deep_tree(orphan / "code", 300)
    subprocess.run(["chown", "-R", "-h", f"{NOBODY}:{NOBODY}", str(orphan)], check=True)
    (locked / "inner").chmod(0)
    locked.chmod(0)

    assert _as_user(NOBODY, lambda: sweep(private_tmp) == [orphan]) == 0
    assert not orphan.exists()
    assert (outside / "keep").read_text() == "kept"


def test_a_folder_that_cannot_be_removed_keeps_its_owner_and_the_sweep_goes_on(
    private_tmp: Path,
) -> None:
    """A part the sweep cannot remove (here: root's files, swept as a user) is logged,
    never raised, and the owner file stays, so a later sweep still knows the folder is a
    dead owner's and removes it once it can; the other folders are swept meanwhile."""
    _require_root_to_drop()
    stuck, other = _dead_owners_folder(private_tmp), _dead_owners_folder(private_tmp)
    (stuck / "code").mkdir()
    (stuck / "code" / "roots").mkdir()
    (stuck / "code" / "roots" / "file").write_text("x")
    theirs = [stuck, stuck / OWNER_FILE, stuck / "code", other, other / OWNER_FILE]
    subprocess.run(["chown", f"{NOBODY}:{NOBODY}", *map(str, theirs)], check=True)

    assert _as_user(NOBODY, lambda: sweep(private_tmp) == [other]) == 0
    assert (stuck / OWNER_FILE).is_file() and owner_alive(stuck) is False
    assert not other.exists()
    assert sweep(private_tmp) == [stuck]  # root can: the next sweep finishes the job
    assert _leftovers(private_tmp) == []


def test_a_live_owners_folder_is_kept_and_the_sweep_survives_odd_entries(
    private_tmp: Path,
) -> None:
    """The sweep passes over entries it cannot judge (no owner file, not a folder,
    unreadable owner file) without raising, and keeps a live owner's folder."""
    mine = owned_dir("episode", private_tmp)
    (private_tmp / "mle-gym-a-file").write_text("not a folder")
    unowned = private_tmp / "mle-gym-unowned"
    (unowned / OWNER_FILE).mkdir(parents=True)  # an owner "file" that is a folder
    assert sweep(private_tmp) == []
    assert mine.is_dir() and unowned.is_dir()


@pytest.mark.timeout(600)
def test_async_vector_env_survives_a_hostile_sub_envs_teardown(
    mle_home: Path, private_tmp: Path
) -> None:
    """The autoreset of a sub-env whose agent left a 1,500-deep tree tears it down in its
    worker process: the vector env goes on, both sub-envs step, and close leaves nothing."""
    require_bwrap()
    env = mle_gym.make_vec(ENV_ID, 2, step_timeout=120)
    try:
        env.reset(seed=0)
        observations, *_ = env.step([HOSTILE, "echo calm"])
        assert observations[0].strip().endswith("planted") and observations[1] == "calm"
        _, _, terminated, _, _ = env.step([{"tool": "submit"}, "echo still"])
        assert list(terminated) == [True, False]
        observations, *_ = env.step(["echo ignored", "echo going"])  # sub-env 0 autoresets
        assert "Handwritten digits" in observations[0] and observations[1] == "going"
        observations, *_ = env.step(["ls /home/code | wc -l", "echo on"])
        assert observations == ("0", "on")
    finally:
        env.close()
    assert _leftovers(private_tmp) == []


# -- item 8: files are bounded, and never land on the host's disk -------------------------------
CREATE_FILES = (
    'cd /home/code && python3 -c "\nimport os\nmade = 0\ntry:\n'
    "    for i in range(200_000):\n        open(f'f{i}', 'w').close(); made += 1\n"
    'except OSError as e:\n    print(e.strerror)\nprint(made)"'
)


@pytest.mark.timeout(600)
def test_an_agent_cannot_create_files_without_bound(
    backend: str, mle_home: Path, private_tmp: Path
) -> None:
    """200,000 empty files in /home/code stop at the `files` bound with "No space left on
    device"; the files survive a shell restart; none of them is a host inode; close removes
    them all."""
    env = gym.make(ENV_ID, backend=backend, step_timeout=300, sandbox_options={"files": 20_000})
    sandbox = env.unwrapped.sandbox
    try:
        env.reset(seed=0)
        observation, *_ = env.step(CREATE_FILES)
        reason, made = observation.strip().splitlines()[-2:]
        assert reason == "No space left on device" and 19_000 <= int(made) < 20_000
        if backend == "local":  # on the host: an empty mount point, and a few files of ours
            assert list((sandbox.root / "code").iterdir()) == []
            assert sum(1 for _ in sandbox.root.rglob("*")) < 20
        observation, *_ = env.step("kill -9 $$")  # the shell restarts; files stay
        observation, *_ = env.step("ls /home/code | wc -l")
        assert observation.strip() == made
    finally:
        env.close()
    assert _leftovers(private_tmp) == []


@pytest.mark.timeout(300)
def test_the_default_bounds_files(backend: str, mle_home: Path, private_tmp: Path) -> None:
    """Without options, /home/code and /home/submission each hold at most DEFAULT_FILES
    files (the kernel's own default for a tmpfs is half the host's memory pages)."""
    from mle_gym.sandbox.workspace import DEFAULT_FILES

    env = gym.make(ENV_ID, backend=backend, step_timeout=60)
    try:
        env.reset(seed=0)
        observation, *_ = env.step("df --output=itotal /home/code /home/submission | tail -n 2")
        assert [int(n) for n in observation.split()] == [DEFAULT_FILES] * 2
    finally:
        env.close()
