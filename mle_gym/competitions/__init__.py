"""Competition specs: raw files, preparation, metric name, thresholds, task statement."""

from mle_gym.competitions.registry import UnknownCompetition, all_competitions, get_competition
from mle_gym.competitions.spec import Competition

__all__ = ["Competition", "UnknownCompetition", "all_competitions", "get_competition"]
