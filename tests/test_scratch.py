"""Scratch folders of killed processes are swept; a live owner's are kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mle_gym.sandbox.scratch import owned_dir, owner_alive, sweep


def test_sweep_removes_only_folders_whose_owner_is_gone(tmp_path: Path) -> None:
    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from mle_gym.sandbox.scratch import owned_dir\n"
        f"print(owned_dir('episode', Path({str(tmp_path)!r})))\n"
        "sys.stdout.flush(); os._exit(0)  # no cleanup, as after SIGKILL\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    orphan = Path(out.stdout.strip())
    (orphan / "code").mkdir()
    mine = owned_dir("episode", tmp_path)
    stranger = tmp_path / "mle-gym-unowned"
    stranger.mkdir()
    assert owner_alive(orphan) is False and owner_alive(mine) is True
    assert owner_alive(stranger) is None
    assert sweep(tmp_path) == [orphan]
    assert not orphan.exists() and mine.is_dir() and stranger.is_dir()
