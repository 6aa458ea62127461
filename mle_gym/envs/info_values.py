"""Numbers of an info that another sub-env's info may give as None, in a batchable form.

Gymnasium's vector envs batch each info key into an array typed after the first sub-env's
value: an int there makes an int array, and a later sub-env's None (no exit code for a file
edit, no score for an invalid submission) fails to fit, so `gymnasium.make_vec(...,
vectorization_mode="async" | "sync")` raised mid-episode. Gymnasium types only exact ints and
floats; these subclasses are equal to, print as and serialise as the numbers they hold, and
make it use an object array, where both fit.
"""

from __future__ import annotations

from typing import Any


class OptionalInt(int):
    """An int in an info key that may be None elsewhere."""

    def __repr__(self) -> str:
        return int.__repr__(self)


class OptionalFloat(float):
    """A float in an info key that may be None elsewhere."""

    def __repr__(self) -> str:
        return float.__repr__(self)


def optional(value: Any) -> Any:
    """`value` in its batchable form (None, bools and non-numbers unchanged)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return OptionalInt(value)
    if isinstance(value, float):
        return OptionalFloat(value)
    return value


def optional_numbers(values: dict[str, Any]) -> dict[str, Any]:
    """A copy of `values` with every number batchable."""
    return {k: optional(v) for k, v in values.items()}
