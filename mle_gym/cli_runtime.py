"""`mle-gym build-runtime`: the agent's pinned runtime, for the local sandbox and docker."""

from __future__ import annotations

import argparse
from typing import Any

from mle_gym.cli_show import log, say


def cmd_build_runtime(args: argparse.Namespace) -> int:
    from mle_gym.sandbox import agent_runtime

    built = [agent_runtime.build_venv(force=args.force, log=log)]
    if args.docker:
        built.append(agent_runtime.build_image(args.base, force=args.force, log=log))
    for item in built:
        say(
            f"runtime ready: {item.path} ({item.size_bytes / 2**20:.0f} MiB, "
            f"built in {item.seconds:.0f} s)",
            style="green",
        )
    say(f"pins: {', '.join(agent_runtime.pins())}", style="dim")
    return 0


def add_parser(sub: Any) -> None:
    """The verb's parser (its place in cli.py is one call)."""
    p = sub.add_parser(
        "build-runtime",
        help="build the agent's pinned Python libraries (a venv for the local sandbox; "
        "--docker: the image too)",
        description="Downloads the wheels of the agent's lock file once from the package "
        "registry, then builds a venv under $MLE_GYM_HOME (default ~/.cache/mle-gym) that the "
        "local sandbox uses as the agent's Python, and with --docker an image "
        "mle-gym-agent:runtime-<hash> on the agent image, so both backends run agent code "
        "with the same libraries.",
    )
    p.add_argument("--docker", action="store_true", help="also build the docker image")
    p.add_argument(
        "--base", help="image to build on (default: mle-gym-agent:latest, else :offline)"
    )
    p.add_argument("--force", action="store_true", help="rebuild what is already built")
    p.set_defaults(func=cmd_build_runtime)
