"""The docker backend on a real engine: isolation, limits, and no leaked containers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import gymnasium as gym
import pytest
from docker.types import DeviceRequest

import mle_gym  # noqa: F401
from mle_gym.cli import build_parser
from mle_gym.cli.common import env_kwargs_from
from mle_gym.data import CompetitionDirs
from mle_gym.data.checksums import md5_of
from mle_gym.sandbox.base import SandboxError, SandboxSpec
from mle_gym.sandbox.containers import LABEL, LABEL_PID
from mle_gym.sandbox.docker import DockerSandbox
from mle_gym.sandbox.gpus import assign_gpus, device_requests
from mle_gym.sandbox.uids import AGENT_UIDS

pytestmark = pytest.mark.docker


def _ours(client, pid: int | None = None) -> list:
    pid = os.getpid() if pid is None else pid
    return client.containers.list(all=True, filters={"label": [f"{LABEL}=1", f"{LABEL_PID}={pid}"]})


@pytest.fixture
def env(spaceship_home: Path, docker_engine, docker_runtime: str):
    """An episode's sandbox on the engine's default runtime, and again under gVisor."""
    with gym.make(
        "mle/spaceship-titanic-v0",
        backend="docker",
        step_timeout=20,
        sandbox_options={"memory": "512m", "pids_limit": 256},
    ) as env:
        env.reset(seed=0)
        yield env


def run(env, command: str) -> tuple[str, dict]:
    observation, _, _, _, info = env.step(command)
    return observation, info


def test_container_is_unprivileged_and_labelled(env, docker_engine, docker_runtime) -> None:
    uid, *caps = run(env, "id -u; grep CapEff /proc/self/status")[0].split()
    assert int(uid) in AGENT_UIDS and caps == ["CapEff:", "0000000000000000"]
    (container,) = _ours(docker_engine)
    attrs = container.attrs["HostConfig"]
    assert attrs["Runtime"] == {"default": "runc"}.get(docker_runtime, docker_runtime)
    assert attrs["NetworkMode"] == "none" and not attrs["Privileged"]
    assert attrs["CapDrop"] == ["ALL"] and attrs["PidsLimit"] == 256
    assert attrs["Memory"] == 512 * 1024**2
    assert container.labels["mle_gym.episode"]


def test_no_network_and_no_answers_inside(env, spaceship_home: Path) -> None:
    script = (
        "import socket\nfor host in ['1.1.1.1', '172.17.0.1', '127.0.0.1']:\n"
        "    try: socket.create_connection((host, 80), timeout=3); print('CONNECTED')\n"
        "    except OSError: print('refused')"
    )
    output, _ = run(env, f'python3 -c "{script}"')
    assert output.split() == ["refused"] * 3
    assert run(env, "tail -n +3 /proc/net/dev | cut -d: -f1")[0].split() == ["lo"]
    private = CompetitionDirs.of("spaceship-titanic", spaceship_home).private / "test.csv"
    assert "No such file" in run(env, f"ls {private} {spaceship_home} 2>&1")[0]
    sums, _ = run(env, "find / -xdev -type f -name '*.csv' 2>/dev/null | xargs -r md5sum")
    assert md5_of(private) not in sums


def test_data_is_read_only(env, spaceship_home: Path) -> None:
    public = CompetitionDirs.of("spaceship-titanic", spaceship_home).public
    before = {p.name: md5_of(p) for p in public.iterdir()}
    output, _ = run(
        env,
        "rm -f /home/data/train.csv; echo x > /home/data/new; "
        "rm -rf --no-preserve-root / 2>/dev/null; echo done",
    )
    # gVisor checks the agent's permissions before the mount's read-only flag: either refuses
    refused = ("Read-only file system", "Permission denied")
    assert any(reason in output for reason in refused) and output.rstrip().endswith("done")
    assert {p.name: md5_of(p) for p in public.iterdir()} == before


def test_memory_limit_kill_is_reported(env, docker_runtime) -> None:
    output, info = run(env, "python3 -c 'x = bytearray(2 * 1024**3); print(len(x))'")
    assert str(2 * 1024**3) not in output
    if docker_runtime == "runsc":
        # gVisor's kernel is one host process in the container's cgroup: the limit ends the
        # whole sandbox (docs/security.md), and the next command starts it again and says why
        # (the step that overran, when the sandbox is still going down as its shell restarts,
        # reports the lost shell, and the note comes with the command after it)
        said = [output]
        while len(said) < 4 and not any("the sandbox had stopped" in o for o in said):
            said.append(run(env, "echo alive")[0])
        assert any("the sandbox had stopped (out of memory, limit 512m)" in o for o in said)
        assert _answers_again(env)
        return
    assert "killed: out of memory, limit 512m" in output
    assert info["exit_code"] == 137
    assert run(env, "echo alive")[0] == "alive"


def _answers_again(env, command: str = "echo alive", expected: str = "alive") -> bool:
    """Whether `command` answers `expected` again within a few steps (the first ones after
    a sandbox that was ended report the lost shell)."""
    return any(run(env, command)[0].splitlines()[-1:] == [expected] for _ in range(5))


def test_fork_bomb_is_contained_and_env_stays_usable(env, docker_runtime) -> None:
    env.step("echo kept > /home/code/notes.txt")
    if docker_runtime == "runsc":
        # each of gVisor's address spaces is a host process, so the pids limit ends the
        # whole sandbox (docs/security.md); the next commands start it again
        run(env, ":(){ :|:& };:")
        assert _answers_again(env, "ls /proc | grep -c '^[0-9]' | sed 's/^[0-9]$/few/'", "few")
        return
    observation = ""
    for _ in range(3):  # the bomb, then commands until the full process table is noticed
        observation, info = run(env, ":(){ :|:& };:")
        if info["timed_out"]:
            break
        observation, info = run(env, "sleep 30")
        if "ran out of process slots" in observation:
            break
    assert "ran out of process slots (pids limit 256)" in observation
    assert run(env, "cat /home/code/notes.txt")[0] == "kept"
    assert int(run(env, "ls /proc | grep -c '^[0-9]'")[0]) < 20


def test_twenty_episodes_leave_no_container(spaceship_home: Path, docker_engine) -> None:
    with gym.make("mle/spaceship-titanic-v0", backend="docker") as env:
        for seed in range(20):
            env.reset(seed=seed)
            assert run(env, "echo $MLE_GYM_SEED")[0] == str(seed)
            assert len(_ours(docker_engine)) == 1
    assert _ours(docker_engine) == []


def test_two_envs_keep_their_own_containers(spaceship_home: Path, docker_engine) -> None:
    first = gym.make("mle/spaceship-titanic-v0", backend="docker")
    second = gym.make("mle/spaceship-titanic-v0", backend="docker")
    try:
        first.reset(seed=1)
        second.reset(seed=2)
        first.unwrapped.start()  # reset() is lazy: the containers start here
        second.unwrapped.start()
        names = {c.name for c in _ours(docker_engine)}
        assert len(names) == 2
        first.step("echo one > /home/code/who")
        assert "No such file" in run(second, "cat /home/code/who 2>&1")[0]
        first.close()
        assert run(second, "echo $MLE_GYM_SEED")[0] == "2"
        assert len(_ours(docker_engine)) == 1
    finally:
        first.close()
        second.close()


_OWNER = textwrap.dedent("""
    import sys, time, gymnasium as gym, mle_gym
    env = gym.make("mle/spaceship-titanic-v0", backend="docker")
    env.reset(seed=0)
    env.unwrapped.start()
    print("ready", flush=True)
    time.sleep(300)
""")


def _start_owner(spaceship_home: Path) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", _OWNER],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "MLE_GYM_HOME": str(spaceship_home)},
    )
    assert proc.stdout.readline().strip() == "ready"
    return proc


def test_sigkilled_owner_leaves_a_container_that_gc_removes(spaceship_home, docker_engine) -> None:
    owner = _start_owner(spaceship_home)
    owner.kill()
    owner.wait(timeout=30)
    assert len(_ours(docker_engine, owner.pid)) == 1
    # A live process's containers are not touched by another process's gc.
    with gym.make("mle/spaceship-titanic-v0", backend="docker") as env:
        env.reset()
        env.unwrapped.start()
        out = subprocess.run(["mle-gym", "gc"], capture_output=True, text=True, timeout=120)
        assert "removed 1 orphaned container" in out.stdout, out.stdout + out.stderr
        assert _ours(docker_engine, owner.pid) == []
        assert len(_ours(docker_engine)) == 1


def test_next_start_removes_orphans(spaceship_home, docker_engine) -> None:
    owner = _start_owner(spaceship_home)
    owner.kill()
    owner.wait(timeout=30)
    code = (
        "import gymnasium as gym, mle_gym; e = gym.make('mle/spaceship-titanic-v0', "
        "backend='docker'); e.reset(); e.unwrapped.start(); e.close()"
    )
    subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        timeout=120,
        env={**os.environ, "MLE_GYM_HOME": str(spaceship_home)},
    )
    assert _ours(docker_engine, owner.pid) == []
    from mle_gym.sandbox.scratch import owner_alive

    left = [d for d in Path(tempfile.gettempdir()).glob("mle-gym-*") if owner_alive(d) is False]
    assert left == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_terminated_owner_removes_its_containers(spaceship_home, docker_engine, signum) -> None:
    owner = _start_owner(spaceship_home)
    owner.send_signal(signum)
    owner.wait(timeout=60)
    deadline = time.monotonic() + 10
    while _ours(docker_engine, owner.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _ours(docker_engine, owner.pid) == []


def test_missing_image_names_the_build_command(spaceship_home, docker_engine) -> None:
    with pytest.raises(RuntimeError, match="mle-gym build-image"):  # at make, not at reset
        gym.make(
            "mle/spaceship-titanic-v0",
            backend="docker",
            sandbox_options={"image": "mle-gym-agent:does-not-exist"},
        )


# -- GPU requests (no GPU on these machines: the requests themselves are checked) --------------
@pytest.mark.parametrize(
    ("gpus", "expected"),
    [
        (None, []),
        (0, []),
        ("all", [DeviceRequest(count=-1, capabilities=[["gpu"]])]),
        (2, [DeviceRequest(count=2, capabilities=[["gpu"]])]),
        ([1, 3], [DeviceRequest(device_ids=["1", "3"], capabilities=[["gpu"]])]),
        (["GPU-abc"], [DeviceRequest(device_ids=["GPU-abc"], capabilities=[["gpu"]])]),
    ],
)
def test_device_requests(gpus, expected) -> None:
    assert device_requests(gpus) == expected


@pytest.mark.parametrize("bad", ["two", -1, True])
def test_bad_gpu_specs_are_refused(bad) -> None:
    with pytest.raises(ValueError):
        device_requests(bad)


def test_gpu_assignment_is_round_robin() -> None:
    devices = [0, 1, 2]
    assert [assign_gpus(devices, i) for i in range(5)] == [["0"], ["1"], ["2"], ["0"], ["1"]]
    assert [assign_gpus(devices, i, per_env=2) for i in range(3)] == [
        ["0", "1"],
        ["2", "0"],
        ["1", "2"],
    ]
    assert assign_gpus([], 3) == []
    with pytest.raises(ValueError):
        assign_gpus([0], 0, per_env=2)


def test_gpus_reach_the_container_request(spaceship_home: Path, docker_engine) -> None:
    # no GPU runtime here: the engine refuses the device request of gym.make's check
    with pytest.raises(RuntimeError, match="cannot give the sandbox the GPUs"):
        gym.make("mle/spaceship-titanic-v0", backend="docker", sandbox_options={"gpus": ["0"]})
    assert _ours(docker_engine) == []  # the check's container is gone too


def test_a_missing_image_named_by_mle_gym_image_says_the_variable_chose_it(
    docker_engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mle_gym.sandbox.base import SandboxError
    from mle_gym.sandbox.docker import resolve_image

    monkeypatch.setenv("MLE_GYM_IMAGE", "mle-gym-test:no-such-tag")
    with pytest.raises(SandboxError) as refused:
        resolve_image(docker_engine, None)
    message = str(refused.value)
    assert "mle-gym-test:no-such-tag" in message and "$MLE_GYM_IMAGE chose it" in message
    assert "build-image" not in message and "unset MLE_GYM_IMAGE" in message


# -- the engine's runtime (gVisor's runsc) ------------------------------------------------------
def test_an_unknown_runtime_is_refused_with_the_way_to_register_it(
    spaceship_home: Path, docker_engine
) -> None:
    with pytest.raises(RuntimeError, match=r"no runtime named 'mle-gym-no-such-runtime'.*runsc"):
        gym.make(
            "mle/spaceship-titanic-v0",
            backend="docker",
            sandbox_options={"runtime": "mle-gym-no-such-runtime"},
        )
    with pytest.raises(ValueError, match=r"unknown sandbox option.*runtime"):
        gym.make("mle/spaceship-titanic-v0", backend="docker", sandbox_options={"runtimes": "x"})


def test_runsc_refuses_what_it_cannot_give(tmp_path: Path, runsc: str) -> None:
    """The network (gVisor registered with --network=none) and the host's unix sockets that
    the harness and MLE-bench's route need are refused with the reason, not left to fail."""
    sandbox = DockerSandbox()  # $MLE_GYM_DOCKER_RUNTIME=runsc
    assert sandbox.describe()["container_runtime"] == "runsc"
    with pytest.raises(SandboxError, match=r"network=True.*--network=none"):
        sandbox.start(SandboxSpec(tmp_path, network=True))
    sandbox.start(SandboxSpec(tmp_path))
    try:
        with pytest.raises(SandboxError, match="gVisor's own kernel"):
            sandbox.agent_identity()
    finally:
        sandbox.stop()


def test_the_cli_passes_the_runtime_to_docker_sandboxes_only() -> None:
    parse = build_parser().parse_args
    args = parse(["run", "sklearn-digits", "--backend", "docker", "--docker-runtime", "runsc"])
    assert env_kwargs_from(args)["sandbox_options"] == {"runtime": "runsc"}
    with pytest.raises(SystemExit, match="add --backend docker"):
        env_kwargs_from(parse(["run", "sklearn-digits", "--docker-runtime", "runsc"]))
