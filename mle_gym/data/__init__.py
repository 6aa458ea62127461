"""The local data cache: raw import, Kaggle download, preparation and checksum checks."""

from mle_gym.data.cache import CompetitionDirs, cache_root
from mle_gym.data.dev_variant import (
    DevDirs,
    DevVariantLeak,
    DevVariantUnavailable,
    check_dev_variant,
    require_dev_variant,
)
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
    "DevDirs",
    "DevVariantLeak",
    "DevVariantUnavailable",
    "PrepareError",
    "PrepareResult",
    "cache_root",
    "check_dev_variant",
    "prepare",
    "require_dev_variant",
]
