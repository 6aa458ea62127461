"""One episode's governed network (`network="proxy"`): its egress proxy, the sandbox's
route to it, and the policy it judges by.

Before the sandbox starts: a host directory of this process's own gets the relay script,
the proxy's unix socket and, where the host has one, its certificate bundle (a network
that inspects TLS signs with a CA only that bundle holds); the directory is shown
read-only at `EGRESS_DIR`, and the proxy variables point the sandbox's clients at the relay.
Once the sandbox runs: only its agent may connect, and the relay listens on the sandbox's
127.0.0.1:`PROXY_PORT`. The sandbox itself keeps no network.

The "competition" preset is built here, from the user's MLE-bench checkout: the
competition's Kaggle pages and the notebooks its kernels.txt lists, and Kaggle's hosts as a
whole for HTTPS (which hides the path from the proxy).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mle_gym.sandbox.base import ReadOnlyBind, Sandbox
from mle_gym.sandbox.egress_policy import EgressPolicy, PolicyError, make_policy
from mle_gym.sandbox.egress_proxy import EgressProxy
from mle_gym.sandbox.scratch import owned_dir
from mle_gym.sandbox.socket_route import RELAY_NAME, open_route, reopen_note

#: Inside the sandbox: the relay, the proxy's socket, the CA bundle; the relay's port.
EGRESS_DIR = "/opt/mle-gym-egress"
PROXY_PORT = 3128
_SOCKET = "egress.sock"
#: The log's name in the episode's host folder (and in a batch's episode folder).
NETWORK_LOG = "network.jsonl"
_CA_NAME = "ca-certificates.crt"
#: The host's trust store, offered to the sandbox's clients when it exists.
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
#: Tests only: host name -> (address, port) dialled past the address guard, so loopback
#: servers can stand in for the internet. Empty in every real episode.
test_upstreams: dict[str, tuple[str, int]] = {}
#: Kaggle's hosts, denied whole by the "competition" preset (HTTPS hides their paths).
_KAGGLE_HOSTS = ("kaggle.com", "*.kaggle.com")


def competition_preset(competition_id: str, mlebench_dir: str | Path | None) -> dict[str, Any]:
    """The "competition" preset's deny list: the competition's Kaggle pages and the
    notebooks in the checkout's kernels.txt (as plain-HTTP path rules), then Kaggle's hosts."""
    from mle_gym.envs.mlebench_task import MLEBenchNotFound, find_mlebench_dir

    try:
        root = find_mlebench_dir(mlebench_dir)
    except MLEBenchNotFound as exc:
        message = f"the 'competition' network policy reads MLE-bench's lists: {exc}"
        raise PolicyError(message) from exc
    kernels_file = root / "mlebench" / "competitions" / competition_id / "kernels.txt"
    kernels = kernels_file.read_text().split() if kernels_file.is_file() else []
    deny = [
        f"{host}/{page}/{competition_id}"
        for host in ("www.kaggle.com", "kaggle.com")
        for page in ("competitions", "c")
    ]
    deny += [f"www.kaggle.com/code/{kernel}" for kernel in kernels]
    deny += [f"www.kaggle.com/{kernel}" for kernel in kernels]
    reasons = {rule: f"a page of {competition_id} or one of its notebooks" for rule in deny}
    for host in _KAGGLE_HOSTS:
        reasons[host] = "Kaggle, where this competition's solutions are; HTTPS hides the path"
    return {"deny": [*deny, *_KAGGLE_HOSTS], "reasons": reasons}


def policy_for(
    spec: str | Mapping[str, Any] | None, competition_id: str, mlebench_dir: str | Path | None
) -> EgressPolicy:
    """`network_policy=` read, with the per-competition preset built when it is named."""
    name = spec.get("preset") if isinstance(spec, Mapping) else spec
    presets = {}
    if name == "competition":
        presets["competition"] = competition_preset(competition_id, mlebench_dir)
    return make_policy(spec, presets)


def proxy_variables(port: int, ca_bundle: str | None) -> dict[str, str]:
    """What points the sandbox's clients (pip, curl, requests, git, urllib) at the relay,
    and at the host's CA bundle where one is offered."""
    url = f"http://127.0.0.1:{port}"
    variables = {name: url for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")}
    variables |= {"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    if ca_bundle is not None:
        for name in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT", "CURL_CA_BUNDLE"):
            variables[name] = ca_bundle
        variables["GIT_SSL_CAINFO"] = ca_bundle
    return variables


def not_started_summary(policy: EgressPolicy) -> dict[str, Any]:
    """`info["network"]` before the sandbox (and its proxy) starts: the same keys, nothing
    reached yet, no log."""
    figures = ("requests", "denied", "distinct_hosts", "bytes_sent", "bytes_received")
    return {
        "mode": "proxy",
        "policy": policy.name,
        **dict.fromkeys(figures, 0),
        "hosts": [],
        "refused_connections": 0,
        "log": None,
        "log_lines_dropped": 0,
    }


class EgressSetup:
    """The proxy and its directory for one episode; `close()` removes both (the log stays)."""

    def __init__(self, policy: EgressPolicy, log_path: Path) -> None:
        from mle_gym.sandbox import socket_relay as relay

        self._dir = owned_dir("egress")
        shutil.copyfile(relay.__file__, self._dir / RELAY_NAME)
        self.ca_bundle: str | None = None
        if HOST_CA_BUNDLE.is_file():
            shutil.copyfile(HOST_CA_BUNDLE, self._dir / _CA_NAME)
            (self._dir / _CA_NAME).chmod(0o644)
            self.ca_bundle = f"{EGRESS_DIR}/{_CA_NAME}"
        self.proxy = EgressProxy(
            self._dir / _SOCKET, log_path, policy, test_upstreams=test_upstreams
        )

    def start(self) -> ReadOnlyBind:
        """Start the proxy; the directory the sandbox must show."""
        self.proxy.start()
        return ReadOnlyBind(self._dir, EGRESS_DIR)

    def variables(self) -> dict[str, str]:
        return proxy_variables(PROXY_PORT, self.ca_bundle)

    def connect(self, sandbox: Sandbox) -> None:
        """Let the sandbox's agent (and nobody else) reach the proxy; start the relay unless
        one listens already."""
        open_route(sandbox, self.proxy, PROXY_PORT, EGRESS_DIR, "the network proxy's relay")

    def reconnect(self, sandbox: Sandbox) -> str:
        """After a new shell: admit it and start the relay again, or a note saying why not."""
        return reopen_note(lambda: self.connect(sandbox))

    def summary(self) -> dict[str, Any]:
        return {"mode": "proxy", **self.proxy.summary()}

    def close(self) -> None:
        self.proxy.close()
        self.proxy.close_log()
        shutil.rmtree(self._dir, ignore_errors=True)
