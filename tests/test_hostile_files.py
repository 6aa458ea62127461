"""A hostile agent racing the file tools (issue 24, item 4).

The local editor's writes run in the host process. If a write checked the target and then
opened the path again, an agent swapping a symlink to /dev/tty in between would make the
host open its own controlling terminal and write the agent's bytes (escape sequences
included) to it. Docker's writes run in an exec in the container, which has no terminal of
the host's; there the same race would only redirect the write to a FIFO or device of the
agent's choosing, and the open refuses both.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pexpect
import pytest

from mle_gym.sandbox.base import SandboxSpec
from mle_gym.sandbox.docker import DockerSandbox
from mle_gym.sandbox.local import LocalSandbox
from mle_gym.tools import editor
from mle_gym.tools.files import FileToolError, write_text
from tests.conftest import require_bwrap
from tests.prerequisites import REPO

MARKER = "LEAKED-THROUGH-A-SWAPPED-LINK"
WRITES = 5000


def _swapper(link_to: str, setup: str = "") -> str:
    """An agent's program: swap /home/code/target between a regular file and a link to
    `link_to` as fast as it can (each rename is atomic: the path is always one or the
    other), after `setup`; /home/code/ready says it runs."""
    return (
        f"import os, subprocess\n{setup}\nos.chdir('/home/code')\n"
        "open('ready', 'w').close()\n"
        "while True:\n"
        "    open('plain', 'w').close()\n"
        "    os.rename('plain', 'target')\n"
        f"    os.symlink({link_to!r}, 'link')\n"
        "    os.rename('link', 'target')\n"
    )


_SWAPPER = _swapper("/dev/tty")

# On the host, in a process whose controlling terminal is the test's pty: the editor inserts
# the marker over and over while the agent swaps the file under it.
_HOST = f"""
import sys, time
from pathlib import Path
from mle_gym.sandbox.base import SandboxSpec
from mle_gym.sandbox.docker import DockerSandbox
from mle_gym.sandbox.local import LocalSandbox
from mle_gym.tools import editor
from mle_gym.tools.files import FileToolError

sandbox = LocalSandbox()
sandbox.start(SandboxSpec(Path(sys.argv[1])))
try:
    sandbox.write_file('/tmp/swap.py', {_SWAPPER!r}.encode())
    sandbox.run("python3 /tmp/swap.py > /dev/null 2>&1 &", 10)
    while sandbox.stat_file('/home/code/ready') is None:
        time.sleep(0.05)
    edits = 0
    for _ in range({WRITES}):
        try:
            editor.insert(sandbox, '/home/code/target', 0, {MARKER!r})
            edits += 1
        except FileToolError:
            pass
finally:
    sandbox.stop()
print('EDITS', edits, 'DONE')
"""


def test_editor_never_writes_through_a_link_swapped_in(tmp_path: Path) -> None:
    """A host process with a controlling terminal edits a file the agent keeps swapping for
    a link to /dev/tty: the marker never reaches the terminal, and the edits still happen
    whenever the path is the regular file."""
    require_bwrap()
    public = tmp_path / "public"
    public.mkdir()
    (public / "train.csv").write_text("a\n1\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    host = pexpect.spawn(
        sys.executable,
        ["-c", _HOST, str(public)],
        env=env,
        encoding="utf-8",
        codec_errors="replace",
        timeout=300,
    )
    host.expect(pexpect.EOF)
    host.close()
    terminal = host.before
    assert "DONE" in terminal, terminal[-3000:]
    edits = int(terminal.split("EDITS")[1].split()[0])
    assert edits > 0  # the race ran against real writes, not only refusals
    assert terminal.count(MARKER) == 0, f"{terminal.count(MARKER)} markers reached the terminal"


def test_editor_refuses_devices_and_fifos(tmp_path: Path, backend: str) -> None:
    """A link to a device or a FIFO is refused with a reason, never opened (a FIFO would
    block until a reader came); a link to a regular file is edited through, as before."""
    public = tmp_path / "public"
    public.mkdir()
    sandbox = LocalSandbox() if backend == "local" else DockerSandbox()
    sandbox.start(SandboxSpec(public))
    try:
        sandbox.run("cd /home/code && ln -s /dev/tty tty && mkfifo fifo && ln -s fifo tofifo", 10)
        for name in ("tty", "fifo", "tofifo"):
            with pytest.raises(FileToolError, match="not a regular file"):
                editor.str_replace(sandbox, f"/home/code/{name}", "a", "b")
            with pytest.raises(FileToolError, match="not a regular file"):
                write_text(sandbox, f"/home/code/{name}", MARKER)
        sandbox.run("cd /home/code && echo old > real && ln -s real alias", 10)
        editor.str_replace(sandbox, "/home/code/alias", "old", "new")
        assert sandbox.run("cat /home/code/real; test -L /home/code/alias", 10).output == "new\n"
        write_text(sandbox, "/home/code/new/dir/file", "made")
        assert sandbox.read_file("/home/code/new/dir/file", 100) == b"made"
    finally:
        sandbox.stop()


# In the container: the link leads to a FIFO whose reader appends what it gets to /tmp/got.
_FIFO_SWAPPER = _swapper(
    "/tmp/fifo",
    "os.mkfifo('/tmp/fifo')\n"
    "subprocess.Popen(['sh', '-c', 'while :; do cat /tmp/fifo >> /tmp/got; done'])",
)


def test_docker_writes_never_follow_a_link_swapped_in(tmp_path: Path, docker_engine) -> None:
    """The same race in a container: the write's exec never lands in the FIFO."""
    public = tmp_path / "public"
    public.mkdir()
    sandbox = DockerSandbox()
    sandbox.start(SandboxSpec(public))
    try:
        sandbox.write_file("/tmp/swap.py", _FIFO_SWAPPER.encode())
        sandbox.run("python3 /tmp/swap.py > /dev/null 2>&1 &", 10)
        for _ in range(100):
            if sandbox.stat_file("/home/code/ready") is not None:
                break
        else:
            pytest.fail("the agent's swapper did not start")
        written = 0
        for _ in range(60):
            try:
                write_text(sandbox, "/home/code/target", MARKER)
                written += 1
            except FileToolError:
                pass
        got = sandbox.run("cat /tmp/got 2>/dev/null; echo", 10).output
    finally:
        sandbox.stop()
    assert written > 0
    assert got.count(MARKER) == 0, f"{got.count(MARKER)} writes went into the FIFO"
