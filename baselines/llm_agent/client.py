"""A small chat-completions client over plain HTTP, with bounded retries.

Plain `requests` (installed with mle_gym, through the Docker SDK) rather than the `openai`
package: the agent needs one endpoint and one JSON shape, and keeping the baseline free of
extra dependencies means it runs wherever mle_gym does. Servers that add fields (usage cost,
reasoning) or ignore ours work too.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass, field
from typing import Any

import requests

from mle_gym_baselines.llm_agent.endpoint import Endpoint
from mle_gym_baselines.llm_agent.retry import RetryPolicy

#: HTTP statuses worth another attempt: timeouts, rate limits and server-side failures.
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


class EndpointError(RuntimeError):
    """The endpoint refused the request, or gave no usable answer within the retry bound."""


def _causes(exc: BaseException) -> list[BaseException]:
    """The exception and everything it wraps (requests wraps urllib3, which wraps OSError)."""
    found: list[BaseException] = []
    todo: list[object] = [exc]
    while todo and len(found) < 20:
        item = todo.pop()
        if not isinstance(item, BaseException) or any(item is f for f in found):
            continue
        found.append(item)
        todo += [item.__cause__, item.__context__, getattr(item, "reason", None), *item.args]
    return found


def unreachable(exc: BaseException) -> str | None:
    """Why no server can answer at all (refused connection, unknown host), else None.

    Retrying those only delays the error: nothing listens, or the name does not resolve.
    Timeouts, resets and 5xx answers stay retried, since they pass.
    """
    for cause in _causes(exc):
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused (nothing listens there: is the server running?)"
        if isinstance(cause, socket.gaierror):
            return f"the host name does not resolve ({cause})"
    return None


@dataclass
class Completion:
    """One assistant reply and what it cost."""

    message: dict[str, Any]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    seconds: float = 0.0
    attempts: int = 1
    raw_usage: dict[str, Any] = field(default_factory=dict)


class ChatClient:
    """POST /chat/completions with retries on connection errors, 408/409/429 and 5xx, within
    `retry` (default: the user's shared bound, retry.py)."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        retry: RetryPolicy | None = None,
        request_timeout: float = 600.0,
    ) -> None:
        self.endpoint = endpoint
        self.retry = retry or RetryPolicy.from_environment()
        self.request_timeout = request_timeout
        self._session = requests.Session()

    def complete(
        self, messages: list[dict[str, Any]], *, tools: list[dict] | None = None, **params: Any
    ) -> Completion:
        body: dict[str, Any] = {"model": self.endpoint.model, "messages": messages, **params}
        if tools:
            body["tools"] = tools
        started = time.monotonic()
        attempts = 0
        last_error = ""
        while True:
            if attempts:
                wait = self.retry.wait_before(attempts, started)
                if wait is None:
                    break
                time.sleep(wait)
            attempts += 1
            try:
                response = self._session.post(
                    self.endpoint.chat_url,
                    json=body,
                    timeout=self.request_timeout,
                    headers={"Authorization": f"Bearer {self.endpoint.api_key}"},
                )
            except requests.RequestException as exc:
                reason = unreachable(exc)
                if reason is not None:
                    raise EndpointError(
                        f"{self.endpoint.chat_url}: {reason}; set the endpoint with "
                        "--base-url or OPENAI_BASE_URL"
                    ) from exc
                last_error = f"{type(exc).__name__}: {exc}"
                continue
            if response.status_code in RETRY_STATUSES:
                last_error = f"HTTP {response.status_code}: {response.text[:500]}"
                continue
            if response.status_code != 200:
                raise EndpointError(
                    f"{self.endpoint.chat_url} refused the request: HTTP "
                    f"{response.status_code}: {response.text[:1000]}"
                )
            return _parse(response, time.monotonic() - started, attempts)
        raise EndpointError(
            f"{self.endpoint.chat_url}: no answer after {attempts} attempts; last error: "
            f"{last_error}"
        )


def _parse(response: requests.Response, seconds: float, attempts: int) -> Completion:
    try:
        data = response.json()
        message = data["choices"][0]["message"]
        if not isinstance(message, dict):
            raise TypeError("the message is not an object")
    except (ValueError, KeyError, IndexError, TypeError, RecursionError) as exc:
        raise EndpointError(f"malformed chat completion: {response.text[:500]}") from exc
    usage = data.get("usage") or {}
    cost = usage.get("cost")
    return Completion(
        message=message,
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        cost=float(cost) if isinstance(cost, (int, float)) else None,
        seconds=seconds,
        attempts=attempts,
        raw_usage=usage,
    )
