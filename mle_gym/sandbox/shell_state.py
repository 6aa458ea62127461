"""The persistent shell's working directory and exported variables: read out of a running
shell, and set in a fresh one.

Both live only inside the agent's bash, so they are read through mle_gym's own channel to
it (`Sandbox.run`, the marker-framed pipe of shell.py), with commands the agent's
definitions cannot replace: each runs in a subshell (nothing it does reaches the agent's
shell), turns on POSIX mode by a plain assignment (no command is looked up for it), and
in POSIX mode bash finds the special builtin `exec` before any function of that name; the
backslash stops an alias. `exec` then runs an absolute path (PATH plays no part) whose
output is the kernel's own view: `/bin/pwd -P` (getcwd), `/usr/bin/env -0` (the variables a
child is given: exactly the exported ones) and `/proc/$$/environ` (what the shell started
with; `$$` cannot be reassigned). The agent can still make its shell print nothing useful
(a DEBUG trap, an `eval` function): then reading fails with a clear error, and what it
returns is only ever parsed as data, never run.

Only the variables that differ from the shell's start are kept, so a fresh sandbox keeps
its own PATH, HOME or GPU assignment unless the agent changed them.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from mle_gym.sandbox.base import Sandbox, SandboxError

#: Most bytes the environment may take when read (Linux allows 2 MiB of arguments and
#: environment to a program).
MAX_ENVIRONMENT_BYTES = 4 * 1024**2
#: Set by the shell itself on every start or `cd`: never carried over.
VOLATILE = frozenset({"PWD", "OLDPWD", "SHLVL", "_", "POSIXLY_CORRECT"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PWD = "( POSIXLY_CORRECT=y; \\exec /bin/pwd -P )"
_EXPORTED = "( POSIXLY_CORRECT=y; \\exec /usr/bin/env -0 )"
_AT_START = "( POSIXLY_CORRECT=y; \\exec /bin/cat /proc/$$/environ )"


@dataclass
class ShellState:
    """The working directory, the exported variables set or changed since the shell
    started (`changed`) and those it started with but no longer exports (`removed`)."""

    cwd: str
    changed: dict[str, str] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"cwd": self.cwd, "changed": self.changed, "removed": self.removed}

    @classmethod
    def from_json(cls, data: object) -> ShellState:
        """From a checkpoint's manifest; ValueError when it is not this shape."""
        if not isinstance(data, dict) or not isinstance(data.get("cwd"), str):
            raise ValueError("the shell state has no working directory")
        changed, removed = data.get("changed", {}), data.get("removed", [])
        if not isinstance(changed, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in changed.items()
        ):
            raise ValueError("the shell state's variables are not names and text")
        if not isinstance(removed, list) or not all(isinstance(k, str) for k in removed):
            raise ValueError("the shell state's removed variables are not names")
        return cls(data["cwd"], dict(changed), list(removed))


def read_shell_state(sandbox: Sandbox, timeout: float = 30.0) -> ShellState:
    """The running shell's state; `SandboxError` when the shell does not answer plainly."""
    cwd = _output(sandbox, _PWD, timeout).decode(errors="surrogateescape")
    if not cwd.endswith("\n") or "\n" in cwd[:-1] or not cwd.startswith("/"):
        raise SandboxError(f"the shell's working directory could not be read: {cwd[:200]!r}")
    now = _environment(_output(sandbox, _EXPORTED, timeout))
    start = _environment(_output(sandbox, _AT_START, timeout))
    changed = {
        name: value
        for name, value in now.items()
        if name not in VOLATILE and start.get(name) != value
    }
    removed = sorted(name for name in start if name not in now and name not in VOLATILE)
    return ShellState(cwd[:-1], changed, removed)


def restore_shell_state(sandbox: Sandbox, state: ShellState, timeout: float = 30.0) -> list[str]:
    """Set `state` in the sandbox's fresh shell; what could not be set, in words. Names are
    checked and values quoted here: nothing the agent wrote is run as a command."""
    lines, notes = [], []
    for name in sorted(state.changed):
        if _NAME.fullmatch(name) and name not in VOLATILE:
            lines.append(f"export {name}={shlex.quote(state.changed[name])} || echo {name}")
        else:
            notes.append(f"variable {name!r} not restored: not a shell variable's name")
    for name in state.removed:
        if _NAME.fullmatch(name) and name not in VOLATILE:
            lines.append(f"unset -v {name} || echo {name}")
    lines.append(f"cd -- {shlex.quote(state.cwd)} || echo cd")
    result = sandbox.run("\n".join(lines), timeout, max_output_chars=4000)
    if result.exit_code is None:
        return [*notes, f"the shell state was not restored: {result.output[-500:]}"]
    failed = [line for line in result.output.splitlines() if line.strip()]
    for word in failed:
        what = f"working directory {state.cwd!r}" if word == "cd" else f"variable {word!r}"
        notes.append(f"{what} not restored: the new shell refused it")
    return notes


def _output(sandbox: Sandbox, command: str, timeout: float) -> bytes:
    result = sandbox.run(command, timeout, capture_bytes=MAX_ENVIRONMENT_BYTES)
    if result.exit_code != 0 or result.raw is None:
        raise SandboxError(
            f"the shell's state could not be read (exit {result.exit_code}): "
            f"{result.output[-300:]!r}"
        )
    return result.raw


def _environment(raw: bytes) -> dict[str, str]:
    """NUL-ended NAME=value records; anything else (a trap's noise) is left out."""
    found = {}
    for record in raw.split(b"\0"):
        name, equals, value = record.decode(errors="surrogateescape").partition("=")
        if equals and name:
            found[name] = value
    return found
