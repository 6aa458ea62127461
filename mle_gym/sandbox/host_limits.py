"""Default limits that fit the host: each episode's share of its memory and its CPUs.

An episode uses memory in two places: its sandbox (capped by the sandbox's cgroup or
container limit, tmpfs workspace included) and, at its end, the grading child on the host
(capped by a limit on the address space it adds to what it inherits from the env's process,
outside the sandbox's cgroup). Fixed defaults (16 GiB
and 8 GiB) overcommit a small host even for one episode, and `make_vec` or the batch
runner's workers multiply them. So the defaults are a share of the host:

    host     = min(MemTotal, the memory limit of this process's cgroup)
    reserve  = max(2 GiB, host / 8)              the OS and page cache
             + 512 MiB per episode               its env process (which a grading child
                                                 may partly copy as it writes)
    share    = (host - reserve) / episodes       one episode's sandbox and grader together
    grader   = share / 3, within [1 GiB, 8 GiB]
    sandbox  = share - grader, within [1 GiB, 16 GiB]

so `episodes × (sandbox + grader) <= host - reserve` whenever the floors allow it (a host
too small for its episodes' floors gets a warning). Explicit options always win: the
sandbox's `memory` option, the env's `grading_limits`.

CPU: each sandbox may use every core this process may use (as docker's default does);
the kernel shares them fairly between the sandboxes' groups when they compete.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mle_gym.sandbox.caller_warning import warn_caller
from mle_gym.sandbox.cgroup import own_memory_limit

GIB = 1 << 30
MIB = 1 << 20
SANDBOX_MAX, SANDBOX_MIN = 16 * GIB, 1 * GIB
GRADER_MAX, GRADER_MIN = 8 * GIB, 1 * GIB
RESERVE_MIN = 2 * GIB
RESERVE_PER_EPISODE = 512 * MIB
#: How many episodes run at once on this host, when nothing says so (e.g. for a
#: launcher of your own that starts several processes with `gym.make` each).
CONCURRENCY_VARIABLE = "MLE_GYM_CONCURRENT_EPISODES"


@dataclass(frozen=True)
class EpisodeLimits:
    """One episode's memory, in bytes: its sandbox's and its host-side grading child's."""

    sandbox_memory: int
    grader_memory: int


def host_memory(meminfo: Path = Path("/proc/meminfo")) -> int:
    """The memory this process's episodes can share: MemTotal, or its cgroup's limit."""
    total = None
    for line in meminfo.read_text().splitlines():
        name, _, value = line.partition(":")
        if name == "MemTotal":
            total = int(value.split()[0]) * 1024
    if total is None:
        raise ValueError(f"no MemTotal in {meminfo}")
    limit = own_memory_limit()
    return min(total, limit) if limit is not None else total


def host_cpus() -> float:
    """The cores this process may run on."""
    return float(len(os.sched_getaffinity(0)) or os.cpu_count() or 1)


def concurrency(episodes: int | None) -> int:
    """`episodes`, else $MLE_GYM_CONCURRENT_EPISODES, else 1."""
    if episodes is None:
        text = os.environ.get(CONCURRENCY_VARIABLE, "1")
        try:
            episodes = int(text)
        except ValueError:
            raise ValueError(
                f"{CONCURRENCY_VARIABLE} must be a whole number, got {text!r}"
            ) from None
    if episodes < 1:
        raise ValueError(f"the number of concurrent episodes must be at least 1, got {episodes}")
    return episodes


def episode_limits(episodes: int = 1, memory: int | None = None) -> EpisodeLimits:
    """Each of `episodes` concurrent episodes' share of `memory` (default: `host_memory()`)."""
    memory = host_memory() if memory is None else memory
    reserve = max(RESERVE_MIN, memory // 8) + episodes * RESERVE_PER_EPISODE
    share = max(0, memory - reserve) // episodes
    grader = min(GRADER_MAX, max(GRADER_MIN, share // 3))
    sandbox = min(SANDBOX_MAX, max(SANDBOX_MIN, share - grader))
    needed = episodes * (sandbox + grader)
    if needed > memory - reserve:
        warn_caller(
            f"mle_gym: {episodes} episode(s) at once need at least {needed >> 20:,} MiB, more "
            f"than the {max(0, memory - reserve) >> 20:,} MiB this host can give them; run "
            "fewer at once or set their memory yourself"
        )
    return EpisodeLimits(sandbox // MIB * MIB, grader // MIB * MIB)
