"""A hostile agent: escapes, grade vetoes and host resources (issue 9), on both backends.

Each test is a reproduction that succeeded against the sandboxes before their fixes.
"""

from __future__ import annotations

import http.server
import os
import shutil
import socketserver
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import gymnasium as gym
import pytest

import mle_gym  # noqa: F401  (registers the envs)
from mle_gym.grading.bounded import GradingLimits
from mle_gym.sandbox import seccomp, shell_backed
from mle_gym.sandbox.base import SandboxError, SandboxFileError, SandboxPaths, SandboxSpec
from mle_gym.sandbox.local import LocalSandbox, bwrap_argv
from tests.conftest import WITH_RUNSC, require_bwrap

SUBMISSION = "/home/submission/submission.csv"
SYSCALL = "import ctypes;l=ctypes.CDLL(None,use_errno=True);"


@pytest.fixture
def public(tmp_path: Path) -> Path:
    directory = tmp_path / "public"
    directory.mkdir(mode=0o755)
    (directory / "train.csv").write_text("a,b\n1,2\n")
    return directory


@pytest.fixture
def box(public: Path):
    require_bwrap()
    sandbox = LocalSandbox()
    sandbox.start(SandboxSpec(public))
    yield sandbox
    sandbox.stop()


def _env(backend: str, **kwargs):
    return gym.make("mle/spaceship-titanic-v0", backend=backend, step_timeout=20, **kwargs)


# -- escapes (local backend) ----------------------------------------------------------------
def test_agent_is_never_host_root(box: LocalSandbox) -> None:
    """The sandbox's processes run as an unprivileged host uid with no capabilities."""
    assert box.shell is not None
    shell_pid = box._sandbox_pid()
    host_uid = int(Path(f"/proc/{shell_pid}/status").read_text().split("Uid:")[1].split()[0])
    assert host_uid != 0
    caps = box.run("grep CapEff /proc/self/status", 10).output.split()[-1]
    assert int(caps, 16) == 0


def test_kernel_tunables_are_read_only(box: LocalSandbox) -> None:
    """core_pattern runs a program as host root when a process crashes: not writable."""
    result = box.run("printf '|/home/code/x.sh' > /proc/sys/kernel/core_pattern", 10)
    assert result.exit_code != 0
    assert "Read-only file system" in result.output or "Permission denied" in result.output
    assert not Path("/proc/sys/kernel/core_pattern").read_text().startswith("|/home/code")


def test_no_nested_user_namespaces(box: LocalSandbox) -> None:
    result = box.run("unshare -r id", 10)
    assert result.exit_code != 0 and "uid=0" not in result.output


@pytest.mark.parametrize(
    ("call", "name"),
    [
        ("print(l.syscall(250, 0, -3, 0), ctypes.get_errno())", "keyctl"),  # x86_64 keyctl
        ('import fcntl; fcntl.ioctl(0, 0x5412, b"x"); print("injected")', "TIOCSTI"),
    ],
)
def test_syscalls_an_agent_never_needs_are_refused(box: LocalSandbox, call: str, name: str) -> None:
    if name == "keyctl" and os.uname().machine != "x86_64":
        pytest.skip("the syscall number in this test is x86_64's")
    output = box.run(f"python3 -c '{SYSCALL}{call}' < /dev/tty", 10).output
    assert "injected" not in output
    if name != "TIOCSTI":
        assert output.split()[-2:] == ["-1", "1"], output  # EPERM


def test_each_sandbox_gets_a_fresh_keyring(public: Path) -> None:
    """A key in the host's session keyring is not visible; keyrings are not shared."""
    require_bwrap()
    boxes = [LocalSandbox(), LocalSandbox()]
    try:
        for b in boxes:
            b.start(SandboxSpec(public))
        listings = [b.run("cat /proc/keys", 10).output for b in boxes]
    finally:
        for b in boxes:
            b.stop()
    sessions = [
        {line.split()[0] for line in text.splitlines() if "_ses" in line} for text in listings
    ]
    assert sessions[0] and sessions[1] and not sessions[0] & sessions[1]


def test_the_agents_shell_holds_no_descriptor_of_the_host(box: LocalSandbox) -> None:
    """Only its terminal, its output pipe and /dev/null: none of the descriptors its start
    used (the workspace's namespaces, the seccomp program) comes through bubblewrap."""
    assert box.shell is not None
    shell = box._sandbox_pid()
    targets = {os.readlink(entry) for entry in Path(f"/proc/{shell}/fd").iterdir()}
    output_pipe = os.readlink(f"/proc/{shell}/fd/61")
    assert all(
        t == output_pipe or t == "/dev/null" or t.startswith("/dev/pts/") for t in targets
    ), targets


def test_network_true_has_no_route_to_host_loopback(public: Path) -> None:
    """With network=True the sandbox has its own namespace: host loopback is out of reach."""
    require_bwrap()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    with socketserver.TCPServer(("127.0.0.1", 0), Quiet) as server:
        port = server.server_address[1]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        sandbox = LocalSandbox()
        sandbox.start(SandboxSpec(public, network=True))
        try:
            probe = (
                "import socket\n"
                "for host in ('127.0.0.1', '10.0.2.2'):\n"
                "    s = socket.socket(); s.settimeout(3)\n"
                f"    print(host, s.connect_ex((host, {port})))\n"
            )
            output = sandbox.run(f'python3 -c "{probe}"; cat /proc/net/dev', 20).output
        finally:
            sandbox.stop()
            server.shutdown()
    assert "tap0" in output  # the uplink's interface: a namespace of its own
    for host in ("127.0.0.1", "10.0.2.2"):
        line = next(x for x in output.splitlines() if x.startswith(host))
        assert line.split()[1] != "0", line  # not connected


def test_no_isolation_by_accident(public: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without bubblewrap the local backend refuses, saying what to do."""
    monkeypatch.setattr("mle_gym.sandbox.local.bwrap_available", lambda: False)
    with pytest.raises(SandboxError, match="apt-get install bubblewrap"):
        LocalSandbox()


def test_unisolated_mode_shows_the_same_paths(public: Path) -> None:
    with pytest.warns(RuntimeWarning, match="NOT ISOLATED"):
        sandbox = LocalSandbox(isolation="none")
    sandbox.start(SandboxSpec(public))
    try:
        output = sandbox.run(
            "pwd; cat /home/data/train.csv; touch /home/submission/x; ls /home", 10
        )
    finally:
        sandbox.stop()
    assert output.output.splitlines()[:3] == ["/home/code", "a,b", "1,2"]
    assert {"code", "data", "logs", "submission"} <= set(output.output.split())


# -- grade vetoes (both backends) -------------------------------------------------------------
def _submit(env, *commands: str) -> dict:
    env.reset(seed=0)
    for command in commands:
        env.step(command)
    *_, terminated, _truncated, info = env.step({"tool": "submit"})
    assert terminated
    return info["report"]


def test_repeated_header_names_are_invalid_not_an_exception(spaceship_home, backend) -> None:
    """Every test id, but the target column twice."""
    with _env(backend) as env:
        report = _submit(
            env,
            'awk -F, \'NR == 1 {print $1 ",Transported,Transported"; next} '
            f'{{print $1 "," $2 "," $2}}\' /home/data/sample_submission.csv > {SUBMISSION}',
        )
    assert not report["valid_submission"] and report["error"]


@WITH_RUNSC
def test_shadowed_commands_do_not_break_the_copy_out(spaceship_home, backend) -> None:
    """Functions shadowing what the host used to parse do not touch the transfer."""
    with _env(backend) as env:
        report = _submit(
            env,
            f"cp /home/data/sample_submission.csv {SUBMISSION}",
            # the shell itself keeps working (printf is left alone: its markers need it)
            "stat() { echo 1; }; base64() { :; }; mkdir() { :; }; cat() { :; }; head() { :; }",
            "export -f stat base64 mkdir cat head",
        )
    assert report["valid_submission"], report["error"]
    assert report["score"] == pytest.approx(0.50345)


@pytest.mark.docker
def test_killing_the_keeper_cannot_stop_the_container(
    spaceship_home, docker_engine, docker_runtime
) -> None:
    with _env("docker") as env:
        env.reset(seed=0)
        env.step(f"cp /home/data/sample_submission.csv {SUBMISSION}")
        observation, *_ = env.step("kill -9 1 $(pgrep -f 'sleep infinity'); echo done")
        container = env.unwrapped.sandbox.container
        container.reload()
        assert container.status == "running", observation
        *_, info = env.step({"tool": "submit"})
    assert info["report"]["valid_submission"]


@pytest.mark.docker
def test_a_stopped_container_is_started_again(spaceship_home, docker_engine) -> None:
    """Stopped under the env, the container comes back for the next command and for the
    copy-out at submit: the episode ends with a graded report either way."""
    with _env("docker") as env:
        env.reset(seed=0)
        env.unwrapped.start()
        env.unwrapped.sandbox.container.stop(timeout=0)
        # the command met a dead shell: it says so, and the next one runs in the new shell
        assert "a new shell was started" in env.step("echo lost")[0]
        observation, *_ = env.step(f"cp /home/data/sample_submission.csv {SUBMISSION}; echo back")
        *_, info = env.step({"tool": "submit"})
        assert observation.strip() == "back"
        assert info["report"]["valid_submission"], info["report"]["error"]

        env.reset(seed=0)
        env.step(f"cp /home/data/sample_submission.csv {SUBMISSION}")
        env.unwrapped.sandbox.container.stop(timeout=0)  # its tmpfs workspace goes with it
        *_, terminated, _, info = env.step({"tool": "submit"})
    assert terminated
    assert info["report"]["error"] == "no submission file was found"


# -- host resources ---------------------------------------------------------------------------
def _address_space() -> int:
    """This process's virtual size: a forked grading child starts with it."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmSize")


@pytest.mark.parametrize("limit", ["memory", "wall clock"])
def test_grading_runs_under_limits(spaceship_home, limit) -> None:
    """A grade that needs more than its limits is an invalid submission, saying which."""
    require_bwrap()
    with _env("local") as env:
        env.reset(seed=0)
        env.step(f"cp /home/data/sample_submission.csv {SUBMISSION}")
        if limit == "memory":
            # one 40 MB cell: reading it needs far more than 16 MiB beyond the start
            env.step(f"head -c 40000000 /dev/zero | tr '\\0' x >> {SUBMISSION}")
            from mle_gym.grading.bounded import _preload

            _preload()
            limits, reason = GradingLimits(memory=_address_space() + 16 * 1024**2), "memory"
        else:
            limits, reason = GradingLimits(wall_seconds=0.001), "took longer than"
        env.unwrapped.grading_limits = limits
        *_, info = env.step({"tool": "submit"})
    report = info["report"]
    assert not report["valid_submission"]
    assert reason in report["error"], report["error"]


def test_step_logs_are_capped(spaceship_home, monkeypatch: pytest.MonkeyPatch) -> None:
    require_bwrap()
    monkeypatch.setattr(shell_backed, "STEP_LOG_BYTES", 1 << 20)
    with _env("local") as env:
        env.reset(seed=0)
        env.step("head -c 20000000 /dev/zero | tr '\\0' 'x'")
        logs = env.unwrapped.sandbox.logs_dir
        size = (logs / "step-00001.log").stat().st_size
    assert (1 << 20) <= size < (1 << 20) + 200_000


def test_local_writable_space_is_bounded(public: Path) -> None:
    require_bwrap()
    sandbox = LocalSandbox(disk="16m")
    sandbox.start(SandboxSpec(public))
    try:
        result = sandbox.run("head -c 40000000 /dev/zero > /tmp/fill", 20)
    finally:
        sandbox.stop()
    assert result.exit_code != 0 and "No space left" in result.output


@pytest.mark.docker
def test_docker_writable_space_is_bounded(public: Path, docker_engine, docker_runtime) -> None:
    from mle_gym.sandbox.docker import DockerSandbox

    sandbox = DockerSandbox(disk="16m")
    sandbox.start(SandboxSpec(public))
    try:
        result = sandbox.run("head -c 40000000 /dev/zero > /home/code/fill", 20)
        layer = sandbox.run("touch /usr/x /home/agent/ok", 20)
    finally:
        sandbox.stop()
    assert result.exit_code != 0 and "No space left" in result.output
    # gVisor checks the agent's permissions before the mount's read-only flag: either refuses
    assert any(reason in layer.output for reason in ("Read-only file system", "Permission denied"))


def test_local_memory_and_process_limits(public: Path) -> None:
    require_bwrap()
    sandbox = LocalSandbox(memory="256m", pids_limit=64)
    sandbox.start(SandboxSpec(public))
    try:
        memory = sandbox.run("python3 -c 'x = bytearray(1 << 30); print(len(x))'", 30)
        processes = sandbox.run("for i in $(seq 100); do sleep 20 & done 2>&1 | tail -1", 30)
        after = sandbox.run("echo alive", 20)
    finally:
        sandbox.stop()
    assert memory.exit_code != 0 and "out of memory" in memory.output
    assert "Resource temporarily unavailable" in processes.output or processes.timed_out
    assert "alive" in after.output


def test_unprivileged_host_maps_the_agent_onto_that_user() -> None:
    """Run as a user (as most researchers do), the sandbox's processes are that user on
    the host, and the same refusals hold (CI is root, so the test drops to uid 65534)."""
    require_bwrap()
    if os.geteuid() != 0:
        pytest.skip("needs root to drop to another uid; as a user every test here is this one")
    nobody = 65534
    root = Path(tempfile.mkdtemp(prefix="mle-gym-test-"))  # reachable for uid 65534
    root.chmod(0o755)
    for name in ("code", "submission", "logs", "public"):
        (root / name).mkdir(mode=0o755)
        os.chown(root / name, nobody, nobody)
    argv = bwrap_argv(
        root,
        SandboxSpec(root / "public"),
        SandboxPaths(),
        as_root=False,
        agent_uid=nobody,
        disk=None,
        python_roots=[],
    )
    checks = (
        "sleep 4.25 & echo x > /proc/sys/kernel/domainname; unshare -r true; echo userns=$?; wait"
    )
    argv = [*argv[: argv.index("bash")], "bash", "-c", checks]
    seccomp.filter_program()

    def drop() -> None:
        os.dup2(seccomp.program_fd(), 10)
        os.setgroups([])
        os.setresgid(nobody, nobody, nobody)
        os.setresuid(nobody, nobody, nobody)

    sandbox = subprocess.Popen(
        argv, preexec_fn=drop, close_fds=False, cwd=root, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        time.sleep(1.5)
        host_uids = {
            _uid(status)
            for status in Path("/proc").glob("[0-9]*/status")
            if _read(status.parent / "cmdline") == "sleep\x004.25\x00"
        }
        output, _ = sandbox.communicate(timeout=30)
    finally:
        sandbox.kill()
        shutil.rmtree(root, ignore_errors=True)
    assert sandbox.returncode == 0, output
    assert "Read-only file system" in output and "userns=1" in output, output
    assert host_uids == {nobody}


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _uid(status: Path) -> int | None:
    for line in _read(status).splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    return None


@pytest.mark.docker
def test_docker_can_join_a_network_of_the_users(public: Path, docker_engine) -> None:
    """network_name puts the container on the user's network (here an internal one) and on
    no other; a network that does not exist is refused with how to make it. (What an
    internal network blocks is enforced by dockerd's iptables rules, off on CI's engine.)"""
    from mle_gym.sandbox.docker import DockerSandbox

    network = docker_engine.networks.create("mle-gym-test-internal", internal=True)
    try:
        sandbox = DockerSandbox(network_name=network.name)
        sandbox.start(SandboxSpec(public, network=True))
        try:
            sandbox.container.reload()
            joined = set(sandbox.container.attrs["NetworkSettings"]["Networks"])
        finally:
            sandbox.stop()
    finally:
        network.remove()
    assert joined == {network.name}
    with pytest.raises(SandboxError, match="docker network create --internal"):
        DockerSandbox(network_name="mle-gym-no-such-network")


def test_file_tools_have_the_agents_permissions(box: LocalSandbox) -> None:
    """The host (root in CI) moves files with the agent's permissions, not its own."""
    box.run("echo secret > /home/code/locked; chmod 000 /home/code/locked", 10)
    with pytest.raises(SandboxFileError, match="Permission denied"):
        box.read_file("/home/code/locked", 100)
    with pytest.raises(SandboxFileError, match="Permission denied"):
        box.write_file("/home/code/locked", b"overwritten")
    assert box.run("chmod 600 /home/code/locked; cat /home/code/locked", 10).output == "secret\n"


def test_local_fork_bomb_is_contained_and_said(public: Path) -> None:
    require_bwrap()
    sandbox = LocalSandbox(pids_limit=64)
    sandbox.start(SandboxSpec(public))
    try:
        sandbox.run("echo kept > /home/code/f", 10)
        bomb = sandbox.run("bomb() { bomb | bomb & }; bomb; sleep 60", 5)
        after = sandbox.run("cat /home/code/f", 10)
    finally:
        sandbox.stop()
    assert "ran out of process slots (pids limit 64)" in bomb.output, bomb.output[-500:]
    assert after.output == "kept\n"
