"""Host-side grading: validation, metrics, Kaggle's medal rule, normalisation, reports.

Names load on first use, so a reader of stored reports (`mle_gym.grading.report`) does not
pay for the grader's numpy and pandas.
"""

from __future__ import annotations

from mle_gym.lazy import lazy_exports

#: Each public name and the module that defines it.
_EXPORTS = {
    "AnswerKeyError": "mle_gym.grading.errors",
    "GradeReport": "mle_gym.grading.report",
    "InvalidSubmission": "mle_gym.grading.errors",
    "build_answer_key": "mle_gym.grading.grader",
    "check_submission": "mle_gym.grading.grader",
    "grade": "mle_gym.grading.grader",
    "normalized_score": "mle_gym.grading.grader",
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
