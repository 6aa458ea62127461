"""Reading run directories: MLE-bench's aggregation, pass@k, score over time, published
figures, audits, exports; and the whole report as one call, `build_report(run_dirs, ...)`,
rendered by `mle_gym.analysis.report_render`.

Runs are read through the records layer (`mle_gym.runs`), which batch writes through;
analysis imports no batch, env or sandbox code. Names are imported on first use, so
importing the package, or one analysis module, loads only what that needs.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RunReport", "build_report"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from mle_gym.analysis import report

        return getattr(report, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
