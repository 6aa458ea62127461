"""Host-side grading: validation, metrics, Kaggle's medal rule, normalisation, reports."""

from mle_gym.grading.errors import AnswerKeyError, InvalidSubmission
from mle_gym.grading.grader import build_answer_key, check_submission, grade, normalized_score
from mle_gym.grading.report import GradeReport

__all__ = [
    "AnswerKeyError",
    "GradeReport",
    "InvalidSubmission",
    "build_answer_key",
    "check_submission",
    "grade",
    "normalized_score",
]
