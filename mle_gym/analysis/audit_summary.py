"""The audits kept in a run directory (`mle-gym audit plagiarism / rules` write them to
RUN/audits/), summed up for the report: what was checked and which episodes were flagged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mle_gym.runs.jsonfile import read_json

#: Where audits write their findings, in the run directory.
AUDITS_DIR = "audits"
PLAGIARISM_FILE = "plagiarism.json"
RULES_FILE = "rules.json"


def _episode(entry: dict[str, Any]) -> str:
    return f"{entry['competition_id']}/seed-{entry['seed']}"


def audit_summary(root: Path) -> dict[str, Any]:
    """{"plagiarism": ..., "rules": ...} for each audit found; empty when none was run."""
    found: dict[str, Any] = {}
    plagiarism = read_json(Path(root) / AUDITS_DIR / PLAGIARISM_FILE)
    if plagiarism:
        episodes = plagiarism.get("episodes", [])
        scores = [e["similarity"] for e in episodes if e.get("similarity") is not None]
        found["plagiarism"] = {
            "threshold": plagiarism["threshold"],
            "episodes": len(episodes),
            "highest": max(scores, default=None),
            "flagged": [_episode(e) for e in episodes if e.get("flagged")],
        }
    rules = read_json(Path(root) / AUDITS_DIR / RULES_FILE)
    if rules:
        episodes = rules.get("episodes", [])
        found["rules"] = {
            "model": rules.get("model"),
            "episodes": len(episodes),
            "flagged": [_episode(e) for e in episodes if e.get("flagged")],
            "errors": [_episode(e) for e in episodes if e.get("error")],
        }
    return found
