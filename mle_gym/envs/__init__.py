"""Gymnasium environments: one per competition, registered as mle/<id>-v0."""

from mle_gym.envs.competition_env import CompetitionEnv, NotPrepared

__all__ = ["CompetitionEnv", "NotPrepared"]
