"""The leaderboard's test-set disclosure, derived from the run instead of ticked by hand.

MLE-bench's pull-request template asks an entrant to tick one statement: that the harness
exposed no signal derived from the held-out test set to the agent during its rollouts. Each
episode's integrity record (result.json) counts what could carry such a signal, so the
statement is ticked here only when every counted episode has a record and none shows one:
no grade before the episode's end, no validation that ran the metric on the answers. What
the agent did with a network (a separate disclosure on the leaderboard) is shown beside it as
evidence, never hidden.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mle_gym.runs.store import EpisodeRecord

#: The statement of MLE-bench's pull-request template, as its entrants must tick it.
STATEMENT = (
    "the scaffold/harness used in this leaderboard submission does not expose to the agent "
    "signals derived from the held-out test set during rollouts"
)


def _name(record: EpisodeRecord) -> str:
    return f"{record.competition_id}/seed-{record.seed}"


def disclosure(records: Iterable[EpisodeRecord]) -> dict[str, Any]:
    """The statement, whether the records support ticking it, why not, and the evidence,
    over `records`: the graded episodes a leaderboard entry counts."""
    done = list(records)
    found = [(r, (r.result or {}).get("integrity")) for r in done]
    kept = [(r, i) for r, i in found if i]
    missing = [_name(r) for r, i in found if not i]
    graded_early = [_name(r) for r, i in kept if i.get("grades_before_end")]
    metric_checks = [_name(r) for r, i in kept if i.get("metric_runs_for_validity")]
    online = [_name(r) for r, i in kept if i.get("network")]
    reasons = []
    if not done:
        reasons.append("no graded episode to speak for")
    if missing:
        reasons.append(f"{len(missing)} episode(s) have no integrity record: {', '.join(missing)}")
    if graded_early:
        reasons.append(
            f"{len(graded_early)} episode(s) were graded before their end (a score could reach "
            f"the agent): {', '.join(graded_early)}"
        )
    if metric_checks:
        reasons.append(
            f"{len(metric_checks)} episode(s) had validity decided by running the metric on the "
            f"test answers: {', '.join(metric_checks)}"
        )
    evidence = {
        "episodes": len(done),
        "with_record": len(kept),
        "grades_before_end": sum(int(i.get("grades_before_end") or 0) for _, i in kept),
        "metric_runs_for_validity": sum(
            int(i.get("metric_runs_for_validity") or 0) for _, i in kept
        ),
        "format_validations": sum(int(i.get("validations") or 0) for _, i in kept)
        - sum(int(i.get("metric_runs_for_validity") or 0) for _, i in kept),
        "network_episodes": online,
        "network_use": {_name(r): i["network_use"] for r, i in kept if i.get("network_use")},
    }
    return {
        "statement": STATEMENT,
        "ticked": not reasons,
        "reasons": reasons,
        "evidence": evidence,
    }


def disclosure_lines(data: dict[str, Any]) -> list[str]:
    """The statement as a pull-request checkbox, ticked or not, with its evidence under it."""
    box = "x" if data["ticked"] else " "
    statement = data["statement"][0].upper() + data["statement"][1:]
    e = data["evidence"]
    lines = [
        f"- [{box}] {statement}.",
        f"  Evidence (mle_gym integrity records of {e['with_record']} of {e['episodes']} graded "
        f"episode(s)): grades before the end {e['grades_before_end']}, validations that ran "
        f"the metric {e['metric_runs_for_validity']}, format-only validations "
        f"{e['format_validations']}.",
    ]
    lines += [f"  Not ticked: {reason}." for reason in data["reasons"]]
    online = e["network_episodes"]
    lines.append(
        "  Internet: off in every episode."
        if not online
        else f"  Internet: on in {len(online)} episode(s) ({', '.join(online)}); disclose it "
        "with the entry."
    )
    for episode, use in e["network_use"].items():
        hosts = ", ".join(use.get("hosts") or []) or "none"
        lines.append(
            f"  {episode}: {use.get('requests', 0)} request(s) through the egress proxy "
            f"({use.get('policy')}), hosts reached: {hosts}."
        )
    return lines
