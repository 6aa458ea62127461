"""The recording model proxy on its own: a client on its unix socket, the scripted server
upstream (no sandbox here; tests/test_harness.py runs it behind the relay in both)."""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path

from mle_gym.harness.proxy import MAX_CONNECTIONS, ModelProxy
from mle_gym.harness.recording import Recorder, exchange_record
from tests.llm_server import ScriptedLLMServer, dead_endpoint, text, tool


class UnixConnection(http.client.HTTPConnection):
    """HTTP over the proxy's unix socket, as the relay delivers it."""

    def __init__(self, path: Path) -> None:
        super().__init__("localhost", timeout=30)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(str(self.path))


def call(
    proxy: ModelProxy, body: dict | None, method: str = "POST", path: str = "/v1/chat/completions"
) -> tuple[int, str, bytes]:
    connection = UnixConnection(proxy.socket_path)
    data = json.dumps(body).encode() if body is not None else None
    connection.request(method, path, body=data, headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    answer = response.status, response.getheader("Content-Type") or "", response.read()
    connection.close()
    return answer


def log_lines(proxy: ModelProxy) -> list[dict]:
    return [json.loads(line) for line in proxy.recorder.path.read_text().splitlines()]


def make_proxy(upstream: str, where: Path, **options: object) -> ModelProxy:
    return ModelProxy(upstream, where / "model.sock", where / "calls.jsonl", **options)


def test_a_streamed_answer_passes_through_and_is_recorded(tmp_path: Path) -> None:
    request = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    with ScriptedLLMServer([tool("bash", command="ls")]) as server:
        proxy = make_proxy(server.url, tmp_path)
        with proxy:
            status, kind, body = call(proxy, request)
    assert status == 200 and kind.startswith("text/event-stream")
    assert body.endswith(b"data: [DONE]\n\n") and body.count(b"data: ") == 4
    (line,) = log_lines(proxy)
    assert line["stream"] and line["request"] == request == server.requests[0]
    assert len(line["events"]) == 4 and line["events"][-1] == "[DONE]"
    (tool_call,) = line["message"]["tool_calls"]
    assert tool_call["function"] == {"name": "bash", "arguments": '{"command": "ls"}'}
    assert line["finish_reason"] == "tool_calls" and line["usage"]["total_tokens"] > 0


def test_the_budget_counts_every_forwarded_request_and_refuses_past_it(tmp_path: Path) -> None:
    with ScriptedLLMServer([text("one")]) as server:
        proxy = make_proxy(server.url, tmp_path, max_requests=2)
        with proxy:
            first = call(proxy, {"model": "m", "messages": []})
            models = call(proxy, None, "GET", "/v1/models")  # forwarded, so counted
            refused = call(proxy, {"model": "m", "messages": []})
    assert first[0] == 200 and json.loads(first[2])["choices"][0]["message"]["content"] == "one"
    assert models[0] == 200 and json.loads(models[2])["data"][0]["id"] == "scripted"
    assert refused[0] == 403
    error = json.loads(refused[2])["error"]
    assert error["code"] == "request_budget" and "budget of 2" in error["message"]
    assert (proxy.requests, proxy.refused, len(server.requests)) == (2, 1, 1)
    statuses = [(line["method"], line["status"], line["counted"]) for line in log_lines(proxy)]
    assert statuses == [("POST", 200, True), ("GET", 200, True), ("POST", 403, False)]


def test_a_dead_endpoint_and_a_bad_path_get_openai_style_errors(tmp_path: Path) -> None:
    with make_proxy(dead_endpoint(), tmp_path) as proxy:
        dead = call(proxy, {"model": "m", "messages": []})
        bad = call(proxy, {"model": "m"}, path="/v1/../../admin")
    assert dead[0] == 502 and "could not be reached" in json.loads(dead[2])["error"]["message"]
    assert bad[0] == 400 and json.loads(bad[2])["error"]["message"] == "malformed request path"
    assert [line["status"] for line in log_lines(proxy)] == [502, 400]
    assert proxy.requests == 1  # the dead endpoint's call was sent, so it counted


def test_the_real_key_replaces_the_harness_placeholder(tmp_path: Path) -> None:
    proxy = make_proxy("http://127.0.0.1:1/v1", tmp_path, api_key="real")
    incoming = http.client.HTTPMessage()
    incoming["Authorization"] = "Bearer placeholder"
    incoming["Accept-Encoding"] = "gzip"
    incoming["Content-Type"] = "application/json"
    headers = proxy._upstream_headers(incoming, 12)
    assert headers == {
        "Content-Type": "application/json",
        "Content-Length": "12",
        "Authorization": "Bearer real",
    }
    proxy.recorder.close()


def test_the_log_is_bounded(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path / "log.jsonl", max_bytes=2000)
    big = {"method": "POST", "status": 200, "request": {"messages": ["x" * 1500]}}
    for _ in range(3):
        recorder.write(big)
    lines = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert "request" in lines[0] and lines[1] == {
        "index": 2,
        "method": "POST",
        "status": 200,
        "bodies_dropped": True,
    }
    for _ in range(30_000):  # past the reserve for bodiless lines, nothing more is written
        recorder.write({"status": 200})
    recorder.close()
    assert recorder.dropped > 0 and recorder.written <= 2000 + 1024**2
    assert (tmp_path / "log.jsonl").stat().st_size == recorder.written


def test_logprobs_and_token_ids_are_lifted_out() -> None:
    """vLLM's shape: logprobs per token, and token ids with `return_token_ids`."""
    logprobs = {"content": [{"token": "hi", "logprob": -0.1, "top_logprobs": []}]}
    whole = {
        "choices": [
            {
                "message": {"role": "assistant", "content": "hi"},
                "logprobs": logprobs,
                "token_ids": [42],
                "finish_reason": "stop",
            }
        ],
        "prompt_token_ids": [1, 2],
        "usage": {"total_tokens": 3},
    }
    record = exchange_record({"response_body": json.dumps(whole).encode()}, 1 << 20)
    assert record["logprobs"] == logprobs and record["token_ids"] == [42]
    assert record["prompt_token_ids"] == [1, 2] and record["message"]["content"] == "hi"
    chunks = [
        {"choices": [{"delta": {"content": "h"}, "logprobs": {"content": [1]}, "token_ids": [7]}]},
        {"choices": [{"delta": {"content": "i"}, "logprobs": {"content": [2]}, "token_ids": [8]}]},
        {"choices": [{"delta": {}, "finish_reason": "stop"}], "usage": {"total_tokens": 4}},
    ]
    stream = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    record = exchange_record({"stream_body": stream.encode()}, 1 << 20)
    assert record["message"] == {"role": "assistant", "content": "hi"}
    assert record["logprobs"] == {"content": [1, 2]} and record["token_ids"] == [7, 8]
    assert record["usage"] == {"total_tokens": 4} and record["finish_reason"] == "stop"


def test_connections_past_the_cap_are_closed(tmp_path: Path) -> None:
    """An untrusted harness cannot tie up a host thread per connection without bound."""
    with make_proxy(dead_endpoint(), tmp_path) as proxy:
        held = []
        try:
            for _ in range(MAX_CONNECTIONS + 1):
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.connect(str(proxy.socket_path))  # blocking: waits for the backlog
                sock.settimeout(10)
                held.append(sock)
            assert held[-1].recv(1) == b""  # closed at once: no slot left
        finally:
            for sock in held:
                sock.close()
