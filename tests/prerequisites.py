"""One rule for tests that need something a plain clone lacks.

The full suite needs pieces that are not in the repository: `../shared` next to the clone
(the real spaceship-titanic files, the 82 leaderboards, competitions.csv and MLE-bench's
checksums) and a Python 3.12 venv with OpenHands for the OpenHands tests. On a developer's
machine a test that lacks one is skipped, with a reason that says what is missing and how to
get it; with CI=true (the CI machine has everything) the same test fails instead, so nothing
is silently left out there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SPACESHIP_RAW = SHARED / "data" / "spaceship-titanic" / "raw"
IN_CI = os.environ.get("CI") == "true"
#: $MLE_GYM_HOME as the session began (a test's own MLE_GYM_HOME must not move the setup's).
SETUP_CACHE = Path(os.environ.get("MLE_GYM_HOME") or Path.home() / ".cache" / "mle-gym")


def setup_piece(variable: str, name: str) -> Path:
    """Where .ci/cache-dirs.sh puts one of the setup's large pieces: `$variable`, else
    `name` under $MLE_GYM_HOME."""
    configured = os.environ.get(variable)
    return Path(configured).expanduser() if configured else SETUP_CACHE.expanduser() / name


def require(present: bool, missing: str, *, module: bool = False) -> None:
    """Skip (outside CI) or fail (CI=true) when `present` is false; `missing` says what."""
    if present:
        return
    if IN_CI:
        pytest.fail(f"CI=true but {missing}", pytrace=False)
    pytest.skip(f"{missing} (CI=true makes this a failure)", allow_module_level=module)


def require_shared(*parts: str, module: bool = False) -> Path:
    """A path under ../shared, the project's data kept next to the clone."""
    path = SHARED.joinpath(*parts)
    require(
        path.exists(),
        f"{path} is missing: these tests need the project's shared data in ../shared "
        "(real Kaggle files, leaderboards, competitions.csv) next to the clone",
        module=module,
    )
    return path


def require_openhands_venv(python: Path) -> None:
    """The OpenHands SDK needs Python >= 3.12, in a venv of its own."""
    require(
        python.exists(),
        f"no Python 3.12 venv with OpenHands at {python}: run bash .ci/setup.d/agents.sh "
        "(or set MLE_GYM_OPENHANDS_VENV)",
    )


def rl_hub_venv(name: str) -> Path:
    """The venv .ci/setup.d/rl_hubs.sh makes for an RL hub whose pins conflict with the `ci`
    extra ("nemo-gym", "openenv"): $MLE_GYM_<NAME>_VENV, else venv-<name> under $MLE_GYM_HOME;
    a test that needs it skips (or fails under CI=true) when it is missing."""
    variable = f"MLE_GYM_{name.upper().replace('-', '_')}_VENV"
    venv = setup_piece(variable, f"venv-{name}")
    require(
        (venv / "bin" / "python").exists(),
        f"no venv with {name} at {venv}: run bash .ci/setup.d/rl_hubs.sh (or set {variable})",
    )
    return venv
