"""`mle-gym build-runtime` (the agent's pinned runtime, one file system for both backends),
and `mle-gym run`'s shared LLM retry bound."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any

from mle_gym.cli.show import log, say


def cmd_build_runtime(args: argparse.Namespace) -> int:
    from mle_gym.sandbox import agent_runtime

    built = agent_runtime.build_runtime(args.base, force=args.force, log=log)
    for item in built:
        say(
            f"runtime ready: {item.path} ({item.size_bytes / 2**20:.0f} MiB, "
            f"built in {item.seconds:.0f} s)",
            style="green",
        )
    say(f"pins: {', '.join(agent_runtime.pins())}", style="dim")
    return 0


class _SetVariable(argparse.Action):
    """Stores the option and puts it in the environment, where every LLM policy (and a
    batch's worker processes) reads the shared retry bound (baselines/llm_agent/retry.py)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        os.environ[str(self.const)] = str(values)


def _add_retry_options(run: argparse.ArgumentParser) -> None:
    run.add_argument(
        "--llm-retries",
        type=int,
        action=_SetVariable,
        const="MLE_GYM_LLM_RETRIES",
        metavar="N",
        help="LLM policies: retries of a failed model call before the episode fails (default 4)",
    )
    run.add_argument(
        "--llm-retry-seconds",
        type=float,
        action=_SetVariable,
        const="MLE_GYM_LLM_RETRY_SECONDS",
        metavar="S",
        help="LLM policies: no retry starts after S seconds of failures (default 120)",
    )


def add_parser(sub: Any) -> None:
    """The verb's parser, and the retry options of `run` (their place in cli.py is one call)."""
    if "run" in sub.choices:
        _add_retry_options(sub.choices["run"])
    p = sub.add_parser(
        "build-runtime",
        help="build the agent's pinned runtime (the same Python and libraries on both backends)",
        description="Downloads the wheels of the agent's lock file once from the package "
        "registry and builds the image mle-gym-agent:runtime-<hash> on the agent image (a "
        "venv of the image's own Python holding exactly the lock's packages), which the "
        "docker backend runs; then exports that image's file system under $MLE_GYM_HOME "
        "(default ~/.cache/mle-gym), which the local sandbox runs on. Both backends run the "
        "same interpreter with the same importable packages. Needs a Docker engine and an "
        "agent image (`mle-gym build-image`, or `--offline`).",
    )
    # accepted, and needless: the image is always built (it is the runtime's source)
    p.add_argument("--docker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument(
        "--base", help="image to build on (default: mle-gym-agent:latest, else :offline)"
    )
    p.add_argument("--force", action="store_true", help="rebuild what is already built")
    p.set_defaults(func=cmd_build_runtime)
