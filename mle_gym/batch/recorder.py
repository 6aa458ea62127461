"""A wrapper that writes an episode to JSON Lines as it happens and keeps the graded submission."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import gymnasium as gym

from mle_gym.batch.store import CODE_DIR, NETWORK_LOG, SNAPSHOTS_DIR
from mle_gym.envs.snapshot_index import INDEX_FILE as SNAPSHOT_INDEX


class TrajectoryRecorder(gym.Wrapper):
    """Appends `{"event": "reset", ...}` and one `{"event": "step", ...}` line per step to
    `path`, flushed each time, so a killed run still shows how far its episodes got. With a
    `policy`, each step line also carries what the policy said about choosing the action
    (`policy.last_step_info`, e.g. an LLM's tokens and cost), as `run_episode` reads it.

    When an episode ends, the submission file is copied next to the trajectory, and its
    snapshots (`info["snapshots"]`, ungraded) into `snapshots/`: the sandbox is still up until
    the next reset or close, and no agent command runs after the grading.
    On close, a policy that keeps totals (`policy.usage.to_dict()`: model calls, tokens, cost)
    adds one `{"event": "usage", ...}` line, which also counts calls that led to no step.
    """

    def __init__(self, env: gym.Env, path: Path, policy: Any = None) -> None:
        super().__init__(env)
        self.path = Path(path)
        self.policy = policy
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115  (closed in close())
        self._episode = -1
        self.kept_submission: Path | None = None
        self.kept_snapshots: Path | None = None
        self.kept_code: dict[str, Any] | None = None

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        observation, info = self.env.reset(**kwargs)
        self._episode += 1
        self.kept_submission = None
        self.kept_snapshots = None
        self.kept_code = None
        self._write(
            {"event": "reset", "episode": self._episode, "observation": observation, "info": info}
        )
        return observation, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        started = time.monotonic()
        policy_info = getattr(self.policy, "last_step_info", None)
        observation, reward, terminated, truncated, info = self.env.step(action)
        record = {
            "event": "step",
            "episode": self._episode,
            "step": info.get("step"),
            "action": action,
            "observation": observation,
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
            "seconds": round(time.monotonic() - started, 3),
            "info": info,
        }
        if policy_info is not None:
            record["policy_info"] = policy_info
        self._write(record)
        if terminated or truncated:
            self.kept_submission = self._keep_submission(info)
            self.kept_snapshots = self._keep_snapshots(info)
            self.kept_code = self._keep_code()
            self._keep_network_log(info)
        return observation, reward, terminated, truncated, info

    def record_error(self, error: str) -> None:
        """Note that the episode was ended by an error of the policy or the env (the next
        line is the step that grades the submission present then)."""
        self._write({"event": "error", "episode": self._episode, "error": error})

    def close(self) -> None:
        try:
            super().close()
        finally:
            usage = getattr(self.policy, "usage", None)
            if usage is not None and hasattr(usage, "to_dict"):
                self._write({"event": "usage", "episode": self._episode, "usage": usage.to_dict()})
            self._file.close()

    def _write(self, record: dict[str, Any]) -> None:
        self._file.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        self._file.flush()

    def _keep_submission(self, info: dict[str, Any]) -> Path | None:
        graded = info.get("graded_submission")
        if graded is None:
            return None
        dest = self.path.parent / Path(graded).name
        shutil.copyfile(graded, dest)
        return dest

    def _keep_network_log(self, info: dict[str, Any]) -> None:
        """Through the egress proxy (network="proxy"): its log of every request, in
        network.jsonl beside the trajectory."""
        log = (info.get("network") or {}).get("log")
        if log and Path(log).is_file():
            shutil.copyfile(log, self.path.parent / NETWORK_LOG)

    def _keep_code(self) -> dict[str, Any] | None:
        """The episode's /home/code, bounded, in `code/` (index: code.json)."""
        keep = getattr(self.env.unwrapped, "keep_code", None)
        if keep is None:
            return None
        try:
            return keep(self.path.parent / CODE_DIR)
        except Exception as exc:  # a record must not cost the episode its result
            return {"error": f"{type(exc).__name__}: {exc}"}

    def _keep_snapshots(self, info: dict[str, Any]) -> Path | None:
        """The kept snapshot files and their index, in `snapshots/` beside the trajectory."""
        snapshots = info.get("snapshots")
        if not snapshots:
            return None
        source, dest = Path(snapshots["dir"]), self.path.parent / SNAPSHOTS_DIR
        dest.mkdir(exist_ok=True)
        for entry in snapshots["kept"]:
            name = Path(entry["file"]).name
            shutil.copyfile(source / name, dest / name)
        index = {**snapshots, "dir": SNAPSHOTS_DIR}
        (dest / SNAPSHOT_INDEX).write_text(json.dumps(index, indent=2))
        return dest
