"""One persistent interactive bash, driven over a pty with pexpect.

Each command is sent as one bash `$'...'` string (every byte outside printable ASCII
escaped) and run with `eval` in the shell itself, so `cd`, variables and background jobs
persist between steps, any byte can appear in a command, no extra process is spawned to
decode it, and the command's stdin is /dev/null (it can never hang waiting for input). A marker with
a per-command nonce, printed after the command, carries its exit code back.

On a timeout the shell is interrupted (Ctrl-C to the foreground job, then SIGKILL of the
job's whole process group through the backend's `kill_foreground`), then resynchronised;
if it does not come back it is restarted and the result says the state was lost.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable
from typing import BinaryIO, Protocol

import pexpect

from mle_gym.sandbox.base import CommandResult, SandboxError
from mle_gym.sandbox.output import BoundedCapture, render

SpawnFn = Callable[[], pexpect.spawn]


class JobControl(Protocol):
    """How a backend finds and kills the shell's foreground job (a process group)."""

    def foreground_group(self, shell: ShellSession) -> int | None: ...

    def kill_group(self, shell: ShellSession, group: int) -> None: ...


_READY_TIMEOUT = 30.0
_RESYNC_TIMEOUT = 5.0
_INTERRUPT_GRACE = 1.0
_MARKER_ROOM = 64  # bytes held back so a marker split across reads is still found


def _marker_printf(nonce: str, status: str) -> str:
    # The marker bytes (\036MLE<nonce>:<status>\036) never appear literally in the input.
    return f"printf '\\036MLE%s:%s\\036' {nonce} {status}"


_ESCAPES = [
    "\\\\" if b == 0x5C else "\\'" if b == 0x27 else chr(b) if 0x20 <= b < 0x7F else f"\\x{b:02x}"
    for b in range(256)
]


def _ansi_c_quoted(command: str) -> str:
    """`command` as a bash $'...' word that stands for exactly its UTF-8 bytes."""
    data = command.encode("utf-8", errors="surrogateescape")
    return "$'" + "".join(_ESCAPES[b] for b in data) + "'"


def _marker_pattern(nonce: str) -> re.Pattern[bytes]:
    return re.compile(rb"\x1eMLE" + nonce.encode() + rb":(-?\d+)\x1e")


class ShellSession:
    """A bash process on a pty, with bounded reading and timeouts that kill process trees."""

    def __init__(
        self, spawn: SpawnFn, jobs: JobControl, recover: Callable[[], None] | None = None
    ) -> None:
        self._spawn = spawn
        self._jobs = jobs
        #: Called before restarting a shell that did not come back from an interrupt, to
        #: clear whatever holds it (e.g. a fork bomb that left no process slot free).
        self._recover = recover
        #: The shell's pid as the shell sees it (inside the sandbox's pid namespace).
        self.shell_pid: int | None = None
        self.proc: pexpect.spawn | None = None
        #: The foreground group while the shell waits for input: the shell's own.
        self.idle_group: int | None = None
        self._leftover = b""

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        self.close()
        self.proc = self._spawn()
        self.proc.delaybeforesend = None  # pexpect sleeps 50 ms before each send by default
        nonce = secrets.token_hex(8)
        setup = (
            "stty -echo -icanon -onlcr 2>/dev/null; PS1=''; PS2=''; unset PROMPT_COMMAND HISTFILE; "
            f"{_marker_printf(nonce, '$$')}\n"
        )
        self.proc.send(setup)
        seen = BoundedCapture(4096)
        try:
            ready = self._read_until(_marker_pattern(nonce), _READY_TIMEOUT, seen)
        except (pexpect.EOF, OSError):
            ready = None
        if ready is None:
            self.close()
            raise SandboxError(
                f"the sandbox shell did not start; it printed: {seen.data()[-800:]!r}"
            )
        self.shell_pid = int(ready.group(1))
        self._leftover = b""
        self.idle_group = self._jobs.foreground_group(self)

    def close(self) -> None:
        if self.proc is not None:
            try:
                self.proc.close()
            except Exception:  # a dead pty or socket can fail to close; nothing is left
                pass
        self.proc = None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.isalive()

    # -- reading ---------------------------------------------------------------------------
    def _read_until(
        self,
        pattern: re.Pattern[bytes],
        timeout: float,
        capture: BoundedCapture,
        drop: re.Pattern[bytes] | None = None,
    ) -> re.Match[bytes] | None:
        """Feed output to `capture` until `pattern` appears; None on timeout. Raises EOF."""
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        pending, self._leftover = self._leftover, b""
        while True:
            if pending:
                if drop is not None:
                    pending = drop.sub(b"", pending)
                found = pattern.search(pending)
                if found:
                    capture.feed(pending[: found.start()])
                    self._leftover = pending[found.end() :]
                    return found
                keep = min(len(pending), _MARKER_ROOM)
                capture.feed(pending[: len(pending) - keep])
                pending = pending[len(pending) - keep :]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._leftover = pending
                return None
            try:
                pending += self.proc.read_nonblocking(1 << 16, timeout=min(remaining, 0.25))
            except pexpect.TIMEOUT:
                continue

    # -- running ---------------------------------------------------------------------------
    def run(
        self,
        command: str,
        timeout: float,
        *,
        max_output_chars: int,
        log: BinaryIO | None = None,
        log_hint: str | None = None,
        capture_bytes: int | None = None,
    ) -> CommandResult:
        if not self.alive:
            self.start()
        assert self.proc is not None
        nonce = secrets.token_hex(8)
        line = f"eval {_ansi_c_quoted(command)} </dev/null; {_marker_printf(nonce, '$?')}\n"
        capture = BoundedCapture(capture_bytes or max(4 * max_output_chars, 1 << 16), log)
        notes: list[str] = []
        try:
            self.proc.send(line)
            found = self._read_until(_marker_pattern(nonce), max(timeout, 0.0), capture)
            if found is not None:
                return self._result(capture, int(found.group(1)), False, max_output_chars, log_hint)
            self._interrupt(capture, nonce)
            notes.append(f"the command was stopped after its {timeout:g} s timeout")
            restarted = not self._resync(capture, nonce)
            if restarted:
                notes.append(
                    "the shell did not recover and was restarted: "
                    "the working directory, variables and background jobs were reset"
                )
                if self._recover is not None:
                    self._recover()
                self.start()
            result = self._result(capture, None, True, max_output_chars, log_hint)
            result.shell_restarted = restarted
            result.notes = notes
            return result
        except (pexpect.EOF, OSError):
            self.start()
            result = self._result(capture, None, False, max_output_chars, log_hint)
            result.shell_restarted = True
            result.notes = [
                "the shell exited; a new shell was started in the code directory, "
                "so variables and background jobs were reset"
            ]
            return result

    def _interrupt(self, capture: BoundedCapture, nonce: str) -> None:
        """Ctrl-C, then SIGKILL the job's whole process group.

        The group is noted before the interrupt: once Ctrl-C ends the job's leader, the
        terminal's foreground is the shell again, but the leader's children (say, the
        background half of `a & b`) still belong to the old group.
        """
        assert self.proc is not None
        group = self._jobs.foreground_group(self)
        self.proc.send("\x03")  # Ctrl-C: SIGINT to the foreground job
        self._read_until(_marker_pattern(nonce), _INTERRUPT_GRACE, capture)
        if group is not None and group != self.idle_group and group > 1:
            self._jobs.kill_group(self, group)

    def _resync(self, capture: BoundedCapture, old_nonce: str) -> bool:
        """Bring the shell back to a known point after an interrupt."""
        assert self.proc is not None
        nonce = secrets.token_hex(8)
        self.proc.send("\x03")  # Ctrl-C: SIGINT to the foreground job
        self.proc.send(f"\n{_marker_printf(nonce, '0')}\n")
        old = _marker_pattern(old_nonce)
        return (
            self._read_until(_marker_pattern(nonce), _RESYNC_TIMEOUT, capture, drop=old) is not None
        )

    @staticmethod
    def _result(
        capture: BoundedCapture,
        code: int | None,
        timed_out: bool,
        max_chars: int,
        log_hint: str | None,
    ) -> CommandResult:
        return CommandResult(
            output=render(capture, max_chars, log_hint),
            exit_code=code,
            timed_out=timed_out,
            output_bytes=capture.total,
            raw=capture.data() if capture.complete else None,
            log_path=log_hint,
        )
