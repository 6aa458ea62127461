"""A run's integrity records (result.json's `integrity`, one per episode) summed up, so a
report can say at a glance whether any score was exposed during an episode, how much the
agents validated, which ran with the network (and, through the egress proxy, where it went),
and which hit a sandbox limit."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from mle_gym.analysis.audit_summary import audit_summary
from mle_gym.analysis.published import task_differences
from mle_gym.runs.run import Run
from mle_gym.runs.store import EpisodeRecord


def integrity_summary(records: Iterable[EpisodeRecord]) -> dict[str, Any]:
    """Counts over the finished episodes; those without a record (older runs) are counted
    apart, never as clean."""
    done = [r for r in records if r.state == "done"]
    found = [(r, (r.result or {}).get("integrity")) for r in done]
    kept = [(r, i) for r, i in found if i]
    validations = [i.get("validations", 0) for _, i in kept]
    writes = [
        i["last_submission_write_step"]
        for _, i in kept
        if i.get("last_submission_write_step") is not None
    ]
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
        # MLE-bench's /validate deciding by the metric (an option): no score goes out
        "metric_runs_for_validity": sum(i.get("metric_runs_for_validity", 0) for _, i in kept),
        "network": sum(bool(i.get("network")) for _, i in kept),
        "network_use": {
            f"{r.competition_id}/seed-{r.seed}": i["network_use"]
            for r, i in kept
            if i.get("network_use")
        },
        "hit_limit": [f"{r.competition_id}/seed-{r.seed}" for r, i in kept if i.get("hit_limit")],
        # one episode each, however many segments it ran in (resumed from checkpoints)
        "resumed": {
            f"{r.competition_id}/seed-{r.seed}": len(i["lineage"]["segments"])
            for r, i in kept
            if i.get("lineage")
        },
        "last_write_step": {"min": min(writes, default=None), "max": max(writes, default=None)},
        "no_submission_written": sum(i.get("last_submission_write_step") is None for _, i in kept),
        "task_variants": dict(Counter(i.get("task_variant", "default") for _, i in kept)),
        "data_variants": dict(Counter(i.get("data_variant", "test") for _, i in kept)),
    }


def data_variants(run: Run) -> set[str]:
    """The data the run's episodes ran on (`EnvConfig.data`: "test" or "dev"), from its
    settings and each episode's integrity record (older records ran on "test")."""
    env = run.settings.get("env_kwargs") or {}
    found = {env.get("data") or "test"}
    for record in run.records:
        found.add(((record.result or {}).get("integrity") or {}).get("data_variant", "test"))
    return found


def check_one_variant(runs: Iterable[Run], published: bool = False) -> None:
    """Raise ValueError where a report would put episodes of different data side by side:
    a development variant's grade is an approximation on a split of the public training
    data, never comparable with a test grade or MLE-bench's published numbers."""
    seen = {run.root.name: data_variants(run) for run in runs}
    every = set().union(*seen.values())
    if len(every) > 1:
        said = "; ".join(f"{name}: {', '.join(sorted(v))}" for name, v in seen.items())
        raise ValueError(
            f"these episodes ran on different data ({said}): a report reads one data variant "
            "at a time (development-variant grades are not test grades)"
        )
    if published and "dev" in every:
        raise ValueError(
            "this run graded on a development variant (data='dev'): its figures approximate "
            "the competitions' on a split of their public training data and are never put "
            "beside MLE-bench's published numbers"
        )


def run_integrity(run: Run) -> dict[str, Any]:
    """The episodes' integrity summary, the competitions of the run whose task differs from
    MLE-bench's on purpose (task_differences.csv), and the audits kept in the run."""
    differences = task_differences()
    return {
        **integrity_summary(run.records),
        "task_differences": {c: differences[c] for c in run.competitions if c in differences},
        "audits": audit_summary(run.root),
    }


def integrity_lines(data: dict[str, Any]) -> list[str]:
    """The summary (with its task differences and audits, `run_integrity`) as a few lines
    for the printed and HTML reports."""
    v = data["validations"]
    exposed = data["score_exposed"]
    variants = ", ".join(f"{k} × {n}" for k, n in sorted(data["task_variants"].items()))
    writes = data["last_write_step"]
    lines = [
        f"integrity: {data['episodes'] - data['without_record']} of {data['episodes']} "
        "finished episode(s) have a record; score exposed during the episode: "
        + (", ".join(exposed) if exposed else "none"),
        f"validations asked: {v['total']}"
        + ("" if v["mean"] is None else f" (mean {v['mean']:.1f}, max {v['max']})")
        + f", metric runs for validity: {data.get('metric_runs_for_validity', 0)}"
        + f"; network on in {data['network']}; task variant: {variants or '—'}",
        "submission last written at step "
        + ("—" if writes["min"] is None else f"{writes['min']}..{writes['max']}")
        + f", never in {data['no_submission_written']}; sandbox limit hit: "
        + (", ".join(data["hit_limit"]) or "none"),
    ]
    resumed = data.get("resumed") or {}
    if resumed:
        lines.append(
            "resumed from checkpoints (each counted once): "
            + ", ".join(f"{episode} ({n} segments)" for episode, n in resumed.items())
        )
    for episode, use in data.get("network_use", {}).items():
        hosts = use.get("hosts") or []
        lines.append(
            f"internet through the proxy ({use.get('policy')}): {episode}: "
            f"{use.get('requests', 0)} request(s), {use.get('denied', 0)} refused, "
            f"{use.get('distinct_hosts', len(hosts))} host(s) reached"
            + (f": {', '.join(hosts[:10])}" + (", ..." if len(hosts) > 10 else "") if hosts else "")
        )
    for competition, why in data.get("task_differences", {}).items():
        lines.append(
            f"task differs from MLE-bench: {competition}: {why['kind']}: {why['difference']}"
        )
    if data.get("data_variants", {}).get("dev"):
        lines.append(
            "data: the development variant (data='dev'): graded on answers carved from the "
            "public training data; medals and normalised scores are an approximation there"
        )
    lines.extend(audit_lines(data.get("audits", {})))
    return lines


def audit_lines(audits: dict[str, Any]) -> list[str]:
    if not audits:
        return ["audits: none run (mle-gym audit plagiarism / rules)"]
    lines = []
    if "plagiarism" in audits:
        p = audits["plagiarism"]
        top = "—" if p["highest"] is None else f"{p['highest']:.3f}"
        lines.append(
            f"plagiarism audit (Dolos, threshold {p['threshold']:g}): {p['episodes']} "
            f"episode(s), highest similarity {top}, flagged: {', '.join(p['flagged']) or 'none'}"
        )
    if "rules" in audits:
        r = audits["rules"]
        lines.append(
            f"rule audit ({r['model']}): {r['episodes']} episode(s), flagged: "
            f"{', '.join(r['flagged']) or 'none'}"
            + (f"; no verdict for {', '.join(r['errors'])}" if r["errors"] else "")
        )
    return lines
