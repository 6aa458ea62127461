"""The import arrows of DESIGN.md hold: competitions -> formats <- grading, grading loads
no gym, and importing mle_gym still registers the envs in either import order."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mle_gym"


def _imported_modules(folder: Path) -> list[tuple[str, str]]:
    """(file:line, module) for every import statement under `folder`, at any depth (the
    catalog imports inside functions to keep registration cheap)."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
            found.extend((where, name) for name in names)
    return found


def _offending(folder: str, forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{where} imports {name}"
        for where, name in _imported_modules(PACKAGE / folder)
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    ]


def test_no_competition_module_imports_grading() -> None:
    assert _offending("competitions", ("mle_gym.grading",)) == []


@pytest.mark.parametrize(
    "forbidden",
    ["mle_gym.grading", "mle_gym.competitions", "mle_gym.envs", "mle_gym.sandbox", "gymnasium"],
)
def test_formats_import_no_layer_above(forbidden: str) -> None:
    assert _offending("formats", (forbidden,)) == []


def test_envs_import_no_harness() -> None:
    """The harness runs an env's sandbox for a whole scaffold; envs reach the socket plumbing
    both need (relay, peer checks, bounded server) in the sandbox layer, not the harness."""
    assert _offending("envs", ("mle_gym.harness",)) == []


@pytest.mark.parametrize(
    "forbidden",
    ["mle_gym.envs", "mle_gym.harness", "mle_gym.grading", "mle_gym.competitions", "gymnasium"],
)
def test_sandbox_imports_no_layer_above(forbidden: str) -> None:
    assert _offending("sandbox", (forbidden,)) == []


def test_the_scan_finds_an_import_inside_a_function() -> None:
    """The check above would pass vacuously if the scanner missed nested imports."""
    found = _imported_modules(PACKAGE / "competitions" / "catalog")
    assert any(name.startswith("mle_gym.formats.") for _, name in found)


def _loaded_after(code: str) -> list[str]:
    script = code + (
        "\nimport json, sys\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'gymnasium'"
        " or m.startswith('mle_gym.envs'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_importing_grading_loads_no_gym() -> None:
    assert _loaded_after("import mle_gym.grading") == []


@pytest.mark.parametrize(
    "imports",
    [
        "import mle_gym\nimport gymnasium as gym",
        "import gymnasium as gym\nimport mle_gym",
        "import gymnasium.spaces\nimport mle_gym.grading\nimport gymnasium as gym",
    ],
)
def test_the_envs_are_registered_in_either_import_order(imports: str) -> None:
    script = (
        f"{imports}\nprint(sum(k.startswith('mle/') for k in gym.registry),"
        " gym.spec('mle/spaceship-titanic-v0').id)"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    count, env_id = result.stdout.split()
    from mle_gym.competitions import all_competitions

    assert int(count) == len(all_competitions()) and env_id == "mle/spaceship-titanic-v0"


def _reaches_inside(folder: str, names: tuple[str, ...]) -> list[str]:
    """file:line of every attribute read of one of `names`, or of a private attribute of an
    `episode`, under `folder`."""
    found = []
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Attribute):
                continue
            owner = node.value.id if isinstance(node.value, ast.Name) else None
            if node.attr in names or (owner == "episode" and node.attr.startswith("_")):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} .{node.attr}")
    return found


def test_the_harness_drives_the_episode_through_its_public_api() -> None:
    """harness -> envs: the harness uses the Episode's API (start, step, stop_processes,
    command_log, keep_code), never the gym wrapper's inside or the sandbox's own plumbing."""
    assert _reaches_inside("harness", ("unwrapped", "kill_processes", "logs_dir")) == []


def test_the_env_options_have_one_list() -> None:
    """gym.make, the CLI, the adapters, the harness and the provenance take the option names
    from EnvConfig: a consumer's list is a tagged subset of it."""
    from mle_gym.batch.provenance import effective_env
    from mle_gym.envs.config import ADAPTER, RECORDED, EnvConfig, option_names
    from mle_gym.integrations.episode import MAKE_OPTIONS

    assert set(MAKE_OPTIONS) == set(option_names(ADAPTER)) < set(option_names())
    assert list(effective_env({})) == list(option_names(RECORDED))
    assert effective_env({"max_steps": 3})["max_steps"] == 3
    assert effective_env({})["time_limit"] == EnvConfig().time_limit
