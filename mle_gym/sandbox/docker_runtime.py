"""Which OCI runtime runs a docker sandbox's container (`runc`, or gVisor's `runsc`).

runc shares the host's kernel with the agent, so a kernel bug is a way out; gVisor's `runsc`
puts a kernel of its own, in user space, between the agent and the host's. The engine runs
only runtimes registered in its configuration, and would refuse an unknown one when a
container starts: it is checked when the sandbox is made, with the way to register it.
"""

from __future__ import annotations

import os
from typing import Any

from mle_gym.sandbox.base import SandboxError

#: The runtime of every docker sandbox whose options name none (e.g. "runsc" for a whole
#: batch or harness run); unset or empty: the engine's default runtime.
RUNTIME_VARIABLE = "MLE_GYM_DOCKER_RUNTIME"
#: What registers gVisor with a Debian engine (.ci/docker-up.sh does it).
_HOW_TO_REGISTER = (
    "For gVisor: `apt-get install runsc` (on Debian bookworm `-t bookworm-backports`: "
    "bookworm's own runsc breaks `ls`), add "
    '"runtimes": {"runsc": {"path": "/usr/bin/runsc", "runtimeArgs": ["--network=none"]}} '
    "to /etc/docker/daemon.json and reload the engine (`kill -HUP $(pidof dockerd)`); "
    ".ci/docker-up.sh does both"
)


def chosen_runtime(runtime: str | None) -> str | None:
    """`runtime`, else $MLE_GYM_DOCKER_RUNTIME, else None (the engine's default)."""
    return runtime or os.environ.get(RUNTIME_VARIABLE) or None


def registration(client: Any, runtime: str) -> dict[str, Any]:
    """How the engine runs `runtime` ({"path": ..., "runtimeArgs": [...]}); a clear error
    when it has no such runtime."""
    known = client.info().get("Runtimes") or {}
    if runtime not in known:
        raise SandboxError(
            f"the Docker engine has no runtime named {runtime!r} (it has: "
            f"{', '.join(sorted(known)) or 'none listed'}). {_HOW_TO_REGISTER}"
        )
    return dict(known[runtime] or {})


def is_gvisor(registered: dict[str, Any]) -> bool:
    """Whether the registration runs gVisor, whose agent has no process or uid on the host
    and reaches no host socket."""
    return os.path.basename(str(registered.get("path") or "")) == "runsc"


def check_network(runtime: str | None, registered: dict[str, Any], network: bool) -> None:
    """Refuse `network=True` on a runtime registered without a network of its own (gVisor's
    `--network=none`: loopback only), which would otherwise fail each connection silently."""
    if network and runtime and "--network=none" in (registered.get("runtimeArgs") or []):
        raise SandboxError(
            f"network=True, but the engine runs {runtime!r} with --network=none (no network "
            "inside, whatever Docker attaches). Register a runtime without that argument for "
            "episodes that need the network, or leave network off"
        )
