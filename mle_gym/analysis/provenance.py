"""The provenance block of a report: what the run ran on and with, from its records."""

from __future__ import annotations

from typing import Any

from mle_gym.runs.provenance import read_episode_provenance, read_invocations
from mle_gym.runs.run import Run


def last_invocation(run: Run) -> dict[str, Any] | None:
    invocations = read_invocations(run.root)
    return invocations[-1] if invocations else None


def provenance_summary(run: Run) -> dict[str, Any]:
    """The run's invocations (newest last) and what its episodes' records have in common or
    not: hosts, images, versions, and how many verified the prepared data's checksums."""
    invocations = read_invocations(run.root)
    hosts, images, versions, endpoints = set(), set(), set(), set()
    checked, recorded, mismatches = 0, 0, {}
    for record in run.records:
        key = record.key
        episode = read_episode_provenance(run.episode_dir(record))
        if episode is None:
            continue
        recorded += 1
        hosts.add(episode["host"]["hostname"])
        versions.add(episode["software"]["mle_gym"])
        if episode.get("image"):
            images.add(episode["image"]["id"])
        if episode.get("policy"):
            endpoints.add((episode["policy"]["model"], episode["policy"]["endpoint_host"]))
        checked += bool(episode["data"]["checksums_checked"])
        if episode["data"]["mismatches"]:
            mismatches[key] = episode["data"]["mismatches"]
    return {
        "invocations": invocations,
        "episodes": {
            "recorded": recorded,
            "hosts": sorted(hosts),
            "images": sorted(images),
            "mle_gym_versions": sorted(versions),
            "models": [{"model": m, "endpoint_host": h} for m, h in sorted(endpoints, key=str)],
            "checksums_checked": checked,
            "checksum_mismatches": mismatches,
        },
    }


def provenance_lines(data: dict[str, Any]) -> list[str]:
    """A few lines for the printed report."""
    if not data["invocations"]:
        return ["provenance: not recorded (a run made before mle_gym kept provenance.json)"]
    last = data["invocations"][-1]
    sw, host, env, policy = last["software"], last["host"], last["env"], last["policy"]
    libraries = ", ".join(f"{k} {v}" for k, v in sw["libraries"].items() if v)
    memory = host["memory_bytes"]
    gpus = ", ".join(f"{g['name']} (driver {g['driver']})" for g in host["gpus"]) or "none"
    episodes = data["episodes"]
    model = policy.get("model") or "—"
    endpoint = policy.get("endpoint_host") or "—"
    lines = [
        f"provenance: mle_gym {sw['mle_gym']}"
        + (f" (git {sw['git_commit']})" if sw["git_commit"] else "")
        + f", Python {sw['python']}; {libraries}",
        f"host: {host['hostname']}: {host['cpu_model']} × {host['cpu_count']} CPUs, "
        + (f"{memory / 2**30:.1f} GiB" if memory else "memory unknown")
        + f", GPUs: {gpus}",
        "env: "
        + ", ".join(f"{k} {'—' if v is None else v}" for k, v in env.items())
        + f"; policy {policy['name']} (model {model}, endpoint {endpoint})",
        f"episodes: {episodes['recorded']} recorded on {len(episodes['hosts'])} host(s); "
        f"image {', '.join(i[:19] for i in episodes['images']) or '— (no docker)'}; "
        f"prepared data checksums verified for {episodes['checksums_checked']} of "
        f"{episodes['recorded']}",
    ]
    if len(data["invocations"]) > 1:
        lines.append(f"({len(data['invocations'])} invocations of `mle-gym run`; the last shown)")
    if len(episodes["mle_gym_versions"]) > 1:
        lines.append(f"warning: episodes ran on mle_gym {', '.join(episodes['mle_gym_versions'])}")
    for key, found in episodes["checksum_mismatches"].items():
        lines.append(f"warning: {key}: prepared data differs from MLE-bench's: {found}")
    return lines
