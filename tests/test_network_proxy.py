"""`network="proxy"`: the sandbox's only way out is the episode's egress proxy, which
judges every request by the policy and logs it. Servers on this machine's loopback stand in
for the internet (the proxy's resolver is mapped to them by the test-only hook), except for
one `pip download` from the package index this machine reaches."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import gymnasium as gym
import pytest

import mle_gym  # noqa: F401  (registers the envs)
from mle_gym.batch.recorder import TrajectoryRecorder
from mle_gym.envs import egress_setup
from mle_gym.sandbox import routes
from mle_gym.sandbox.base import ReadOnlyBind
from mle_gym.sandbox.egress_policy import PolicyError, make_policy
from tests.egress_support import GREETING, PACKAGE, ask, upstream

COMPETITION = "sklearn-digits"

#: Run in the sandbox: what each way out gives (__UPSTREAM__ and __HOST__ filled in).
PROBES = r"""
import socket, urllib.request, urllib.error
def fetch(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return f"{r.status} {r.read().decode()}"
    except urllib.error.HTTPError as e:
        return f"{e.code} {e.read().decode().strip()}"
    except Exception as e:
        return f"error {type(e).__name__}"
def connect(address):
    try:
        socket.create_connection(address, timeout=5).close()
        return "connected"
    except OSError as e:
        return f"failed {type(e).__name__}"
def dns():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    query = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x04pypi\x03org\x00\x00\x01\x00\x01"
    try:
        s.sendto(query, ("8.8.8.8", 53))
        s.recv(512)
        return "answered"
    except OSError as e:
        return f"failed {type(e).__name__}"
print("ALLOWED", fetch("http://allowed.test/ok"))
print("DENIED", fetch("http://denied.test/secret"))
print("DIRECT", connect(("127.0.0.1", __UPSTREAM__)))
print("HOSTADDR", connect((__HOST__, __UPSTREAM__)))
print("DNS", dns())
print("NAME", connect(("pypi.org", 443)))
print("PORT", connect(("127.0.0.1", 22)))
"""


def _host_address() -> str:
    """One of this machine's own non-loopback IPv4 addresses."""
    for network in routes.local_destinations():
        if network.version == 4 and network.prefixlen == 32 and not network.is_loopback:
            return str(network.network_address)
    raise AssertionError("this machine has no IPv4 address but loopback")


@pytest.fixture
def digits(digits_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    return digits_home


def _run(env: gym.Env, command: str, timeout: str = "") -> tuple[str, dict]:
    observation, _, _, _, info = env.step({"tool": "bash", "command": command})
    return observation, info


def _lines(observation: str) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in observation.splitlines() if " " in line)


def test_the_proxy_is_the_only_way_out_and_logs_each_request(
    backend: str, digits: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with upstream() as port:
        monkeypatch.setattr(
            egress_setup,
            "test_upstreams",
            {"allowed.test": ("127.0.0.1", port), "denied.test": ("127.0.0.1", port)},
        )
        policy = {"allow": ["allowed.test"], "deny": ["denied.test"]}
        with gym.make(
            f"mle/{COMPETITION}-v0", backend=backend, network="proxy", network_policy=policy
        ) as env:
            _, before = env.reset(seed=0)
            probes = PROBES.replace("__UPSTREAM__", str(port)).replace(
                "__HOST__", repr(_host_address())
            )
            observation, info = _run(env, f"python3 - <<'EOF'\n{probes}\nEOF")
            seen = _lines(observation)
            assert seen["ALLOWED"] == "200 HELLO /ok", observation
            assert seen["DENIED"].startswith("403 "), observation
            assert "deny 'denied.test'" in seen["DENIED"]
            for way in ("DIRECT", "HOSTADDR", "DNS", "NAME", "PORT"):
                assert seen[way].startswith("failed"), (way, observation)

            network = info["network"]
            assert network["mode"] == "proxy" and network["policy"] == "custom"
            assert (network["requests"], network["denied"]) == (2, 1)
            assert network["hosts"] == ["allowed.test"]
            assert set(before["network"]) == set(network) and before["network"]["requests"] == 0
            logged = [json.loads(line) for line in Path(network["log"]).read_text().splitlines()]
            assert [(e["method"], e["host"], e["verdict"]) for e in logged] == [
                ("GET", "allowed.test", "allowed"),
                ("GET", "denied.test", "denied"),
            ]
            assert logged[0]["url"] == "http://allowed.test/ok" and logged[0]["status"] == 200
            assert logged[0]["bytes_received"] > 0 and logged[0]["bytes_sent"] > 0
            assert logged[1]["status"] == 403 and logged[1]["rule"] == "deny 'denied.test'"

            # a process on the host (not in the sandbox) is refused: the peer check
            proxy = env.unwrapped.episode._egress.proxy
            assert ask(proxy.socket_path, b"GET http://allowed.test/ok HTTP/1.1\r\n\r\n") == b""
            assert proxy.strangers == 1

            # a batch's recorder keeps the log beside the trajectory when the episode ends
            recorder = TrajectoryRecorder(env, tmp_path / "trajectory.jsonl")
            *_, info = recorder.step({"tool": "submit"})
            kept = [
                json.loads(line) for line in (tmp_path / "network.jsonl").read_text().splitlines()
            ]
            assert kept == logged
            integrity = info["integrity"]
            assert integrity["network"] == "proxy"
            assert integrity["network_use"]["requests"] == 2
            assert integrity["network_use"]["hosts"] == ["allowed.test"]


#: This test's pip, shown to the sandbox (the offline docker image has none): pip is pure
#: Python, and the host's runs with the sandbox's python3 of the same version.
PIP_DIR = "/opt/test-pip"
PIP = (
    f"PYTHONPATH={PIP_DIR} PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 python3 -m pip"
)


@pytest.fixture
def pip_bind(tmp_path: Path) -> ReadOnlyBind:
    import pip

    folder = tmp_path / "pip-for-the-sandbox"
    folder.mkdir(mode=0o755)
    shutil.copytree(Path(pip.__file__).parent, folder / "pip")
    return ReadOnlyBind(folder, PIP_DIR)


def test_package_index_preset_lets_pip_in_and_nothing_else(
    backend: str, digits: Path, monkeypatch: pytest.MonkeyPatch, pip_bind: ReadOnlyBind
) -> None:
    """pip installs from an index standing in for pypi.org (plain HTTP, on this machine);
    another host is refused; and pip downloads a small package from the real index this
    machine reaches, over HTTPS with the host's CA bundle."""
    with upstream() as port:
        monkeypatch.setattr(
            egress_setup,
            "test_upstreams",
            {"pypi.org": ("127.0.0.1", port), "elsewhere.test": ("127.0.0.1", port)},
        )
        with gym.make(
            f"mle/{COMPETITION}-v0",
            backend=backend,
            network="proxy",
            network_policy="package-index",
        ) as env:
            env.reset(seed=0)
            env.unwrapped.start([pip_bind])
            install = (
                f"{PIP} install --no-cache-dir --target /tmp/pkgs --index-url "
                f"http://pypi.org/simple --trusted-host pypi.org {PACKAGE} >/dev/null 2>&1; "
                f"PYTHONPATH=/tmp/pkgs python3 -c 'import {PACKAGE}; print({PACKAGE}.GREETING)'"
            )
            observation, _ = _run(env, install)
            assert GREETING in observation, observation
            observation, info = _run(
                env,
                'python3 -c "import urllib.request, urllib.error\n'
                "try: urllib.request.urlopen('http://elsewhere.test/x', timeout=30)\n"
                "except urllib.error.HTTPError as e: print('CODE', e.code, e.read().decode())\"",
            )
            assert "CODE 403" in observation and "package-index" in observation, observation

        # the real index (pypi.org over HTTPS), with the resolver left alone
        monkeypatch.setattr(egress_setup, "test_upstreams", {})
        with gym.make(
            f"mle/{COMPETITION}-v0",
            backend=backend,
            network="proxy",
            network_policy="package-index",
        ) as env:
            env.reset(seed=0)
            env.unwrapped.start([pip_bind])
            observation, info = _run(
                env,
                f"{PIP} download --no-cache-dir --no-deps -d /tmp/dl six==1.16.0 2>&1 | tail -3; "
                "ls /tmp/dl",
            )
            assert "six-1.16.0" in observation, observation
            hosts = info["network"]["hosts"]
            assert set(hosts) <= {"pypi.org", "files.pythonhosted.org"} and "pypi.org" in hosts
            logged = [
                json.loads(line) for line in Path(info["network"]["log"]).read_text().splitlines()
            ]
            assert {e["method"] for e in logged} == {"CONNECT"}
            assert all(e.get("sni") == e["host"] for e in logged), logged


def test_policies_read_and_refuse_clearly(tmp_path: Path) -> None:
    index = make_policy("package-index")
    assert index.judge("pypi.org", None).allowed
    assert index.judge("files.pythonhosted.org", "/packages/x.whl").allowed
    refused = index.judge("github.com", None)
    assert not refused.allowed and "package-index" in refused.rule
    mixed = make_policy({"allow": ["*.example.org"], "deny": ["docs.example.org/private"]})
    assert mixed.judge("docs.example.org", "/public").allowed
    assert not mixed.judge("docs.example.org", "/private/a").allowed
    assert mixed.judge("docs.example.org", None).allowed  # HTTPS: no path to deny
    assert not mixed.judge("example.org", None).allowed  # *.x is the subdomains only
    saved = tmp_path / "policy.json"
    saved.write_text(json.dumps({"preset": "package-index", "allow": ["github.com"]}))
    from_file = make_policy(str(saved))
    assert from_file.name == "package-index+custom" and from_file.judge("github.com", None).allowed
    for bad in ("no-such-preset", {"allow": "pypi.org"}, {"allwo": []}, {"allow": ["a b"]}):
        with pytest.raises(PolicyError):
            make_policy(bad)  # type: ignore[arg-type]


def test_the_competition_preset_denies_its_pages_and_notebooks(mle_home: Path) -> None:
    from tests.prerequisites import SHARED, require_shared

    require_shared("mlebench")
    policy = egress_setup.policy_for("competition", "spaceship-titanic", SHARED / "mlebench")
    kernel = (
        (SHARED / "mlebench/mlebench/competitions/spaceship-titanic/kernels.txt")
        .read_text()
        .split()[0]
    )
    page = policy.judge("www.kaggle.com", f"/code/{kernel}")
    assert not page.allowed and "spaceship-titanic" in page.rule
    assert not policy.judge("www.kaggle.com", "/competitions/spaceship-titanic/data").allowed
    assert not policy.judge("www.kaggle.com", None).allowed  # HTTPS: the host whole
    assert policy.judge("pypi.org", None).allowed
    mine = egress_setup.policy_for(
        {"preset": "competition", "deny": ["github.com"]}, "spaceship-titanic", SHARED / "mlebench"
    )
    assert not mine.judge("github.com", None).allowed
    with pytest.raises(PolicyError, match="MLE-bench"):
        egress_setup.policy_for("competition", "spaceship-titanic", mle_home / "missing")


def test_the_command_line_asks_for_the_proxy() -> None:
    from mle_gym.cli.app import build_parser
    from mle_gym.cli.common import env_kwargs_from

    parser = build_parser()
    args = parser.parse_args(["run", COMPETITION, "--network-policy", "package-index"])
    assert env_kwargs_from(args) == {
        "backend": "local",
        "network": "proxy",
        "network_policy": "package-index",
    }
    assert env_kwargs_from(parser.parse_args(["run", COMPETITION, "--network", "on"]))["network"]
    with pytest.raises(SystemExit, match="governs --network proxy"):
        env_kwargs_from(
            parser.parse_args(["run", COMPETITION, "--network", "on", "--network-policy", "open"])
        )


def test_a_harness_episode_reaches_the_web_through_the_proxy(
    digits: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The harness's model route and the egress proxy side by side: the model relay stays
    direct (NO_PROXY), the web goes through the proxy."""
    from mle_gym.harness.run import run_harness
    from tests.conftest import require_bwrap
    from tests.llm_server import ScriptedLLMServer

    require_bwrap()
    fetch = "import urllib.request; print(urllib.request.urlopen('http://allowed.test/h').read())"
    with upstream() as port, ScriptedLLMServer([]) as server:
        monkeypatch.setattr(egress_setup, "test_upstreams", {"allowed.test": ("127.0.0.1", port)})
        result = run_harness(
            COMPETITION,
            f'python3 -c "{fetch}"',
            server.url,
            network="proxy",
            network_policy={"allow": ["allowed.test"]},
            run_dir=tmp_path,
        )
    assert "HELLO /h" in result.output_path.read_text()
