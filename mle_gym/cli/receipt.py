"""`mle-gym receipt RUN_DIR`: which data a run's episodes ran on, and a fresh check that a
training run's development variants hold no test data (mle_gym.analysis.receipt)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from mle_gym.cli.show import say

STYLES = {"pass": "green", "fail": "red", "evaluation": "yellow"}


def add_receipt_parser(sub: Any) -> None:
    p = sub.add_parser(
        "receipt",
        help="for a run made by `mle-gym run` (a batch's or a harness run's --run-dir): the "
        "data each episode ran on, the development variants' manifests (rule, seed, ids, md5 "
        "of every file) and a fresh check that their files are unchanged and their ids lie "
        "within the public training ids and outside the test ids",
        description="Exit status: 0 when every episode ran on a development variant that "
        "passes the check and is the one the run recorded (or the same split carved again); "
        "1 when a check fails (an edited file, an id outside the public training ids or among "
        "the test ids, a variant carved differently since the run, no record); 3 for a run on "
        "the test data (data='test'): an evaluation run, which no receipt covers.",
    )
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the run's --run-dir")
    p.add_argument("--json", action="store_true", help="print the receipt as JSON")
    p.set_defaults(func=cmd_receipt)


def cmd_receipt(args: argparse.Namespace) -> int:
    from mle_gym.analysis.receipt import EXIT_STATUS, build_receipt, receipt_lines

    receipt = build_receipt(args.run_dir)
    if args.json:
        print(json.dumps(receipt, indent=2))
    else:
        lines = receipt_lines(receipt)
        for line in lines[:-1]:
            say(line)
        say(lines[-1], style=f"bold {STYLES[receipt['verdict']]}")
    return EXIT_STATUS[receipt["verdict"]]
