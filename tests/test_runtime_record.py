"""Each episode records the Python and library versions its agent's code runs with, as the
code itself sees them, on both backends (results are comparable only under one runtime)."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym

ENV_ID = "mle/sklearn-digits-v0"
PRINT_VERSIONS = (
    "python3 -c 'import platform, numpy, pandas, sklearn; "
    "print(platform.python_version(), numpy.__version__, pandas.__version__, sklearn.__version__)'"
)


def test_info_names_the_runtime_the_agent_s_code_runs_with(mle_home: Path, backend: str) -> None:
    with gym.make(ENV_ID, backend=backend) as env:
        _, info = env.reset(seed=0)
        assert info["sandbox"]["runtime"] == {}  # nothing started yet
        observation, *_, info = env.step(PRINT_VERSIONS)
        runtime = info["sandbox"]["runtime"]
        names = ("python", "numpy", "pandas", "scikit-learn")
        assert observation.split() == [runtime[n] for n in names], (observation, runtime)
        *_, info = env.step({"tool": "submit"})
        assert info["sandbox"]["runtime"] == runtime
