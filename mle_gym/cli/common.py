"""What the CLI's verbs share: split names, the episode options and their parsing."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

DEMO_COMPETITION = "sklearn-digits"
#: `all` is MLE-bench's 75 (lite + medium + high); dev and demo stay apart.
SPLITS = ("lite", "medium", "high", "all", "dev", "demo")


class PolicyNames:
    """`--policy`'s choices: the names in mle_gym's policy registry, read when argparse checks
    a value or writes the help, so building the parser (and `mle-gym --help`) reads no
    installed package's entry points."""

    def __contains__(self, name: object) -> bool:
        from mle_gym.policies import policy_names

        return name in policy_names()

    def __iter__(self) -> Iterator[str]:
        from mle_gym.policies import policy_names

        return iter(policy_names())


def make_policy(name: str, options: dict[str, Any] | None = None) -> Any:
    from mle_gym.policies import make_policy as make

    try:
        return make(name, **(options or {}))
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


def existing_splits() -> str:
    return ", ".join(f"{name} ({n})" for name, n in split_sizes().items() if n)


def split_ids(split: str) -> list[str]:
    """The ids of `split`; exits with what does exist when it has none yet."""
    from mle_gym.analysis.splits import split_members

    ids = split_members(split)
    if not ids:
        raise SystemExit(
            f"the {split!r} split has no competitions in mle_gym yet; "
            f"splits with competitions: {existing_splits()}"
        )
    return ids


def _parsed(text: str, kind: type[int] | type[float]) -> Any:
    try:
        return kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None


def at_least_one(text: str) -> int:
    """argparse type: a whole number >= 1 (0 or less would silently run one or no episode)."""
    value = _parsed(text, int)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def at_least_zero(text: str) -> int:
    """argparse type: a whole number >= 0 (0 turns the option's action off)."""
    value = _parsed(text, int)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 (off) or more, got {value}")
    return value


def float_at_least_zero(text: str) -> float:
    """argparse type: a number >= 0 (0 turns the option's action off)."""
    value = _parsed(text, float)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 (off) or more, got {text}")
    return value


def positive_float(text: str) -> float:
    value = _parsed(text, float)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def size(text: str) -> str:
    """argparse type: a size as Docker writes it ("16g"), checked now: a local batch keeps
    no memory limit, so a typo there would otherwise pass unseen."""
    from mle_gym.batch.resources import parse_size

    try:
        parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_env_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("episode")
    group.add_argument(
        "--backend",
        choices=("local", "docker"),
        default="local",
        help="sandbox: local (bubblewrap) or docker (default: local)",
    )
    group.add_argument(
        "--docker-runtime",
        dest="docker_runtime",
        metavar="NAME",
        help="the Docker engine's runtime for the containers, e.g. runsc (gVisor: a kernel of "
        "its own between the agent and the host's; see docs/security.md); with --backend "
        "docker (default: $MLE_GYM_DOCKER_RUNTIME, else the engine's default)",
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
        "--data",
        choices=("test", "dev"),
        help="test: the competition's own split (default); dev: its development variant, "
        "carved from the public training data, with a development score on validate "
        "(see docs/fidelity.md)",
    )
    group.add_argument(
        "--reward-mode",
        choices=("normalized", "medal", "score", "dense"),
        dest="reward_mode",
        help="normalized: 0 sample .. 1 gold; medal: 0-3; score: the raw metric; dense "
        "(with --data dev): each change of the normalised development score as it happens "
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
    group.add_argument(
        "--network",
        choices=("off", "on", "proxy"),
        help="off: none (default); on: open outbound; proxy: only through the episode's "
        "logging HTTP(S) proxy, judged by --network-policy (see docs/security.md)",
    )
    group.add_argument(
        "--network-policy",
        dest="network_policy",
        metavar="NAME|FILE",
        help="for --network proxy (which it implies): a preset (package-index, competition, "
        'open) or a JSON file {"preset": ..., "allow": [...], "deny": [...]} (default: open)',
    )


def add_split(parser: argparse.ArgumentParser | Any, what: str) -> None:
    parser.add_argument("--split", choices=SPLITS, help=f"{what} (see `mle-gym list`)")


#: Env options whose command-line arguments differ from the option (--network on|off|proxy,
#: --docker-runtime for sandbox_options).
_SPELLED_OTHERWISE = ("network", "network_policy", "sandbox_options")


def env_kwargs_from(args: argparse.Namespace) -> dict[str, Any]:
    """`gym.make`'s options from the parsed env arguments (`add_env_options`): each
    `EnvConfig` option given as an argument of its own name, then the network and sandbox
    options, whose arguments read differently."""
    from mle_gym.envs.config import option_names

    kwargs: dict[str, Any] = {"backend": args.backend}
    for name in option_names():
        if name in _SPELLED_OTHERWISE:
            continue
        if getattr(args, name, None) is not None:
            kwargs[name] = getattr(args, name)
    network = getattr(args, "network", None)
    policy = getattr(args, "network_policy", None)
    if policy is not None and network not in (None, "proxy"):
        raise SystemExit(f"--network-policy governs --network proxy, not --network {network}")
    if network == "on":
        kwargs["network"] = True
    elif network == "proxy" or policy is not None:
        kwargs["network"] = "proxy"
        if policy is not None:
            kwargs["network_policy"] = policy
    if getattr(args, "docker_runtime", None):
        if args.backend != "docker":
            raise SystemExit(
                "--docker-runtime is an option of the docker sandbox: add --backend docker"
            )
        kwargs["sandbox_options"] = {"runtime": args.docker_runtime}
    return kwargs


def policy_options(args: argparse.Namespace) -> dict[str, Any]:
    return {k: v for k in ("base_url", "model", "api_key") if (v := getattr(args, k, None))}
