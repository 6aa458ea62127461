"""Which Python and libraries the agent's code runs with in a sandbox.

The same code scores differently under different library versions (the local backend runs
the host's Python environment, the docker image its own), so each episode records the
runtime it had: a result is comparable with another only under the same runtime. The probe
reads package metadata (nothing is imported), with the `python3` the agent's shell finds: the
versions of the libraries that move scores, and `packages`, a digest of every installed
distribution's name and version (two runtimes with the same digest have the same packages;
a checkpoint resumes only under the runtime it was taken in).
"""

from __future__ import annotations

import json
import sys
import threading

from mle_gym.sandbox.base import Sandbox

#: The libraries whose versions move scores; absent ones are left out.
LIBRARIES = (
    "numpy", "pandas", "scikit-learn", "scipy", "lightgbm", "xgboost", "catboost", "torch",
)  # fmt: skip
_PROBE = (
    "python3 -c 'import hashlib, importlib.metadata as m, json, platform\n"
    "def version(name):\n"
    "    try:\n"
    "        return m.version(name)\n"
    "    except Exception:\n"
    "        return None\n"
    f"found = {{n: version(n) for n in {json.dumps(LIBRARIES)}}}\n"  # no single quotes
    'every = sorted({(d.metadata.get("Name") or "").lower() + "==" + d.version\n'
    "                for d in m.distributions()})\n"
    "packages = hashlib.sha256(chr(10).join(every).encode()).hexdigest()[:16]\n"
    'print(json.dumps({"python": platform.python_version(), '
    '**{n: v for n, v in found.items() if v}, "packages": packages}))\' 2>/dev/null'
)


#: Probed runtimes, per kind of sandbox and the image or Python it runs: the same for every
#: episode of a process, so only its first start pays for the probe (a Python start-up).
_probed: dict[tuple[str, str], dict[str, str]] = {}
#: One lock per key: of many sandboxes starting at once (a thousand envs stepped together),
#: one probes and the others wait for its answer instead of each probing too.
_probing: dict[tuple[str, str], threading.Lock] = {}
_probing_guard = threading.Lock()


def runtime_versions(sandbox: Sandbox, timeout: float = 60.0) -> dict[str, str]:
    """{"python": "3.11.7", "numpy": "1.26.4", ..., "packages": "<digest>"} as the sandbox's
    `python3` sees them; {} when it has none (or the probe fails: the episode goes on
    without the record)."""
    described = sandbox.describe()
    where = described.get("image") or described.get("agent_python") or sys.prefix
    key = (type(sandbox).__name__, str(where))
    with _probing_guard:
        lock = _probing.setdefault(key, threading.Lock())
    with lock:
        if key not in _probed:
            found = _probe(sandbox, timeout)
            if found is None:
                return {}
            _probed[key] = found
        return dict(_probed[key])


def _probe(sandbox: Sandbox, timeout: float) -> dict[str, str] | None:
    try:
        result = sandbox.run(_PROBE, timeout)
        found = json.loads(result.output.strip().splitlines()[-1])
    except Exception:  # a record, never a reason for a start to fail
        return None
    if not isinstance(found, dict):
        return None
    return {str(k): str(v) for k, v in found.items()}
