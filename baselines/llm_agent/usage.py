"""Token and cost accounting for an LLM policy: per call, per step, and totals."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Usage:
    """Totals over an episode. `cost_usd` is the server's figure when it reports one,
    otherwise tokens times the prices given to the policy (USD per million tokens)."""

    calls: int = 0
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, record: CallRecord) -> None:
        self.calls += 1
        self.attempts += record.attempts
        self.prompt_tokens += record.prompt_tokens
        self.completion_tokens += record.completion_tokens
        self.cost_usd += record.cost_usd
        self.seconds += record.seconds

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "total_tokens": self.total_tokens}


@dataclass(frozen=True)
class Prices:
    """USD per million prompt and completion tokens (0 when unknown)."""

    prompt: float = 0.0
    completion: float = 0.0

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.prompt + completion_tokens * self.completion) / 1e6


@dataclass(frozen=True)
class CallRecord:
    """One chat completion."""

    index: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    seconds: float
    attempts: int
    sent_messages: int
    sent_chars: int


@dataclass
class StepRecord:
    """What the policy did for one env step: the action, and the LLM calls made to choose it."""

    step: int
    action: Any
    calls: list[CallRecord] = field(default_factory=list)

    @property
    def prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for c in self.calls)

    @property
    def completion_tokens(self) -> int:
        return sum(c.completion_tokens for c in self.calls)

    @property
    def cost_usd(self) -> float:
        return sum(c.cost_usd for c in self.calls)

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "action": self.action,
            "llm_calls": len(self.calls),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
        }
