"""A compact tool-calling (ReAct) agent: one LLM reply per step, the env's tools as functions.

The researcher's loop owns the step: `act` appends the last observation as the answer to the
pending tool call, asks the model when no tool call is queued, and returns the next call as an
env action. Several calls in one reply are executed one per step, in order.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mle_gym_baselines.llm_agent.client import ChatClient, Completion
from mle_gym_baselines.llm_agent.context import compact
from mle_gym_baselines.llm_agent.endpoint import Endpoint
from mle_gym_baselines.llm_agent.retry import RetryPolicy
from mle_gym_baselines.llm_agent.tools import TOOLS, Call, parse_calls
from mle_gym_baselines.llm_agent.usage import CallRecord, Prices, StepRecord, Usage

SYSTEM_PROMPT = """\
You are an expert machine-learning engineer competing in a Kaggle competition inside a \
sandbox. Work step by step with the tools: look at the data, write a training script to a \
file, run it, read its output, improve it while time allows, write the submission file, \
validate it, and call submit once the submission is valid. Keep commands short-running; \
print concise progress. Every tool call is one step of a limited budget."""

NUDGE = "Continue with a tool call. Call `submit` when the submission is written and valid."
SUBMIT: dict[str, Any] = {"tool": "submit"}


def _budget_note(info: dict[str, Any]) -> str:
    if info.get("steps_left") is None:
        return ""
    return f"\n[{info['steps_left']} steps and {info.get('time_left')} s left]"


def _assistant(message: dict[str, Any], calls: list[Call]) -> dict[str, Any]:
    """Only the standard fields: some servers reject others (reasoning, refusal) sent back.
    The tool calls are the parsed ones, so a malformed call is sent back in a valid shape."""
    kept: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
    if calls:
        kept["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for c in calls
        ]
    return kept


class LLMAgentPolicy:
    """Tool-calling agent on any OpenAI-compatible endpoint.

    Accounting lives on the policy (the env's info belongs to the env): `usage` has the
    episode's totals, `records` one `StepRecord` per action (the LLM calls made to choose it,
    their tokens and cost), `last_step_info` the latest of those as a dict, and `messages`
    the full transcript.
    """

    name = "llm"

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        prices: Prices | None = None,
        max_retries: int | None = None,
        backoff: float | None = None,
        request_timeout: float = 600.0,
        temperature: float | None = None,
        max_tokens: int | None = None,
        max_idle_replies: int = 3,
        recent_turns: int = 4,
        old_output_chars: int = 600,
        max_context_chars: int = 200_000,
        system_prompt: str = SYSTEM_PROMPT,
    ) -> None:
        self.endpoint = Endpoint.resolve(base_url, model, api_key)
        retry = RetryPolicy.from_environment()
        retry = replace(
            retry,
            max_retries=retry.max_retries if max_retries is None else max_retries,
            backoff=retry.backoff if backoff is None else backoff,
        )
        self.client = ChatClient(self.endpoint, retry=retry, request_timeout=request_timeout)
        self.prices = prices or Prices()
        self.params = {
            k: v
            for k, v in (("temperature", temperature), ("max_tokens", max_tokens))
            if v is not None
        }
        self.max_idle_replies = max_idle_replies
        self.context = {
            "recent_turns": recent_turns,
            "old_output_chars": old_output_chars,
            "max_chars": max_context_chars,
        }
        self.system_prompt = system_prompt
        self.reset()

    def reset(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.usage = Usage()
        self.records: list[StepRecord] = []
        self.calls: list[CallRecord] = []
        self._queue: list[Call] = []
        self._pending: Call | None = None
        self._idle = 0

    @property
    def last_step_info(self) -> dict[str, Any] | None:
        return self.records[-1].to_dict() if self.records else None

    def usage_summary(self) -> str:
        """One line for the end of a run: calls, tokens, cost and time spent waiting."""
        u = self.usage
        if not u.calls:
            return "LLM usage: no calls made"
        prices = self.prices.prompt or self.prices.completion
        priced = bool(prices) or any(c.cost_usd for c in self.calls)
        cost = f"${u.cost_usd:.4f}" if priced else "cost unknown (no prices, none reported)"
        return (
            f"LLM usage ({self.endpoint.model}): {u.calls} call(s), {u.attempts} attempt(s); "
            f"{u.prompt_tokens:,} prompt + {u.completion_tokens:,} completion = "
            f"{u.total_tokens:,} tokens; {cost}; {u.seconds:.1f} s waiting for the endpoint"
        )

    def trajectory(self) -> dict[str, Any]:
        """The episode as the policy saw it: transcript, per-step records and totals."""
        return {
            "model": self.endpoint.model,
            "messages": self.messages,
            "steps": [r.to_dict() for r in self.records],
            "usage": self.usage.to_dict(),
        }

    def act(self, observation: str, info: dict[str, Any]) -> dict[str, Any]:
        if not self.messages:
            self.messages = [
                {"role": "system", "content": self.system_prompt},
                {"role": "user", "content": observation},
            ]
        elif self._pending is not None:
            self._answer(self._pending, observation + _budget_note(info))
            self._pending = None
        record = StepRecord(step=int(info.get("step", 0)) + 1, action=None)
        self.records.append(record)
        while True:
            while self._queue:
                call = self._queue.pop(0)
                if call.action is None:
                    self._answer(call, f"Error: {call.error}")
                    continue
                self._pending = call
                record.action = call.action
                return call.action
            if self._idle >= self.max_idle_replies:
                record.action = SUBMIT
                return SUBMIT
            self._ask(record)

    # -- internals ----------------------------------------------------------------------------
    def _answer(self, call: Call, content: str) -> None:
        self.messages.append({"role": "tool", "tool_call_id": call.id, "content": content})

    def _ask(self, record: StepRecord) -> None:
        view = compact(self.messages, **self.context)
        completion = self.client.complete(view, tools=TOOLS, **self.params)
        call = self._account(completion, view)
        record.calls.append(call)
        self._queue = parse_calls(completion.message)
        self.messages.append(_assistant(completion.message, self._queue))
        if self._queue:
            self._idle = 0
        else:
            self._idle += 1
            self.messages.append({"role": "user", "content": NUDGE})

    def _account(self, completion: Completion, view: list[dict[str, Any]]) -> CallRecord:
        cost = completion.cost
        if cost is None:
            cost = self.prices.cost(completion.prompt_tokens, completion.completion_tokens)
        call = CallRecord(
            index=len(self.calls),
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            cost_usd=cost,
            seconds=completion.seconds,
            attempts=completion.attempts,
            sent_messages=len(view),
            sent_chars=sum(len(str(m.get("content") or "")) for m in view),
        )
        self.calls.append(call)
        self.usage.add(call)
        return call
