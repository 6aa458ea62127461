"""The package works with its runtime dependencies alone: optional packages stay optional."""

from __future__ import annotations

import subprocess
import sys

OPTIONAL = ["PIL", "kaggle", "ray", "aide", "minisweagent", "openhands"]


def test_import_and_registry_need_no_optional_package() -> None:
    code = (
        "import sys\n"
        f"for name in {OPTIONAL!r}: sys.modules[name] = None\n"
        "import gymnasium as gym, mle_gym\n"
        "from mle_gym.competitions import all_competitions\n"
        "print(len(all_competitions()), len([e for e in gym.registry if e.startswith('mle/')]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    count, registered = map(int, out.stdout.split())
    assert count == registered >= 24
