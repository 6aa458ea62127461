"""`mle-gym run ID --harness CMD --model-endpoint URL`: the command line of `run_harness`."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from mle_gym.harness.proxy import MAX_VALIDATIONS


def add_harness_options(parser: argparse.ArgumentParser) -> None:
    """The `run` command's harness options (--api-key, --run-dir, --time-limit, --backend,
    --reward-mode and --seed are the command's own)."""
    group = parser.add_argument_group(
        "harness",
        "run an agent harness that owns its loop inside the sandbox, with the model "
        "endpoint as its only network route (see docs/harness.md)",
    )
    group.add_argument(
        "--harness",
        metavar="CMD",
        help="the harness's shell command line, run in /home/code; the task is in "
        "$MLE_GYM_TASK and /home/code/TASK.md, the endpoint in $OPENAI_BASE_URL",
    )
    group.add_argument(
        "--model-endpoint",
        dest="model_endpoint",
        metavar="URL",
        help="the OpenAI-compatible endpoint the proxy forwards to (default: $OPENAI_BASE_URL)",
    )
    group.add_argument(
        "--max-requests",
        dest="max_requests",
        type=int,
        metavar="N",
        help="requests forwarded to the endpoint (model calls and model lists); later ones "
        "get a 403 error (default: no limit)",
    )
    group.add_argument(
        "--max-validations",
        dest="max_validations",
        type=int,
        default=MAX_VALIDATIONS,
        metavar="N",
        help=f"format checks through $MLE_GYM_VALIDATE_URL, one at a time (default: "
        f"{MAX_VALIDATIONS}); each runs the grader's checks on the host",
    )
    group.add_argument(
        "--harness-dir",
        dest="harness_dir",
        type=Path,
        metavar="DIR",
        help="a directory shown read-only at /opt/harness (bin/ on PATH, itself on "
        "PYTHONPATH), e.g. from `pip install --target DIR ...`",
    )
    group.add_argument(
        "--mlebench-agent",
        dest="mlebench_agent",
        type=Path,
        metavar="DIR",
        help="an agent folder of an MLE-bench clone (agents/<name>: config.yaml, Dockerfile, "
        "start.sh), run as MLE-bench's runner runs it, in --task mlebench (the default then) "
        "read from that clone",
    )
    group.add_argument(
        "--agent-config",
        dest="agent_config",
        metavar="ID",
        help="the agent of the folder's config.yaml, e.g. aide/dev (default: the folder's name)",
    )
    group.add_argument(
        "--agent-requirements",
        dest="agent_requirements",
        action="store_true",
        help="install the folder's requirements.txt once (under $MLE_GYM_HOME/agent-envs) "
        "and show it as the harness directory",
    )
    group.add_argument(
        "--agent-wheels",
        dest="agent_wheels",
        type=Path,
        metavar="DIR",
        help="with --agent-requirements: install from this directory of wheels only, offline",
    )


def apply_mlebench_agent(args: argparse.Namespace) -> None:
    """With --mlebench-agent: the harness command is the agent's start.sh with its config's
    arguments, and the task MLE-bench's (from the clone the folder is in) unless given, so
    single runs, batches and their records all name them."""
    from mle_gym.harness.mlebench_agent import AgentFolderError, load_agent

    folder = getattr(args, "mlebench_agent", None)
    if folder is None:
        for option in ("agent_config", "agent_requirements", "agent_wheels"):
            if getattr(args, option, None):
                name = option.replace("_", "-")
                raise SystemExit(f"--{name} goes with --mlebench-agent DIR")
        return
    if args.agent_wheels is not None:
        args.agent_requirements = True
    if args.agent_requirements and args.harness_dir is not None:
        raise SystemExit("--agent-requirements builds the harness directory: drop --harness-dir")
    try:
        agent = load_agent(folder, args.agent_config)
    except AgentFolderError as exc:
        raise SystemExit(f"--mlebench-agent: {exc}") from None
    args.harness = args.harness or agent.command()
    args.task = args.task or agent.task()
    clone = folder.resolve().parent.parent
    if args.mlebench_dir is None and (clone / "environment").is_dir():
        args.mlebench_dir = str(clone)


def _endpoint(args: argparse.Namespace) -> str:
    endpoint = args.model_endpoint or os.environ.get("OPENAI_BASE_URL")
    if not endpoint:
        raise SystemExit("--harness needs --model-endpoint URL (or $OPENAI_BASE_URL)")
    return endpoint


def harness_batch_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options of a batch's harness runner (`run_harness`'s; the API key is a secret the
    run directory never holds)."""
    from mle_gym.harness.proxy import check_endpoint

    endpoint = _endpoint(args)
    check_endpoint(endpoint)
    if args.harness_dir is not None and not args.harness_dir.is_dir():
        raise SystemExit(f"--harness-dir is not a directory: {args.harness_dir}")
    options: dict[str, Any] = {
        "command": args.harness,
        "model_endpoint": endpoint,
        "max_requests": args.max_requests,
        "max_validations": args.max_validations,
        "harness_dir": str(args.harness_dir.resolve()) if args.harness_dir else None,
    }
    if args.mlebench_agent is not None:
        options["mlebench_agent"] = str(args.mlebench_agent.resolve())
        options["agent_config"] = args.agent_config
        options["agent_requirements"] = args.agent_requirements
        options["agent_wheels"] = str(args.agent_wheels.resolve()) if args.agent_wheels else None
    if key := args.api_key or os.environ.get("OPENAI_API_KEY"):
        options["api_key"] = key
    return options


def run_harness_command(args: argparse.Namespace) -> int:
    """One harness episode, then its report, reward and where its logs are."""
    from mle_gym.cli.common import env_kwargs_from
    from mle_gym.cli.show import console, print_report, say
    from mle_gym.grading.report import GradeReport
    from mle_gym.harness.run import run_harness

    if len(args.competitions) != 1:
        raise SystemExit("name a competition id, or several ids or --split for a batch")
    endpoint = _endpoint(args)
    result = run_harness(
        args.competitions[0],
        args.harness,
        endpoint,
        max_requests=args.max_requests,
        max_validations=args.max_validations,
        run_dir=args.run_dir,
        harness_dir=args.harness_dir,
        api_key=args.api_key or os.environ.get("OPENAI_API_KEY"),
        seed=args.seed,
        mlebench_agent=args.mlebench_agent,
        agent_config=args.agent_config,
        agent_requirements=args.agent_requirements,
        agent_wheels=args.agent_wheels,
        **env_kwargs_from(args),
    )
    print_report(GradeReport(**result.report))
    console().print(
        f"[bold]reward ({args.reward_mode or 'normalized'}): {result.reward:.4f}[/bold]"
    )
    ending = "cut at the time limit" if result.cut else f"exited with status {result.exit_code}"
    say(
        f"the harness {ending} after {result.seconds:.0f} s; {result.requests} model call(s)"
        + (f", {result.refused} refused past the budget" if result.refused else "")
    )
    say(
        f"model calls: {result.log_path}; harness output: {result.output_path}; "
        f"result: {result.run_dir / 'result.json'}",
        style="dim",
    )
    return 0 if result.report.get("valid_submission") else 1
