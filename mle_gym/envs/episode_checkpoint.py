"""An episode's checkpoint, and resuming an episode from one: the `Episode`'s own state on top
of its sandbox's workspace and shell (mle_gym.checkpoints).

A checkpoint's `meta` holds what the episode needs to go on where it stopped: the competition,
task, seed and configuration it ran under (a resume under others is refused), the step count
and the wall-clock time used (the resumed episode spends what is left of both), the integrity
record and host grading budget so far, the development feedback's dense-reward bookkeeping
(data="dev": the potential paid so far, so a resumed episode's rewards still sum to its final
normalised score), the kept submission snapshots (their contents stored in the checkpoint's
store beside the workspace's files), and the lineage of earlier segments.
Running processes are not captured (mle_gym.checkpoints.workspace.NOT_KEPT says so in every
checkpoint and every resumed episode's first observation).

A checkpoint also records what the agent's work depends on outside its workspace: the identity
of its /home/data (data/identity.py) and of the runtime its code ran with (the interpreter and
packages, tools/runtime.py). A resume compares both with its own, and these decide whether a
checkpoint of one backend may go on on the other: the backend and its own options may then
differ, the data and the runtime may not.

The functions here are the `Episode`'s collaborators: they read and set its state, and the
`Episode` exposes them as `checkpoint` and `resume`.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mle_gym.checkpoints.store import CheckpointError, CheckpointStore, checked_blob, read_manifest
from mle_gym.checkpoints.workspace import NOT_KEPT, RestoreReport, capture, restore
from mle_gym.data.cache import cache_root
from mle_gym.data.identity import data_identity
from mle_gym.envs.config import EnvConfig
from mle_gym.envs.integrity import IntegrityLog
from mle_gym.envs.snapshots import Snapshot, elapsed_since
from mle_gym.grading.budget import GradingBudget

if TYPE_CHECKING:
    from mle_gym.envs.episode import Episode

#: What an episode checkpoint's meta says it is.
KIND = "mle-gym-episode/1"
#: Options that change neither what the episode is nor what the agent may do: a resume may
#: differ in them (how observations look, how many episodes share the host).
FREE_OPTIONS = frozenset({"render_mode", "observation_format", "concurrent_episodes"})
#: Options of one backend (a docker image, a local runtime's path, the limits each sets its
#: own way): a resume on the other backend may differ in them, where the data and the
#: runtime the checkpoint records are this env's.
BACKEND_OPTIONS = frozenset({"backend", "sandbox_options"})


def default_directory() -> Path:
    """Where `checkpoint()` writes without a directory: `$MLE_GYM_HOME/checkpoints`, one store
    for every env on the host (a file's content stored once across them)."""
    return cache_root() / "checkpoints"


def config_record(config: EnvConfig) -> dict[str, Any]:
    """The configuration as JSON (paths as text), as a checkpoint keeps it."""
    record = {f.name: getattr(config, f.name) for f in fields(config)}
    return json.loads(json.dumps(record, default=str))


def _devices_as_counts(record: dict[str, Any]) -> dict[str, Any]:
    """`record` with a list of GPU device ids read as their count: which devices a batch's
    worker slot hands an episode is not what the episode is, how many it has is (a rerun
    may give the episode another slot)."""
    options = record.get("sandbox_options")
    if not isinstance(options, dict) or not isinstance(options.get("gpus"), list):
        return record
    return {**record, "sandbox_options": {**options, "gpus": len(options["gpus"])}}


def write_checkpoint(episode: Episode, directory: Path | None = None) -> Path:
    """Capture the running `episode` into the store at `directory`; the checkpoint's folder.
    Starts the sandbox of an episode that has not begun; RuntimeError when none runs."""
    if episode.done:
        raise RuntimeError("no episode is running: call reset() before checkpoint()")
    episode._start_for_step()
    store = CheckpointStore(Path(directory) if directory is not None else default_directory())
    store.root.mkdir(parents=True, exist_ok=True)
    meta = {
        "kind": KIND,
        "competition_id": episode.competition.id,
        "task": episode.task.name,
        "data_variant": episode.config.data,
        "seed": episode.seed,
        "config": config_record(episode.config),
        "backend": episode.config.backend,
        "data_identity": data_identity(episode.dirs.public),
        "runtime": dict(episode._runtime),
        "steps": episode.steps,
        "max_steps": episode.max_steps,
        "time_used": round(elapsed_since(episode._started), 3),
        "time_limit": episode.config.time_limit,
        "integrity": asdict(episode._integrity),
        "grading_budget": episode._budget.to_dict(),
        "dev_feedback": episode.feedback.state() if episode.feedback is not None else None,
        "snapshots": _store_snapshots(episode, store),
        "resumed_from": episode.resumed_from,
        "background_processes": NOT_KEPT[0],
    }
    began = time.monotonic()
    try:
        return capture(episode.sandbox, store, meta)
    finally:
        # the time a checkpoint takes is not the agent's: its wall clock stands meanwhile
        if episode._started is not None:
            episode._started += time.monotonic() - began


def _store_snapshots(episode: Episode, store: CheckpointStore) -> dict[str, Any] | None:
    """The kept snapshots' index, their contents added to the store."""
    keeper = episode._snapshots
    if keeper is None:
        return None
    for snapshot in keeper.kept:
        with (
            open(keeper.directory / snapshot.file, "rb") as source,
            tempfile.NamedTemporaryFile(dir=store.root, prefix=".snapshot-", delete=False) as out,
        ):
            shutil.copyfileobj(source, out)
        store.add_blob(Path(out.name))
    return {
        "kept": [asdict(s) for s in keeper.kept],
        "thinned": keeper.thinned,
        "made": keeper.made,
    }


def checked_meta(episode: Episode, folder: Path) -> dict[str, Any]:
    """The episode state of the checkpoint in `folder`, if `episode` may resume from it:
    CheckpointError for what is not an intact episode checkpoint, ValueError for one of
    another competition, task or configuration (naming the differences)."""
    meta = read_manifest(folder).get("meta")
    if not isinstance(meta, dict) or meta.get("kind") != KIND:
        raise CheckpointError(f"{folder}: a checkpoint of a sandbox, not of an episode")
    if meta.get("competition_id") != episode.competition.id:
        raise ValueError(
            f"{folder} is a checkpoint of {meta.get('competition_id')!r}; this env runs "
            f"{episode.competition.id!r}"
        )
    ours, theirs = config_record(episode.config), meta.get("config")
    if not isinstance(theirs, dict):
        raise CheckpointError(f"{folder}: the checkpoint records no configuration")
    ours, theirs = _devices_as_counts(ours), _devices_as_counts(theirs)
    free = FREE_OPTIONS | BACKEND_OPTIONS if _crossing(meta, episode) else FREE_OPTIONS
    differ = sorted(
        name
        for name in set(ours) | set(theirs)
        if name not in free and ours.get(name) != theirs.get(name)
    )
    if differ:
        shown = ", ".join(f"{n}={theirs.get(n)!r} (this env: {ours.get(n)!r})" for n in differ)
        raise ValueError(
            f"{folder} was taken under another configuration: {shown}; make the env with the "
            "checkpoint's options to resume it"
        )
    _check_data(folder, meta, episode)
    if episode._runtime:  # this env's sandbox ran: its runtime is known before anything ends
        _check_runtime(folder, meta, episode)
    for name, kind in (("seed", int), ("steps", int), ("max_steps", int), ("time_used", float)):
        value = meta.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise CheckpointError(f"{folder}: the checkpoint's {name} is not valid: {value!r}")
        meta[name] = kind(value)
    return meta


def _crossing(meta: dict[str, Any], episode: Episode) -> bool:
    """Whether the checkpoint was taken on another backend than this env's."""
    config = meta.get("config")
    taken_on = config.get("backend") if isinstance(config, dict) else None
    return taken_on != episode.config.backend


def _check_data(folder: Path, meta: dict[str, Any], episode: Episode) -> None:
    """ValueError when the checkpoint's /home/data is not this env's (a checkpoint of the same
    backend that records none is taken as it is; one of another backend must record it)."""
    recorded = meta.get("data_identity")
    if recorded is None and not _crossing(meta, episode):
        return
    ours = data_identity(episode.dirs.public)
    if recorded != ours:
        raise ValueError(
            f"{folder} was taken on other data: its /home/data is "
            f"{recorded or 'not recorded'}, this env's is {ours} (the competition's prepared "
            f"files differ); resume it where {episode.competition.id} is prepared from the "
            "same files"
        )


def _check_runtime(folder: Path, meta: dict[str, Any], episode: Episode) -> None:
    """ValueError when the runtime the checkpoint's code ran with (interpreter and packages)
    is not the one this env's sandbox runs, naming what differs. A checkpoint of the same
    backend is taken as it is where either runtime is unknown; one of another backend is
    refused then."""
    recorded, ours = meta.get("runtime"), dict(episode._runtime)
    crossing = _crossing(meta, episode)
    if not crossing and (not recorded or not ours):
        return
    if not isinstance(recorded, dict) or not recorded or not ours:
        which = "the checkpoint records no runtime" if not recorded else "this env's is unknown"
        raise ValueError(
            f"{folder} was taken on the {meta.get('backend')} backend and {which}: a "
            "checkpoint resumes on another backend only under the same interpreter and packages"
        )
    differ = sorted(n for n in set(recorded) | set(ours) if recorded.get(n) != ours.get(n))
    if differ:
        shown = ", ".join(
            f"{n} {recorded.get(n) or 'absent'} (this env: {ours.get(n) or 'absent'})"
            for n in differ
        )
        raise ValueError(
            f"{folder} was taken under another runtime: {shown}; resume it where the agent's "
            "code runs with the same interpreter and packages (both backends do under the "
            "pinned runtime: `mle-gym build-runtime`)"
        )


@dataclass(frozen=True)
class Resumed:
    """What a resume put back: the workspace's report and the lineage the episode records."""

    report: RestoreReport
    resumed_from: dict[str, Any]

    def note(self, episode: Episode) -> str:
        """The paragraph the first observation adds: what was resumed and what was not."""
        taken_on = self.resumed_from.get("backend")
        moved = (
            f"It was taken on the {taken_on} backend and goes on on {episode.config.backend}, "
            "with the same data, interpreter and packages. "
            if taken_on and taken_on != episode.config.backend
            else ""
        )
        lines = [
            f"This episode resumes from a checkpoint taken after step {episode.steps}: your "
            f"files, working directory and exported variables are as they were; "
            f"{episode.max_steps - episode.steps} steps and "
            f"{max(0.0, episode.time_left()):,.0f} seconds are left. {moved}Not restored:",
            *(f"- {item}" for item in self.report.not_restored),
        ]
        return "\n".join(lines)


def resume_into(episode: Episode, folder: Path, meta: dict[str, Any]) -> Resumed:
    """Restore the checkpoint in `folder` (whose `meta` passed `checked_meta`) into the
    `episode` just reset: its sandbox started, the workspace and shell restored, then the
    step count, time used, integrity record, grading budget, development feedback and
    snapshots."""
    episode._start_for_step()
    _check_runtime(folder, meta, episode)  # known now that the sandbox runs
    report = restore(episode.sandbox, folder)
    try:
        steps, used = meta["steps"], meta["time_used"]
        integrity = IntegrityLog(**meta["integrity"])
        budget = GradingBudget.from_dict(meta["grading_budget"])
        budget.refused = int(meta["grading_budget"].get("refused", 0))
        snapshots = meta.get("snapshots")
        kept = [Snapshot(**s) for s in snapshots["kept"]] if snapshots else []
        if episode.feedback is not None and meta.get("dev_feedback") is not None:
            episode.feedback.restore(meta["dev_feedback"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CheckpointError(f"{folder}: the episode's state is unreadable: {exc}") from None
    if episode._snapshots is not None and snapshots:
        store = CheckpointStore(Path(folder).parent)
        try:
            episode._snapshots.adopt(
                kept,
                int(snapshots.get("thinned", 0)),
                int(snapshots.get("made", len(kept))),
                lambda s: checked_blob(store, s.sha256, s.bytes, f"snapshot {s.file}"),
            )
        except CheckpointError:
            raise
        except (TypeError, ValueError) as exc:
            raise CheckpointError(f"{folder}: the snapshots are not restorable: {exc}") from None
    episode.steps = steps
    episode._integrity = integrity
    episode._budget = budget
    # the wall clock goes on from the time the earlier segment used
    episode._started = time.monotonic() - used
    episode.resumed_from = {
        "checkpoint": str(Path(folder).resolve()),
        "id": Path(folder).name,
        "steps": steps,
        "seconds": used,
        "parent": meta.get("resumed_from"),
        "backend": meta.get("backend"),
    }
    return Resumed(report, episode.resumed_from)
