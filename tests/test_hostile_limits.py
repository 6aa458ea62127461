"""Limits that fit the host, and no per-user kernel quota shared between sandboxes (issue 24.7).

Each test reproduces what a hostile agent (or plain defaults) did before the fix: one
episode's defaults (16 GiB sandbox + 8 GiB grader) overcommitted a 24 GiB host before any
`make_vec` multiplied them; every local sandbox ran as host uid 61000 and every container as
uid 1000, so one agent could take all 128 inotify instances from the others; the local
sandbox had no CPU quota; and it saw the host's whole cgroup tree through /sys.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import mle_gym
from mle_gym.grading.bounded import GradingLimits
from mle_gym.sandbox.base import Sandbox, SandboxSpec
from mle_gym.sandbox.cgroup import Cgroup, CgroupUnavailable, parse_bytes
from mle_gym.sandbox.host_limits import (
    GRADER_MIN,
    SANDBOX_MIN,
    episode_limits,
    host_cpus,
    host_memory,
)
from mle_gym.sandbox.local import LocalSandbox
from tests.conftest import require_bwrap
from tests.prerequisites import require

ENV_ID = "mle/sklearn-digits-v0"
GIB = 1 << 30
# Takes inotify instances until the kernel refuses one, and keeps them (it sleeps after).
HOARD = (
    "import ctypes, time\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "taken = 0\n"
    "while libc.inotify_init() >= 0:\n"
    "    taken += 1\n"
    "print(taken, ctypes.get_errno(), flush=True)\n"
    "time.sleep(600)\n"
)
PRINT_HOST_MEMORY = "from mle_gym.sandbox import host_limits; print(host_limits.host_memory())"
ONE_MORE = (
    "import ctypes\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "print(libc.inotify_init(), ctypes.get_errno())\n"
)


@pytest.fixture
def public(tmp_path: Path) -> Path:
    directory = tmp_path / "public"
    directory.mkdir(mode=0o755)
    (directory / "train.csv").write_text("a,b\n1,2\n")
    return directory


def _two_sandboxes(backend: str, public: Path, request: pytest.FixtureRequest) -> list[Sandbox]:
    if backend.startswith("docker"):
        request.getfixturevalue("runsc" if backend == "docker-runsc" else "docker_engine")
        from mle_gym.sandbox.docker import DockerSandbox

        boxes: list[Sandbox] = [DockerSandbox(), DockerSandbox()]
    else:
        require_bwrap()
        boxes = [LocalSandbox(), LocalSandbox()]
    for box in boxes:
        request.addfinalizer(box.stop)
        box.start(SandboxSpec(public))
    return boxes


# -- memory: the defaults are a share of the host --------------------------------------------
@pytest.mark.parametrize("total_gib, episodes", [(24, 1), (24, 4), (16, 4), (64, 8), (512, 2)])
def test_default_memory_is_a_share_of_the_host(
    tmp_path: Path, total_gib: int, episodes: int
) -> None:
    """With an injected /proc/meminfo: every episode's sandbox and grader together fit."""
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(f"MemTotal:       {total_gib << 20} kB\nMemFree:        1024 kB\n")
    memory = host_memory(meminfo)
    assert memory <= total_gib * GIB
    limits = episode_limits(episodes, memory)
    assert episodes * (limits.sandbox_memory + limits.grader_memory) <= memory
    assert limits.sandbox_memory >= SANDBOX_MIN and limits.grader_memory >= GRADER_MIN
    assert limits.sandbox_memory <= 16 * GIB and limits.grader_memory <= 8 * GIB


def test_a_lower_cgroup_limit_of_this_process_is_the_hosts_memory() -> None:
    """A process in a cgroup with a 3 GiB memory limit counts 3 GiB, not MemTotal."""
    group = Cgroup(memory=3 * GIB, pids=None, cpus=None)
    try:
        group.create()
    except CgroupUnavailable as exc:
        require(False, f"no cgroup can be made here ({exc}): run as root")
    try:
        seen = subprocess.run(
            [*group.join_argv(), sys.executable, "-c", PRINT_HOST_MEMORY],
            capture_output=True, text=True, check=True, timeout=60,
        ).stdout  # fmt: skip
    finally:
        group.remove()
    assert int(seen) == 3 * GIB


@pytest.mark.timeout(180)
def test_make_vec_gives_each_episode_its_share_and_options_still_win(mle_home: Path) -> None:
    """make_vec(num_envs=4) on this host: 4 × (sandbox + grader) stays within its memory,
    the started sandbox's cgroup has the derived limit, and the grade still works under
    the derived grader limit; an explicit `memory` option is kept as given."""
    require_bwrap()
    total = host_memory()
    expected = episode_limits(4)
    vec = mle_gym.make_vec(ENV_ID, 4, vectorization_mode="sync", step_timeout=30)
    try:
        envs = [e.unwrapped for e in vec.envs]
        sandbox_memory = [e.sandbox.memory for e in envs]
        grader_memory = [e.grading_limits.memory for e in envs]
        assert sandbox_memory == [expected.sandbox_memory] * 4
        assert grader_memory == [expected.grader_memory] * 4
        assert 4 * (sandbox_memory[0] + grader_memory[0]) <= total

        first = vec.envs[0]
        first.reset(seed=0)
        first.step("cp /home/data/sample_submission.csv /home/submission/submission.csv")
        group = envs[0].sandbox.cgroup
        require(group is not None, "no cgroup for the local sandbox: run as root")
        assert group is not None
        limit_file = group.dirs.get("v2", Path()) / "memory.max"
        if "v2" not in group.dirs:
            limit_file = group.dirs["memory"] / "memory.limit_in_bytes"
        assert int(limit_file.read_text()) == expected.sandbox_memory
        *_, terminated, _, info = first.step({"tool": "submit"})
        assert terminated and info["report"]["valid_submission"], info["report"]
    finally:
        vec.close()

    chosen = gym.make(ENV_ID, sandbox_options={"memory": "3g"}, concurrent_episodes=4)
    try:
        assert chosen.unwrapped.sandbox.memory == parse_bytes("3g")
    finally:
        chosen.close()


@pytest.mark.timeout(120)
def test_the_graders_share_still_bounds_a_hostile_submission(mle_home: Path) -> None:
    """The env counts the grader's memory as what it adds to the address space it inherits
    (threads' stacks and arenas are no memory spent); a submission needing more than that
    is still an invalid one that names memory."""
    require_bwrap()
    env = gym.make(ENV_ID, step_timeout=30)
    try:
        assert env.unwrapped.grading_limits.memory_added
        env.reset(seed=0)
        submission = "/home/submission/submission.csv"
        env.step(f"cp /home/data/sample_submission.csv {submission}")
        env.step(f"head -c 40000000 /dev/zero | tr '\\0' x >> {submission}")
        env.unwrapped.grading_limits = GradingLimits(memory=16 << 20, memory_added=True)
        *_, info = env.step({"tool": "submit"})
    finally:
        env.close()
    assert not info["report"]["valid_submission"]
    assert "memory" in info["report"]["error"], info["report"]["error"]


def test_batch_workers_share_the_host(local_batch: Path) -> None:
    """A batch of 2 local workers: each episode's sandbox got its share for 2 episodes."""
    expected = episode_limits(2).sandbox_memory
    results = [json.loads(p.read_text()) for p in local_batch.glob("episodes/*/*/result.json")]
    assert results and {parse_bytes(r["sandbox"]["memory"]) for r in results} == {expected}


# -- per-user kernel quotas ---------------------------------------------------------------------
@pytest.mark.timeout(180)
@pytest.mark.parametrize("backend", ["local", "docker"])
def test_one_sandbox_cannot_take_anothers_inotify_instances(
    backend: str, public: Path, request: pytest.FixtureRequest
) -> None:
    """A takes inotify instances until the kernel refuses (EMFILE: its uid's quota is
    spent); B, running at the same time, can still make one: their uids differ. The host
    writes each one's script into its /home/code, as that sandbox's own uid."""
    if backend == "local":
        require(os.geteuid() == 0, "distinct host uids for local sandboxes need root")
    hoarder, other = _two_sandboxes(backend, public, request)
    hoarder.write_file("/home/code/hoard.py", HOARD.encode())
    other.write_file("/home/code/one_more.py", ONE_MORE.encode())
    hoarder.run("python3 hoard.py > /tmp/hoard.out 2>&1 &", 20)
    taken = ""
    for _ in range(100):
        taken = hoarder.run("sleep 0.1; cat /tmp/hoard.out", 20).output.split()
        if taken:
            break
    count, errno = map(int, taken)
    assert errno == 24 and count < 1000  # EMFILE from the quota, not from the fd limit
    fd, errno = map(int, other.run("python3 one_more.py", 20).output.split())
    assert fd >= 0, f"the other sandbox could not make an inotify instance (errno {errno})"
    uids = [box.run("id -u", 20).output.strip() for box in (hoarder, other)]
    assert uids[0] != uids[1], uids
    owners = [box.run("stat -c %u *.py", 20).output.strip() for box in (hoarder, other)]
    assert owners == uids


# -- CPU ---------------------------------------------------------------------------------------
def test_local_sandbox_has_a_cpu_quota_by_default(public: Path) -> None:
    """Like docker's default: every core this process may use, as a cgroup quota (seen from
    the host and from inside, where the sandbox's own group is all of /sys/fs/cgroup)."""
    require_bwrap()
    box = LocalSandbox()
    box.start(SandboxSpec(public))
    try:
        require(box.cgroup is not None, "no cgroup for the local sandbox: run as root")
        assert box.cgroup is not None
        quota = int(host_cpus() * 100_000)
        if "v2" in box.cgroup.dirs:
            host_view = (box.cgroup.dirs["v2"] / "cpu.max").read_text().split()
            inside = box.run("cat /sys/fs/cgroup/cpu.max", 20).output.split()
            assert host_view == inside == [str(quota), "100000"]
        else:
            host_view = (box.cgroup.dirs["cpu"] / "cpu.cfs_quota_us").read_text().strip()
            inside = box.run("cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us", 20).output.strip()
            assert host_view == inside == str(quota)
    finally:
        box.stop()


# -- other sandboxes' cgroups ------------------------------------------------------------------
@pytest.mark.timeout(180)
@pytest.mark.parametrize("backend", ["local", "docker", "docker-runsc"])
def test_another_sandboxs_cgroup_is_out_of_sight(
    backend: str, public: Path, request: pytest.FixtureRequest
) -> None:
    """From inside one sandbox, nothing of the other's cgroup (its processes, its memory
    use) can be found or read under /sys."""
    watcher, other = _two_sandboxes(backend, public, request)
    if backend.startswith("docker"):
        name = other.container.id  # type: ignore[attr-defined]
        files = []
    else:
        require(other.cgroup is not None, "no cgroup for the local sandbox: run as root")
        assert other.cgroup is not None
        name = next(iter(other.cgroup.dirs.values())).name
        usage = {"v2": "memory.current", "memory": "memory.usage_in_bytes"}
        files = [d / "cgroup.procs" for d in other.cgroup.dirs.values()]
        files += [d / usage[k] for k, d in other.cgroup.dirs.items() if k in usage]
        assert all(f.is_file() for f in files)  # there on the host
    found = watcher.run(f"find /sys/fs/cgroup -path '*{name}*' 2>/dev/null | head -3", 60)
    assert found.output.strip() == ""
    for path in files:
        result = watcher.run(f"cat {path}", 20)
        assert result.exit_code != 0, f"{path} is readable: {result.output[:200]}"
