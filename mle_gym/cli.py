"""The `mle-gym` command: list, prepare, grade, demo, run (one episode or a batch), report."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.table import Table

import mle_gym  # noqa: F401  (registers the envs)
from mle_gym.competitions import UnknownCompetition, all_competitions, get_competition
from mle_gym.data import ChecksumError, CompetitionDirs, prepare
from mle_gym.data.kaggle_download import KaggleUnavailable
from mle_gym.envs import NotPrepared
from mle_gym.grading import grade
from mle_gym.grading.report import GradeReport
from mle_gym.runner import Step, run_episode

console = Console()
DEMO_COMPETITION = "sklearn-digits"


def _policy(name: str, options: dict[str, Any] | None = None) -> Any:
    from baselines.registry import make_policy

    try:
        return make_policy(name, **(options or {}))
    except ValueError as exc:
        raise SystemExit(str(exc)) from None


def _log(message: str) -> None:
    console.print(message, style="dim", markup=False, highlight=False)


# -- list -------------------------------------------------------------------------------------
def cmd_list(args: argparse.Namespace) -> int:
    table = Table(title="mle_gym competitions (metric ↑: higher is better, ↓: lower is better)")
    columns = (
        "id",
        "split",
        "metric",
        "teams",
        "gold",
        "silver",
        "bronze",
        "median",
        "sample",
        "prepared",
    )
    for column in columns:
        numeric = column not in ("id", "split", "metric", "prepared")
        table.add_column(column, justify="right" if numeric else "left", no_wrap=column == "id")
    shown = [c for c in all_competitions() if args.split in (None, c.split)]
    for comp in shown:
        arrow = "↓" if comp.lower_is_better else "↑"
        teams = str(comp.num_teams) if comp.reference_panel is None else f"{comp.num_teams}*"
        table.add_row(
            comp.id,
            comp.split,
            f"{comp.metric} {arrow}",
            teams,
            f"{comp.thresholds.gold:g}",
            f"{comp.thresholds.silver:g}",
            f"{comp.thresholds.bronze:g}",
            f"{comp.thresholds.median:g}",
            f"{comp.sample_score:g}",
            "yes" if CompetitionDirs.of(comp.id).is_prepared() else "no",
        )
    console.print(table)
    for comp in shown:
        if comp.reference_panel is not None:
            console.print(f"* {comp.id}: thresholds from a {comp.thresholds_source}", style="dim")
    return 0


# -- prepare ----------------------------------------------------------------------------------
@contextlib.contextmanager
def _download_progress(competition_id: str) -> Iterator[Callable[[int, int | None], None]]:
    """A rich progress bar, shown from a download's first report on (nothing otherwise)."""
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    progress = Progress(*columns, console=console)
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
    ids = list(args.ids) or [c.id for c in all_competitions() if c.split == args.split]
    if not ids:
        raise SystemExit("name a competition id, or --split lite|medium|high|dev|demo")
    if args.raw is not None and len(ids) != 1:
        raise SystemExit("--raw takes the files of one competition; name exactly one id")
    status = 0
    for competition_id in ids:
        comp = get_competition(competition_id)
        try:
            with _download_progress(comp.id) as on_progress:
                result = prepare(
                    comp,
                    args.raw,
                    strict=args.strict,
                    force=args.force,
                    log=_log,
                    on_progress=on_progress,
                )
        except KaggleUnavailable as exc:
            console.print(str(exc), style="red", markup=False)
            status = 2
            continue
        except ChecksumError as exc:
            console.print(str(exc), style="red", markup=False)
            status = 1
            continue
        for mismatch in result.mismatches:
            console.print(
                f"warning: {comp.id}: {mismatch} (differs from MLE-bench's split; "
                "use --strict to make this an error)",
                style="yellow",
                markup=False,
            )
        verdict = (
            "already prepared"
            if result.reused
            else "matches MLE-bench's checksums"
            if result.checked and not result.mismatches
            else "prepared"
        )
        console.print(f"[green]{comp.id}[/green]: {verdict} in {result.dirs.root}")
    return status


# -- grade ------------------------------------------------------------------------------------
def print_report(report: GradeReport) -> None:
    table = Table(title=f"grade: {report.competition_id}", show_header=False)
    table.add_column("field")
    table.add_column("value")
    for key, value in report.to_dict().items():
        table.add_row(key, "" if value is None else str(value))
    console.print(table)


def cmd_grade(args: argparse.Namespace) -> int:
    comp = get_competition(args.competition)
    dirs = CompetitionDirs.of(comp.id)
    if not dirs.is_prepared():
        raise NotPrepared(f"{comp.id} is not prepared: run `mle-gym prepare {comp.id}` first")
    report = grade(comp, Path(args.submission), dirs.private)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print_report(report)
    return 0 if report.valid_submission else 1


# -- run / demo -------------------------------------------------------------------------------
def _show_step(step: Step) -> None:
    action = step.action
    if isinstance(action, dict):
        label = action.get("tool", "?")
        detail = action.get("command") or action.get("path") or ""
    else:
        label, detail = "bash", str(action)
    info = step.info
    status = "" if info.get("exit_code") in (None, 0) else f" [red]exit {info['exit_code']}[/red]"
    console.rule(f"step {info.get('step')}: {label}{status}  (time left {info.get('time_left')} s)")
    if detail:
        console.print(
            f"[cyan]$ {detail.splitlines()[0][:200]}[/cyan]", markup=True, highlight=False
        )
    lines = step.observation.splitlines()
    shown = lines if len(lines) <= 12 else [*lines[:6], "...", *lines[-5:]]
    console.print("\n".join(shown), markup=False, highlight=False)


def run_and_show(
    competition_id: str,
    policy_name: str,
    env_kwargs: dict[str, Any],
    seed: int,
    policy_options: dict[str, Any] | None = None,
) -> int:
    policy = _policy(policy_name, policy_options)
    env = gym.make(f"mle/{competition_id}-v0", **env_kwargs)
    try:
        episode = run_episode(env, policy, seed=seed, on_step=_show_step)
    finally:
        env.close()
    report = episode.report
    print_report(GradeReport(**report))
    console.print(
        f"[bold]reward ({env_kwargs.get('reward_mode', 'normalized')}): "
        f"{episode.total_reward:.4f}[/bold]"
    )
    return 0 if report["valid_submission"] else 1


def _env_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"backend": args.backend}
    for name in ("time_limit", "max_steps", "step_timeout", "reward_mode"):
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
    if (
        args.split
        or len(args.competitions) > 1
        or any(getattr(args, name) is not None for name in BATCH_OPTIONS)
    ):
        return cmd_batch(args)
    if not args.competitions:
        raise SystemExit("name a competition id, or several ids or --split for a batch")
    competition_id = args.competitions[0]
    get_competition(competition_id)
    return run_and_show(
        competition_id, args.policy, _env_kwargs(args), args.seed, _policy_options(args)
    )


# -- batch runs and their reports ---------------------------------------------------------------
def _batch_competitions(args: argparse.Namespace) -> list[str]:
    ids = list(args.competitions)
    if args.split:
        ids += [c.id for c in all_competitions() if c.split == args.split]
    if not ids:
        raise SystemExit("name competition ids or --split for a batch")
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
    if (gpus or args.gpus_per_episode) and args.backend != "docker":
        raise SystemExit("GPUs are handed to docker sandboxes: add --backend docker")
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
    from mle_gym.batch import BatchSpec, RunStore, aggregate, run_batch
    from mle_gym.batch.progress import BatchProgress
    from mle_gym.batch.report import to_table
    from mle_gym.batch.resources import with_limits

    ids = _batch_competitions(args)
    env_kwargs = with_limits(_env_kwargs(args), args.cpus_per_episode, args.memory_per_episode)
    seeds = tuple(range(args.seed, args.seed + (args.seeds or 1)))
    spec = BatchSpec(tuple(ids), seeds, args.policy, _policy_options(args), env_kwargs)
    run_dir = args.run_dir or _default_run_dir(args.policy, args.split, ids)
    store = RunStore(run_dir)
    scheduler = _batch_scheduler(args, spec.secrets())
    where = (
        f"Ray at {args.ray}" if args.ray else f"{scheduler.capacity} worker(s) on this machine"
    ) + f", {args.backend} sandboxes"
    title = (
        f"mle-gym run: {args.policy} on {len(ids)} competition(s) × {len(seeds)} seed(s) "
        f"({where}) → {run_dir}"
    )
    closing = contextlib.closing(scheduler) if args.ray else contextlib.nullcontext()
    with closing, BatchProgress(console, len(ids) * len(seeds), title) as progress:
        result = run_batch(spec, store, scheduler, progress)
    console.print(to_table(aggregate(store.records()), title=f"report: {run_dir}"))
    console.print(
        f"{result.done} episode(s) run, {result.skipped} already done, "
        f"{result.failed} failed"
        + (" (run the same command again to retry them)" if result.failed else ""),
        highlight=False,
    )
    return 0 if result.ok else 1


def cmd_report(args: argparse.Namespace) -> int:
    from mle_gym.batch import RunStore, aggregate
    from mle_gym.batch.report import to_csv, to_json, to_table

    store = RunStore(args.run_dir)
    if not store.episodes.is_dir():
        raise FileNotFoundError(f"{args.run_dir} is not a batch run directory (no episodes/)")
    summary = aggregate(store.records())
    if args.json:
        print(to_json(summary))
    elif args.csv:
        sys.stdout.write(to_csv(summary))
    else:
        console.print(to_table(summary, title=f"report: {args.run_dir}"))
    return 0


# -- docker -----------------------------------------------------------------------------------
def cmd_build_image(args: argparse.Namespace) -> int:
    from mle_gym.sandbox.image import DEFAULT_IMAGE, OFFLINE_IMAGE, build_image, build_offline_image

    if args.offline:
        tag = build_offline_image(args.tag or OFFLINE_IMAGE, force=args.force, log=_log)
    else:
        tag = build_image(args.tag or DEFAULT_IMAGE, cuda=args.cuda, log=_log)
    console.print(f"image ready: {tag}", style="green", markup=False)
    return 0


def cmd_reference_panel(args: argparse.Namespace) -> int:
    from mle_gym.grading.grader import score_submission
    from mle_gym.grading.medals import thresholds_from_leaderboard
    from mle_gym.grading.reference_panel import panel_scores

    comp = get_competition(args.competition)
    dirs = prepare(comp, log=_log).dirs
    scores = panel_scores(comp, dirs.public, dirs.private)
    table = Table(title=f"reference panel: {comp.id}")
    table.add_column("score", justify="right")
    table.add_column("model")
    for name, score in scores.items():
        table.add_row(f"{score:.5f}", name)
    console.print(table)
    t = thresholds_from_leaderboard(list(scores.values()))
    sample, _ = score_submission(comp, dirs.public / comp.submission.sample_file, dirs.private)
    console.print(
        f"gold {t.gold:g}  silver {t.silver:g}  bronze {t.bronze:g}  median {t.median:g}  "
        f"sample submission {sample:g}",
        markup=False,
    )
    return 0


def cmd_gc(args: argparse.Namespace) -> int:
    from mle_gym.sandbox.containers import collect_garbage
    from mle_gym.sandbox.engine import connect
    from mle_gym.sandbox.scratch import sweep

    removed = collect_garbage(connect())
    console.print(
        f"removed {len(removed)} orphaned container(s)"
        + (f": {', '.join(removed)}" if removed else ""),
        markup=False,
    )
    console.print(f"removed {len(sweep())} scratch folder(s) of dead processes", markup=False)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    comp = get_competition(DEMO_COMPETITION)
    console.print(
        f"[bold]mle_gym demo[/bold]: the scripted baseline on {comp.name}, fully "
        f"offline ({args.backend} sandbox)"
    )
    prepare(comp, log=_log)
    return run_and_show(comp.id, "scripted", _env_kwargs(args), args.seed)


# -- parser -----------------------------------------------------------------------------------
def _add_env_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", choices=("local", "docker"), default="local")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, dest="time_limit")
    parser.add_argument("--max-steps", type=int, dest="max_steps")
    parser.add_argument("--step-timeout", type=float, dest="step_timeout")
    parser.add_argument(
        "--reward-mode", choices=("normalized", "medal", "score"), dest="reward_mode"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mle-gym", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="competitions, their metric, thresholds and prepared state")
    p.add_argument("--split", choices=("lite", "medium", "high", "dev", "demo"))
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("prepare", help="download (or import) and split a competition's data")
    p.add_argument("ids", nargs="*", metavar="ID")
    p.add_argument("--split", choices=("lite", "medium", "high", "dev", "demo"))
    p.add_argument(
        "--raw", type=Path, help="a directory or zip with the Kaggle files you already have"
    )
    p.add_argument(
        "--strict", action="store_true", help="fail when a file differs from MLE-bench's"
    )
    p.add_argument("--force", action="store_true", help="prepare again even if already prepared")
    p.set_defaults(func=cmd_prepare)

    p = sub.add_parser("grade", help="grade a submission file against the private answers")
    p.add_argument("competition")
    p.add_argument("submission")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_grade)

    p = sub.add_parser("demo", help="run the scripted baseline on the offline demo competition")
    _add_env_options(p)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser(
        "run",
        help="run a policy: one episode shown live (one id), or a batch of "
        "(competition, seed) episodes (several ids, --split, --seeds, ...)",
    )
    p.add_argument("competitions", nargs="*", metavar="ID")
    p.add_argument("--policy", default="scripted")
    p.add_argument("--base-url", dest="base_url", help="OpenAI-compatible endpoint (LLM policies)")
    p.add_argument("--model", help="model name (LLM policies)")
    p.add_argument("--api-key", dest="api_key", help="API key (LLM policies)")
    _add_env_options(p)
    batch = p.add_argument_group("batch", "any of these (or several ids, or --split) runs a batch")
    batch.add_argument("--split", choices=("lite", "medium", "high", "dev", "demo"))
    batch.add_argument(
        "--seeds", type=int, help="episodes per competition, seeds --seed, --seed+1, ..."
    )
    batch.add_argument(
        "--workers",
        type=int,
        help="episodes at once (default 1; with --ray: as many as the cluster fits)",
    )
    batch.add_argument(
        "--run-dir",
        type=Path,
        dest="run_dir",
        help="where episodes are kept; rerunning resumes (default runs/POLICY-WHAT)",
    )
    batch.add_argument(
        "--ray", metavar="auto|ADDRESS", help="run episodes as tasks on a Ray cluster"
    )
    batch.add_argument(
        "--gpus", help="device ids to spread over the episodes, e.g. 0,1,2,3 (docker)"
    )
    batch.add_argument(
        "--gpus-per-episode",
        type=float,
        dest="gpus_per_episode",
        help="devices per episode (default 1 with --gpus; 0 on Ray)",
    )
    batch.add_argument(
        "--cpus-per-episode",
        type=float,
        dest="cpus_per_episode",
        help="CPUs reserved on Ray and the docker limit (default 1 on Ray)",
    )
    batch.add_argument(
        "--memory-per-episode",
        dest="memory_per_episode",
        metavar="SIZE",
        help="memory reserved on Ray and the docker limit, e.g. 16g",
    )
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "report",
        help="aggregate a batch run as MLE-bench does: rates and "
        "scores, mean ± standard error over seeds",
    )
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print JSON")
    fmt.add_argument("--csv", action="store_true", help="print CSV")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("build-image", help="build the Docker image agents run in")
    p.add_argument(
        "--offline",
        action="store_true",
        help="from Debian packages only (debootstrap), no registry needed",
    )
    p.add_argument("--cuda", action="store_true", help="the CUDA variant (registry build only)")
    p.add_argument("--tag")
    p.add_argument("--force", action="store_true", help="rebuild even if the image exists")
    p.set_defaults(func=cmd_build_image)

    p = sub.add_parser(
        "reference-panel", help="recompute a competition's thresholds from its reference models"
    )
    p.add_argument("competition")
    p.set_defaults(func=cmd_reference_panel)

    p = sub.add_parser("gc", help="remove containers left behind by dead mle_gym processes")
    p.set_defaults(func=cmd_gc)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (UnknownCompetition, NotPrepared, FileNotFoundError, RuntimeError, ValueError) as exc:
        console.print(f"error: {exc}", style="red", markup=False)
        return 2
    except KeyboardInterrupt:
        console.print("interrupted", style="red")
        return 130


if __name__ == "__main__":
    sys.exit(main())
