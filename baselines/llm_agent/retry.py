"""One retry bound for every LLM policy (llm, AIDE, mini-swe-agent, OpenHands).

An endpoint that does not answer should end an episode within a bound the user sets once,
not after each scaffold's own schedule (minutes of backoff and pages of library logs). The
bound lives in the environment (`MLE_GYM_LLM_RETRIES`, `MLE_GYM_LLM_RETRY_SECONDS`), set by
`mle-gym run --llm-retries/--llm-retry-seconds`, so a batch's worker processes inherit it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

RETRIES_VARIABLE = "MLE_GYM_LLM_RETRIES"
SECONDS_VARIABLE = "MLE_GYM_LLM_RETRY_SECONDS"


@dataclass(frozen=True)
class RetryPolicy:
    """At most `max_retries` retries of a failed call, none started after `max_seconds`
    from the first attempt; the wait before retry n is `backoff * 2**(n-1)`, capped."""

    max_retries: int = 4
    max_seconds: float = 120.0
    backoff: float = 2.0
    max_backoff: float = 30.0

    @classmethod
    def from_environment(cls) -> RetryPolicy:
        """The user's bound (CLI options or the variables), else the defaults."""
        default = cls()
        return cls(
            max_retries=_number(RETRIES_VARIABLE, int, default.max_retries),
            max_seconds=_number(SECONDS_VARIABLE, float, default.max_seconds),
        )

    def wait_before(self, retry: int, started: float) -> float | None:
        """Seconds to wait before retry number `retry` (1, 2, ...), or None: give up."""
        if retry > self.max_retries:
            return None
        left = self.max_seconds - (time.monotonic() - started)
        wait = min(self.max_backoff, self.backoff * 2 ** (retry - 1))
        return wait if wait < left else None


def _number(name: str, kind: type, default: float) -> float:
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        value = kind(text)
    except ValueError:
        raise ValueError(f"{name}={text!r} is not a number") from None
    if value < 0:
        raise ValueError(f"{name}={text!r} must not be negative")
    return value
