"""An outbound-only uplink for a local sandbox that asked for the network.

The sandbox keeps a network namespace of its own; slirp4netns (Debian's package) gives it
a user-mode NAT to the outside world with `--disable-host-loopback`, so services bound to
the host's loopback (Ray, Jupyter, databases, D-Bus) stay out of reach, and so does any
abstract unix socket of the host.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess

from mle_gym.sandbox import fd_wait
from mle_gym.sandbox.base import SandboxError

NO_SLIRP = (
    "network=True on the local backend needs slirp4netns (Debian/Ubuntu: sudo apt-get "
    "install slirp4netns), which gives the sandbox outbound access without the host's "
    "loopback services; or use backend='docker'"
)
_READY_TIMEOUT = 10.0


class Uplink:
    """slirp4netns attached to the network namespace of the sandbox process `pid`."""

    def __init__(self, pid: int) -> None:
        if shutil.which("slirp4netns") is None:
            raise SandboxError(NO_SLIRP)
        self.pid = pid
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        ready_read, ready_write = os.pipe()
        argv = [
            "slirp4netns",
            "--configure",
            "--mtu=65520",
            "--disable-host-loopback",
            f"--ready-fd={ready_write}",
        ]
        if os.geteuid() != 0:  # the namespace belongs to a user namespace of ours
            argv.append(f"--userns-path=/proc/{self.pid}/ns/user")
        argv += ["--netns-type=path", f"/proc/{self.pid}/ns/net", "tap0"]
        self.process = subprocess.Popen(
            argv,
            pass_fds=(ready_write,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        os.close(ready_write)
        try:
            ready = fd_wait.readable([ready_read], _READY_TIMEOUT)
            if not ready or os.read(ready_read, 1) != b"1":
                self.stop()
                raise SandboxError("slirp4netns did not bring up the sandbox's network")
        finally:
            os.close(ready_read)

    def stop(self) -> None:
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)
            if self.process.stderr is not None:
                self.process.stderr.close()
            self.process = None
