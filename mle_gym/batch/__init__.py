"""Many episodes: every (competition, seed) of a policy, resumable, locally or on Ray."""

from mle_gym.batch.local import LocalScheduler
from mle_gym.batch.runner import BatchResult, run_batch
from mle_gym.batch.spec import BatchSpec, EpisodeTask
from mle_gym.batch.store import RunStore

__all__ = [
    "BatchResult",
    "BatchSpec",
    "EpisodeTask",
    "LocalScheduler",
    "RunStore",
    "run_batch",
]
