"""Each competition's declared extras match what its code imports, and `prepare` says up
front which extras a set of competitions needs and which are missing.

The check reads the code rather than running it: the imports of the competition's module,
of the shared competition helpers it imports, and of its metric's module, mapped through
`mle_gym.extras.EXTRAS` (module -> extra). A competition that starts importing an optional
package without declaring its extra fails here.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

from mle_gym.cli import main
from mle_gym.competitions import all_competitions, get_competition
from mle_gym.extras import EXTRAS, missing_extras, needed_extras
from mle_gym.grading.metrics import METRICS


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _code_of(comp) -> list[Path]:
    module = sys.modules[comp.prepare.__module__]
    files = [Path(module.__file__)]
    for name in _imported(files[0]):
        if name.startswith("mle_gym.competitions.") and "catalog" not in name:
            files.append(Path(importlib.import_module(name).__file__))
    metric = METRICS[comp.metric]
    files.append(Path(sys.modules[getattr(metric, "__module__", "")].__file__))
    return files


@pytest.mark.parametrize("comp", all_competitions(), ids=lambda c: c.id)
def test_declared_extras_are_what_the_code_imports(comp) -> None:
    found = {
        EXTRAS[name.partition(".")[0]]
        for path in _code_of(comp)
        for name in _imported(path)
        if name.partition(".")[0] in EXTRAS
    }
    assert set(comp.extras) == found, f"{comp.id} declares {comp.extras}, imports {found}"


def test_needed_and_missing_extras() -> None:
    cdiscount, statoil = (
        "cdiscount-image-classification-challenge",
        "statoil-iceberg-classifier-challenge",
    )
    vinbigdata = "vinbigdata-chest-xray-abnormalities-detection"
    comps = [get_competition(i) for i in ("sklearn-digits", cdiscount, statoil, vinbigdata)]
    assert needed_extras(comps) == {"archives": [cdiscount, statoil], "detection": [vinbigdata]}
    assert missing_extras(["archives", "detection"]) == []  # the test venv has them all
    assert missing_extras(["no-such-extra"]) == []


def test_prepare_says_up_front_which_extras_a_split_needs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, tmp_path: Path
) -> None:
    """`prepare --split medium` names the extras first; here pycocotools is made missing, so
    it warns, naming the competitions that will fail. (No credentials: nothing downloads.)"""
    monkeypatch.setenv("MLE_GYM_HOME", str(tmp_path))
    monkeypatch.setenv("KAGGLE_CONFIG_DIR", str(tmp_path / "no-kaggle"))
    monkeypatch.delenv("KAGGLE_USERNAME", raising=False)
    monkeypatch.delenv("KAGGLE_KEY", raising=False)
    monkeypatch.setitem(sys.modules, "pycocotools", None)  # find_spec then raises ValueError
    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, *args):
        return None if name == "pycocotools" else real_find_spec(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    main(["prepare", "--split", "all"])
    out = capsys.readouterr().out
    head = " ".join(out.split("error:", 1)[0].split())
    assert "need the extras: archives (3), detection (2), images (1)" in head, out[:2000]
    assert "not installed here: detection: " in head and "vinbigdata" in head
