"""The `mle-gym` command's parser and dispatch: each verb group's module adds its parsers
(data, episodes, report, audit, housekeeping, export), and errors a user can act on are one
`error:` line with exit status 2."""

from __future__ import annotations

import argparse
import errno
import sys
import warnings

import mle_gym
from mle_gym.cli.common import SPLITS
from mle_gym.cli.show import error, say, show_warning

# Everything heavy (gymnasium, rich, pandas, the grader, the batch runner) is imported by the
# command that needs it, so `mle-gym --help` starts quickly.


def build_parser() -> argparse.ArgumentParser:
    from mle_gym.cli import audit, data, episodes, housekeeping, receipt, report, runtime
    from mle_gym.export.command import add_export_parser

    parser = argparse.ArgumentParser(
        prog="mle-gym",
        description="Every MLE-bench competition as a Gymnasium environment: prepare data, "
        "grade submissions, run policies.",
        epilog="Start with `mle-gym demo`; `mle-gym COMMAND --help` describes each command.",
    )
    parser.add_argument("--version", action="version", version=f"mle-gym {mle_gym.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    data.add_parsers(sub)
    episodes.add_parsers(sub)
    report.add_report_parser(sub, SPLITS)
    report.add_regrade_parser(sub)
    receipt.add_receipt_parser(sub)
    audit.add_audit_parser(sub)
    housekeeping.add_parsers(sub)
    runtime.add_parser(sub)  # after `run`, whose retry options it adds
    add_export_parser(sub, SPLITS)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # a batch's resume command
    if args.command is None:
        parser.print_help()
        return 0
    from mle_gym.competitions import UnknownCompetition

    warnings.showwarning = show_warning
    try:
        return args.func(args)
    except (UnknownCompetition, FileNotFoundError, RuntimeError, ValueError) as exc:
        error(str(exc))
        return 2
    except SystemExit as exc:  # a verb's own refusal, e.g. SystemExit("name a competition")
        if not isinstance(exc.code, str):
            raise
        error(exc.code)
        return 2
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        error(
            f"disk full: could not write {exc.filename or 'a file'} ({exc.strerror}). "
            "Free some space and run the same command again (a batch resumes where it "
            "stopped; graded episodes are kept)"
        )
        return 2
    except KeyboardInterrupt:
        say("interrupted", style="red")
        return 130
    except BrokenPipeError:  # e.g. `mle-gym list --json | head`: the reader has enough
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
