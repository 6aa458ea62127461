"""The one exception a broken submission raises, and how its messages show values; its
message is shown to the agent."""

from __future__ import annotations

from collections.abc import Iterable

#: Values a message shows before saying how many more there are.
SHOWN = 3


class InvalidSubmission(ValueError):
    """The submission cannot be scored; the message says exactly why."""


class AnswerKeyError(RuntimeError):
    """The competition's answers cannot be keyed (a damaged preparation): no submission can
    be graded, and none is to blame. Raised, never reported as an invalid submission."""


def examples(values: Iterable) -> str:
    """The first few `values`, quoted, and how many more there are."""
    values = list(values)
    shown = [repr(str(v)) for v in values[:SHOWN]]
    more = len(values) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")
