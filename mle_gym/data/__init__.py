"""The local data cache: raw import, Kaggle download, preparation and checksum checks."""

from mle_gym.data.cache import CompetitionDirs, cache_root
from mle_gym.data.prepare import (
    AlreadyPrepared,
    ChecksumError,
    PrepareError,
    PrepareResult,
    prepare,
)

__all__ = [
    "AlreadyPrepared",
    "ChecksumError",
    "CompetitionDirs",
    "PrepareError",
    "PrepareResult",
    "cache_root",
    "prepare",
]
