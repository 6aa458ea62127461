"""The variables every sandbox shell starts with, on both backends.

Agents type `git log`, `man` or `less` as readily as `ls`; with a pager or an editor
waiting for a keypress the step would hang until its timeout. So pagers print straight
through and editors fail at once instead of waiting for input.
"""

from __future__ import annotations

NON_INTERACTIVE = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "MANPAGER": "cat",
    "SYSTEMD_PAGER": "",
    "LESS": "-FRX",
    "EDITOR": "false",
    "VISUAL": "false",
    "GIT_EDITOR": "false",
    "GIT_TERMINAL_PROMPT": "0",
    "DEBIAN_FRONTEND": "noninteractive",
    "PIP_NO_INPUT": "1",
}


def shell_environment(home: str, path: str | None, extra: dict[str, str]) -> dict[str, str]:
    """The shell's variables; `extra` (the episode's own) wins over the defaults."""
    env = {
        "HOME": home,
        "TERM": "dumb",
        "LANG": "C.UTF-8",
        "PS1": "",
        "PYTHONUNBUFFERED": "1",
        "MPLBACKEND": "Agg",
        **NON_INTERACTIVE,
    }
    if path is not None:
        env["PATH"] = path
    env.update(extra)
    return env
