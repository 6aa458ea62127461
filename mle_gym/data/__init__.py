"""The local data cache: raw import, Kaggle download, preparation, checksum checks and the
prepared-data gate."""

from mle_gym.data.cache import CompetitionDirs, NotPrepared, cache_root
from mle_gym.data.dev_variant import (
    DevDirs,
    DevVariantLeak,
    DevVariantUnavailable,
    check_dev_variant,
    require_dev_variant,
)
from mle_gym.data.gate import require_all_prepared, require_prepared
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
    "NotPrepared",
    "PrepareError",
    "PrepareResult",
    "cache_root",
    "check_dev_variant",
    "prepare",
    "require_all_prepared",
    "require_dev_variant",
    "require_prepared",
]
