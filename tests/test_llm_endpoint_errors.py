"""An LLM endpoint that cannot answer says so at once; a missing key is warned about; a
single `--policy llm` run ends with its token and cost summary."""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import pytest

from mle_gym_baselines.llm_agent import LLMAgentPolicy
from mle_gym_baselines.llm_agent.client import EndpointError
from mle_gym_baselines.llm_agent.endpoint import DEFAULT_BASE_URL, Endpoint
from tests.agent_support import run_cli_policy
from tests.conftest import require_bwrap
from tests.llm_server import Reply, ScriptedLLMServer, dead_endpoint, tool

MESSAGES = [{"role": "user", "content": "hello"}]


@pytest.mark.parametrize(
    "url, reason",
    [(None, "connection refused"), ("http://no-such-host.invalid/v1", "does not resolve")],
)
def test_an_unreachable_endpoint_fails_at_once_with_the_reason(url, reason) -> None:
    url = url or dead_endpoint()
    policy = LLMAgentPolicy(base_url=url, model="m")  # default retries: ~30 s of back-off
    started = time.monotonic()
    with pytest.raises(EndpointError, match=reason) as failed:
        policy.client.complete(MESSAGES)
    assert time.monotonic() - started < 3
    assert url in str(failed.value) and "--base-url" in str(failed.value)


def test_a_busy_endpoint_is_still_retried() -> None:
    busy = Reply(content="overloaded", status=503)
    with ScriptedLLMServer([busy, busy, Reply(content="hi")]) as server:
        policy = LLMAgentPolicy(base_url=server.url, model="m", backoff=0.01)
        assert policy.client.complete(MESSAGES).attempts == 3


def test_default_endpoint_without_a_key_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.warns(UserWarning, match="OPENAI_API_KEY"):
        Endpoint.resolve(model="m")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Endpoint.resolve(model="m", api_key="k")  # a key: nothing to say
        Endpoint.resolve(base_url="http://127.0.0.1:9/v1", model="m")  # a local server
    assert DEFAULT_BASE_URL.startswith("https://")


def test_a_single_llm_run_ends_with_tokens_and_cost(mle_home: Path) -> None:
    require_bwrap()
    plan = [tool("bash", command="echo hi"), tool("submit", expect="hi")]
    with ScriptedLLMServer(plan) as server:
        result = run_cli_policy("llm", server.url, "scripted", "--api-key", "k")
    assert "step 2: submit" in result.stdout, result.stdout + result.stderr
    text = " ".join(result.stdout.split())
    assert "LLM usage (scripted): 2 call(s)" in text and "tokens" in text, text
    assert "waiting for the endpoint" in text and "next steps:" in text
