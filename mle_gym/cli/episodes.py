"""`mle-gym run` (one episode shown live, or a batch) and `mle-gym demo`."""

from __future__ import annotations

import argparse
import shutil
import warnings
from pathlib import Path
from typing import Any

from mle_gym.cli import show
from mle_gym.cli.common import (
    DEMO_COMPETITION,
    PolicyNames,
    add_env_options,
    add_split,
    at_least_one,
    at_least_zero,
    env_kwargs_from,
    float_at_least_zero,
    make_policy,
    policy_options,
    positive_float,
    size,
)
from mle_gym.cli.show import console, log, say


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

    from mle_gym.grading.report import GradeReport, medal_name
    from mle_gym.runner import run_episode

    policy = make_policy(policy_name, policy_options)
    env = gym.make(f"mle/{competition_id}-v0", **env_kwargs)
    try:
        episode = run_episode(env, policy, seed=seed, on_step=show.show_step)
    finally:
        env.close()
    report = episode.report
    show.print_report(GradeReport(**report))
    console().print(
        f"[bold]reward ({env_kwargs.get('reward_mode', 'normalized')}): "
        f"{episode.total_reward:.4f} (medal: {medal_name(report)})[/bold]"
    )
    usage = getattr(policy, "usage_summary", None)
    if callable(usage) and (text := usage()):
        say(text)
    show.next_steps(show.episode_hints(competition_id, policy_name, demo=demo))
    return 0 if report["valid_submission"] else 1


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
    "checkpoint_every_steps",
    "checkpoint_every_minutes",
    "resume_from",
    "resume",
)


def cmd_run(args: argparse.Namespace) -> int:
    from mle_gym.cli.harness import apply_mlebench_agent
    from mle_gym.competitions import get_competition

    apply_mlebench_agent(args)
    # a harness episode takes --run-dir for itself; a policy episode with one is a batch
    options = [n for n in BATCH_OPTIONS if args.harness is None or n != "run_dir"]
    batch = (
        args.split
        or len(args.competitions) > 1
        or any(getattr(args, name) is not None for name in options)
    )
    if args.harness is not None and not batch:  # with --seeds, --split, ...: a harness batch
        from mle_gym.cli.harness import run_harness_command

        return run_harness_command(args)
    if batch:
        from mle_gym.cli.batch import cmd_batch

        return cmd_batch(args)
    if not args.competitions:
        raise SystemExit(
            "name a competition id (one episode, shown live), or several ids or --split for a batch"
        )
    competition_id = args.competitions[0]
    get_competition(competition_id)
    return run_and_show(
        competition_id, args.policy, env_kwargs_from(args), args.seed, policy_options(args)
    )


def cmd_demo(args: argparse.Namespace) -> int:
    from mle_gym.competitions import get_competition
    from mle_gym.data import require_prepared

    comp = get_competition(DEMO_COMPETITION)
    console().print(
        f"[bold]mle_gym demo[/bold]: the scripted baseline on {comp.name}, fully "
        f"offline ({args.backend} sandbox)"
    )
    require_prepared(comp.id, log=log)
    env_kwargs = env_kwargs_from(args)
    if args.backend == "local":
        from mle_gym.sandbox.agent_runtime import built_root

        # a demo score is compared with nothing: without the pinned runtime (or bubblewrap,
        # which running on it needs), this Python's libraries serve, without the warning
        # that a comparable run needs
        usable = built_root() is not None and shutil.which("bwrap") is not None
        env_kwargs["sandbox_options"] = {"runtime": "auto" if usable else "host"}
    if args.backend == "local" and shutil.which("bwrap") is None:
        # The demo's commands are our own scripted baseline's, not a model's: running them
        # unisolated is safe, and lets the demo work on a machine without bubblewrap.
        env_kwargs["sandbox_options"]["isolation"] = "none"
        # said here, in the demo's words; the sandbox's own warning would say it twice
        warnings.filterwarnings("ignore", "mle_gym: isolation='none'", RuntimeWarning)
        say(
            "bubblewrap is not installed, so the demo runs its scripted commands without "
            "isolation (they are mle_gym's own). Agents need isolation: install bubblewrap "
            "(apt-get install bubblewrap) or use --backend docker.",
            style="yellow",
        )
    return run_and_show(comp.id, "scripted", env_kwargs, args.seed, demo=True)


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("demo", help="run the scripted baseline on the offline demo competition")
    add_env_options(p)
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
        choices=PolicyNames(),
        metavar="NAME",
        help="who acts, one of %(choices)s: scripted (offline baseline), llm (tool-calling "
        "agent on an OpenAI-compatible endpoint), the scaffolds, or a policy an installed "
        "package registers (default: scripted; see docs/agents.md)",
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
    add_env_options(p)
    batch = p.add_argument_group("batch", "any of these (or several ids, or --split) runs a batch")
    add_split(batch, "every competition of this split")
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
        type=size,
        dest="memory_per_episode",
        metavar="SIZE",
        help="memory reserved on Ray and the docker limit, e.g. 16g (default: none)",
    )
    add_checkpoint_options(batch)
    from mle_gym.cli.harness import add_harness_options

    add_harness_options(p)
    p.set_defaults(func=cmd_run)


def add_checkpoint_options(batch: Any) -> None:
    """A batch's periodic checkpoints, and where a rerun starts an unfinished episode."""
    from mle_gym.batch.spec import CHECKPOINT_EVERY_MINUTES, CHECKPOINT_EVERY_STEPS, RESUME_FROM

    batch.add_argument(
        "--checkpoint-every-steps",
        type=at_least_zero,
        dest="checkpoint_every_steps",
        metavar="N",
        help=f"checkpoint each episode every N steps (default {CHECKPOINT_EVERY_STEPS}; 0: off)",
    )
    batch.add_argument(
        "--checkpoint-every-minutes",
        type=float_at_least_zero,
        dest="checkpoint_every_minutes",
        metavar="M",
        help="checkpoint each episode every M minutes "
        f"(default {CHECKPOINT_EVERY_MINUTES:g}; 0: off)",
    )
    batch.add_argument(
        "--resume-from",
        choices=RESUME_FROM,
        dest="resume_from",
        help="where a rerun starts an unfinished episode: its newest checkpoint "
        "(default), or step 0",
    )
    batch.add_argument(
        "--resume",
        action="store_const",
        const=True,
        help="continue the run in --run-dir, each unfinished episode from its newest "
        "checkpoint (refused where the directory holds no run)",
    )
