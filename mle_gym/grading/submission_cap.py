"""How large a submission may be before it is refused unread.

A submission is about the size of the answers; a file far beyond that is no prediction
but an attack on the grader's time (parsing is CPU-bound) and the host's disk. Every path
that hands a submission to the grader (the env's copy out, the Harbor verifier, the
Harbor provider's download) applies this one cap, so a file is refused, or not, alike.
"""

from __future__ import annotations

from pathlib import Path

from mle_gym.grading.answer_keys import FOLDER

#: At least this many bytes, whatever the answers' size.
MIN_SUBMISSION_CAP = 64 * 1024**2
#: Otherwise this many times the size of the answers.
SUBMISSION_CAP_FACTOR = 20


def submission_cap(private: Path) -> int:
    """The largest submission graded against the answers in `private` (a competition's
    private/ directory). The parsed keys cached there are left out: they are written by
    grades, so counting them would make the cap depend on whether one had run."""
    answers = sum(
        path.stat().st_size
        for path in private.rglob("*")
        if path.is_file() and FOLDER not in path.relative_to(private).parts
    )
    return max(MIN_SUBMISSION_CAP, SUBMISSION_CAP_FACTOR * answers)
