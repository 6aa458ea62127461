"""What a governed sandbox may reach through its egress proxy: allow and deny rules, and
the addresses no rule can open.

A rule is `HOST` or `HOST/PATH`. `HOST` matches that host exactly; `*.HOST` matches its
subdomains (not HOST itself); `*` matches every host. A path rule matches plain-HTTP
requests whose path starts with PATH; an HTTPS tunnel shows the proxy its host only, so a
path rule never matches one (deny the host to keep HTTPS off it). Deny rules win; with an
allow list, whatever no allow rule matches is refused. Each verdict names its rule, so the
agent's 403 and the log say why.

Whatever the rules say, the proxy never connects to the host itself or its neighbours:
loopback, private and shared ranges, link-local and cloud metadata addresses, multicast and
reserved space (`forbidden_address`).
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mle_gym.sandbox.routes import Network

#: Named policies that need nothing but their name.
PRESETS: dict[str, dict[str, list[str]]] = {
    # pip install: the Python package index's pages and its file host, nothing else
    "package-index": {"allow": ["pypi.org", "files.pythonhosted.org"], "deny": []},
    # everything the address guard leaves reachable
    "open": {"allow": [], "deny": []},
}
#: Ports the proxy connects to: web traffic, nothing else (ssh, databases, mail).
PORTS = frozenset({80, 443})
#: Ranges never dialled, whatever the policy: the host's own services and its network's.
#: (Documentation ranges are left out: some networks route their mirrors through them.)
FORBIDDEN_NETWORKS = tuple(
    ipaddress.ip_network(text)
    for text in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",  # shared address space; Alibaba's metadata is 100.100.100.200
        "127.0.0.0/8",
        "169.254.0.0/16",  # link-local: cloud metadata and credentials at 169.254.169.254
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "224.0.0.0/3",  # multicast and reserved
        "::/127",
        "::ffff:0:0/96",  # IPv4-mapped: judged as the IPv4 address instead
        "64:ff9b::/96",
        "fc00::/7",  # unique local, AWS's metadata fd00:ec2::254 among them
        "fe80::/10",
        "ff00::/8",
    )
)


class PolicyError(ValueError):
    """A network policy that cannot be read (the message says what to write instead)."""


def forbidden_address(address: str, host_networks: Iterable[Network] = ()) -> str | None:
    """Why the proxy must not connect to `address` (None: it may): one of the host's own
    addresses (`host_networks`: `routes.local_destinations()`), or a range in
    `FORBIDDEN_NETWORKS`."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if any(ip.version == network.version and ip in network for network in host_networks):
        return f"{ip} is one of the host's own addresses"
    for network in FORBIDDEN_NETWORKS:
        if ip.version == network.version and ip in network:
            return f"{ip} is in {network}, which is never reached (the host and its network)"
    return None


@dataclass(frozen=True)
class Rule:
    """One allow or deny entry, as the user wrote it."""

    text: str
    host: str
    path: str | None

    @classmethod
    def parse(cls, text: str) -> Rule:
        if not isinstance(text, str) or not text.strip():
            raise PolicyError(f"a rule must be a host or host/path, got {text!r}")
        cleaned = text.strip().lower()
        for scheme in ("http://", "https://"):
            cleaned = cleaned.removeprefix(scheme)
        host, slash, path = cleaned.partition("/")
        malformed = not host or " " in host or ":" in host or "*" in host.removeprefix("*.")
        if malformed and host != "*":
            raise PolicyError(
                f"a rule's host must be a name, *.name or *, got {text!r} "
                "(ports are not matched: the proxy connects to 80 and 443 only)"
            )
        return cls(text.strip(), host, f"/{path}" if slash else None)

    def matches(self, host: str, path: str | None) -> bool:
        if self.host == "*":
            host_matches = True
        elif self.host.startswith("*."):
            host_matches = host.endswith(self.host[1:])
        else:
            host_matches = host == self.host
        if not host_matches:
            return False
        if self.path is None:
            return True
        return path is not None and path.startswith(self.path)


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    #: The rule that decided, in the words of the log and the 403.
    rule: str


@dataclass(frozen=True)
class EgressPolicy:
    """A named set of rules (`name` is what the integrity record shows)."""

    name: str
    allow: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    #: Why each preset-made rule is there, for the 403 (rule text -> reason).
    reasons: Mapping[str, str] = field(default_factory=dict)

    def judge(self, host: str, path: str | None) -> Verdict:
        host = host.lower().rstrip(".")
        for rule in self.deny:
            if rule.matches(host, path):
                why = self.reasons.get(rule.text)
                return Verdict(False, f"deny {rule.text!r}" + (f" ({why})" if why else ""))
        if not self.allow:
            return Verdict(True, "no allow list")
        for rule in self.allow:
            if rule.matches(host, path):
                return Verdict(True, f"allow {rule.text!r}")
        listed = ", ".join(rule.text for rule in self.allow)
        return Verdict(False, f"not on the allow list of policy {self.name!r} ({listed})")

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "allow": [rule.text for rule in self.allow],
            "deny": [rule.text for rule in self.deny],
        }


def _rules(value: Any, key: str) -> tuple[Rule, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise PolicyError(f"the policy's {key!r} must be a list of hosts, got {value!r}")
    return tuple(Rule.parse(item) for item in value)


def make_policy(
    spec: str | Mapping[str, Any] | None,
    presets: Mapping[str, Mapping[str, Any]] | None = None,
) -> EgressPolicy:
    """The policy for `network_policy=`: a preset's name (`PRESETS`, or one of `presets`,
    which the caller builds, e.g. per competition), a path to a JSON file holding a dict,
    or a dict {"preset": NAME?, "allow": [...], "deny": [...]} whose lists add to the
    preset's. None is the "open" preset."""
    known = {**PRESETS, **(presets or {})}
    if spec is None:
        spec = "open"
    if isinstance(spec, str):
        if spec in known:
            spec = {"preset": spec}
        elif spec.endswith(".json") or Path(spec).is_file():
            try:
                spec = json.loads(Path(spec).read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise PolicyError(f"could not read the network policy file {spec}: {exc}") from exc
        else:
            raise PolicyError(
                f"unknown network policy {spec!r}: name a preset ({', '.join(sorted(known))}), "
                'a JSON file, or pass {"allow": [...], "deny": [...]}'
            )
    if not isinstance(spec, Mapping):
        raise PolicyError(f"a network policy must be a name or a dict, got {spec!r}")
    unknown = set(spec) - {"preset", "allow", "deny"}
    if unknown:
        raise PolicyError(
            f"a network policy has keys preset, allow and deny; not {sorted(unknown)}"
        )
    preset_name = spec.get("preset")
    base: Mapping[str, Any] = {}
    if preset_name is not None:
        if preset_name not in known:
            raise PolicyError(
                f"unknown preset {preset_name!r}; choose one of {', '.join(sorted(known))}"
            )
        base = known[preset_name]
    allow = _rules(base.get("allow"), "allow") + _rules(spec.get("allow"), "allow")
    deny = _rules(base.get("deny"), "deny") + _rules(spec.get("deny"), "deny")
    added = spec.get("allow") or spec.get("deny")
    name = str(preset_name or "custom") + ("+custom" if preset_name and added else "")
    return EgressPolicy(name, allow, deny, dict(base.get("reasons") or {}))
