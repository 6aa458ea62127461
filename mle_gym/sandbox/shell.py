"""One persistent interactive bash, driven over a pty with pexpect.

The shell's terminal is a pty (job control, so a timeout can kill the foreground job's
whole group), but each command's output, and the marker that ends it, go to a pipe the
host reads (`OutputPipe`): a pty hands over a few KiB per read and caps a step near
40 MB/s, where a pipe runs at the speed of the program. Commands therefore see a pipe on
stdout and stderr, as under `subprocess`; the shell's own messages (job notices) still
come on the pty and are read too.

Each command is sent as one bash `$'...'` string (every byte outside printable ASCII
escaped) and run with `eval` in the shell itself, so `cd`, variables and background jobs
persist between steps, any byte can appear in a command, no extra process is spawned to
decode it, and the command's stdin is /dev/null (it can never hang waiting for input). A marker with
a per-command nonce, printed after the command, carries its exit code back.

On a timeout the shell is interrupted (SIGINT to the foreground job, then SIGKILL of the
job's whole process group through the backend's job control: signals, never a Ctrl-C byte
that could end up in the shell's input), then resynchronised; if it does not come back it
is restarted and the result says the state was lost. A step cut short on the host (a
KeyboardInterrupt) leaves the shell marked, and the next command first cuts the old one.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO, Protocol

import pexpect

from mle_gym.sandbox import fd_wait
from mle_gym.sandbox.base import CommandResult, SandboxError
from mle_gym.sandbox.output import BoundedCapture, render

#: The descriptor, inside the shell, that commands' output and the markers are written to.
OUTPUT_FD = 61


@dataclass
class OutputPipe:
    """Where the shell's commands write, as the host reads it.

    `fd` is the host's end (a pipe, or a socket for a container's exec stream); `attach`
    are shell words that make `OUTPUT_FD` the writing end inside the shell; `unframe`, when
    set, turns what arrives on `fd` into the bytes written (a container's exec stream comes
    in frames).
    """

    fd: int
    attach: str
    unframe: Callable[[bytes], bytes] | None = None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


SpawnFn = Callable[[], tuple[pexpect.spawn, OutputPipe]]


class JobControl(Protocol):
    """How a backend finds and kills the shell's foreground job (a process group)."""

    def foreground_group(self, shell: ShellSession) -> int | None: ...

    def signal_group(self, shell: ShellSession, group: int, signum: int) -> None: ...


_READY_TIMEOUT = 30.0
_RESYNC_TIMEOUT = 5.0
_INTERRUPT_GRACE = 1.0
_MARKER_ROOM = 64  # bytes held back so a marker split across reads is still found
_SEND_TIMEOUT = 60.0
_READ_BYTES = 1 << 20

# Full-screen programs read keys from the terminal, not stdin, and would wait for a step's
# whole timeout: in the agent's shell they print, or say what to use instead.
_NON_INTERACTIVE = (
    'less() { cat -- "$@"; }; more() { cat -- "$@"; }; '
    "vi() { echo 'interactive editors wait for keys that never come: use the create, "
    "str_replace and insert tools, or sed' >&2; return 1; }; "
    'vim() { vi; }; nano() { vi; }; emacs() { vi; }; top() { command top -b -n 1 "$@"; }; '
)


def _marker_printf(nonce: str, status: str, *, to_pipe: bool = True) -> str:
    # The marker bytes (\036MLE<nonce>:<status>\036) never appear literally in the input.
    to = f" >&{OUTPUT_FD}" if to_pipe else ""
    return f"printf '\\036MLE%s:%s\\036' {nonce} {status}{to}"


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
        self,
        spawn: SpawnFn,
        jobs: JobControl,
        recover: Callable[[], None] | None = None,
        *,
        terminal_set: bool = False,
    ) -> None:
        self._spawn = spawn
        self._jobs = jobs
        #: The backend starts the shell on a terminal already without echo, canonical mode
        #: and CR-before-newline, so the shell's setup need not run `stty` for them.
        self._terminal_set = terminal_set
        #: Called before restarting a shell that did not come back from an interrupt, to
        #: clear whatever holds it (e.g. a fork bomb that left no process slot free).
        self._recover = recover
        #: The shell's pid as the shell sees it (inside the sandbox's pid namespace).
        self.shell_pid: int | None = None
        self.proc: pexpect.spawn | None = None
        self.pipe: OutputPipe | None = None
        #: The foreground group while the shell waits for input: the shell's own.
        self.idle_group: int | None = None
        self._leftover = b""
        #: The nonce of a command whose step was cut short on the host (KeyboardInterrupt).
        self._abandoned: str | None = None
        #: Set by `stop()`: the sandbox is gone, and no shell may start again (a command
        #: running in another thread sees its shell end and must not start a new one).
        self._stopped = False

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        if self._stopped:
            raise SandboxError("the sandbox was stopped (the env was closed or reset)")
        self.close()
        self.proc, self.pipe = self._spawn()
        self.proc.delaybeforesend = None  # pexpect sleeps 50 ms before each send by default
        os.set_blocking(self.proc.child_fd, False)  # reads and writes never block (see _read)
        os.set_blocking(self.pipe.fd, False)
        nonce = secrets.token_hex(8)
        # A first marker on the terminal, after whatever bash printed there as it started
        # (so none of it is taken for the first command's output on a slow connection).
        stty = "" if self._terminal_set else "stty -echo -icanon -onlcr 2>/dev/null; "
        setup = (
            f"{stty}PS1=''; PS2=''; unset PROMPT_COMMAND HISTFILE; "
            f"{self.pipe.attach}; {_marker_printf(nonce, 'tty', to_pipe=False)}; "
            f"{_NON_INTERACTIVE}{_marker_printf(nonce, '$$')}\n"
        )
        self._abandoned = None
        self._send(setup.encode(), _SEND_TIMEOUT)
        seen = BoundedCapture(4096)
        try:
            ready = None
            if self._drain_terminal(re.compile(rb"\x1eMLE" + nonce.encode() + rb":tty\x1e"), seen):
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

    def stop(self) -> None:
        """End the shell for good: a command still running returns, and nothing restarts it."""
        self._stopped = True
        self.close()

    def close(self) -> None:
        """End the shell at once: SIGKILL first, and no pause waiting for a hang-up (the
        terminal library sleeps 100 ms in close() by default)."""
        if self.proc is not None:
            ptyproc = getattr(self.proc, "ptyproc", None)
            if ptyproc is not None:
                with contextlib.suppress(OSError):
                    os.kill(self.proc.pid, signal.SIGKILL)
                ptyproc.delayafterclose = 0
                ptyproc.delayafterterminate = 0
            try:
                self.proc.close()
            except Exception:  # a dead pty or socket can fail to close; nothing is left
                pass
        self.proc = None
        if self.pipe is not None:
            self.pipe.close()
        self.pipe = None

    def _read(self, timeout: float, stray: BoundedCapture) -> bytes:
        """What commands wrote to the pipe, waiting at most `timeout` (b"" if nothing came).

        Whatever the shell itself printed on the pty (job notices) goes straight to `stray`.
        A descriptor is read directly, waiting only when both have run dry. Raises
        pexpect.EOF when the shell's side is gone.
        """
        assert self.proc is not None and self.pipe is not None
        pipe, pty = self.pipe.fd, self.proc.child_fd
        for attempt in range(2):
            data = _read_some(pipe)
            if data:
                return self.pipe.unframe(data) if self.pipe.unframe else data
            stray.feed(_read_some(pty))
            if attempt == 0 and fd_wait.readable([pipe, pty], timeout):
                continue
        return b""

    def _drain_terminal(self, pattern: re.Pattern[bytes], seen: BoundedCapture) -> bool:
        """Read the terminal up to `pattern` (False on timeout), keeping what came before."""
        assert self.proc is not None
        fd, text = self.proc.child_fd, b""
        deadline = time.monotonic() + _READY_TIMEOUT
        while (remaining := deadline - time.monotonic()) > 0:
            fd_wait.readable([fd], min(remaining, 0.25))
            text += _read_some(fd)
            found = pattern.search(text)
            if found:
                seen.feed(text[: found.start()])
                return True
        seen.feed(text)
        return False

    def _send(self, data: bytes, timeout: float) -> bool:
        """Write all of `data` (a socket or pty may take it in parts); False on timeout."""
        assert self.proc is not None
        fd = self.proc.child_fd
        view = memoryview(data)
        deadline = time.monotonic() + timeout
        while view:
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                fd_wait.writable(fd, min(remaining, 0.25))
        return True

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
            pending += self._read(min(remaining, 0.25), capture)

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
        log_limit: int = 1 << 62,
    ) -> CommandResult:
        if not self.alive:
            self.start()
        assert self.proc is not None
        if self._abandoned is not None:
            self._cut_abandoned()
        nonce = secrets.token_hex(8)
        line = (
            f"eval {_ansi_c_quoted(command)} </dev/null >&{OUTPUT_FD} 2>&{OUTPUT_FD}; "
            f"{_marker_printf(nonce, '$?')}\n"
        )
        capture = BoundedCapture(
            capture_bytes or max(4 * max_output_chars, 1 << 16), log, log_limit=log_limit
        )
        notes: list[str] = []
        started = time.monotonic()
        self._abandoned = nonce  # until its marker is read: a host interrupt leaves it here
        try:
            if self._send(line.encode(), max(timeout, 1.0)):
                remaining = max(timeout - (time.monotonic() - started), 0.0)
                found = self._read_until(_marker_pattern(nonce), remaining, capture)
                if found is not None:
                    self._abandoned = None
                    return self._result(
                        capture, int(found.group(1)), False, max_output_chars, log_hint
                    )
            self._interrupt(capture, nonce)
            notes.append(f"the command was stopped after its {_seconds(timeout)} timeout")
            restarted = not self._resync(capture, nonce)
            if restarted:
                notes.append(
                    "the shell did not recover and was restarted: "
                    "the working directory, variables and background jobs were reset"
                )
                if self._recover is not None:
                    self._recover()
                self.start()
            self._abandoned = None
            result = self._result(capture, None, True, max_output_chars, log_hint)
            result.shell_restarted = restarted
            result.notes = notes
            return result
        except (pexpect.EOF, OSError):
            self.start()
            self._abandoned = None
            result = self._result(capture, None, False, max_output_chars, log_hint)
            result.shell_restarted = True
            result.notes = [
                "the shell exited; a new shell was started in the code directory, "
                "so variables and background jobs were reset"
            ]
            return result

    def _cut_abandoned(self) -> None:
        """The previous step was cut short on the host: stop its command, drop its output."""
        nonce, self._abandoned = self._abandoned, None
        assert nonce is not None
        discard = BoundedCapture(1 << 12)
        try:
            if self._read_until(_marker_pattern(nonce), 0.05, discard) is None:
                self._interrupt(discard, nonce)
                if not self._resync(discard, nonce):
                    raise pexpect.EOF("the shell did not come back")
        except (pexpect.EOF, OSError):
            if self._recover is not None:
                self._recover()
            self.start()
        self._leftover = b""

    def _interrupt(self, capture: BoundedCapture, nonce: str) -> None:
        """SIGINT the foreground job, then SIGKILL its whole process group.

        The group is noted before the interrupt: once SIGINT ends the job's leader, the
        terminal's foreground is the shell again, but the leader's children (say, the
        background half of `a & b`) still belong to the old group.
        """
        assert self.proc is not None
        group = self._jobs.foreground_group(self)
        if group is not None and group != self.idle_group and group > 1:
            self._jobs.signal_group(self, group, signal.SIGINT)
            self._read_until(_marker_pattern(nonce), _INTERRUPT_GRACE, capture)
            self._jobs.signal_group(self, group, signal.SIGKILL)

    def _resync(self, capture: BoundedCapture, old_nonce: str) -> bool:
        """Bring the shell back to a known point after an interrupt: a program that set the
        terminal raw is undone, and a half-sent line is ended first."""
        assert self.proc is not None
        group = self._jobs.foreground_group(self)
        if group is not None and group != self.idle_group and group > 1:
            self._jobs.signal_group(self, group, signal.SIGKILL)
        nonce = secrets.token_hex(8)
        line = f"\nstty -echo -icanon -onlcr isig 2>/dev/null; {_marker_printf(nonce, '0')}\n"
        if not self._send(line.encode(), _RESYNC_TIMEOUT):
            return False
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
        logged = capture.finish_log()
        return CommandResult(
            log_bytes=logged,
            output=render(capture, max_chars, log_hint),
            exit_code=code,
            timed_out=timed_out,
            output_bytes=capture.total,
            raw=capture.data() if capture.complete else None,
            log_path=log_hint,
        )


def _read_some(fd: int) -> bytes:
    """One non-blocking read: b"" when nothing is waiting; pexpect.EOF when the writer is gone."""
    try:
        data = os.read(fd, _READ_BYTES)
    except BlockingIOError:
        return b""
    except OSError as exc:  # EIO: the pty's other side closed
        raise pexpect.EOF(str(exc)) from None
    if not data:
        raise pexpect.EOF("the shell closed its output")
    return data


def _seconds(value: float) -> str:
    """A duration as people write it: "5 s", "2.5 s", "1 h"."""
    if value >= 3600 and value % 3600 == 0:
        return f"{value / 3600:g} h"
    return f"{round(value, 1):g} s"
