"""The editable install wins over a clone folder named like the package (issue 30, item 5).

Python, a REPL or Jupyter started in the folder *above* a clone called `mle_gym` sees that
folder first on `sys.path` (the working directory). Setuptools' default editable finder sits
behind the path finder, so the folder, which has no `__init__.py`, became an empty namespace
package and `gym.make("mle/...")` said "Namespace mle not found". setup.cfg names the project
root as the package directory, which makes the editable install a plain path entry; the path
finder then prefers the real package over the namespace folder.
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
