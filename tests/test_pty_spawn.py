"""Local shells started on a pty without forking this process (mle_gym.sandbox.pty_spawn):
the child keeps only the descriptors it is given, has the pty as its controlling terminal
in a session of its own, gets a fresh session keyring when asked (this process's threads
keep theirs), a program that is not there is refused at once, and many start at once."""

from __future__ import annotations

import ctypes
import os
import platform
import sys
import threading

import pytest

from mle_gym.sandbox.pty_spawn import spawn_on_pty


def _output(proc) -> str:
    text = b""
    while True:
        try:
            chunk = os.read(proc.fd, 4096)
        except OSError:  # EIO: the child has ended
            break
        if not chunk:
            break
        text += chunk
    proc.wait()
    return text.decode()


def _spawn(argv, **options):
    defaults = {"cwd": None, "env": None, "echo": False, "dimensions": (30, 90), "pass_fds": ()}
    return spawn_on_pty(argv, **{**defaults, **options})


def test_the_child_keeps_only_the_passed_descriptors_and_sees_its_terminal_size(tmp_path):
    kept_read, kept = os.pipe()
    dropped_read, dropped = os.pipe()
    for fd in (kept, dropped):  # both would survive the exec: only `kept` may
        os.set_inheritable(fd, True)
    try:
        proc = _spawn(
            ["/bin/sh", "-c", "ls /proc/self/fd; stty size; pwd"],
            cwd=str(tmp_path),
            pass_fds=(kept,),
        )
        lines = _output(proc).split()
    finally:
        for fd in (kept_read, kept, dropped_read, dropped):
            os.close(fd)
    assert str(kept) in lines and str(dropped) not in lines
    assert "30" in lines and "90" in lines and str(tmp_path) in lines


def test_the_pty_is_the_controlling_terminal_of_a_session_of_its_own():
    # fields 6 and 7 of /proc/PID/stat: the session and the controlling terminal (which
    # /dev/tty opens; without one: "No such device or address")
    command = "echo $$; cut -d' ' -f6,7 /proc/$$/stat; : < /dev/tty && echo has-tty; tty"
    pid, session, tty_number, opened, name = _output(_spawn(["/bin/sh", "-c", command])).split()
    assert session == pid and int(tty_number) != 0
    assert opened == "has-tty" and name.startswith("/dev/pts/")


@pytest.mark.skipif(platform.machine() != "x86_64", reason="keyctl's number here is x86_64's")
def test_a_fresh_keyring_is_the_childs_alone():
    probe = "import ctypes; print(ctypes.CDLL(None).syscall(250, 0, -3, 0))"  # session's id

    def child_keyring(fresh: bool) -> int:
        return int(_output(_spawn([sys.executable, "-c", probe], fresh_keyring=fresh)))

    ours = ctypes.CDLL(None).syscall(250, 0, -3, 0)
    fresh = {child_keyring(True) for _ in range(2)}
    assert child_keyring(False) == ours
    assert len(fresh) == 2 and ours not in fresh
    assert ctypes.CDLL(None).syscall(250, 0, -3, 0) == ours  # this thread keeps its own


def test_a_program_that_is_not_there_is_refused():
    with pytest.raises(FileNotFoundError, match="/nonexistent/program"):
        _spawn(["/nonexistent/program"])


def test_many_threads_spawn_at_once_and_each_child_runs_its_own_command():
    outputs: dict[int, str] = {}

    def one(index: int) -> None:
        outputs[index] = _output(_spawn(["/bin/sh", "-c", f"echo child-{index}"])).strip()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outputs == {i: f"child-{i}" for i in range(16)}
