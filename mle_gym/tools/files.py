"""Reading and writing files inside the sandbox for the tools and the grader.

The sandbox moves the bytes without the agent's shell and resolves every path as inside
the sandbox, with the agent's own permissions: a file tool can never reach or write a host
path the agent's commands could not, and nothing the agent does in its shell (functions
shadowing commands, forged output) can break a transfer.
"""

from __future__ import annotations

from pathlib import Path

from mle_gym.sandbox.base import Sandbox, SandboxFileError

#: Largest file the editor reads whole; bigger ones are for head/sed via bash.
MAX_EDIT_BYTES = 8_000_000


class FileToolError(ValueError):
    """A file operation failed; the message is shown to the agent."""


def is_dir(sandbox: Sandbox, path: str) -> bool:
    info = sandbox.stat_file(path)
    return info is not None and info.kind == "dir"


def exists(sandbox: Sandbox, path: str) -> bool:
    return sandbox.stat_file(path) is not None


def read_bytes(sandbox: Sandbox, path: str, max_bytes: int = MAX_EDIT_BYTES) -> bytes:
    try:
        return sandbox.read_file(path, max_bytes)
    except SandboxFileError as exc:
        hint = (
            "; use bash (head, tail, sed -n) to work with parts of it"
            if "limit" in str(exc)
            else ""
        )
        raise FileToolError(f"{exc}{hint}") from None


def read_text(sandbox: Sandbox, path: str) -> str:
    data = read_bytes(sandbox, path)
    if b"\x00" in data:
        raise FileToolError(
            f"{path} is a binary file ({len(data):,} bytes); use bash to inspect it"
        )
    return data.decode("utf-8", errors="replace")


def write_text(sandbox: Sandbox, path: str, text: str) -> None:
    """Write `text` to `path`, creating parent directories; errors come from the sandbox."""
    try:
        sandbox.write_file(path, text.encode("utf-8", errors="surrogateescape"))
    except SandboxFileError as exc:
        raise FileToolError(str(exc)) from None


def copy_out(sandbox: Sandbox, path: str, dest: Path, max_bytes: int) -> bool:
    """Copy a file out of the sandbox to the host path `dest`; False when there is none."""
    try:
        return sandbox.copy_out(path, dest, max_bytes)
    except SandboxFileError as exc:
        dest.unlink(missing_ok=True)
        raise FileToolError(str(exc)) from None
