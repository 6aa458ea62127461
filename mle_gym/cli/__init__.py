"""The `mle-gym` command: a module per verb group (data, episodes, batch, report, audit,
housekeeping, runtime) on shared options (common) and output (show); `app` builds the parser."""

from mle_gym.cli.app import build_parser, main

__all__ = ["build_parser", "main"]
