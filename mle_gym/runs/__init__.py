"""A run directory as records: its layout and file names, each episode's result
(`EpisodeResult`), trajectory, snapshots and provenance.

Batch writes runs through this package and analysis reads them through it; it imports
neither, nor gym or a sandbox, so reading a run stays cheap. Names load on first use.
"""

from __future__ import annotations

from mle_gym.lazy import lazy_exports

#: Each public name and the module that defines it.
_EXPORTS = {
    "EpisodeRecord": "mle_gym.runs.store",
    "EpisodeResult": "mle_gym.runs.result",
    "MISSING": "mle_gym.runs.run",
    "Run": "mle_gym.runs.run",
    "RunStore": "mle_gym.runs.store",
    "read_result": "mle_gym.runs.result",
    "read_run": "mle_gym.runs.run",
    "read_trajectory": "mle_gym.runs.trajectory",
    "write_result": "mle_gym.runs.result",
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
