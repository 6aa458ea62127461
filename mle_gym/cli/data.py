"""`mle-gym list`, `prepare`, `grade` and `reference-panel`: the competitions and their data."""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mle_gym.cli import show
from mle_gym.cli.common import SPLITS, add_split, split_ids
from mle_gym.cli.show import console, error, log, plain, say


def cmd_list(args: argparse.Namespace) -> int:
    from mle_gym.analysis.splits import in_split
    from mle_gym.competitions import all_competitions
    from mle_gym.data import CompetitionDirs

    shown = [c for c in all_competitions() if args.split is None or in_split(c.split, args.split)]
    if args.split and not shown and not args.json:
        split_ids(args.split)  # says the split is empty and what exists
    prepared = {c.id: CompetitionDirs.of(c.id).is_prepared() for c in shown}
    differs = {
        c.id: CompetitionDirs.of(c.id).preparation_record().get("mismatches", [])
        for c in shown
        if prepared[c.id]
    }
    if args.json:
        listed = [
            {**_competition_json(c, prepared[c.id]), "checksum_mismatches": differs.get(c.id, [])}
            for c in shown
        ]
        print(json.dumps(listed, indent=2))
        return 0
    rows = [show.competition_cells(c, prepared[c.id], bool(differs.get(c.id))) for c in shown]
    console().print(show.competitions_table(rows))
    for comp in shown:
        if comp.reference_panel is not None:
            say(f"* {comp.id}: thresholds from a {comp.thresholds_source}", style="dim")
    for competition_id, mismatches in differs.items():
        if mismatches:
            which = "; ".join(mismatches)
            say(
                f"! {competition_id}: prepared files differ from MLE-bench's ({which}); scores "
                "are not comparable with MLE-bench's. Prepare it again from Kaggle's files: "
                f"mle-gym prepare {competition_id} --force",
                style="yellow",
            )
    return 0


def _competition_json(comp: Any, prepared: bool) -> dict[str, Any]:
    t = comp.thresholds
    return {
        "id": comp.id,
        "env_id": comp.env_id,
        "name": comp.name,
        "split": comp.split,
        "metric": comp.metric,
        "lower_is_better": comp.lower_is_better,
        "teams": comp.num_teams,
        "thresholds": {"gold": t.gold, "silver": t.silver, "bronze": t.bronze, "median": t.median},
        "thresholds_source": comp.thresholds_source,
        "sample_score": comp.sample_score,
        "prepared": prepared,
    }


@contextlib.contextmanager
def _download_progress(competition_id: str) -> Iterator[Callable[[int, int | None], None]]:
    """A rich progress bar, shown from a download's first report on (nothing otherwise)."""
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TaskID,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    progress = Progress(*columns, console=console())
    task: list[TaskID] = []

    def update(done: int, total: int | None) -> None:
        if not task:
            progress.start()
            task.append(progress.add_task(f"downloading {competition_id}", total=total))
        progress.update(task[0], completed=done, total=total)

    try:
        yield update
    finally:
        if task:
            progress.stop()


def cmd_prepare(args: argparse.Namespace) -> int:
    from mle_gym.competitions import get_competition
    from mle_gym.data import ChecksumError, PrepareError, prepare
    from mle_gym.data.kaggle_download import KaggleUnavailable
    from mle_gym.grading import AnswerKeyError, build_answer_key

    if not args.ids and not args.split:
        raise SystemExit(f"name a competition id, or --split {'|'.join(SPLITS)}")
    ids = list(dict.fromkeys([*args.ids, *(split_ids(args.split) if args.split else [])]))
    if args.raw is not None and len(ids) != 1:
        raise SystemExit("--raw takes the files of one competition; name exactly one id")
    _say_extras([get_competition(i) for i in ids])
    status = 0
    unavailable: list[str] = []
    for competition_id in ids:
        comp = get_competition(competition_id)
        try:
            with _download_progress(comp.id) as on_progress:
                result = prepare(
                    comp,
                    args.raw,
                    strict=args.strict,
                    force=args.force,
                    log=log,
                    on_progress=on_progress,
                    check_private=functools.partial(build_answer_key, comp),
                )
            if result.reused:  # a preparation made before answer keys were checked
                build_answer_key(comp, result.dirs.private)
        except KaggleUnavailable as exc:
            if not unavailable:  # the how-to once; the others are listed at the end
                error(str(exc))
            unavailable.append(comp.id)
            status = 2
            continue
        except ChecksumError as exc:
            error(str(exc))
            status = 2
            continue
        except (PrepareError, AnswerKeyError) as exc:
            error(str(exc))
            status = 2
            continue
        for mismatch in result.mismatches:
            say(
                f"warning: {comp.id}: {mismatch} (differs from MLE-bench's split; "
                "use --strict to make this an error)",
                style="yellow",
            )
        verdict = (
            "already prepared"
            if result.reused
            else "matches MLE-bench's checksums"
            if result.checked and not result.mismatches
            else "prepared"
        )
        console().print(f"[green]{comp.id}[/green]: {plain(f'{verdict} in {result.dirs.root}')}")
    if len(unavailable) > 1:
        error(
            f"{len(unavailable)} competition(s) not prepared, their Kaggle data "
            f"unavailable as above: {', '.join(unavailable)}"
        )
    return status


def _say_extras(competitions: list[Any]) -> None:
    """Before a long prepare: the extras its competitions need, and which are missing here."""
    from mle_gym.extras import missing_extras, needed_extras

    needed = needed_extras(competitions)
    if not needed:
        return
    listed = ", ".join(f"{extra} ({len(ids)})" for extra, ids in needed.items())
    say(f"these competitions need the extras: {listed}", style="dim")
    missing = missing_extras(needed)
    if missing:
        which = "; ".join(f"{extra}: {', '.join(needed[extra])}" for extra in missing)
        say(
            f"warning: not installed here: {which}. Those competitions will fail; "
            "pip install 'mle-gym[competitions]' installs every extra preparing and grading "
            "needs",
            style="yellow",
        )


def cmd_grade(args: argparse.Namespace) -> int:
    if args.submissions is not None:
        if args.competition or args.submission:
            raise SystemExit("give either ID FILE or --submissions FILE.jsonl, not both")
        from mle_gym.cli.report import cmd_grade_submissions

        return cmd_grade_submissions(args)
    if not (args.competition and args.submission):
        raise SystemExit("name a competition id and a submission file, or --submissions FILE.jsonl")
    from mle_gym.competitions import get_competition
    from mle_gym.data import require_prepared
    from mle_gym.grading import grade

    comp = get_competition(args.competition)
    submission = Path(args.submission)
    if not submission.exists():  # a typo on the command line, not an invalid submission
        raise FileNotFoundError(f"{submission}: no such file")
    report = grade(comp, submission, require_prepared(comp.id, auto=False).private)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        show.print_report(report)
    return 0 if report.valid_submission else 1


def cmd_reference_panel(args: argparse.Namespace) -> int:
    from rich.table import Table

    from mle_gym.competitions import get_competition
    from mle_gym.data import prepare
    from mle_gym.grading.grader import score_submission
    from mle_gym.grading.medals import thresholds_from_leaderboard
    from mle_gym.grading.reference_panel import panel_scores

    comp = get_competition(args.competition)
    dirs = prepare(comp, log=log).dirs
    scores = panel_scores(comp, dirs.public, dirs.private)
    table = Table(title=f"reference panel: {comp.id}")
    table.add_column("score", justify="right")
    table.add_column("model")
    for name, score in scores.items():
        table.add_row(f"{score:.5f}", name)
    console().print(table)
    t = thresholds_from_leaderboard(list(scores.values()))
    sample, _ = score_submission(comp, dirs.public / comp.submission.sample_file, dirs.private)
    say(
        f"gold {t.gold:g}  silver {t.silver:g}  bronze {t.bronze:g}  median {t.median:g}  "
        f"sample submission {sample:g}"
    )
    return 0


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("list", help="competitions, their metric, thresholds and prepared state")
    add_split(p, "only the competitions of this split")
    p.add_argument("--json", action="store_true", help="print JSON (every field), not a table")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("prepare", help="download (or import) and split a competition's data")
    p.add_argument("ids", nargs="*", metavar="ID", help="competition ids (see `mle-gym list`)")
    add_split(p, "prepare every competition of this split")
    p.add_argument(
        "--raw",
        type=Path,
        metavar="DIR_OR_ZIP",
        help="a directory or zip with the Kaggle files you already have (instead of downloading)",
    )
    p.add_argument(
        "--strict", action="store_true", help="fail when a file differs from MLE-bench's"
    )
    p.add_argument("--force", action="store_true", help="prepare again even if already prepared")
    p.set_defaults(func=cmd_prepare)

    p = sub.add_parser("grade", help="grade a submission file against the private answers")
    p.add_argument("competition", nargs="?", metavar="ID", help="competition id")
    p.add_argument("submission", nargs="?", metavar="FILE", help="the submission CSV")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    from mle_gym.cli.report import add_grade_options

    add_grade_options(p)
    p.set_defaults(func=cmd_grade)

    p = sub.add_parser(
        "reference-panel", help="recompute a competition's thresholds from its reference models"
    )
    p.add_argument("competition", metavar="ID", help="a competition with a reference panel")
    p.set_defaults(func=cmd_reference_panel)
