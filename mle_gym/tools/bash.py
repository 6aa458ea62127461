"""The bash tool: one command in the persistent shell, reported as an observation."""

from __future__ import annotations

from mle_gym.sandbox.base import CommandResult, Sandbox


def run_bash(
    sandbox: Sandbox, command: str, timeout: float, max_output_chars: int, log_name: str
) -> CommandResult:
    return sandbox.run(command, timeout, max_output_chars=max_output_chars, log_name=log_name)


def describe_result(result: CommandResult) -> str:
    """The observation: the output, then a status line when something is worth saying."""
    lines = [result.output.rstrip("\n")] if result.output.strip() else []
    unsaid = [note for note in result.notes if f"[{note}]" not in result.output]
    if unsaid:  # notes added with add_note are in the output already
        lines.append(f"[{'; '.join(unsaid)}]")
    if result.exit_code not in (0, None):
        lines.append(f"[exit code {result.exit_code}]")
    return "\n".join(lines) if lines else "[no output]"
