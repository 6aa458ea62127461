"""The declarative description of one competition.

Every competition module builds one `Competition`. Nothing here knows about sandboxes,
Gymnasium or how grading is carried out: the spec only states the facts (files, columns,
metric name, thresholds) and the two functions that are specific to the competition
(how raw files become public/private, and optionally how raw files are obtained).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import pandas as pd

Split = Literal["lite", "medium", "high", "dev", "demo"]

#: The kind of values a submission column must hold; grading validates against it.
#: "score" is a probability the metric only ranks (ROC AUC): any finite number is scored,
#: as MLE-bench scores it, and values outside [0, 1] earn a warning rather than a refusal.
ValueKind = Literal["bool", "probability", "score", "number", "label", "text"]

PrepareFn = Callable[[Path, Path, Path], None]
FetchFn = Callable[[Path], None]
#: Reads the private directory and returns the answers as text cells, with the id column
#: and the submission's target columns (for competitions whose answer file has another shape).
AnswersFn = Callable[[Path], "pd.DataFrame"]
#: Reads a set of ids from a folder (public or private) of a split.
IdsFn = Callable[[Path], set[str]]


@dataclass(frozen=True)
class Thresholds:
    """Scores a submission must reach for each medal, and the leaderboard's median."""

    gold: float
    silver: float
    bronze: float
    median: float


@dataclass(frozen=True)
class Column:
    """A column the submission must contain, with the kind of value it holds."""

    name: str
    kind: ValueKind
    #: For kind "label": the allowed values; None means "the labels seen in the answers".
    labels: tuple[str, ...] | None = None
    #: For kind "label": the metric scores values outside `labels` (as wrong answers, or as
    #: further points on the scale), as MLE-bench's grader does; they are accepted with a
    #: warning instead of refused. They must still look like the labels (integers for
    #: integer labels).
    open_labels: bool = False
    #: For number kinds: `inf` and `-inf` are scored, because the metric only asks which
    #: side of a threshold a value falls on (as MLE-bench scores them); NaN stays refused.
    infinite: bool = False


@dataclass(frozen=True)
class SubmissionFormat:
    """What a valid submission file looks like: one row per test id, these columns."""

    id_column: str
    columns: tuple[Column, ...]
    #: Name of the file in private/ that holds the answers (same id column).
    answers_file: str = "test.csv"
    filename: str = "submission.csv"
    #: The competition's sample submission, in public/.
    sample_file: str = "sample_submission.csv"
    #: Custom reader of the answers; None reads `answers_file` as text cells.
    load_answers: AnswersFn | None = None
    #: Refuse columns besides the id and targets (MLE-bench does for some competitions).
    allow_extra_columns: bool = True

    @property
    def target_names(self) -> list[str]:
        return [c.name for c in self.columns]


@dataclass(frozen=True)
class Checksums:
    """MLE-bench's md5 sums of the prepared files, keyed by file name."""

    public: dict[str, str] = field(default_factory=dict)
    private: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DevVariant:
    """How a development split is carved from the competition's prepared public files.

    The default applies the competition's own `prepare` to public/ as if it were raw/: the
    public training table then gets the same grouping, ratio and seed as Kaggle's did, and the
    development "test" part comes out laid out like the real public test. `refused` names why a
    competition's public files cannot hold a development part (asking for it then fails).
    """

    #: Makes dev public/private from a folder holding the public files (None: `prepare`).
    prepare: PrepareFn | None = None
    #: The training ids in a public folder (the dev ids must come from them); None reads
    #: the submission's id column of `train.csv` (see `mle_gym.competitions.dev_ids`).
    train_ids: IdsFn | None = None
    #: The answers' ids in a private folder, in the form `train_ids` gives; None reads the
    #: submission's id column of the answers.
    test_ids: IdsFn | None = None
    #: The seed the split uses (MLE-bench's convention is `random_state=0`), for the manifest.
    seed: int | None = 0
    #: Why no development part can be carved from the public files; None when it can.
    refused: str | None = None


@dataclass(frozen=True)
class Competition:
    """Everything the rest of mle_gym needs to know about one competition."""

    id: str
    name: str
    split: Split
    #: Key of the metric in `mle_gym.grading.metrics.METRICS`.
    metric: str
    lower_is_better: bool
    submission: SubmissionFormat
    #: Raw files `prepare` reads, relative to the raw directory.
    raw_files: tuple[str, ...]
    prepare: PrepareFn
    num_teams: int
    thresholds: Thresholds
    #: Score of the competition's own sample submission (the normalisation's zero).
    sample_score: float
    #: Task statement; `{data_dir}`, `{submission_path}` and `{code_dir}` are filled in
    #: with the sandbox's paths.
    statement: str
    checksums: Checksums = field(default_factory=Checksums)
    #: Obtains the raw files without Kaggle (e.g. data bundled with a dependency).
    fetch_raw: FetchFn | None = None
    #: Where the thresholds come from, shown by `mle-gym list`.
    thresholds_source: str = "Kaggle private leaderboard"
    #: For competitions without a human leaderboard: named factories of scikit-learn style
    #: models whose scores form the leaderboard (see `mle_gym.grading.reference_panel`).
    reference_panel: dict[str, Callable[[], Any]] | None = None
    #: The extras of mle-gym (setup.cfg) its prepare or grade imports, so `mle-gym prepare`
    #: can say up front what a split needs (tests/test_competition_extras.py keeps it true).
    extras: tuple[str, ...] = ()
    #: How its development variant (a split of the public training data) is made.
    dev_variant: DevVariant = field(default_factory=DevVariant)

    @property
    def env_id(self) -> str:
        return f"mle/{self.id}-v0"

    def render_statement(self, data_dir: str, code_dir: str, submission_dir: str) -> str:
        return self.statement.format(
            data_dir=data_dir,
            code_dir=code_dir,
            submission_path=f"{submission_dir}/{self.submission.filename}",
        )
