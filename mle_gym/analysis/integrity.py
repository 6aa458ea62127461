"""A run's integrity records (result.json's `integrity`, one per episode) summed up, so a
report can say at a glance whether any score was exposed during an episode, how much the
agents validated, which ran with the network, and which hit a sandbox limit."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from mle_gym.batch.store import EpisodeRecord


def integrity_summary(records: Iterable[EpisodeRecord]) -> dict[str, Any]:
    """Counts over the finished episodes; those without a record (older runs) are counted
    apart, never as clean."""
    done = [r for r in records if r.state == "done"]
    found = [(r, (r.result or {}).get("integrity")) for r in done]
    kept = [(r, i) for r, i in found if i]
    validations = [i.get("validations", 0) for _, i in kept]
    return {
        "episodes": len(done),
        "without_record": len(done) - len(kept),
        "score_exposed": [
            f"{r.competition_id}/seed-{r.seed}"
            for r, i in kept
            if i.get("score_exposed_during_episode")
        ],
        "validations": {
            "total": sum(validations),
            "mean": sum(validations) / len(validations) if validations else None,
            "max": max(validations, default=None),
        },
        "network": sum(bool(i.get("network")) for _, i in kept),
        "hit_limit": sum(bool(i.get("hit_limit")) for _, i in kept),
        "no_submission_written": sum(i.get("last_submission_write_step") is None for _, i in kept),
        "task_variants": dict(Counter(i.get("task_variant", "default") for _, i in kept)),
    }
