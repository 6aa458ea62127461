"""Many episodes: every (competition, seed) of a policy, resumable, locally or on Ray.

Names load on first use, so importing a module of this package (the spec, the progress
display) loads no runner, env or sandbox.
"""

from __future__ import annotations

from mle_gym.lazy import lazy_exports

#: Each public name and the module that defines it.
_EXPORTS = {
    "BatchResult": "mle_gym.batch.runner",
    "BatchSpec": "mle_gym.batch.spec",
    "EpisodeTask": "mle_gym.batch.spec",
    "LocalScheduler": "mle_gym.batch.local",
    "RunStore": "mle_gym.runs.store",
    "run_batch": "mle_gym.batch.runner",
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
