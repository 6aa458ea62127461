"""What an install makes importable: the package, over a same-named clone folder, and nothing
else of the clone.

Python, a REPL or Jupyter started in the folder *above* a clone called `mle_gym` sees that
folder first on `sys.path` (the working directory). Setuptools' default editable finder sits
behind the path finder, so the folder, which has no `__init__.py`, became an empty namespace
package and `gym.make("mle/...")` said "Namespace mle not found". setup.cfg names `.importable`
(links to the two packages) as the package directory, which makes the editable install a plain
path entry to that folder alone; the path finder then prefers the real package over the
namespace folder, and the clone's other folders (`baselines`, `tests`, `benchmarks`) are not
importable by those names: OpenAI's RL package is also imported as `baselines`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CHECK = """
import gymnasium as gym
import mle_gym
print(mle_gym.__file__)
print(gym.spec("mle/spaceship-titanic-v0").id)
"""


def test_import_from_the_folder_above_a_clone_named_mle_gym(tmp_path: Path) -> None:
    clone = tmp_path / "mle_gym"
    (clone / "mle_gym").mkdir(parents=True)  # a clone's shape: the package folder inside
    (clone / "README.md").write_text("a clone of the project\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", CHECK],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    imported, spec_id = done.stdout.split()
    # the installed package (a namespace package has no file: "None"), not the clone folder
    assert Path(imported).name == "__init__.py"
    assert not Path(imported).is_relative_to(tmp_path)
    assert (Path(imported).parent / "gym_hook.py").is_file()
    assert spec_id == "mle/spaceship-titanic-v0"


OTHERS = """
import baselines, mle_gym_baselines
print(baselines.__file__)
print(mle_gym_baselines.__file__)
for name in ("tests", "benchmarks"):
    try:
        __import__(name)
    except ModuleNotFoundError:
        print("absent", name)
    else:
        print("found", name)
"""


def test_a_package_named_baselines_elsewhere_still_imports(tmp_path: Path) -> None:
    """Our policies install as `mle_gym_baselines`; a `baselines` on the path is someone else's."""
    elsewhere = tmp_path / "site"
    (elsewhere / "baselines").mkdir(parents=True)
    (elsewhere / "baselines" / "__init__.py").write_text("")
    work = tmp_path / "work"
    work.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        "PYTHONPATH": str(elsewhere),
    }
    done = subprocess.run(
        [sys.executable, "-c", OTHERS],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    theirs, ours, *rest = done.stdout.split("\n")
    assert Path(theirs).is_relative_to(elsewhere)
    assert (Path(ours).parent / "scripted.py").is_file()
    assert rest[:2] == ["absent tests", "absent benchmarks"]
