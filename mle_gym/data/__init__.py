"""The local data cache: raw import, Kaggle download, preparation and checksum checks."""

from mle_gym.data.cache import CompetitionDirs, cache_root
from mle_gym.data.prepare import ChecksumError, PrepareResult, prepare

__all__ = ["ChecksumError", "CompetitionDirs", "PrepareResult", "cache_root", "prepare"]
