"""One bounded, quiet retry policy for every LLM policy (issue 30 item 7): against an
endpoint that accepts connections and closes them unanswered, each policy makes the bounded
number of attempts and stops with one clear error line."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mle_gym_baselines.llm_agent.client import ChatClient, EndpointError
from mle_gym_baselines.llm_agent.endpoint import Endpoint
from mle_gym_baselines.llm_agent.retry import RETRIES_VARIABLE, SECONDS_VARIABLE, RetryPolicy
from tests.llm_server import dead_endpoint


class ClosingServer:
    """Accepts each connection on 127.0.0.1 and closes it at once, counting them."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.connections = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def closing_server() -> Iterator[ClosingServer]:
    server = ClosingServer()
    yield server
    server.close()


@pytest.fixture
def quick_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared bound as `mle-gym run --llm-retries 2 --llm-retry-seconds 60` sets it."""
    monkeypatch.setenv(RETRIES_VARIABLE, "2")
    monkeypatch.setenv(SECONDS_VARIABLE, "60")


def test_bound_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert RetryPolicy.from_environment() == RetryPolicy()
    monkeypatch.setenv(RETRIES_VARIABLE, "1")
    monkeypatch.setenv(SECONDS_VARIABLE, "5")
    policy = RetryPolicy.from_environment()
    assert (policy.max_retries, policy.max_seconds) == (1, 5.0)
    assert policy.wait_before(2, 0.0) is None  # past the retries
    monkeypatch.setenv(RETRIES_VARIABLE, "many")
    with pytest.raises(ValueError, match="is not a number"):
        RetryPolicy.from_environment()


def test_llm_policy_makes_the_bounded_attempts(closing_server: ClosingServer, quick_bound) -> None:
    from mle_gym_baselines.llm_agent import LLMAgentPolicy

    client = LLMAgentPolicy(base_url=closing_server.url, model="m", backoff=0.05).client
    assert client.retry.max_retries == 2  # the shared bound
    with pytest.raises(EndpointError, match="no answer after 3 attempts") as caught:
        client.complete([{"role": "user", "content": "hi"}])
    assert closing_server.connections == 3
    assert "\n" not in str(caught.value)


def test_llm_client_gives_up_when_the_seconds_run_out(closing_server: ClosingServer) -> None:
    client = ChatClient(
        Endpoint(closing_server.url, "m", "k"),
        retry=RetryPolicy(max_retries=100, max_seconds=1.0, backoff=0.3, max_backoff=0.3),
    )
    with pytest.raises(EndpointError, match="no answer after"):
        client.complete([{"role": "user", "content": "hi"}])
    assert 2 <= closing_server.connections <= 5  # 1 s / 0.3 s waits, not 101 attempts


def test_refused_connection_is_not_retried(quick_bound) -> None:
    client = ChatClient(Endpoint(dead_endpoint(), "m", "k"))
    with pytest.raises(EndpointError, match="connection refused"):
        client.complete([{"role": "user", "content": "hi"}])


def test_aide_makes_the_bounded_attempts_quietly(
    closing_server: ClosingServer, quick_bound, mle_home: Path, capfd: pytest.CaptureFixture
) -> None:
    pytest.importorskip("aide", reason="the 'aide' extra is not installed")
    import gymnasium as gym

    import mle_gym
    from mle_gym_baselines.scaffolds.aide import AidePolicy
    from mle_gym.inversion import ScaffoldError
    from tests.conftest import require_bwrap

    require_bwrap()
    policy = AidePolicy(base_url=closing_server.url, model="m")
    with gym.make("mle/sklearn-digits-v0") as env, pytest.raises(ScaffoldError) as caught:
        mle_gym.run_episode(env, policy, seed=0)
    assert "no answer after 3 attempts" in str(caught.value)
    assert 1 <= closing_server.connections <= 3  # within the bound, not AIDE's own schedule
    assert "Traceback" not in capfd.readouterr().err


def test_run_options_set_the_shared_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    from mle_gym.cli import build_parser

    monkeypatch.delenv(RETRIES_VARIABLE, raising=False)
    monkeypatch.delenv(SECONDS_VARIABLE, raising=False)
    args = build_parser().parse_args(
        ["run", "--llm-retries", "1", "--llm-retry-seconds", "7.5", "spaceship-titanic"]
    )
    assert (args.llm_retries, args.llm_retry_seconds) == (1, 7.5)
    policy = RetryPolicy.from_environment()
    assert (policy.max_retries, policy.max_seconds) == (1, 7.5)


def test_mini_swe_agent_makes_the_bounded_attempts_quietly(
    closing_server: ClosingServer, quick_bound, mle_home: Path, capfd: pytest.CaptureFixture
) -> None:
    pytest.importorskip("minisweagent", reason="the 'mini-swe-agent' extra is not installed")
    import gymnasium as gym

    import mle_gym
    from mle_gym_baselines.scaffolds.mini_swe_agent import MiniSweAgentPolicy
    from mle_gym.inversion import ScaffoldError
    from tests.conftest import require_bwrap

    require_bwrap()
    policy = MiniSweAgentPolicy(base_url=closing_server.url, model="m")
    with gym.make("mle/sklearn-digits-v0") as env, pytest.raises(ScaffoldError) as caught:
        mle_gym.run_episode(env, policy, seed=0)
    assert "\n" not in str(caught.value).strip()
    assert 1 <= closing_server.connections <= 3  # 2 retries: not litellm's nor the client's
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize("policy", ["llm", "mini-swe-agent", "aide"])
def test_cli_run_against_a_dead_endpoint_says_one_error(
    policy: str, closing_server: ClosingServer, mle_home: Path
) -> None:
    """`mle-gym run --llm-retries 1`: at most 2 connections, exit 2 with one `error:` and no
    tracebacks, retry logs or library banners."""
    # AIDE's import mutes `warnings.warn` for the whole process (its `shutup` dependency);
    # our scaffold module imports it and unmutes, so later tests still see warnings.
    module = {
        "llm": "requests",
        "mini-swe-agent": "minisweagent",
        "aide": "mle_gym_baselines.scaffolds.aide",
    }[policy]
    pytest.importorskip(module, reason=f"the {policy!r} extra is not installed")
    from tests.agent_support import run_cli_policy
    from tests.conftest import require_bwrap

    require_bwrap()
    result = run_cli_policy(
        policy, closing_server.url, "m", "--llm-retries", "1", "--llm-retry-seconds", "60"
    )
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert [line[:6] for line in output.splitlines() if "error:" in line] == ["error:"], output
    for noise in ("Traceback", "Give Feedback", "Backing off", "LiteLLM.Info"):
        assert noise not in output, output
    assert 1 <= closing_server.connections <= 2
