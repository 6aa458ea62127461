"""`mle-gym build-runtime` (the agent's pinned runtime, for the local sandbox and docker),
and `mle-gym run`'s shared LLM retry bound."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any

from mle_gym.cli.show import log, say


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
