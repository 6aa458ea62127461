"""Local shells started on a pty without forking this process (mle_gym.sandbox.pty_spawn):
the child keeps only the descriptors it is given, has the pty as its controlling terminal
in a session of its own, gets a fresh session keyring (this process's threads keep theirs),
outlives the thread that asked for it, a program that is not there is refused at once, and
many start at once, in this process or in a fork of it."""

from __future__ import annotations

import ctypes
import os
import platform
import signal
import sys
import threading
import time

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
def test_each_child_gets_a_fresh_keyring_of_its_own():
    probe = "import ctypes; print(ctypes.CDLL(None).syscall(250, 0, -3, 0))"  # session's id
    ours = ctypes.CDLL(None).syscall(250, 0, -3, 0)
    children = {int(_output(_spawn([sys.executable, "-c", probe]))) for _ in range(2)}
    assert len(children) == 2 and ours not in children
    assert ctypes.CDLL(None).syscall(250, 0, -3, 0) == ours  # this thread keeps its own


def test_a_child_that_dies_with_its_parent_outlives_the_thread_that_asked_for_it():
    """bubblewrap's --die-with-parent is a parent-death signal, which the kernel sends when
    the thread that started the child ends; here the asking thread ends while it runs."""
    started = []

    def ask() -> None:
        argv = ["setpriv", "--pdeathsig", "KILL", "--", "/bin/sh", "-c", "sleep 1; echo alive"]
        started.append(_spawn(argv))
        time.sleep(0.5)  # the parent-death signal is set by now

    thread = threading.Thread(target=ask)
    thread.start()
    thread.join()
    assert _output(started[0]).strip() == "alive"


def test_a_forked_process_starts_children_too():
    _output(_spawn(["/bin/true"]))  # this process's starter thread exists
    pid = os.fork()
    if pid == 0:  # a fork has no starter thread of its own until it starts a child
        code = 1
        signal.alarm(30)  # a start that never comes ends the fork, not the test run
        try:
            code = 0 if _output(_spawn(["/bin/sh", "-c", "echo forked"])).strip() == "forked" else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


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


def test_an_uncooked_terminal_passes_long_lines_on_whole_and_adds_no_carriage_returns():
    modes = _output(_spawn(["stty", "-a"], cooked=False)).split()
    assert "-icanon" in modes and "-onlcr" in modes and "-echo" in modes
    line = "x" * 10_000  # past the 4 KiB at which a canonical-mode line is cut
    proc = _spawn(["/bin/sh", "-c", "read -r got; echo ${#got}"], cooked=False)
    os.write(proc.fd, line.encode() + b"\n")
    assert _output(proc) == "10000\n"
