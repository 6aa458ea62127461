"""What both backends share: commands go to a persistent `ShellSession`, and a named
command's output is logged on the host in a directory the sandbox sees read-only.

Logs are bounded: each keeps its command's first `STEP_LOG_BYTES` and its tail, and an
episode's logs together stop growing at `EPISODE_LOG_BYTES` (then only tails are kept).

After each command the same two checks run on both backends, through three hooks each
backend answers in its own way (a cgroup locally, the container's cgroup in docker): were
processes killed for memory, and is the process table full (a fork bomb). A full table
is noticed in `_recover` too, which the shell calls before restarting itself, since by the
time the command's result is seen the processes are already gone.
"""

from __future__ import annotations

from pathlib import Path

from mle_gym.sandbox.base import CommandResult, Sandbox
from mle_gym.sandbox.shell import ShellSession

STEP_LOG_BYTES = 32 * 1024**2
EPISODE_LOG_BYTES = 512 * 1024**2


class ShellBackedSandbox(Sandbox):
    shell: ShellSession | None = None
    #: Host directory mounted read-only at `paths.logs`; set while the sandbox runs.
    logs_dir: Path | None = None
    pids_limit: int | None = None
    _logged: tuple[Path | None, int] = (None, 0)
    _oom_kills: int = 0
    _pids_hit: bool = False

    def run(
        self,
        command: str,
        timeout: float,
        *,
        max_output_chars: int = 20_000,
        log_name: str | None = None,
        capture_bytes: int | None = None,
    ) -> CommandResult:
        if self.shell is None or self.logs_dir is None:
            raise RuntimeError("the sandbox is not started")
        if log_name is None:
            result = self.shell.run(
                command, timeout, max_output_chars=max_output_chars, capture_bytes=capture_bytes
            )
        else:
            owner, used = self._logged
            used = used if owner == self.logs_dir else 0
            with open(self.logs_dir / log_name, "wb") as log_file:
                result = self.shell.run(
                    command,
                    timeout,
                    max_output_chars=max_output_chars,
                    log=log_file,
                    log_hint=f"{self.paths.logs}/{log_name}",
                    capture_bytes=capture_bytes,
                    log_limit=max(0, min(STEP_LOG_BYTES, EPISODE_LOG_BYTES - used)),
                )
            self._logged = (self.logs_dir, used + result.log_bytes)
        return self._after_run(result)

    # -- the hooks a backend answers -------------------------------------------------------
    def _oom_kill_count(self) -> int:
        """How many of the sandbox's processes the kernel has killed for memory so far."""
        return 0

    def _slots_exhausted(self) -> bool:
        """True when (nearly) every process slot under `pids_limit` is taken."""
        return False

    def _kill_all_processes(self) -> None:
        """Kill every process of the agent; files stay."""

    def _memory_limit(self) -> str | None:
        return None

    # -- the shared checks ------------------------------------------------------------------
    def _recover(self) -> None:
        """Called by the shell before it restarts: note a full process table, clear it."""
        self._pids_hit = self._slots_exhausted()
        self._kill_all_processes()

    def _after_run(self, result: CommandResult) -> CommandResult:
        # "Killed" (bash's word for a child's SIGKILL): a later command may have reset the
        # exit code, as in `python train.py; echo done`
        killed = "Killed" in result.output
        if result.exit_code in (137, None) or result.shell_restarted or killed:
            kills = self._oom_kill_count()
            if kills > self._oom_kills:
                result.add_note(f"killed: out of memory, limit {self._memory_limit()}")
            self._oom_kills = kills
        recovered, self._pids_hit = self._pids_hit, False
        if result.timed_out and self.pids_limit and (recovered or self._slots_exhausted()):
            if not recovered:
                self._kill_all_processes()
                assert self.shell is not None
                self.shell.start()
            result.shell_restarted = True
            result.add_note(
                f"the sandbox ran out of process slots (pids limit {self.pids_limit}); all its "
                "processes were killed and a new shell started (files are kept)"
            )
        return result
