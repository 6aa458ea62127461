"""The run directory's layout: one folder per episode, and what each file is called.

    RUN_DIR/
      batch.json                   settings (must match on resume) and the episodes asked for
      provenance.json              versions, host, budgets, policy: one entry per invocation
      report.json, report.csv      the aggregate, written after each run (mle_gym.analysis)
      episodes/<competition>/seed-<k>/
        task.json                  what the worker ran
        status.json                running | done | failed, attempt number, times, error
        trajectory.jsonl           the reset, every step, and an error that ended the episode,
                                   one JSON object a line
        <submission file>          the final submission, as graded
        snapshots/                 the submission each time it changed (ungraded copies),
                                   indexed by snapshots/snapshots.json
        snapshots.json             those snapshots with their grades, made after the episode
        network.jsonl              with network="proxy": every request the egress proxy saw
        code/, code.json           the kept /home/code: small files, and every file's size
                                   and sha256 (big ones listed, not copied)
        report.json                the grading report
        provenance.json            host, image, data checksums: what may differ per episode
        result.json                the episode's result (`EpisodeResult`), written last
        episode.log                the worker's output
        checkpoints/               the episode's periodic checkpoints (a checkpoint store:
                                   blobs/ and one folder per checkpoint, the last few kept);
                                   a rerun continues an unfinished episode from the newest

An episode is finished when its result.json is whole, whatever its status says (see
`mle_gym.runs.store`).
"""

from __future__ import annotations

from pathlib import Path

EPISODES_DIR = "episodes"
BATCH_FILE = "batch.json"
LOCK_FILE = ".lock"
STATUS_FILE = "status.json"
TASK_FILE = "task.json"
TRAJECTORY_FILE = "trajectory.jsonl"
SNAPSHOTS_DIR = "snapshots"
#: The index of the kept snapshots, inside SNAPSHOTS_DIR.
SNAPSHOT_INDEX = "snapshots.json"
#: The egress proxy's log of the episode's requests (network="proxy" only).
NETWORK_LOG = "network.jsonl"
CODE_DIR = "code"
#: The kept code's index, beside CODE_DIR.
CODE_INDEX = "code.json"
GRADED_SNAPSHOTS_FILE = "snapshots.json"
REPORT_FILE = "report.json"
RESULT_FILE = "result.json"
LOG_FILE = "episode.log"
PROVENANCE_FILE = "provenance.json"
CHECKPOINTS_DIR = "checkpoints"
#: What an episode resumed from a checkpoint keeps of its earlier attempt: its checkpoints,
#: and the trajectory and log that the next segment appends to.
KEPT_ON_RESUME = (CHECKPOINTS_DIR, TRAJECTORY_FILE, LOG_FILE)


def episode_key(competition_id: str, seed: int) -> str:
    """An episode's path under the episodes folder, e.g. `sklearn-digits/seed-2`."""
    return f"{competition_id}/seed-{seed}"


def episode_dir(root: Path, competition_id: str, seed: int) -> Path:
    return Path(root) / EPISODES_DIR / episode_key(competition_id, seed)
