"""`import mle_gym` and `mle-gym --help` load no heavy library, and envs still make.

pandas, scikit-learn, scipy and rich cost seconds together; they load when an env is made,
a competition prepared or a table printed. benchmarks/import_time.py gives the figures.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("pandas", "sklearn", "scipy", "rich", "docker")

#: Prints, for each heavy library that gets imported, the mle_gym module that imported it.
_WATCH = f"""
import sys, traceback
seen = {{}}
class Watch:
    def find_spec(self, name, path, target=None):
        top = name.split(".")[0]
        if top in {HEAVY!r} and top not in seen:
            frames = [f for f in traceback.extract_stack() if "/mle_gym/" in f.filename]
            seen[top] = frames[-1].filename.split("/mle_gym/")[-1] if frames else "?"
        return None
sys.meta_path.insert(0, Watch())
"""


def _heavy_imports(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", _WATCH + code + "\nprint(seen)"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return result.stdout.strip().splitlines()[-1]


def _module_level_heavy_imports() -> list[str]:
    """Modules imported at registration (the competitions package) that import a heavy
    library at module level: where to look when the test below fails."""
    root = Path(__file__).resolve().parents[1] / "mle_gym" / "competitions"
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            heavy = [n for n in names if n.split(".")[0] in HEAVY or "grading.metrics." in n]
            if heavy:
                found.append(f"{path.relative_to(root.parent)}:{node.lineno} {', '.join(heavy)}")
    return found


def test_import_mle_gym_loads_no_heavy_library() -> None:
    loaded = _heavy_imports("import mle_gym")
    assert loaded == "{}", (
        f"import mle_gym loaded {loaded}; import these inside functions (or from mle_gym.lazy): "
        + "; ".join(_module_level_heavy_imports())
    )


def test_cli_help_loads_no_heavy_library() -> None:
    code = "import mle_gym.cli\ntry:\n    mle_gym.cli.main(['--help'])\nexcept SystemExit: pass"
    assert _heavy_imports(code) == "{}"


@pytest.mark.parametrize("env_id", ["mle/sklearn-digits-v0", "mle_gym:mle/sklearn-digits-v0"])
def test_envs_still_make_in_a_fresh_process(env_id: str, tmp_path: Path) -> None:
    prefix = "" if env_id.startswith("mle_gym:") else "import mle_gym\n"
    code = (
        f"{prefix}import gymnasium as gym\n"
        f"env = gym.make({env_id!r})\n"
        "print(type(env.unwrapped).__name__)\n"
        "env.close()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={"MLE_GYM_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "CompetitionEnv"


def test_lazy_metrics_still_resolve_every_competition_metric() -> None:
    from mle_gym.competitions import all_competitions
    from mle_gym.grading.metrics import METRICS

    missing = {c.id: c.metric for c in all_competitions() if c.metric not in METRICS}
    assert not missing
