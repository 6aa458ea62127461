"""The seccomp filter of the local sandbox: syscalls an ML agent never needs are refused.

An agent trains models, runs Python and shell tools; it never needs to mount file
systems, make user namespaces (which hand back every capability inside them), touch the
kernel keyrings (shared with the host session and across episodes), load kernel code, or
push input into a terminal (TIOCSTI). Each of those is an escape or a cross-episode
channel, so the filter answers them with EPERM (ENOSYS for clone3, whose flags live in
memory a filter cannot read, so libc falls back to clone, which is filtered by flag).

The program is compiled by libseccomp (through `pyseccomp`) and handed to bubblewrap,
which installs it right before running the agent's shell.
"""

from __future__ import annotations

import errno
import os
import tempfile
from functools import lru_cache

#: Refused outright.
DENIED = (
    # kernel keyrings: the host's session keyring and a channel between episodes
    "keyctl",
    "add_key",
    "request_key",
    # file-system and namespace plumbing
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "setns",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "open_by_handle_at",
    "name_to_handle_at",
    # kernel code, tracing and machine state
    "bpf",
    "perf_event_open",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "syslog",
    "iopl",
    "ioperm",
    "userfaultfd",
    "lookup_dcookie",
)
_CLONE_NEWUSER = 0x10000000
_TIOCSTI = 0x5412
_TIOCLINUX = 0x541C


class SeccompUnavailable(RuntimeError):
    """libseccomp (or its Python binding) is missing, so the filter cannot be built."""


@lru_cache(maxsize=1)
def filter_program() -> bytes:
    """The compiled BPF program for this machine's architecture."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError) as exc:  # the binding loads libseccomp.so.2 on import
        raise SeccompUnavailable(
            f"the sandbox's syscall filter needs libseccomp and pyseccomp ({exc}); "
            "install them (apt-get install libseccomp2; pip install pyseccomp)"
        ) from exc
    refuse = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in DENIED:
        try:
            rules.add_rule(refuse, name)
        except (RuntimeError, ValueError, OSError):
            continue  # not a syscall on this architecture (e.g. iopl on arm64)
    user_ns = seccomp.Arg(0, seccomp.MASKED_EQ, _CLONE_NEWUSER, _CLONE_NEWUSER)
    rules.add_rule(refuse, "unshare", user_ns)
    rules.add_rule(refuse, "clone", user_ns)
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for request in (_TIOCSTI, _TIOCLINUX):
        # the kernel reads the request as 32 bits: compare only those, or high bits slip by
        rules.add_rule(refuse, "ioctl", seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF, request))
    with tempfile.TemporaryFile() as handle:
        rules.export_bpf(handle)
        handle.seek(0)
        return handle.read()


def program_fd() -> int:
    """A readable descriptor holding the program (bwrap's --seccomp reads it), closed on
    exec: whoever starts bubblewrap passes it on."""
    read_end, write_end = os.pipe()
    program = filter_program()
    if len(program) > 60_000:  # a pipe holds 64 KiB; the program is a few hundred bytes
        raise SeccompUnavailable("the compiled syscall filter is unexpectedly large")
    os.write(write_end, program)
    os.close(write_end)
    return read_end
