"""An episode's trajectory.jsonl and the files kept when it ends (the graded submission,
its snapshots, the egress proxy's log), written without any gym: the batch's recorder
wraps the env and hands each event here; analysis reads the events back.

Events, one JSON object a line: `reset`, one `step` per step, an `error` that ended the
episode, and `usage` (a policy's model calls, tokens and cost) when it closes.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mle_gym.runs.jsonfile import read_json_lines
from mle_gym.runs.layout import NETWORK_LOG, SNAPSHOT_INDEX, SNAPSHOTS_DIR, TRAJECTORY_FILE


class TrajectoryWriter:
    """Appends events to an episode's trajectory (`path`, normally its folder's
    trajectory.jsonl), flushed each time, so a killed run still shows how far its episodes
    got; kept files go beside it."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.directory = self.path.parent
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115  (closed in close())

    def write(self, record: dict[str, Any]) -> None:
        self._file.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def keep_submission(self, info: dict[str, Any]) -> Path | None:
        """Copy the graded submission (`info["graded_submission"]`) beside the trajectory."""
        graded = info.get("graded_submission")
        if graded is None:
            return None
        dest = self.directory / Path(graded).name
        shutil.copyfile(graded, dest)
        return dest

    def keep_network_log(self, info: dict[str, Any]) -> None:
        """Through the egress proxy (network="proxy"): its log of every request."""
        log = (info.get("network") or {}).get("log")
        if log and Path(log).is_file():
            shutil.copyfile(log, self.directory / NETWORK_LOG)

    def keep_snapshots(self, info: dict[str, Any]) -> Path | None:
        """The snapshot files of `info["snapshots"]` (ungraded) and their index, in
        snapshots/ beside the trajectory."""
        snapshots = info.get("snapshots")
        if not snapshots:
            return None
        source, dest = Path(snapshots["dir"]), self.directory / SNAPSHOTS_DIR
        dest.mkdir(exist_ok=True)
        for entry in snapshots["kept"]:
            name = Path(entry["file"]).name
            shutil.copyfile(source / name, dest / name)
        index = {**snapshots, "dir": SNAPSHOTS_DIR}
        (dest / SNAPSHOT_INDEX).write_text(json.dumps(index, indent=2))
        return dest


def read_trajectory(directory: Path) -> Iterator[dict[str, Any]]:
    """The episode's events in order; a line cut short by a killed worker is skipped."""
    return read_json_lines(Path(directory) / TRAJECTORY_FILE)
