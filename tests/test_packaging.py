"""The package works with its runtime dependencies alone: optional packages stay optional."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

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


@pytest.mark.parametrize("dockerfile", ["Dockerfile", "Dockerfile.cuda"])
def test_agent_images_carry_what_image_models_need(dockerfile):
    """Both built images (CPU and CUDA) install what an agent trains image models with,
    as the README states (issue 15)."""
    text = (ROOT / "mle_gym" / "sandbox" / "images" / dockerfile).read_text()
    commands = re.findall(r"pip install ([^&]+)", text.replace("\\\n", " "))
    installed = set(re.findall(r"[a-z][a-z0-9_.-]+", " ".join(commands)))
    for package in ("torch", "torchvision", "timm", "pillow", "opencv-python-headless"):
        assert package in installed, f"{dockerfile} does not install {package}"


def test_preparing_without_an_optional_reader_names_the_extra(tmp_path, monkeypatch) -> None:
    """A competition whose prepare needs an extra's package says which extra to install."""
    from mle_gym.competitions import get_competition
    from mle_gym.data.prepare import prepare
    from tests.fixtures.raw.statoil_iceberg_classifier_challenge import make_raw

    raw = tmp_path / "raw"
    raw.mkdir()
    make_raw(raw)
    monkeypatch.setitem(sys.modules, "py7zr", None)  # as if the extra were not installed
    comp = get_competition("statoil-iceberg-classifier-challenge")
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'mle-gym\[archives\]'"):
        prepare(comp, raw, root=tmp_path / "cache")
    assert not (tmp_path / "cache" / comp.id / "prepared.json").exists()


def test_grading_without_an_optional_metric_library_names_the_extra(tmp_path, monkeypatch) -> None:
    """A grade whose metric needs an extra's package is an invalid report saying which."""
    from mle_gym.competitions import get_competition
    from mle_gym.data.prepare import prepare
    from mle_gym.grading.bounded import grade_bounded
    from tests.fixtures.raw.vinbigdata_chest_xray_abnormalities_detection import make_raw

    raw = tmp_path / "raw"
    raw.mkdir()
    make_raw(raw)
    comp = get_competition("vinbigdata-chest-xray-abnormalities-detection")
    dirs = prepare(comp, raw, root=tmp_path / "cache").dirs
    # as if the extra were not installed (its submodules too: an earlier grade imported them)
    for name in [m for m in sys.modules if m.split(".")[0] == "pycocotools"] + ["pycocotools"]:
        monkeypatch.setitem(sys.modules, name, None)
    report = grade_bounded(comp.id, dirs.public / "sample_submission.csv", dirs.private)
    assert not report.valid_submission
    assert "pip install 'mle-gym[detection]'" in report.error
