"""`mle-gym build-image` and `gc`: the agent image, and what dead processes left."""

from __future__ import annotations

import argparse
from typing import Any

from mle_gym.cli.show import log, say


def cmd_build_image(args: argparse.Namespace) -> int:
    from mle_gym.sandbox.image import DEFAULT_IMAGE, OFFLINE_IMAGE, build_image, build_offline_image

    if args.offline:
        tag = build_offline_image(args.tag or OFFLINE_IMAGE, force=args.force, log=log)
    else:
        tag = build_image(args.tag or DEFAULT_IMAGE, cuda=args.cuda, log=log)
    say(f"image ready: {tag}", style="green")
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


def add_parsers(sub: Any) -> None:
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
    p = sub.add_parser(
        "gc",
        help="remove what dead mle_gym processes left: scratch folders of the local sandbox, "
        "and docker containers when Docker runs",
    )
    p.set_defaults(func=cmd_gc)
