"""The `mle-gym` command: list, prepare, grade, demo, run (one episode or a batch), report."""

from __future__ import annotations

import argparse
import contextlib
import errno
import functools
import json
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import mle_gym
from mle_gym import cli_show as show
from mle_gym.cli_show import console, log, say

# Everything heavy (gymnasium, rich, pandas, the grader, the batch runner) is imported by the
# command that needs it, so `mle-gym --help` starts quickly.

DEMO_COMPETITION = "sklearn-digits"
#: `all` is MLE-bench's 75 (lite + medium + high); dev and demo stay apart.
SPLITS = ("lite", "medium", "high", "all", "dev", "demo")
#: The names `baselines.registry` knows (kept here so `--help` need not import it).
POLICIES = ("scripted", "llm", "mini-swe-agent", "aide", "openhands")


def _policy(name: str, options: dict[str, Any] | None = None) -> Any:
    from baselines.registry import make_policy

    try:
        return make_policy(name, **(options or {}))
    except ValueError as exc:
        raise SystemExit(str(exc)) from None


# -- splits -----------------------------------------------------------------------------------
def split_sizes() -> dict[str, int]:
    """How many competitions each split has today (an unknown split has none); `all` is not
    one of them (it is lite + medium + high)."""
    from mle_gym.competitions import all_competitions

    sizes = dict.fromkeys((s for s in SPLITS if s != "all"), 0)
    for comp in all_competitions():
        sizes[comp.split] = sizes.get(comp.split, 0) + 1
    return sizes


def _existing_splits() -> str:
    return ", ".join(f"{name} ({n})" for name, n in split_sizes().items() if n)


def split_ids(split: str) -> list[str]:
    """The ids of `split`; exits with what does exist when it has none yet."""
    from mle_gym.analysis.splits import split_members

    ids = split_members(split)
    if not ids:
        raise SystemExit(
            f"the {split!r} split has no competitions in mle_gym yet; "
            f"splits with competitions: {_existing_splits()}"
        )
    return ids


# -- list -------------------------------------------------------------------------------------
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


# -- prepare ----------------------------------------------------------------------------------
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
                say(f"error: {exc}", style="red")
            unavailable.append(comp.id)
            status = 2
            continue
        except ChecksumError as exc:
            say(str(exc), style="red")
            status = 1
            continue
        except (PrepareError, AnswerKeyError) as exc:
            say(f"error: {exc}", style="red")
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
        console().print(f"[green]{comp.id}[/green]: {verdict} in {result.dirs.root}")
    if len(unavailable) > 1:
        say(
            f"error: {len(unavailable)} competition(s) not prepared, their Kaggle data "
            f"unavailable as above: {', '.join(unavailable)}",
            style="red",
        )
    return status


# -- grade ------------------------------------------------------------------------------------
def cmd_grade(args: argparse.Namespace) -> int:
    if args.submissions is not None:
        if args.competition or args.submission:
            raise SystemExit("give either ID FILE or --submissions FILE.jsonl, not both")
        from mle_gym.cli_report import cmd_grade_submissions

        return cmd_grade_submissions(args)
    if not (args.competition and args.submission):
        raise SystemExit("name a competition id and a submission file, or --submissions FILE.jsonl")
    from mle_gym.competitions import get_competition
    from mle_gym.data import CompetitionDirs
    from mle_gym.grading import grade

    comp = get_competition(args.competition)
    dirs = CompetitionDirs.of(comp.id)
    if not dirs.is_prepared():
        raise FileNotFoundError(f"{comp.id} is not prepared: run `mle-gym prepare {comp.id}` first")
    report = grade(comp, Path(args.submission), dirs.private)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        show.print_report(report)
    return 0 if report.valid_submission else 1


# -- run / demo -------------------------------------------------------------------------------
def run_and_show(
    competition_id: str,
    policy_name: str,
    env_kwargs: dict[str, Any],
    seed: int,
    policy_options: dict[str, Any] | None = None,
    *,
    demo: bool = False,
) -> int:
    import gymnasium as gym

    from mle_gym.grading.report import GradeReport
    from mle_gym.runner import run_episode

    policy = _policy(policy_name, policy_options)
    env = gym.make(f"mle/{competition_id}-v0", **env_kwargs)
    try:
        episode = run_episode(env, policy, seed=seed, on_step=show.show_step)
    finally:
        env.close()
    report = episode.report
    show.print_report(GradeReport(**report))
    console().print(
        f"[bold]reward ({env_kwargs.get('reward_mode', 'normalized')}): "
        f"{episode.total_reward:.4f}[/bold]"
    )
    usage = getattr(policy, "usage_summary", None)
    if callable(usage) and (text := usage()):
        say(text)
    show.next_steps(competition_id, demo=demo)
    return 0 if report["valid_submission"] else 1


def _env_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"backend": args.backend}
    for name in ("time_limit", "max_steps", "step_timeout", "reward_mode", "task", "mlebench_dir"):
        if getattr(args, name, None) is not None:
            kwargs[name] = getattr(args, name)
    return kwargs


def _policy_options(args: argparse.Namespace) -> dict[str, Any]:
    return {k: v for k in ("base_url", "model", "api_key") if (v := getattr(args, k, None))}


#: Options that make `run` a batch (with several ids or --split).
BATCH_OPTIONS = (
    "seeds",
    "workers",
    "run_dir",
    "ray",
    "gpus",
    "gpus_per_episode",
    "cpus_per_episode",
    "memory_per_episode",
)


def cmd_run(args: argparse.Namespace) -> int:
    from mle_gym.competitions import get_competition

    # a harness episode takes --run-dir for itself; a policy episode with one is a batch
    options = [n for n in BATCH_OPTIONS if args.harness is None or n != "run_dir"]
    batch = (
        args.split
        or len(args.competitions) > 1
        or any(getattr(args, name) is not None for name in options)
    )
    if args.harness is not None and not batch:
        from mle_gym.cli_harness import run_harness_command

        # a harness run is one episode (issue 21 makes it a batch): refuse, never ignore
        ignored = [n for n in BATCH_OPTIONS if n != "run_dir" and getattr(args, n) is not None]
        if ignored:
            flags = ", ".join(f"--{name.replace('_', '-')}" for name in ignored)
            raise ValueError(f"--harness runs one episode: it does not take {flags}")
        return run_harness_command(args)
    if batch:
        return cmd_batch(args)
    if not args.competitions:
        raise SystemExit(
            "name a competition id (one episode, shown live), or several ids or --split for a batch"
        )
    competition_id = args.competitions[0]
    get_competition(competition_id)
    return run_and_show(
        competition_id, args.policy, _env_kwargs(args), args.seed, _policy_options(args)
    )


# -- batch runs and their reports ---------------------------------------------------------------
def _batch_competitions(args: argparse.Namespace) -> list[str]:
    from mle_gym.competitions import get_competition

    ids = list(args.competitions)
    if args.split:
        ids += split_ids(args.split)
    if not ids:
        raise SystemExit(f"name competition ids, or --split {'|'.join(SPLITS)}, for a batch")
    for competition_id in ids:
        get_competition(competition_id)
    return list(dict.fromkeys(ids))


def _default_run_dir(policy: str, split: str | None, ids: list[str]) -> Path:
    label = split or (
        ids[0] if len(ids) == 1 else "+".join(ids) if len(ids) <= 3 else f"{len(ids)}-competitions"
    )
    return Path("runs") / f"{policy}-{label}"


def _batch_scheduler(args: argparse.Namespace, secrets: dict[str, Any]) -> Any:
    from mle_gym.batch import LocalScheduler
    from mle_gym.batch.resources import EpisodeResources, parse_size

    gpus = [g.strip() for g in (args.gpus or "").split(",") if g.strip()]
    if args.ray and gpus:
        raise SystemExit("on Ray, ask for --gpus-per-episode: Ray picks the devices")
    if args.ray:
        from mle_gym.batch.ray_backend import RayScheduler

        resources = EpisodeResources(
            cpus=args.cpus_per_episode or 1.0,
            memory=parse_size(args.memory_per_episode) if args.memory_per_episode else None,
            gpus=args.gpus_per_episode or 0,
        )
        return RayScheduler(args.ray, resources, capacity=args.workers, secrets=secrets)
    per_episode = args.gpus_per_episode or 1
    if per_episode != int(per_episode):
        raise SystemExit("--gpus-per-episode is a whole number of devices on local runs")
    return LocalScheduler(
        args.workers or 1, gpus=gpus, gpus_per_episode=int(per_episode), secrets=secrets
    )


def cmd_batch(args: argparse.Namespace) -> int:
    from mle_gym.analysis.render import header_lines, to_table
    from mle_gym.batch import BatchSpec, RunStore, run_batch
    from mle_gym.batch.progress import BatchProgress
    from mle_gym.batch.resources import with_limits
    from mle_gym.batch.runner import preflight
    from mle_gym.cli_report import write_run_report

    ids = _batch_competitions(args)
    env_kwargs = with_limits(_env_kwargs(args), args.cpus_per_episode, args.memory_per_episode)
    seeds = tuple(range(args.seed, args.seed + (args.seeds or 1)))
    policy, options = args.policy, _policy_options(args)
    if args.harness is not None:
        from mle_gym.cli_harness import harness_batch_options

        policy, options = harness_batch_options(args)
    spec = BatchSpec(tuple(ids), seeds, policy, options, env_kwargs)
    run_dir = args.run_dir or _default_run_dir(policy, args.split, ids)
    store = RunStore(run_dir)
    scheduler = _batch_scheduler(args, spec.secrets())
    where = (
        f"Ray at {args.ray}" if args.ray else f"{scheduler.capacity} worker(s) on this machine"
    ) + f", {args.backend} sandboxes"
    title = (
        f"mle-gym run: {policy} on {len(ids)} competition(s) × {len(seeds)} seed(s) "
        f"({where}) → {run_dir}"
    )
    closing = contextlib.closing(scheduler) if args.ray else contextlib.nullcontext()
    try:
        with closing:
            preflight(spec, store, scheduler)  # errors before the display, leaving no files
            with BatchProgress(console(), len(ids) * len(seeds), title) as progress:
                result = run_batch(spec, store, scheduler, progress)
    except KeyboardInterrupt:
        say(
            "interrupted: the running episodes were stopped and marked failed; run the same "
            "command again to resume (finished episodes are kept)",
            style="red",
        )
        return 130
    finally:
        if store.episodes.is_dir():
            summary = write_run_report(run_dir)
    for line in header_lines(summary):
        say(line, style="dim")
    console().print(to_table(summary, title=f"report: {run_dir}", width=console().width))
    say(
        f"{result.done} episode(s) run, {result.skipped} already done, "
        f"{result.failed} failed"
        + (" (run the same command again to retry them)" if result.failed else "")
    )
    say(
        f"next: mle-gym report {run_dir} --episodes (per-episode rows), or --json/--csv; "
        f"each episode's steps are in {run_dir}/episodes/<id>/seed-<k>/",
        style="dim",
    )
    return 0 if result.ok else 1


# -- docker and housekeeping --------------------------------------------------------------------
def cmd_build_image(args: argparse.Namespace) -> int:
    from mle_gym.sandbox.image import DEFAULT_IMAGE, OFFLINE_IMAGE, build_image, build_offline_image

    if args.offline:
        tag = build_offline_image(args.tag or OFFLINE_IMAGE, force=args.force, log=log)
    else:
        tag = build_image(args.tag or DEFAULT_IMAGE, cuda=args.cuda, log=log)
    say(f"image ready: {tag}", style="green")
    return 0


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


def cmd_gc(args: argparse.Namespace) -> int:
    """Scratch folders first: they need no Docker, and a machine without Docker has them."""
    from mle_gym.sandbox.scratch import sweep

    say(f"removed {len(sweep())} scratch folder(s) of dead processes")
    try:
        from mle_gym.sandbox.containers import collect_garbage
        from mle_gym.sandbox.engine import DockerUnavailableError, connect
    except ImportError as exc:  # the docker SDK is missing: nothing of docker's to remove
        say(f"containers: skipped (the Docker SDK cannot be imported: {exc})", style="dim")
        return 0
    try:
        client = connect()
    except DockerUnavailableError:
        say("containers: skipped (no Docker engine reachable, so none can be left)", style="dim")
        return 0
    removed = collect_garbage(client)
    say(
        f"removed {len(removed)} orphaned container(s)"
        + (f": {', '.join(removed)}" if removed else "")
    )
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from mle_gym.competitions import get_competition
    from mle_gym.data import prepare

    comp = get_competition(DEMO_COMPETITION)
    console().print(
        f"[bold]mle_gym demo[/bold]: the scripted baseline on {comp.name}, fully "
        f"offline ({args.backend} sandbox)"
    )
    prepare(comp, log=log)
    env_kwargs = _env_kwargs(args)
    if args.backend == "local" and shutil.which("bwrap") is None:
        # The demo's commands are our own scripted baseline's, not a model's: running them
        # unisolated is safe, and lets the demo work on a machine without bubblewrap.
        env_kwargs["sandbox_options"] = {"isolation": "none"}
        say(
            "bubblewrap is not installed, so the demo runs its scripted commands without "
            "isolation (they are mle_gym's own). Agents need isolation: install bubblewrap "
            "(apt-get install bubblewrap) or use --backend docker.",
            style="yellow",
        )
    return run_and_show(comp.id, "scripted", env_kwargs, args.seed, demo=True)


# -- parser -----------------------------------------------------------------------------------
def at_least_one(text: str) -> int:
    """argparse type: a whole number >= 1 (0 or less would silently run one or no episode)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def _add_env_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("episode")
    group.add_argument(
        "--backend",
        choices=("local", "docker"),
        default="local",
        help="sandbox: local (bubblewrap) or docker (default: local)",
    )
    group.add_argument(
        "--seed", type=int, default=0, help="reset seed; a batch uses SEED, SEED+1, ... (default 0)"
    )
    group.add_argument(
        "--time-limit",
        type=positive_float,
        dest="time_limit",
        metavar="SECONDS",
        help="wall-clock budget of the episode, in seconds (default: the env's, 1 day)",
    )
    group.add_argument(
        "--max-steps",
        type=at_least_one,
        dest="max_steps",
        metavar="N",
        help="step budget of the episode (default: the env's, 1000)",
    )
    group.add_argument(
        "--step-timeout",
        type=positive_float,
        dest="step_timeout",
        metavar="SECONDS",
        help="longest one command may run, in seconds (default: the env's, 3600)",
    )
    group.add_argument(
        "--reward-mode",
        choices=("normalized", "medal", "score"),
        dest="reward_mode",
        help="normalized: 0 sample .. 1 gold; medal: 0-3; score: the raw metric "
        "(default: normalized)",
    )
    group.add_argument(
        "--task",
        choices=("mle_gym", "mlebench", "mlebench-obfuscated"),
        help="the prompt: mle_gym's own statement (default), or MLE-bench's instructions and "
        "competition description (plain or obfuscated) at its container paths, read from "
        "your MLE-bench checkout (see docs/fidelity.md)",
    )
    group.add_argument(
        "--mlebench-dir",
        dest="mlebench_dir",
        metavar="DIR",
        help="your clone of github.com/openai/mle-bench, for --task mlebench "
        "(default: $MLE_GYM_MLEBENCH_DIR, else an installed mlebench package)",
    )


def _add_split(parser: argparse.ArgumentParser | Any, what: str) -> None:
    parser.add_argument("--split", choices=SPLITS, help=f"{what} (see `mle-gym list`)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mle-gym",
        description="Every MLE-bench competition as a Gymnasium environment: prepare data, "
        "grade submissions, run policies.",
        epilog="Start with `mle-gym demo`; `mle-gym COMMAND --help` describes each command.",
    )
    parser.add_argument("--version", action="version", version=f"mle-gym {mle_gym.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("list", help="competitions, their metric, thresholds and prepared state")
    _add_split(p, "only the competitions of this split")
    p.add_argument("--json", action="store_true", help="print JSON (every field), not a table")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("prepare", help="download (or import) and split a competition's data")
    p.add_argument("ids", nargs="*", metavar="ID", help="competition ids (see `mle-gym list`)")
    _add_split(p, "prepare every competition of this split")
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
    from mle_gym.cli_report import add_grade_options

    add_grade_options(p)
    p.set_defaults(func=cmd_grade)

    p = sub.add_parser("demo", help="run the scripted baseline on the offline demo competition")
    _add_env_options(p)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser(
        "run",
        help="run a policy: one episode shown live (one id), or a batch of "
        "(competition, seed) episodes (several ids, --split, --seeds, ...)",
    )
    p.add_argument("competitions", nargs="*", metavar="ID", help="competition ids")
    p.add_argument(
        "--policy",
        default="scripted",
        choices=POLICIES,
        help="who acts: scripted (offline baseline), llm (tool-calling agent on an "
        "OpenAI-compatible endpoint), mini-swe-agent, aide, openhands (default: scripted; "
        "see docs/agents.md)",
    )
    llm = p.add_argument_group("LLM policies")
    llm.add_argument(
        "--base-url",
        dest="base_url",
        metavar="URL",
        help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL, else api.openai.com)",
    )
    llm.add_argument("--model", help="model name (default: $MLE_GYM_MODEL, else the policy's)")
    llm.add_argument(
        "--api-key", dest="api_key", metavar="KEY", help="API key (default: $OPENAI_API_KEY)"
    )
    _add_env_options(p)
    batch = p.add_argument_group("batch", "any of these (or several ids, or --split) runs a batch")
    _add_split(batch, "every competition of this split")
    batch.add_argument(
        "--seeds",
        type=at_least_one,
        metavar="N",
        help="episodes per competition, with seeds SEED, SEED+1, ... (default 1)",
    )
    batch.add_argument(
        "--workers",
        type=at_least_one,
        metavar="N",
        help="episodes at once (default 1; with --ray: as many as the cluster fits)",
    )
    batch.add_argument(
        "--run-dir",
        type=Path,
        dest="run_dir",
        metavar="DIR",
        help="where episodes are kept; rerunning resumes (default runs/POLICY-WHAT)",
    )
    batch.add_argument(
        "--ray", metavar="auto|ADDRESS", help="run episodes as tasks on a Ray cluster"
    )
    batch.add_argument(
        "--gpus",
        metavar="IDS",
        help="device ids to spread over the episodes, e.g. 0,1,2,3 (default none)",
    )
    batch.add_argument(
        "--gpus-per-episode",
        type=float,
        dest="gpus_per_episode",
        metavar="N",
        help="devices per episode (default 1 with --gpus; 0 on Ray)",
    )
    batch.add_argument(
        "--cpus-per-episode",
        type=positive_float,
        dest="cpus_per_episode",
        metavar="N",
        help="CPUs reserved on Ray and the docker limit (default 1 on Ray, no docker limit)",
    )
    batch.add_argument(
        "--memory-per-episode",
        dest="memory_per_episode",
        metavar="SIZE",
        help="memory reserved on Ray and the docker limit, e.g. 16g (default: none)",
    )
    from mle_gym.cli_harness import add_harness_options

    add_harness_options(p)
    p.set_defaults(func=cmd_run)

    from mle_gym.cli_report import add_report_parser

    add_report_parser(sub, SPLITS)

    from mle_gym.cli_audit import add_audit_parser

    add_audit_parser(sub)

    p = sub.add_parser("build-image", help="build the Docker image agents run in")
    p.add_argument(
        "--offline",
        action="store_true",
        help="from Debian packages only (debootstrap), no registry needed",
    )
    p.add_argument("--cuda", action="store_true", help="the CUDA variant (registry build only)")
    p.add_argument("--tag", help="image tag (default: mle-gym's own tag for the variant)")
    p.add_argument("--force", action="store_true", help="rebuild even if the image exists")
    p.set_defaults(func=cmd_build_image)
    from mle_gym.cli_runtime import add_parser as add_runtime_parser

    add_runtime_parser(sub)

    p = sub.add_parser(
        "reference-panel", help="recompute a competition's thresholds from its reference models"
    )
    p.add_argument("competition", metavar="ID", help="a competition with a reference panel")
    p.set_defaults(func=cmd_reference_panel)

    p = sub.add_parser(
        "gc",
        help="remove what dead mle_gym processes left: scratch folders of the local sandbox, "
        "and docker containers when Docker runs",
    )
    p.set_defaults(func=cmd_gc)

    from mle_gym.export.command import add_export_parser

    add_export_parser(sub, SPLITS)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    from mle_gym.competitions import UnknownCompetition

    try:
        return args.func(args)
    except (UnknownCompetition, FileNotFoundError, RuntimeError, ValueError) as exc:
        say(f"error: {exc}", style="red")
        return 2
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        say(
            f"error: disk full: could not write {exc.filename or 'a file'} ({exc.strerror}). "
            "Free some space and run the same command again (a batch resumes where it "
            "stopped; graded episodes are kept)",
            style="red",
        )
        return 2
    except KeyboardInterrupt:
        say("interrupted", style="red")
        return 130
    except BrokenPipeError:  # e.g. `mle-gym list --json | head`: the reader has enough
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
