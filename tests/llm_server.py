"""A scripted OpenAI-compatible chat server on 127.0.0.1: the only stand-in for an LLM.

`POST /v1/chat/completions` (and `/chat/completions`) answers each request with the next reply
of a plan: tool calls or text, with usage figures; unknown request fields are ignored, and
`"stream": true` is answered as server-sent events. A plan is a list of replies, or a callable
that picks the reply from the request (scaffolds differ in what they expect: tool calls, a
markdown plan and code block, a bash block). A reply's `expect` names text that the request's
last message must contain, so a test proves the observations reach the model; misses are kept
in `mismatches`.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass
class Reply:
    """One assistant message, or an HTTP error status to answer with."""

    content: str | None = None
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    expect: str | None = None
    status: int = 200


def tool(name: str, expect: str | None = None, **arguments: Any) -> Reply:
    return Reply(tool_calls=[(name, arguments)], expect=expect)


def text(content: str, expect: str | None = None) -> Reply:
    return Reply(content=content, expect=expect)


Plan = Callable[[dict[str, Any]], Reply]


def sequence(replies: Sequence[Reply], after: Reply | None = None) -> Plan:
    """A plan replaying `replies` in order, then `after` (HTTP 500 if none) for ever."""
    remaining = list(replies)
    lock = threading.Lock()

    def plan(_request: dict[str, Any]) -> Reply:
        with lock:
            if remaining:
                return remaining.pop(0)
        return after or Reply(content="the scripted plan is exhausted", status=500)

    return plan


def last_text(request: dict[str, Any]) -> str:
    """The text of the request's last message (content parts joined)."""
    messages = request.get("messages") or []
    if not messages:
        return ""
    return message_text(messages[-1])


def message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


class ScriptedLLMServer:
    """Serve `plan` on an ephemeral port of 127.0.0.1; use as a context manager."""

    def __init__(
        self,
        plan: Plan | Sequence[Reply],
        *,
        cost_per_call: float | None = None,
        delay: float = 0.0,
    ) -> None:
        self.plan: Plan = plan if callable(plan) else sequence(plan)
        self.cost_per_call = cost_per_call
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        #: (method, path) of every request that arrived, whatever its route.
        self.seen: list[tuple[str, str]] = []
        self.mismatches: list[str] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL clients take (`.../v1`)."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> Self:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, request: dict[str, Any]) -> tuple[int, Reply]:
        with self._lock:
            self.requests.append(request)
            index = len(self.requests)
        reply = self.plan(request)
        if reply.expect is not None and reply.expect not in last_text(request):
            self.mismatches.append(
                f"request {index}: expected {reply.expect!r} in the last "
                f"message, got {last_text(request)[-500:]!r}"
            )
        return index, reply

    def completion(self, request: dict[str, Any], index: int, reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{index}_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for i, (name, args) in enumerate(reply.tool_calls)
            ]
        prompt = len(json.dumps(request.get("messages", []))) // 4
        completion = len(json.dumps(message)) // 4
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        if self.cost_per_call is not None:
            usage["cost"] = self.cost_per_call
        return {
            "id": f"chatcmpl-{index}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", "scripted"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                }
            ],
            "usage": usage,
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args: Any) -> None:
                pass

            def parse_request(self) -> bool:
                parsed = super().parse_request()
                if parsed:
                    server.seen.append((self.command, self.path))
                return parsed

            def do_DELETE(self) -> None:
                self._send(404, b'{"error": {"message": "not found"}}')

            def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(
                        200,
                        json.dumps(
                            {
                                "object": "list",
                                "data": [
                                    {"id": "scripted", "object": "model", "owned_by": "tests"}
                                ],
                            }
                        ).encode(),
                    )
                else:
                    self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                try:
                    request = json.loads(raw)
                except json.JSONDecodeError:
                    self._send(400, b'{"error": {"message": "invalid JSON"}}')
                    return
                if server.delay:
                    time.sleep(server.delay)
                index, reply = server.answer(request)
                if reply.status != 200:
                    error = {"error": {"message": reply.content or "error", "type": "server"}}
                    self._send(reply.status, json.dumps(error).encode())
                    return
                body = server.completion(request, index, reply)
                if request.get("stream"):
                    self._send(200, _events(body), "text/event-stream")
                else:
                    self._send(200, json.dumps(body).encode())

        return Handler


def _events(body: dict[str, Any]) -> bytes:
    """A whole completion as one streamed chunk, then the usage, then [DONE]."""
    choice = body["choices"][0]
    message = choice["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{**c, "index": i} for i, c in enumerate(message["tool_calls"])]
    base = {k: body[k] for k in ("id", "created", "model")}
    chunks = [
        {
            **base,
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
        },
        {
            **base,
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}],
        },
        {**base, "object": "chat.completion.chunk", "choices": [], "usage": body["usage"]},
    ]
    lines = [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"]
    return "".join(lines).encode()


# -- the fixed plan's material, shared by every scaffold's plan -------------------------------
#: Look at the data.
LOOK = "ls /home/data && head -n 3 /home/data/sample_submission.csv"
#: A small generic training script; it runs on the docker image's scikit-learn 1.2 too.
TRAIN_SCRIPT = """\
import sys

import pandas as pd
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

# arguments, or AIDE's layout: data in ./input, the submission in ./working
data, out = sys.argv[1:3] if len(sys.argv) > 2 else ("./input", "./working/submission.csv")
train = pd.read_csv(f"{data}/train.csv")
test = pd.read_csv(f"{data}/test.csv")
id_col, target = pd.read_csv(f"{data}/sample_submission.csv").columns[:2]
features = [c for c in test.columns if c != id_col and c in train.columns]
both = pd.concat([train[features], test[features]], ignore_index=True)
for column in features:
    if not pd.api.types.is_numeric_dtype(both[column]):
        both[column] = both[column].astype("category").cat.codes
both = both.fillna(-1)
x, x_test, y = both.iloc[: len(train)], both.iloc[len(train):], train[target]
classify = y.dtype == bool or y.dtype == object or y.nunique() <= 20
kind = RandomForestClassifier if classify else RandomForestRegressor
model = kind(n_estimators=100, random_state=0, n_jobs=2)
cut = int(len(x) * 0.8)
model.fit(x.iloc[:cut], y.iloc[:cut])
print(f"validation score: {model.score(x.iloc[cut:], y.iloc[cut:]):.4f}")
model.fit(x, y)
pd.DataFrame({id_col: test[id_col], target: model.predict(x_test)}).to_csv(out, index=False)
print(f"wrote {len(test)} predictions to {out}")
"""
#: Where the plans put the script, and how they run it.
SCRIPT_PATH = "/home/code/train.py"
RUN = "cd /home/code && python train.py /home/data /home/submission/submission.csv"


def dead_endpoint() -> str:
    """An OpenAI-style base URL on a loopback port that nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
