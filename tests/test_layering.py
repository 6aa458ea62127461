"""The import arrows of DESIGN.md hold: competitions -> formats <- grading, grading loads
no gym, batch -> runs <- analysis, reading a run loads no gym or sandbox, mle_gym never
imports the baselines (they register into it), batch reads no analysis, and importing
mle_gym still registers the envs in either import order."""

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
    assert (PACKAGE / folder).is_dir(), f"no package {folder}: the check would pass vacuously"
    return [
        f"{where} imports {name}"
        for where, name in _imported_modules(PACKAGE / folder)
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    ]


def test_mle_gym_never_imports_the_baselines() -> None:
    """The baselines are a consumer: they join mle_gym's policy registry through their entry
    points (setup.cfg), and the library below them never reaches up into them."""
    assert _offending(".", ("mle_gym_baselines", "baselines")) == []


@pytest.mark.parametrize("forbidden", ["mle_gym.analysis", "mle_gym.cli"])
def test_batch_imports_no_layer_above(forbidden: str) -> None:
    assert _offending("batch", (forbidden,)) == []


@pytest.mark.parametrize(
    ("runner", "other"), [("episode", "harness_episode"), ("harness_episode", "episode")]
)
def test_the_batch_runners_do_not_import_each_other(runner: str, other: str) -> None:
    """The policy and harness runners share batch/runners.py; neither reaches into the other."""
    target = f"mle_gym.batch.{other}"
    found = [
        f"{where} imports {name}"
        for where, name in _imported_modules(PACKAGE / "batch")
        if where.startswith(f"mle_gym/batch/{runner}.py:")
        and (name == target or name.startswith(target + "."))
    ]
    assert found == []


def test_data_imports_no_gym_and_no_sandbox() -> None:
    forbidden = ("gymnasium", "mle_gym.envs", "mle_gym.sandbox", "mle_gym.batch")
    assert _offending("data", forbidden) == []


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


@pytest.mark.parametrize(
    "forbidden",
    ["mle_gym.batch", "mle_gym.analysis", "mle_gym.envs", "mle_gym.sandbox", "gymnasium"],
)
def test_runs_import_no_layer_above(forbidden: str) -> None:
    """The run records sit below both the batch that writes them and the analysis that
    reads them."""
    assert _offending("runs", (forbidden,)) == []


@pytest.mark.parametrize("forbidden", ["mle_gym.batch", "mle_gym.envs", "mle_gym.sandbox"])
def test_analysis_imports_no_batch_env_or_sandbox(forbidden: str) -> None:
    """Analysis reads runs through the records layer, never through the code that ran them."""
    assert _offending("analysis", (forbidden,)) == []


def _top_package_imports(folder: str) -> list[str]:
    """`import mle_gym` or `from mle_gym import NAME` where NAME is no module of the
    package: both run (and depend on) the top package's own code."""
    found = []
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name == "mle_gym"]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "mle_gym":
                names = [
                    a.name
                    for a in node.names
                    if not (PACKAGE / a.name).is_dir() and not (PACKAGE / f"{a.name}.py").is_file()
                ]
            else:
                continue
            found.extend(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {n}" for n in names)
    return found


def test_grading_imports_not_the_top_package() -> None:
    """Grading sits low; the top package (registration, the public entry points) sits above
    everything, so grading reads the version from mle_gym.version."""
    assert _top_package_imports("grading") == []


def test_the_top_package_check_sees_a_name_from_the_top_package() -> None:
    """The check above would pass vacuously if it missed `from mle_gym import __version__`."""
    assert any(" __version__" in found for found in _top_package_imports("export"))


@pytest.mark.parametrize(
    "forbidden",
    ["mle_gym.envs", "mle_gym.tools", "mle_gym.grading", "mle_gym.competitions", "mle_gym.batch",
     "mle_gym.harness", "gymnasium"],
)  # fmt: skip
def test_checkpoints_import_only_the_sandbox_layer(forbidden: str) -> None:
    """The checkpoint store and workspace capture sit on the sandbox layer, so the env and
    a batch can both use them."""
    assert _offending("checkpoints", (forbidden,)) == []


@pytest.mark.parametrize(
    "forbidden",
    ["mle_gym.envs", "mle_gym.integrations", "mle_gym.harness", "mle_gym.grading", "gymnasium"],
)
def test_tools_import_no_layer_above(forbidden: str) -> None:
    """The table of tools runs over a sandbox and a context the env gives it: adapters and
    the env read the table, never the other way round."""
    assert _offending("tools", (forbidden,)) == []


def test_the_scan_finds_an_import_inside_a_function() -> None:
    """The check above would pass vacuously if the scanner missed nested imports."""
    found = _imported_modules(PACKAGE / "competitions" / "catalog")
    assert any(name.startswith("mle_gym.formats.") for _, name in found)


def _loaded_after(code: str) -> list[str]:
    """The gymnasium, env and sandbox modules loaded in a fresh interpreter after `code`."""
    script = code + (
        "\nimport json, sys\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'gymnasium'"
        " or m.startswith(('mle_gym.envs', 'mle_gym.sandbox')))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_importing_grading_loads_no_gym() -> None:
    assert _loaded_after("import mle_gym.grading") == []


def test_reading_a_run_loads_no_gym_or_sandbox(tmp_path: Path) -> None:
    """`import mle_gym.analysis` and reading a run directory, its records, results,
    trajectories and provenance, through the records layer."""
    from mle_gym.runs.jsonfile import write_json
    from mle_gym.runs.layout import BATCH_FILE, STATUS_FILE, TRAJECTORY_FILE
    from mle_gym.runs.result import EpisodeResult, write_result

    episode = tmp_path / "episodes" / "sklearn-digits" / "seed-0"
    episode.mkdir(parents=True)
    write_json(tmp_path / BATCH_FILE, {"settings": {}, "competitions": [], "seeds": [0]})
    write_json(episode / STATUS_FILE, {"state": "done", "attempt": 1})
    (episode / TRAJECTORY_FILE).write_text('{"event": "reset"}\n')
    report = {"score": 0.9, "valid_submission": True, "gold_medal": True, "any_medal": True}
    write_result(
        episode, report, EpisodeResult.from_report(report, competition_id="sklearn-digits", seed=0)
    )
    code = (
        "import mle_gym.analysis\n"
        "from pathlib import Path\n"
        "from mle_gym.runs import read_result, read_run, read_trajectory\n"
        "from mle_gym.runs.provenance import read_invocations\n"
        f"run = read_run(Path({str(tmp_path)!r}))\n"
        "record, = run.records\n"
        "assert run.graded(record) and record.grade['medal'] == 'gold', record\n"
        "result = read_result(run.episode_dir(record))\n"
        "assert result.valid and result.score == 0.9, result\n"
        "assert list(read_trajectory(run.episode_dir(record))) == [{'event': 'reset'}]\n"
        "assert read_invocations(run.root) == []\n"
    )
    assert _loaded_after(code) == []
    assert _loaded_after("import mle_gym.batch.spec") == []


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
        ("mle_gym.evaluation", ("gymnasium", "mle_gym.sandbox", "mle_gym.envs")),
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
