"""mle_gym's policy registry: a package outside mle_gym adds a policy through the
`mle_gym.policies` entry-point group (here a distribution written into a temporary folder on
the path) and `mle-gym run --policy NAME` finds it, in a batch's worker too; the baselines
join the same way; names are listed without importing any policy."""

from __future__ import annotations

import configparser
import json
import os
import subprocess
import sys
import textwrap
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from mle_gym.policies import (
    ENTRY_POINT_GROUP,
    UnknownPolicy,
    make_policy,
    policy_names,
    register_policy,
    unregister_policy,
)
from tests.conftest import REPO, require_bwrap

OUTSIDE = "outside-copy"
#: A policy of an outside package: copies the sample submission, then submits.
MODULE = """
class CopySample:
    def __init__(self, **options):
        self.options = options
        self.plan = None

    def reset(self):
        self.plan = None

    def act(self, observation, info):
        if self.plan is None:
            paths = info["paths"]
            copy = f"cp {paths['data']}/sample_submission.csv {paths['submission_file']}"
            self.plan = [{"tool": "bash", "command": copy}, {"tool": "submit"}]
        return self.plan.pop(0)


def make(**options):
    return CopySample(**options)
"""
BASELINES = {"scripted", "llm", "mini-swe-agent", "aide", "openhands", "mlab"}


def _distribution(site: Path, name: str, entry_points: str, module: str | None = None) -> None:
    """An installed distribution as importlib.metadata finds it: a dist-info folder."""
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{entry_points}\n")
    if module is not None:
        (site / f"{name}.py").write_text(textwrap.dedent(module))


@pytest.fixture
def outside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A package `outside_policies` declaring the policy OUTSIDE, on this process's path and
    on the path of the processes it starts."""
    site = tmp_path / "site"
    _distribution(site, "outside_policies", f"{OUTSIDE} = outside_policies:make", MODULE)
    monkeypatch.syspath_prepend(str(site))
    paths = [str(site), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
    return site


def test_an_outside_package_adds_a_policy_found_by_name(outside: Path) -> None:
    assert OUTSIDE in policy_names()
    policy = make_policy(OUTSIDE, model="m")
    assert type(policy).__name__ == "CopySample" and policy.options == {"model": "m"}


def test_listing_the_names_imports_no_policy(outside: Path) -> None:
    script = (
        "import sys\nfrom mle_gym.policies import policy_names\nnames = policy_names()\n"
        f"print({OUTSIDE!r} in names, 'scripted' in names, "
        "'outside_policies' in sys.modules, 'mle_gym_baselines.registry' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["True", "True", "False", "False"]


def test_an_unknown_name_says_what_there_is(outside: Path) -> None:
    with pytest.raises(UnknownPolicy, match=f"unknown policy 'nope'; available: .*{OUTSIDE}"):
        make_policy("nope")


def test_two_packages_declaring_one_name_is_an_error(outside: Path) -> None:
    _distribution(outside, "rival_policies", f"{OUTSIDE} = rival_policies:make")
    with pytest.raises(UnknownPolicy, match="several installed packages"):
        make_policy(OUTSIDE)


def test_register_policy_in_process_takes_the_place_of_an_entry_point(outside: Path) -> None:
    marker = object()
    register_policy(OUTSIDE, lambda **_options: marker)
    try:
        assert make_policy(OUTSIDE) is marker
    finally:
        unregister_policy(OUTSIDE)
    assert make_policy(OUTSIDE) is not marker


def test_the_baselines_join_through_their_entry_points() -> None:
    """setup.cfg declares each baseline, and each declaration loads a factory; installed, the
    registry lists them all and makes the scripted one."""
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    declared = {
        name.strip(): value.strip()
        for name, value in (
            line.split("=", 1)
            for line in config["options.entry_points"][ENTRY_POINT_GROUP].strip().splitlines()
        )
    }
    assert set(declared) == BASELINES
    for name, value in declared.items():
        assert callable(EntryPoint(name, value, ENTRY_POINT_GROUP).load()), name
    assert set(policy_names()) >= BASELINES
    assert type(make_policy("scripted")).__name__ == "ScriptedTabularPolicy"


def test_cli_lists_and_runs_an_outside_policy(
    outside: Path, digits_home: Path, tmp_path: Path
) -> None:
    """`mle-gym run --policy NAME`: the help lists it, a batch's worker process makes it and
    the episode it plays is graded."""
    env = {**os.environ, "MLE_GYM_HOME": str(digits_home), "COLUMNS": "200"}
    cli = [sys.executable, "-m", "mle_gym.cli", "run"]
    shown = subprocess.run(
        [*cli, "--help"], capture_output=True, text=True, timeout=60, env=env, cwd=REPO
    )
    assert OUTSIDE in shown.stdout and "scripted" in shown.stdout, shown.stdout
    require_bwrap()
    run_dir = tmp_path / "run"
    batch = ["sklearn-digits", "--policy", OUTSIDE, "--run-dir", str(run_dir)]
    done = subprocess.run(
        [*cli, *batch, "--time-limit", "120"],
        capture_output=True, text=True, timeout=300, env=env, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    episode = run_dir / "episodes" / "sklearn-digits" / "seed-0"
    assert json.loads((episode / "result.json").read_text())["valid_submission"]
    assert OUTSIDE in (run_dir / "provenance.json").read_text()
