"""A run's receipt: which data its episodes ran on, and proof, checked now, that a training
run's development variants hold no test data.

For each episode of a run (a batch's run directory, or one harness run's), the data variant
it ran on and the carving of the development variant it used (`dev_variant` in its integrity
record: the manifest's md5 and content digest). For each competition run on its development
variant: the variant's manifest (rule, seed, ids, md5 of every file) and a fresh
`check_dev_variant` (the files still match their md5 sums, the development ids lie within the
public training ids and none is a test id), and whether the variant stored now is the very
carving the run used, the same split carved again, or another one. The verdict is "pass",
"fail", or "evaluation" for a run (or episodes) on the test data, which no receipt covers.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mle_gym.data.cache import NotPrepared, cache_root
from mle_gym.data.checksums import md5_of
from mle_gym.data.dev_variant import (
    DevVariantUnavailable,
    check_dev_variant,
    content_digest,
    dev_dirs,
)
from mle_gym.runs.jsonfile import read_json
from mle_gym.runs.layout import EPISODES_DIR, RESULT_FILE
from mle_gym.runs.run import read_run

#: The verdicts, and the exit status `mle-gym receipt` gives each.
EXIT_STATUS = {"pass": 0, "fail": 1, "evaluation": 3}


@dataclass(frozen=True)
class EpisodeUse:
    """What one episode of the run ran on."""

    episode: str
    competition_id: str
    state: str
    #: "dev" or "test" (`EnvConfig.data`).
    data_variant: str
    #: The carving of the development variant it used, from its integrity record (None on the
    #: test data, or for an episode that left no record: unfinished, or an older run).
    dev_variant: dict[str, str] | None


def episodes_of(root: Path) -> tuple[str, list[EpisodeUse]]:
    """The run's kind ("batch" or "harness") and its episodes: those a batch attempted, or
    the one of a harness run (`mle-gym run --harness` with its --run-dir)."""
    root = Path(root)
    if (root / EPISODES_DIR).is_dir():
        run = read_run(root)
        planned = (run.settings.get("env_kwargs") or {}).get("data") or "test"
        uses = []
        for record in run.records:
            integrity = (record.result or {}).get("integrity") or {}
            uses.append(
                EpisodeUse(
                    record.key,
                    record.competition_id,
                    record.state,
                    integrity.get("data_variant") or planned,
                    integrity.get("dev_variant"),
                )
            )
        return "batch", uses
    result = read_json(root / RESULT_FILE)
    if not isinstance(result, dict) or "competition_id" not in result:
        raise FileNotFoundError(
            f"{root} is not a run made by `mle-gym run` (no episodes/ and no harness result.json)"
        )
    integrity = result.get("integrity") or {}
    use = EpisodeUse(
        result["competition_id"],
        result["competition_id"],
        "done",
        integrity.get("data_variant") or "test",
        integrity.get("dev_variant"),
    )
    return "harness", [use]


def _stored_manifest(path: Path) -> dict | None:
    """The manifest as stored, for a variant that failed its check (None: none readable)."""
    try:
        manifest = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def variant_receipt(competition_id: str, uses: list[EpisodeUse], root: Path | None) -> dict:
    """One competition's development variant: its manifest, the fresh check, and whether the
    variant stored now is the one `uses` (its episodes) recorded."""
    dirs = dev_dirs(competition_id, root)
    entry: dict[str, Any] = {"competition_id": competition_id, "stored_at": str(dirs.root)}
    problems: list[str] = []
    try:
        manifest = check_dev_variant(competition_id, root)
    except (NotPrepared, DevVariantUnavailable, OSError, KeyError, ValueError) as exc:
        problems.append(f"the check failed: {exc}")
        manifest = _stored_manifest(dirs.manifest)
    if manifest is not None:
        entry["manifest"] = {
            "rule": manifest.get("rule"),
            "seed": manifest.get("seed"),
            "made_from": manifest.get("made_from"),
            "created_at": manifest.get("created_at"),
            "main_prepared_at": manifest.get("main_prepared_at"),
            "train_ids": len(manifest.get("train_ids", ())),
            "test_ids": len(manifest.get("test_ids", ())),
            "files": manifest.get("files", {}),
            "manifest_md5": md5_of(dirs.manifest),
            "digest": content_digest(manifest),
        }
    entry["check"] = {"ok": not problems, "error": problems[0] if problems else None}
    entry["used"], used_problem = _used(entry.get("manifest"), uses)
    if used_problem:
        problems.append(used_problem)
    entry["problems"] = problems
    return entry


def _used(now: dict | None, uses: list[EpisodeUse]) -> tuple[dict[str, Any], str | None]:
    """How the carving the episodes recorded compares with the one stored now: "same" (this
    very manifest), "recarved" (the same split carved again: same rule, seed, ids and
    files), or a problem."""
    recorded = [u.dev_variant for u in uses if u.dev_variant]
    unrecorded = [u.episode for u in uses if not u.dev_variant]
    used: dict[str, Any] = {
        "recorded": sorted({r.get("manifest_md5", "") for r in recorded}),
        "episodes_without_record": unrecorded,
    }
    if not recorded:
        used["match"] = "unknown"
        return used, (
            "no episode recorded which carving of the variant it used (unfinished episodes, "
            "or a run made before episodes recorded it), so the variant checked now cannot be "
            "tied to the run"
        )
    if now is None:
        used["match"] = "gone"
        return used, "no readable variant is stored now: nothing to tie to the run"
    if all(r.get("manifest_md5") == now["manifest_md5"] for r in recorded):
        used["match"] = "same"
        return used, None
    if all(r.get("digest") == now["digest"] for r in recorded):
        used["match"] = "recarved"
        return used, None
    used["match"] = "different"
    return used, (
        "the variant stored now is not the one the run used: it was carved again with other "
        "content, or edited, since (its content digest differs from the run's record), so the "
        "split the run trained on cannot be checked"
    )


def build_receipt(run_dir: Path, root: Path | None = None) -> dict[str, Any]:
    """The receipt of the run in `run_dir`, its variants checked in the data cache `root`
    (default `$MLE_GYM_HOME`); "verdict" is pass, fail or evaluation, with its line."""
    kind, uses = episodes_of(run_dir)
    by_competition: dict[str, list[EpisodeUse]] = defaultdict(list)
    for use in uses:
        if use.data_variant == "dev":
            by_competition[use.competition_id].append(use)
    variants = [variant_receipt(c, u, root) for c, u in sorted(by_competition.items())]
    on_test = [u.episode for u in uses if u.data_variant != "dev"]
    failures = [f"{v['competition_id']}: {p}" for v in variants for p in v["problems"]]
    if not uses:
        failures.append("the run has no episodes")
    if failures:
        verdict = "fail"
        line = f"RECEIPT FAILED: {len(failures)} problem(s): " + "; ".join(failures)
    elif on_test:
        verdict = "evaluation"
        line = (
            f"EVALUATION DATA: {len(on_test)} episode(s) ran on the competitions' test data "
            "(data='test'): an evaluation run, not a training run; no receipt covers it"
        )
    else:
        verdict = "pass"
        line = (
            f"RECEIPT OK: all {len(uses)} episode(s) ran on development variants carved from "
            "the public training data; their files match their md5 sums, their ids lie within "
            "the public training ids and none is a test id"
        )
    return {
        "run": str(run_dir),
        "kind": kind,
        "cache": str(root or cache_root()),
        "episodes": [asdict(u) for u in uses],
        "variants": variants,
        "evaluation_episodes": on_test,
        "verdict": verdict,
        "verdict_line": line,
    }


#: Files listed by name in the printed receipt (--json lists them all).
SHOWN_FILES = 12


def receipt_lines(receipt: dict[str, Any]) -> list[str]:
    """The receipt as printed: the episodes, each variant's manifest and check, the verdict."""
    lines = [f"receipt of {receipt['run']} ({receipt['kind']} run; data cache {receipt['cache']})"]
    for use in receipt["episodes"]:
        carving = (use["dev_variant"] or {}).get("manifest_md5")
        data = "development variant" if use["data_variant"] == "dev" else "TEST data (evaluation)"
        lines.append(
            f"  {use['episode']}: {use['state']}, {data}"
            + (f", manifest md5 {carving}" if carving else "")
        )
    for variant in receipt["variants"]:
        lines.append(f"development variant of {variant['competition_id']} ({variant['stored_at']})")
        manifest = variant.get("manifest")
        if manifest is not None:
            lines += [
                f"  rule: {manifest['rule']}; seed {manifest['seed']}; made from "
                f"{manifest['made_from']}/ at {manifest['created_at']}",
                f"  ids: {manifest['train_ids']} in the development training part, "
                f"{manifest['test_ids']} in the development test part",
                f"  manifest md5 {manifest['manifest_md5']}, content digest {manifest['digest']}",
                f"  files ({len(manifest['files'])}, md5):",
            ]
            files = sorted(manifest["files"].items())
            lines += [f"    {md5}  {name}" for name, md5 in files[:SHOWN_FILES]]
            if len(files) > SHOWN_FILES:
                lines.append(f"    ... and {len(files) - SHOWN_FILES} more (--json lists them)")
        check = variant["check"]
        lines.append(
            "  check now: files match their md5; ids within the public training ids, disjoint "
            "from the test ids: " + ("ok" if check["ok"] else f"FAILED: {check['error']}")
        )
        lines.append("  used by the run: " + _used_text(variant["used"]))
    lines.append(receipt["verdict_line"])
    return lines


def _used_text(used: dict[str, Any]) -> str:
    match = used["match"]
    text = {
        "same": "this very carving (same manifest md5)",
        "recarved": "the same split, carved again since (other manifest md5, same rule, seed, "
        "ids and files)",
        "different": "ANOTHER carving: the variant stored now differs from the one recorded",
        "unknown": "not recorded by any episode",
        "gone": "nothing readable is stored now",
    }[match]
    if used["episodes_without_record"] and match != "unknown":
        text += f"; {len(used['episodes_without_record'])} episode(s) left no record"
    return text
