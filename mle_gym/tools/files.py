"""Reading and writing files inside the sandbox, through its shell.

Going through the shell means every path and symlink is resolved inside the sandbox, with
the agent's own permissions: a file tool can never reach or write a host path the agent's
commands could not.
"""

from __future__ import annotations

import base64
import shlex
from pathlib import Path

from mle_gym.sandbox.base import Sandbox

#: Largest file the editor reads whole; bigger ones are for head/sed/less via bash.
MAX_EDIT_BYTES = 2_000_000
_IO_TIMEOUT = 120.0


class FileToolError(ValueError):
    """A file operation failed; the message is shown to the agent."""


def _sh(sandbox: Sandbox, command: str, capture_bytes: int = 1 << 16) -> tuple[int | None, bytes]:
    result = sandbox.run(command, _IO_TIMEOUT, max_output_chars=4000, capture_bytes=capture_bytes)
    if result.raw is None:
        raise FileToolError("the file is too large to transfer")
    return result.exit_code, result.raw


def file_size(sandbox: Sandbox, path: str) -> int | None:
    """Size in bytes of a regular file at `path` (following symlinks inside), else None."""
    q = shlex.quote(path)
    code, out = _sh(sandbox, f"[ -f {q} ] && [ -r {q} ] && stat -L -c %s -- {q}")
    text = out.decode(errors="replace").strip()
    return int(text) if code == 0 and text.isdigit() else None


def is_dir(sandbox: Sandbox, path: str) -> bool:
    code, _ = _sh(sandbox, f"[ -d {shlex.quote(path)} ]")
    return code == 0


def read_bytes(sandbox: Sandbox, path: str, max_bytes: int = MAX_EDIT_BYTES) -> bytes:
    size = file_size(sandbox, path)
    if size is None:
        raise FileToolError(f"{path} does not exist or is not a readable file")
    if size > max_bytes:
        raise FileToolError(
            f"{path} is {size:,} bytes, more than the {max_bytes:,} this tool handles; "
            "use bash (head, tail, sed -n) to work with parts of it"
        )
    code, out = _sh(sandbox, f"base64 -w0 -- {shlex.quote(path)}", capture_bytes=size * 2 + 1024)
    if code != 0:
        raise FileToolError(f"could not read {path}")
    return base64.b64decode(out.strip())


def read_text(sandbox: Sandbox, path: str) -> str:
    data = read_bytes(sandbox, path)
    if b"\x00" in data:
        raise FileToolError(
            f"{path} is a binary file ({len(data):,} bytes); use bash to inspect it"
        )
    return data.decode("utf-8", errors="replace")


def write_text(sandbox: Sandbox, path: str, text: str) -> None:
    """Write `text` to `path`, creating parent directories; errors come from the sandbox."""
    q = shlex.quote(path)
    payload = base64.b64encode(text.encode("utf-8", errors="surrogateescape")).decode()
    parent = shlex.quote(str(Path(path).parent))
    code, out = _sh(sandbox, f"mkdir -p -- {parent} && printf %s '{payload}' | base64 -d > {q}")
    if code != 0:
        reason = out.decode(errors="replace").strip().splitlines()
        raise FileToolError(f"could not write {path}: {reason[-1] if reason else 'write failed'}")


def copy_out(sandbox: Sandbox, path: str, dest: Path, max_bytes: int) -> bool:
    """Copy a file out of the sandbox to the host path `dest`; False when there is none."""
    size = file_size(sandbox, path)
    if size is None:
        return False
    if size > max_bytes:
        raise FileToolError(f"{path} is {size:,} bytes, over the {max_bytes:,}-byte limit")
    dest.write_bytes(read_bytes(sandbox, path, max_bytes))
    return True
