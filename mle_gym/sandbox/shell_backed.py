"""What both backends share: commands go to a persistent `ShellSession`, and a named
command's output is logged on the host in a directory the sandbox sees read-only.

Logs are bounded: each keeps its command's first `STEP_LOG_BYTES` and its tail, and an
episode's logs together stop growing at `EPISODE_LOG_BYTES` (then only tails are kept).
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
    _logged: tuple[Path | None, int] = (None, 0)

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

    def _after_run(self, result: CommandResult) -> CommandResult:
        """A backend's own checks after each command (e.g. out-of-memory kills)."""
        return result
