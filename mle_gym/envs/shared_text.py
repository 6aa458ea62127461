"""`UnicodeText` in Gymnasium's shared memory, so `AsyncVectorEnv` can carry observations.

Gymnasium stores a `Text` observation as indices into its charset; ours hold any Unicode,
which made `gymnasium.make_vec(..., vectorization_mode="async")` fail on the first character
outside the charset. Registered on Gymnasium's own dispatchers, a slot holds code points
plus one (0 pads the rest), `max_length` of them per env.
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Sequence
from types import ModuleType
from typing import Any, overload

import numpy as np
from gymnasium.error import CustomSpaceError
from gymnasium.vector.utils import shared_memory

from mle_gym.envs.spaces import UnicodeText


@shared_memory.create_shared_memory.register(UnicodeText)
def _create(space: UnicodeText, n: int = 1, ctx: ModuleType = mp) -> Any:
    return ctx.Array(np.dtype(np.int32).char, n * space.max_length)


def _slots(space: UnicodeText, memory: Any) -> np.ndarray:
    return np.frombuffer(memory.get_obj(), dtype=np.int32).reshape(-1, space.max_length)


class SharedTexts(Sequence[str]):
    """The sub-envs' observations, decoded from shared memory when read.

    Gymnasium reads shared memory once, when the vector env is made, and expects a view that
    later writes show through (numpy arrays are). A tuple of strings would stay as it was, so
    this reads the slots at each access; `deepcopy` (what Gymnasium returns by default)
    gives a plain tuple of the current texts.
    """

    def __init__(self, space: UnicodeText, memory: Any, n: int) -> None:
        self._space, self._memory, self._n = space, memory, n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...
    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(self._n)[index])
        codes = _slots(self._space, self._memory)[range(self._n)[index]]
        return (codes[codes > 0] - 1).astype("<u4").tobytes().decode("utf-32-le")

    def __deepcopy__(self, memo: dict) -> tuple[str, ...]:
        return tuple(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __repr__(self) -> str:
        return repr(tuple(self))


@shared_memory.read_from_shared_memory.register(UnicodeText)
def _read(space: UnicodeText, memory: Any, n: int = 1) -> SharedTexts:
    return SharedTexts(space, memory, n)


@shared_memory.write_to_shared_memory.register(UnicodeText)
def _write(space: UnicodeText, index: int, value: str, memory: Any) -> None:
    codes = np.frombuffer(value.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    if len(codes) > space.max_length:
        raise CustomSpaceError(
            f"an observation of {len(codes)} characters exceeds the space's {space.max_length}"
        )
    slot = _slots(space, memory)[index]
    slot[:] = 0
    slot[: len(codes)] = codes.astype(np.int32) + 1
