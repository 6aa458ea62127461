"""What a run cost: model calls, tokens in and out, money and wall time, per episode and run.

Read from what the batch runner kept: the trajectory's closing `usage` line (the policy's own
totals) or, for a policy without one, the per-step `policy_info`; wall time from result.json,
or from the status's start and finish for an episode that did not finish cleanly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mle_gym.runs.jsonfile import read_json
from mle_gym.runs.layout import RESULT_FILE, STATUS_FILE
from mle_gym.runs.run import Run
from mle_gym.runs.trajectory import read_trajectory

FIELDS = ("episodes", "model_calls", "prompt_tokens", "completion_tokens", "cost_usd", "seconds")


def _zero() -> dict[str, float]:
    return dict.fromkeys(FIELDS, 0)


def episode_cost(directory: Path) -> dict[str, float]:
    """One episode's calls, tokens, cost and seconds (0 where nothing was recorded)."""
    cost = _zero()
    cost["episodes"] = 1
    usage, steps = None, {}
    for event in read_trajectory(directory):
        if event.get("event") == "usage":
            usage = event["usage"]
        elif event.get("event") == "step" and event.get("policy_info"):
            info = event["policy_info"]
            steps[info.get("step", len(steps))] = info  # one record per policy step
    if usage is not None:
        cost.update(
            model_calls=usage.get("calls", 0),
            prompt_tokens=usage.get("prompt_tokens", 0),
            completion_tokens=usage.get("completion_tokens", 0),
            cost_usd=usage.get("cost_usd", 0.0),
        )
    else:
        for info in steps.values():
            cost["model_calls"] += info.get("llm_calls", 0)
            cost["prompt_tokens"] += info.get("prompt_tokens", 0)
            cost["completion_tokens"] += info.get("completion_tokens", 0)
            cost["cost_usd"] += info.get("cost_usd", 0.0)
    result = read_json(directory / RESULT_FILE) or {}
    status = read_json(directory / STATUS_FILE) or {}
    if result.get("seconds") is not None:
        cost["seconds"] = result["seconds"]
    elif status.get("finished_at") and status.get("started_at"):
        cost["seconds"] = round(status["finished_at"] - status["started_at"], 3)
    return cost


def run_cost(run: Run) -> dict[str, Any]:
    """Per episode, per competition and for the whole run: every episode attempted."""
    episodes, competitions, total = {}, {}, _zero()
    for record in run.records:
        cost = episode_cost(run.episode_dir(record))
        episodes[record.key] = cost
        per = competitions.setdefault(record.competition_id, _zero())
        for name in FIELDS:
            per[name] += cost[name]
            total[name] += cost[name]
    return {"episodes": episodes, "competitions": competitions, "total": total}
