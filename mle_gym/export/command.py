"""`mle-gym export harbor`: the argument parser and the handler (imports nothing heavy)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any


def add_export_parser(sub: Any, splits: tuple[str, ...]) -> None:
    """Register `export harbor` on the CLI's subparsers."""
    p = sub.add_parser("export", help="write competitions as tasks of another harness (Harbor)")
    formats = p.add_subparsers(
        dest="format", metavar="FORMAT", required=True, help="the format: harbor"
    )
    h = formats.add_parser(
        "harbor",
        help="one Harbor task directory per competition (docs/harbor.md)",
        description="Write Harbor task directories: the agent's environment has the public "
        "data and no answers; a separate verifier grades with mle_gym (docs/harbor.md).",
    )
    h.add_argument("ids", nargs="*", metavar="ID", help="competition ids (see `mle-gym list`)")
    h.add_argument("--split", choices=splits, help="export every competition of this split")
    h.add_argument("--out", type=Path, required=True, metavar="DIR", help="where tasks go")
    h.add_argument(
        "--time-limit",
        type=float,
        default=24 * 3600.0,
        metavar="SECONDS",
        help="the agent's wall-clock budget (default: 86400, the env's)",
    )
    h.add_argument("--cpus", type=int, default=4, metavar="N", help="agent CPUs (default: 4)")
    h.add_argument(
        "--memory-mb",
        type=int,
        default=16 * 1024,
        metavar="MB",
        help="agent memory (default: 16384)",
    )
    h.add_argument("--gpus", type=int, default=0, metavar="N", help="agent GPUs (default: 0)")
    h.add_argument(
        "--image", help="agent image (default: $MLE_GYM_IMAGE, else mle-gym-agent:latest)"
    )
    h.add_argument(
        "--data",
        choices=("mount", "copy"),
        default="mount",
        help="mount: bind-mount the data cache (default, no copy); copy: hard-link the data "
        "into the build contexts, for providers that build images elsewhere",
    )
    h.add_argument(
        "--grader-image",
        help="the verifier's base image (default: mle-gym-grader:<digest> of this mle_gym)",
    )
    h.add_argument(
        "--reward-mode",
        choices=("normalized", "medal", "score"),
        default="normalized",
        help="the verifier's reward (default: normalized, as the env)",
    )
    h.add_argument(
        "--task",
        choices=("mle_gym", "mlebench", "mlebench-obfuscated"),
        default="mle_gym",
        help="the prompt: mle_gym's statement (default), or MLE-bench's instructions and "
        "description (plain or obfuscated) in the agent's image at its paths, read from your "
        "MLE-bench checkout; Harbor has no validation server (docs/harbor.md)",
    )
    h.add_argument(
        "--mlebench-dir",
        dest="mlebench_dir",
        metavar="DIR",
        help="your clone of github.com/openai/mle-bench, for --task mlebench "
        "(default: $MLE_GYM_MLEBENCH_DIR, else an installed mlebench package)",
    )
    h.add_argument(
        "--build-grader",
        action="store_true",
        help="also build the verifier's grader image on the agent image (needs Docker)",
    )
    h.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    from mle_gym.analysis.splits import split_members
    from mle_gym.envs.mlebench_task import MLEBenchNotFound
    from mle_gym.export.harbor import HarborOptions, export_harbor

    if not args.ids and not args.split:
        raise SystemExit("name competition ids, or --split SPLIT")
    ids = list(args.ids) + (split_members(args.split) if args.split else [])
    options = HarborOptions(
        time_limit=args.time_limit,
        cpus=args.cpus,
        memory_mb=args.memory_mb,
        gpus=args.gpus,
        image=args.image,
        grader_image=args.grader_image,
        reward_mode=args.reward_mode,
        data=args.data,
        task=args.task,
        mlebench_dir=args.mlebench_dir,
    )
    started = time.perf_counter()
    try:
        written = export_harbor(ids, args.out, options)
    except MLEBenchNotFound as exc:
        raise SystemExit(str(exc)) from None
    skipped = [e for e in written if e.skipped]
    unprepared = [e.competition_id for e in written if not e.prepared and not e.skipped]
    print(
        f"wrote {len(written) - len(skipped)} Harbor task(s) to {args.out} in "
        f"{time.perf_counter() - started:.2f}s"
    )
    for exported in skipped:
        print(f"skipped {exported.competition_id}: {exported.skipped}")
    if unprepared:
        print(
            f"{len(unprepared)} not prepared yet; before running them: "
            f"mle-gym prepare {' '.join(unprepared)}"
        )
    if args.build_grader:
        from mle_gym.export.grader_image import build_grader_image

        print(f"grader image: {build_grader_image(options.agent_image)}")
    elif (missing := _missing_image(options.agent_image)) is not None:
        print(missing)
    return 0


def _missing_image(tag: str) -> str | None:
    """A warning when the tasks name an agent image this machine's engine lacks (None when
    it has it, or there is no engine here to ask)."""
    from docker.errors import ImageNotFound

    from mle_gym.sandbox.engine import DockerUnavailableError, connect

    try:
        connect().images.get(tag)
    except DockerUnavailableError:
        return None
    except ImageNotFound:
        return (
            f"warning: the tasks name the agent image {tag}, which is not built here: build "
            "it (`mle-gym build-image`, or `--offline`) or push it where your provider pulls "
            "images from, before running them"
        )
    return None
