"""Reading run directories: MLE-bench's aggregation, pass@k, score over time, published
figures, audits, exports; and the whole report as one call, `build_report(run_dirs, ...)`,
rendered by `mle_gym.analysis.report_render`.

Batch writes run directories and knows nothing of this package; the CLI reads runs through it.
Names are imported on first use, so importing the package stays cheap.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RunReport", "build_report"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from mle_gym.analysis import report

        return getattr(report, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
