"""The local sandbox's workspace mounts (mle_gym.sandbox.workspace), made both ways: by a
thread of this process (as root) and by `unshare` in a user namespace (as a user). Each
gives bounded tmpfs mounts, nosuid and nodev, that outlive whatever made them and that the
host's own view never shows."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from mle_gym.sandbox.workspace import Workspace, WorkspaceUnavailable

WAYS = ["_create_in_thread", "_create_with_unshare"]


@pytest.fixture
def shared_place(tmp_path: Path):
    """`tmp_path` as a shared mount of the host's (as root; CI is): a mount made under it
    in a namespace that did not make its mounts private would show on the host too."""
    if os.geteuid() != 0:
        yield tmp_path
        return
    subprocess.run(["mount", "--bind", tmp_path, tmp_path], check=True)
    try:
        subprocess.run(["mount", "--make-shared", tmp_path], check=True)
        yield tmp_path
    finally:
        subprocess.run(["umount", "--lazy", tmp_path], check=True)


@pytest.mark.parametrize("way", WAYS)
def test_the_mounts_are_bounded_private_and_outlive_their_maker(
    shared_place: Path, way: str
) -> None:
    if way == "_create_in_thread" and os.geteuid() != 0:
        pytest.skip("a thread mounts without a user namespace only as root")
    tmp_path = shared_place
    places = [tmp_path / "code", tmp_path / "submission"]
    for place in places:
        place.mkdir()
    workspace = Workspace(places, size=1 << 20, files=50, uid=None)
    getattr(workspace, way)()
    try:
        script = (
            f"grep ' {tmp_path}/' /proc/self/mountinfo; "
            f"echo kept > {places[0]}/file; cat {places[0]}/file; "
            f"for i in $(seq 60); do : > {places[1]}/$i || break; done 2>&1 | tail -1"
        )
        inside = subprocess.run(
            [*workspace.enter_argv(), "sh", "-c", script], capture_output=True, text=True
        ).stdout
        again = subprocess.run(  # a later process finds the file the first one left
            [*workspace.enter_argv(), "cat", f"{places[0]}/file"], capture_output=True, text=True
        ).stdout
        host_view = Path("/proc/self/mountinfo").read_text().splitlines()
    finally:
        workspace.close()
    mounts = [line for line in inside.splitlines() if "mle-gym-workspace" in line]
    assert len(mounts) == 2, inside
    for line in mounts:
        assert "nosuid" in line and "nodev" in line
        assert "size=1024k" in line and "nr_inodes=50" in line
    assert "kept" in inside and "No space left on device" in inside
    assert again.strip() == "kept"
    assert not any("mle-gym-workspace" in line for line in host_view)
    assert [list(place.iterdir()) for place in places] == [[], []]


def test_a_mount_that_fails_is_reported_with_its_reason(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("the thread's way is root's")
    workspace = Workspace([tmp_path / "missing"], size=None, files=10, uid=None)
    with pytest.raises(
        WorkspaceUnavailable, match=r"could not mount the workspace: .*No such file"
    ):
        workspace.create()
