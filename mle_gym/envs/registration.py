"""Registers `mle/<id>-v0` with Gymnasium for every competition in the catalog."""

from __future__ import annotations

import gymnasium as gym

from mle_gym.competitions import all_competitions

ENTRY_POINT = "mle_gym.envs.competition_env:CompetitionEnv"
VECTOR_ENTRY_POINT = "mle_gym.vector:from_registry"


def register_all() -> list[str]:
    """Register every competition (idempotent); returns the env ids."""
    ids = []
    for comp in all_competitions():
        if comp.env_id not in gym.registry:
            # The env runs its own step and time budget and grades at the end, so
            # Gymnasium's TimeLimit wrapper (which would cut without grading) stays off.
            gym.register(
                id=comp.env_id,
                entry_point=ENTRY_POINT,
                vector_entry_point=VECTOR_ENTRY_POINT,
                kwargs={"competition_id": comp.id},
            )
        ids.append(comp.env_id)
    return ids
