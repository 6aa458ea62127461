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


@pytest.mark.parametrize(
    ("module", "heavy"),
    [
        ("mle_gym.evaluation", ("gymnasium", "mle_gym.sandbox", "mle_gym.envs.snapshots")),
        ("mle_gym.export.harbor", ("docker", "mle_gym.sandbox.image")),
    ],
)
def test_shared_names_come_without_their_owners_weight(module: str, heavy: tuple[str, ...]) -> None:
    """The snapshot index's file name and the default image's tag are imported, not copied,
    from modules light enough that grading a file off the env, or exporting Harbor tasks,
    loads no env, sandbox or Docker SDK for them."""
    script = (
        f"import json, sys\nimport {module}\n"
        f"print(json.dumps([m for m in {list(heavy)!r} if m in sys.modules]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


def test_the_batch_verb_writes_its_report_through_the_library() -> None:
    """`mle-gym run` keeps the run's report with `mle_gym.analysis.report`, not by reaching
    into another verb's module (the report verb only parses options and renders)."""
    found = _imported_modules(PACKAGE / "cli")
    assert any(w.startswith("mle_gym/cli/batch.py") for w, _ in found)
    assert [
        f"{where} imports {name}"
        for where, name in found
        if where.startswith("mle_gym/cli/batch.py") and name.startswith("mle_gym.cli.report")
    ] == []
