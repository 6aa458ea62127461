"""Local shells started on a pty with the fork lock held for the fork alone
(mle_gym.sandbox.pty_spawn): the child keeps only the descriptors it is given, a failure
before the exec is raised with the child's reason, and many start at once."""

from __future__ import annotations

import os
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
    defaults = {"cwd": None, "env": None, "echo": False, "dimensions": (30, 90),
                "preexec_fn": None, "pass_fds": ()}  # fmt: skip
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


def test_a_failure_before_the_exec_is_raised_with_the_childs_reason():
    def refuse() -> None:
        raise PermissionError("the cgroup refused the process")

    with pytest.raises(PermissionError, match="the cgroup refused the process"):
        _spawn(["/bin/true"], preexec_fn=refuse)
    with pytest.raises(FileNotFoundError, match="No such file"):
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
