"""`mle-gym run` over many (competition, seed) episodes: the batch, its workers and its
report."""

from __future__ import annotations

import argparse
import contextlib
import shlex
from pathlib import Path
from typing import Any

from mle_gym.cli import show
from mle_gym.cli.common import SPLITS, env_kwargs_from, policy_options, split_ids
from mle_gym.cli.show import console, plain, say


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


def _default_run_dir(agent: str, split: str | None, ids: list[str]) -> Path:
    label = split or (
        ids[0] if len(ids) == 1 else "+".join(ids) if len(ids) <= 3 else f"{len(ids)}-competitions"
    )
    return Path("runs") / f"{agent}-{label}"


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
    from mle_gym.analysis.report import write_run_report
    from mle_gym.batch import BatchSpec, RunStore, run_batch
    from mle_gym.batch.progress import BatchProgress
    from mle_gym.batch.resources import with_limits
    from mle_gym.batch.runner import Terminated, preflight

    ids = _batch_competitions(args)
    env_kwargs = with_limits(env_kwargs_from(args), args.cpus_per_episode, args.memory_per_episode)
    seeds = tuple(range(args.seed, args.seed + (args.seeds or 1)))
    checkpoints = _checkpoint_options(args)
    if args.harness is not None:
        from mle_gym.batch.spec import HARNESS_RUNNER
        from mle_gym.cli.harness import harness_batch_options

        options = harness_batch_options(args)
        spec = BatchSpec(
            tuple(ids), seeds, None, options, env_kwargs, runner=HARNESS_RUNNER, **checkpoints
        )
    else:
        spec = BatchSpec(
            tuple(ids), seeds, args.policy, policy_options(args), env_kwargs, **checkpoints
        )
    run_dir = args.run_dir or _default_run_dir(spec.agent, args.split, ids)
    store = RunStore(run_dir)
    if args.resume and not store.has_run():
        raise SystemExit(f"--resume: {run_dir} holds no run to resume")
    scheduler = _batch_scheduler(args, spec.secrets())
    where = (
        f"Ray at {args.ray}" if args.ray else f"{scheduler.capacity} worker(s) on this machine"
    ) + f", {args.backend} sandboxes"
    title = (
        f"mle-gym run: {spec.agent} on {len(ids)} competition(s) × {len(seeds)} seed(s) "
        f"({where}) → {run_dir}"
    )
    closing = contextlib.closing(scheduler) if args.ray else contextlib.nullcontext()
    try:
        with closing:
            preflight(spec, store, scheduler)  # errors before the display, leaving no files
            with BatchProgress(console(), len(ids) * len(seeds), title) as progress:
                result = run_batch(spec, store, scheduler, progress)
    except (KeyboardInterrupt, Terminated) as stop:
        say(
            "interrupted: the running episodes were stopped and marked failed; run the same "
            "command again to resume (graded episodes are kept)",
            style="red",
        )
        show.next_steps([(resume_command(args), "resume: the episodes left run")])
        return stop.code if isinstance(stop, Terminated) else 130
    finally:
        if store.episodes.is_dir():
            summary = write_run_report(run_dir).summary
    for line in header_lines(summary):
        say(line, style="dim")
    console().print(to_table(summary, title=f"report: {plain(run_dir)}", width=console().width))
    say(f"{result.done} episode(s) run, {result.skipped} already done, {result.failed} failed")
    show.next_steps(show.batch_hints(run_dir, resume_command(args), result.failed))
    return 0 if result.ok else 1


def _checkpoint_options(args: argparse.Namespace) -> dict[str, Any]:
    """The spec's checkpoint schedule and resume point from the options given (the spec's
    defaults for the others)."""
    if args.resume and args.resume_from == "start":
        raise SystemExit(
            "--resume continues episodes from their checkpoints; --resume-from "
            "start runs them from step 0: give one of them"
        )
    names = ("checkpoint_every_steps", "checkpoint_every_minutes", "resume_from")
    return {name: getattr(args, name) for name in names if getattr(args, name) is not None}


def resume_command(args: argparse.Namespace) -> str:
    """The command that ran this batch: typed again, it resumes it."""
    return shlex.join(["mle-gym", *args.argv])
