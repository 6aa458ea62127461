"""Grades a submission file on the host, against the private answers."""

from __future__ import annotations

from pathlib import Path

from mle_gym.competitions.spec import Competition, Thresholds
from mle_gym.grading.answer_keys import load_key
from mle_gym.grading.errors import AnswerKeyError, InvalidSubmission
from mle_gym.grading.medals import beats, medal
from mle_gym.grading.metrics import METRICS, SCORED_ROWS
from mle_gym.grading.report import GradeReport
from mle_gym.grading.validation import AnswerKey, read_as_text, validate_against


def normalized_score(score: float, sample: float, gold: float, lower_is_better: bool) -> float:
    """(score - sample) / (gold - sample): 0 is the sample submission, 1 is gold.

    The formula orients itself for lower-is-better metrics, because numerator and denominator
    change sign together. A degenerate competition whose sample already reaches gold gives 1
    for reaching gold and 0 otherwise.
    """
    if gold == sample:
        return 1.0 if beats(score, gold, lower_is_better) else 0.0
    return (score - sample) / (gold - sample)


def _load_answers(comp: Competition, private_dir: Path):
    if comp.submission.load_answers is not None:
        return comp.submission.load_answers(private_dir)
    path = private_dir / comp.submission.answers_file
    if not path.is_file():
        raise FileNotFoundError(f"answers for {comp.id} not found at {path}; prepare it first")
    return read_as_text(path)


def _key(comp: Competition, private_dir: Path) -> AnswerKey:
    """The answer key; answers that break the submission rules are the preparation's fault,
    never the submission's (`AnswerKeyError`)."""
    try:
        return load_key(comp, private_dir, lambda: _load_answers(comp, private_dir))
    except (InvalidSubmission, KeyError) as exc:
        raise AnswerKeyError(
            f"the answers of {comp.id} in {private_dir} cannot be keyed for grading ({exc}); "
            f"the preparation is damaged, not the submission: prepare it again with "
            f"`mle-gym prepare {comp.id} --force` (and the raw files, with --raw)"
        ) from exc


def build_answer_key(comp: Competition, private_dir: Path) -> None:
    """Parse, sort and index the answers now (once per preparation), so that the first
    grade is as quick as the later ones instead of building the key itself."""
    _key(comp, private_dir)


def score_submission(
    comp: Competition, submission: Path, private_dir: Path
) -> tuple[float, list[str]]:
    """The metric's value (rounded to 5 decimals, as MLE-bench reports) and any warnings."""
    key = _key(comp, private_dir)
    targets = comp.submission.target_names
    scored = SCORED_ROWS.get(comp.metric)
    rows = scored(key.frame, targets) if scored is not None else None
    truth, predictions, warnings = validate_against(
        submission, key, comp.submission, None if rows is None or rows.all() else rows
    )
    value = METRICS[comp.metric](truth, predictions, targets)
    return round(float(value), 5), warnings


def check_submission(comp: Competition, submission: Path | None, private_dir: Path) -> str | None:
    """None when the file would be graded; otherwise the reason it would not. Reveals no score."""
    if submission is None or not submission.is_file():
        return "no submission file"
    try:
        validate_against(submission, _key(comp, private_dir), comp.submission)
    except InvalidSubmission as exc:
        return str(exc)
    return None


def grade(
    comp: Competition, submission: Path | None, private_dir: Path, *, shown_path: str | None = None
) -> GradeReport:
    """Full report for a submission (None or a missing path: no submission was made).

    `shown_path` is the path the report names (e.g. the file's place inside the sandbox).
    """
    t: Thresholds = comp.thresholds
    exists = submission is not None and submission.is_file()
    score: float | None = None
    warnings: list[str] = []
    error: str | None = None
    if not exists:
        error = "no submission file was found"
    else:
        try:
            score, warnings = score_submission(comp, submission, private_dir)
        except InvalidSubmission as exc:
            error = str(exc)
    low = comp.lower_is_better
    won = medal(score, t, low) if score is not None else None
    return GradeReport(
        competition_id=comp.id,
        score=score,
        gold_threshold=t.gold,
        silver_threshold=t.silver,
        bronze_threshold=t.bronze,
        median_threshold=t.median,
        any_medal=won is not None,
        gold_medal=won == "gold",
        silver_medal=won == "silver",
        bronze_medal=won == "bronze",
        above_median=score is not None and beats(score, t.median, low, strict=True),
        submission_exists=exists,
        valid_submission=score is not None,
        is_lower_better=low,
        sample_score=comp.sample_score,
        normalized_score=(
            None if score is None else normalized_score(score, comp.sample_score, t.gold, low)
        ),
        error=error,
        submission_path=shown_path or (str(submission) if submission is not None else None),
        warnings=warnings,
    )
