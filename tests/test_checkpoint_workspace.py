"""A sandbox's workspace and shell captured into a checkpoint and restored into a fresh
sandbox, on both backends; and a checkpoint treated as untrusted input on restore."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from mle_gym.checkpoints import workspace
from mle_gym.checkpoints.store import (
    CHECKSUM,
    FORMAT,
    MANIFEST,
    CheckpointBounds,
    CheckpointError,
    CheckpointStore,
    load,
)
from mle_gym.checkpoints.workspace import capture, restore
from mle_gym.sandbox.base import Sandbox, SandboxSpec
from mle_gym.sandbox.factory import make_sandbox
from mle_gym.sandbox.shell_state import read_shell_state
from mle_gym.sandbox.tree import TreeEntry

# The agent's work, then definitions that would fool a reader going through its shell.
_WORK = r"""
mkdir -p /home/code/pkg/deep /home/code/empty
printf hello > /home/code/pkg/deep/a.txt
printf '#!/bin/sh\necho ran\n' > /home/code/run.sh && chmod 755 /home/code/run.sh
chmod 750 /home/code/pkg
ln -s deep/a.txt /home/code/pkg/link
printf same > /home/code/one && ln /home/code/one /home/code/two
printf 'id,y\n1,2\n' > /home/submission/submission.csv
echo scratch > /tmp/notes
mkfifo /home/code/pipe
printf s > /home/code/suid && chmod 4755 /home/code/suid
cd /home/code/pkg
export MY_VAR="two words 'q' \$x"$'\n'"second line"
unset GONE_VAR
"""
_HOSTILE = (
    "cd() { :; }; pwd() { echo /fake; }; exec() { echo FAKE; }; env() { echo FAKE=1; }; "
    "export() { :; }; alias exec='echo FAKE'; PATH=/nowhere:$PATH"
)
_SPEC_ENV = {"GONE_VAR": "at start"}


@contextlib.contextmanager
def _started(backend: str, tmp_path: Path) -> Iterator[Sandbox]:
    public = tmp_path / "public"
    public.mkdir(exist_ok=True)
    (public / "train.csv").write_text("a\n1\n")
    sandbox = make_sandbox(backend)
    try:
        sandbox.start(SandboxSpec(public_dir=public, env=dict(_SPEC_ENV)))
        yield sandbox
    finally:
        sandbox.stop()


def _out(sandbox: Sandbox, command: str) -> str:
    result = sandbox.run(command, 30)
    assert result.exit_code == 0, result.output
    return result.output.strip()


def test_capture_then_restore_into_a_fresh_sandbox(backend: str, tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "checkpoints")
    with _started(backend, tmp_path) as first:
        assert first.run(_WORK, 30).exit_code == 0
        first.run(_HOSTILE, 30)
        state = read_shell_state(first)
        assert state.cwd == "/home/code/pkg"
        folder = capture(first, store, {"step": 7})
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["meta"] == {"step": 7}
    code = {e["path"]: e for e in manifest["places"]["/home/code"]}
    assert code["suid"]["mode"] == 0o755  # the set-uid bit is dropped at capture
    assert "pipe" not in code
    assert any("pipe: a FIFO" in note for note in manifest["not_captured"])
    assert code["one"]["sha256"] == code["two"]["sha256"]
    blobs = [p for p in (store.root / "blobs").rglob("*") if p.is_file()]
    assert len(blobs) == len(
        {e["sha256"] for p in manifest["places"].values() for e in p if e["type"] == "file"}
        | {e["sha256"] for e in manifest["logs"]}
    )

    with _started(backend, tmp_path) as second:
        report = restore(second, folder)
        assert report.meta == {"step": 7}
        assert any("running processes" in note for note in report.not_restored)
        assert report.to_json()["files"] == report.files >= 7
        assert _out(second, "pwd") == "/home/code/pkg"
        assert _out(second, 'printf %s "$MY_VAR"') == "two words 'q' $x\nsecond line"
        assert _out(second, 'echo "${GONE_VAR-unset}"') == "unset"
        assert _out(second, 'echo "$PATH"').startswith("/nowhere:")
        assert _out(second, "cat deep/a.txt; echo; readlink link") == "hello\ndeep/a.txt"
        assert _out(second, "sh /home/code/run.sh") == "ran"  # docker mounts it noexec
        assert _out(second, "stat -c %a /home/code/pkg /home/code/run.sh /home/code/suid") == (
            "750\n755\n755"
        )
        # two names of one file come back as two files of their own
        assert _out(second, "stat -c %h /home/code/one /home/code/two") == "1\n1"
        assert _out(second, "cat /home/submission/submission.csv /tmp/notes") == (
            "id,y\n1,2\nscratch"
        )
        assert (
            _out(second, "test -d /home/code/empty && test ! -e /home/code/pipe && echo ok") == "ok"
        )


def _craft(store: CheckpointStore, entries: list[dict], name: str = "crafted") -> Path:
    """A checkpoint written by hand (its checksum right), as an attacker who can write the
    run's folder would; `content` of a file entry becomes its blob."""
    scratch = store.root / ".scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    listed = []
    for entry in entries:
        entry = dict(entry)
        if "content" in entry:
            blob = scratch / "blob"
            blob.write_bytes(entry.pop("content"))
            entry["sha256"], size = store.add_blob(blob)
            entry.setdefault("size", size)
        listed.append(entry)
    manifest = {"format": FORMAT, "meta": {}, "places": {"/home/code": listed}, "logs": [],
                "shell": {"cwd": "/home/code", "changed": {}, "removed": []}}  # fmt: skip
    return store.write(name, manifest)


def _file(path: str, content: bytes = b"x", mode: int = 0o644) -> dict:
    return {"path": path, "type": "file", "mode": mode, "content": content}


def test_a_file_below_a_symlink_to_the_host_is_refused(tmp_path: Path) -> None:
    victim = tmp_path / "host-dir"
    victim.mkdir()
    store = CheckpointStore(tmp_path / "run")
    folder = _craft(
        store,
        [{"path": "esc", "type": "symlink", "mode": 0o777, "target": str(victim)},
         _file("esc/pwned")],
    )  # fmt: skip
    with pytest.raises(CheckpointError, match=r"lies below .*esc, a symlink"):
        load(folder)


def test_a_symlink_to_a_host_file_stays_inside_the_sandbox(backend: str, tmp_path: Path) -> None:
    secret = tmp_path / "host-secret.txt"
    secret.write_text("HOST-SECRET")
    store = CheckpointStore(tmp_path / "run")
    folder = _craft(store, [{"path": "leak", "type": "symlink", "mode": 0o777,
                             "target": str(secret)}])  # fmt: skip
    with _started(backend, tmp_path) as sandbox:
        restore(sandbox, folder)
        assert _out(sandbox, "readlink /home/code/leak") == str(secret)
        assert "HOST-SECRET" not in sandbox.run("cat /home/code/leak", 30).output


def test_a_write_never_goes_through_a_link_already_in_the_place(
    backend: str, tmp_path: Path
) -> None:
    """put_tree below a link the agent made (to another place) leaves the entry out."""
    blob = tmp_path / "blob"
    blob.write_bytes(b"through")
    with _started(backend, tmp_path) as sandbox:
        _out(sandbox, "ln -s /home/submission /home/code/esc")
        missed = sandbox.put_tree(
            "/home/code", [TreeEntry("esc/x", "file", 0o644, 7)], lambda _entry: blob
        )
        assert "esc/x" in missed
        assert sandbox.run("ls /home/submission", 30).output.strip() == ""


@pytest.mark.parametrize(
    "entry, reason",
    [
        ({"path": "tty", "type": "chardev", "mode": 0o666}, "is a 'chardev'"),
        ({"path": "disk", "type": "blockdev", "mode": 0o660}, "is a 'blockdev'"),
        ({"path": "h", "type": "hardlink", "mode": 0o644, "target": "/etc/passwd"},
         "is a 'hardlink'"),
        (_file("tool", mode=0o4755), "set-uid, set-gid and sticky bits are refused"),
        (_file("tool", mode=0o2755), "set-uid, set-gid and sticky bits are refused"),
        (_file("tool", mode=0o20644), "no valid permission bits"),
        (_file("../outside"), "not a clean relative path"),
        (_file("/etc/cron.d/x"), "not a clean relative path"),
    ],
)  # fmt: skip
def test_a_device_set_uid_or_escaping_entry_is_refused(
    tmp_path: Path, entry: dict, reason: str
) -> None:
    folder = _craft(CheckpointStore(tmp_path / "run"), [entry])
    with pytest.raises(CheckpointError, match=reason):
        load(folder)


def test_a_blob_hard_linked_to_a_host_file_is_refused(tmp_path: Path) -> None:
    host_file = tmp_path / "host-file"
    host_file.write_bytes(b"host bytes")
    store = CheckpointStore(tmp_path / "run")
    folder = _craft(store, [_file("copy", b"host bytes")])
    blob = next(p for p in store.blobs.rglob("*") if p.is_file())
    blob.unlink()
    os.link(host_file, blob)
    with pytest.raises(CheckpointError, match="not a file of its own"):
        load(folder)


def test_a_blob_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "run")
    folder = _craft(store, [_file("copy", b"host bytes")])
    host_file = tmp_path / "host-file"
    host_file.write_bytes(b"host bytes")
    blob = next(p for p in store.blobs.rglob("*") if p.is_file())
    blob.unlink()
    blob.symlink_to(host_file)
    with pytest.raises(CheckpointError, match="missing or not a plain file"):
        load(folder)


@pytest.mark.parametrize(
    "bounds, reason",
    [
        (CheckpointBounds(max_file_bytes=1000), "over the bound of 1,000 a file"),
        (CheckpointBounds(max_bytes=1500), "over the bound of 1,500"),
        (CheckpointBounds(max_entries=2), "3 entries, over the bound of 2"),
    ],
)
def test_an_oversized_checkpoint_is_refused(
    tmp_path: Path, bounds: CheckpointBounds, reason: str
) -> None:
    folder = _craft(
        CheckpointStore(tmp_path / "run"),
        [_file("big", b"b" * 1001), _file("small", b"s" * 999), _file("tiny", b"")],
    )
    load(folder)  # within the default bounds
    with pytest.raises(CheckpointError, match=reason):
        load(folder, bounds)


def test_a_tampered_manifest_or_blob_is_refused(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "run")
    folder = _craft(store, [_file("model.py", b"print('real')\n")])
    load(folder)
    manifest = folder / MANIFEST
    original = manifest.read_bytes()
    edited = original.replace(b'"mode":420', b'"mode":493')
    assert edited != original
    manifest.write_bytes(edited)
    with pytest.raises(CheckpointError, match="does not match its checksum"):
        load(folder)
    manifest.write_bytes(original)
    (folder / CHECKSUM).write_text("0" * 64)
    with pytest.raises(CheckpointError, match="does not match its checksum"):
        load(folder)
    (folder / CHECKSUM).unlink()
    with pytest.raises(CheckpointError, match="is not a checkpoint"):
        load(folder)

    folder = _craft(store, [_file("model.py", b"print('real')\n")], name="again")
    blob = next(p for p in store.blobs.rglob("*") if p.is_file())
    blob.chmod(0o644)
    blob.write_bytes(b"print('evil')\n")
    with pytest.raises(CheckpointError, match="does not match its sha256"):
        load(folder)
    blob.write_bytes(b"short")
    with pytest.raises(CheckpointError, match="the manifest says"):
        load(folder)


def test_capture_streams_big_files_and_leaves_out_what_is_over_the_bounds(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files past the group size are streamed alone (`copy_out`), the rest copied in groups;
    a file over the bound is listed with its size, not stored."""
    monkeypatch.setattr(workspace, "GROUP_BYTES", 100)
    store = CheckpointStore(tmp_path / "run")
    with _started(backend, tmp_path) as sandbox:
        _out(
            sandbox,
            "cd /home/code && head -c 5000 /dev/zero > big && head -c 3000 /dev/urandom > mid "
            "&& echo small > s && echo other > t",
        )
        mid = _out(sandbox, "sha256sum /home/code/mid").split()[0]
        folder = capture(sandbox, store, {}, bounds=CheckpointBounds(max_file_bytes=4096))
    manifest = json.loads((folder / MANIFEST).read_text())
    code = {e["path"]: e for e in manifest["places"]["/home/code"]}
    assert sorted(code) == ["mid", "s", "t"]
    assert code["mid"]["sha256"] == mid and code["mid"]["size"] == 3000
    assert any("/home/code/big: 5,000 bytes" in n for n in manifest["not_captured"])


_MANY_LONG_NAMES = (
    "python3 -c 'import os\n"
    'os.makedirs("/home/code/many")\n'
    "for i in range(12000):\n"
    '    open(f"/home/code/many/{i:06d}-" + "n" * 150, "w").write(str(i))\''
)


@pytest.mark.timeout(300)
def test_many_files_with_long_names_are_captured_whole(docker_engine, tmp_path: Path) -> None:
    """Docker reads many files in one `tar`, fed their names (here 1.9 MB of them) while
    its archive comes back: sent all first, both sides stalled once the pipes filled, and
    the capture waited for tar's time limit and kept only what came before the cut."""
    store = CheckpointStore(tmp_path / "store")
    with _started("docker", tmp_path) as sandbox:
        _out(sandbox, _MANY_LONG_NAMES)
        folder = capture(sandbox, store, {}, max_seconds=100)
    manifest = json.loads((folder / MANIFEST).read_text())
    files = [e for e in manifest["places"]["/home/code"] if e["type"] == "file"]
    assert len(files) == 12000, [n for n in manifest["not_captured"] if "many" in n][:3]
