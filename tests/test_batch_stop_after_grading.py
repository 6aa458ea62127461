"""A stop that lands after an episode was graded (its worker still closing its sandbox) keeps
the grade: the status stays done, and `mle-gym report` counts the episode as graded even
where an older run left its status saying failed."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from mle_gym.analysis.aggregate import FIGURES
from mle_gym.batch import BatchSpec, RunStore, run_batch
from mle_gym.batch.local import LocalScheduler
from mle_gym.batch.spec import EpisodeTask
from mle_gym.runs.jsonfile import write_json
from mle_gym.runs.store import Outcome, graded
from tests.batch_support import mle_gym
from tests.conftest import require_bwrap


class _CtrlCOnceGraded(LocalScheduler):
    """The real worker processes; Ctrl-C lands as soon as an episode's result.json is
    whole, before the driver has seen its worker exit."""

    def wait(self, timeout: float) -> list[tuple[EpisodeTask, Outcome]]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(graded(run.directory) for run in self._running):
                raise KeyboardInterrupt
            if any(run.process.poll() is not None for run in self._running):
                break
            time.sleep(0.01)
        return super().wait(0)


class _Quiet:
    def skipped(self, task: EpisodeTask, result: Any) -> None: ...

    def started(self, task: EpisodeTask, directory: Path) -> None: ...

    def finished(self, task: EpisodeTask, status: Any, result: Any) -> None: ...

    def tick(self) -> None: ...


def _report(run_dir: Path, home: Path, *extra: str) -> dict[str, Any]:
    return json.loads(mle_gym("report", str(run_dir), "--json", *extra, home=home).stdout)


def _figures(summary: dict[str, Any]) -> dict[str, Any]:
    return {name: summary["overall"][name] for name in ("seeds", *dict(FIGURES))}


@pytest.mark.timeout(300)
def test_a_stop_after_grading_keeps_the_episode_graded(
    digits_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_bwrap()
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    run_dir = tmp_path / "run"
    spec = BatchSpec(("sklearn-digits",), (0,), "scripted", {}, {})
    store = RunStore(run_dir)
    with pytest.raises(KeyboardInterrupt):
        run_batch(spec, store, _CtrlCOnceGraded(), _Quiet())
    (task,) = spec.tasks()
    status = store.status(task)
    assert status["state"] == "done" and status["error"] is None, status

    # A run directory where the stop was recorded as a failure (as it was before): the
    # report goes by result.json, as resuming does.
    graded_figures = _figures(_report(run_dir, digits_home))
    write_json(
        store.episode_dir(task) / "status.json",
        {**status, "state": "failed", "error": "interrupted: the run was stopped"},
    )
    for extra in ((), ("--pad-incomplete",)):
        summary = _report(run_dir, digits_home, *extra)
        assert summary["episodes"]["done"] == 1 and summary["episodes"]["failed"] == 0, extra
        assert _figures(summary) == graded_figures and graded_figures["seeds"] == 1, extra
