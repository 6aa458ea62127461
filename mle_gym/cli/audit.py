"""`mle-gym audit ...`: evidence that a run is clean, read from its run directory.

mle-gym audit plagiarism RUN --kernels DIR     Dolos similarity to public notebooks
mle-gym audit fetch-kernels ID... --lists DIR --out DIR   download those notebooks
mle-gym audit rules RUN --model-endpoint URL   an LLM judge reads trajectories and code
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from mle_gym.analysis.audit_summary import AUDITS_DIR, PLAGIARISM_FILE, RULES_FILE
from mle_gym.cli.show import console, plain, say


def add_audit_parser(sub: Any) -> None:
    p = sub.add_parser("audit", help="check a run is clean: plagiarism, rule violations")
    audits = p.add_subparsers(
        dest="audit", required=True, metavar="AUDIT", help="plagiarism, fetch-kernels or rules"
    )

    q = audits.add_parser(
        "plagiarism",
        help="compare each episode's kept code with public notebooks, using Dolos "
        "(MLE-bench's tool; needs Node and @dodona/dolos-lib: .ci/setup.d/dolos.sh)",
    )
    q.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    q.add_argument(
        "--kernels",
        type=Path,
        required=True,
        metavar="DIR",
        help="the notebooks (.py, .ipynb): DIR/<competition>/ per competition, or DIR itself "
        "(mle-gym audit fetch-kernels downloads them)",
    )
    q.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="flag similarities above this (default: MLE-bench's 0.6)",
    )
    q.add_argument("--json", action="store_true", help="print the findings as JSON")
    q.set_defaults(func=cmd_plagiarism)

    f = audits.add_parser(
        "fetch-kernels",
        help="download the public notebooks MLE-bench lists for competitions (its "
        "kernels.txt), with your Kaggle credentials",
    )
    f.add_argument("competitions", nargs="+", metavar="ID")
    f.add_argument(
        "--lists",
        type=Path,
        required=True,
        metavar="DIR",
        help="an MLE-bench checkout (or its mlebench/competitions folder) holding <id>/kernels.txt",
    )
    f.add_argument("--out", type=Path, required=True, metavar="DIR", help="DIR/<id>/ gets them")
    f.set_defaults(func=cmd_fetch_kernels)

    r = audits.add_parser(
        "rules",
        help="an LLM judge reads each episode's trajectory and kept code: hand-labelled "
        "answers, test labels looked up, internet or outside data, copied solutions",
    )
    r.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    r.add_argument(
        "--model-endpoint",
        required=True,
        metavar="URL",
        help="an OpenAI-compatible base URL (…/v1)",
    )
    r.add_argument("--model", default="gpt-4o-mini", help="the judge model (default: %(default)s)")
    r.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="the environment variable holding the key (never written to disk)",
    )
    r.add_argument(
        "--max-input-chars",
        type=int,
        default=None,
        help="per request; a longer episode is judged in parts, one request each (default 60,000)",
    )
    r.add_argument("--max-tokens", type=int, default=None, help="per answer (default 1,024)")
    r.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    r.set_defaults(func=cmd_rules)


def cmd_plagiarism(args: argparse.Namespace) -> int:
    from mle_gym.analysis.plagiarism import DEFAULT_THRESHOLD, DolosUnavailable, audit_run

    threshold = DEFAULT_THRESHOLD if args.threshold is None else args.threshold
    if not args.kernels.is_dir():
        raise SystemExit(f"{args.kernels} is not a folder of notebooks")
    try:
        findings = audit_run(args.run_dir, args.kernels, threshold)
    except DolosUnavailable as exc:
        raise SystemExit(str(exc)) from None
    data = {"threshold": threshold, "episodes": [f.to_dict() for f in findings]}
    out = args.run_dir / AUDITS_DIR
    out.mkdir(exist_ok=True)
    (out / PLAGIARISM_FILE).write_text(json.dumps(data, indent=2))
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        _plagiarism_table(findings, threshold)
    return 1 if any(f.flagged for f in findings) else 0


def _plagiarism_table(findings: list[Any], threshold: float) -> None:
    from rich.table import Table

    title = f"plagiarism (Dolos; flagged above {threshold:g} or for review)"
    table = Table(title=title)
    for name in ("episode", "similarity", "agent file", "notebook", "flagged", "review"):
        table.add_column(name)
    for f in findings:
        table.add_row(
            f"{f.competition_id}/seed-{f.seed}",
            "—" if f.similarity is None else f"{f.similarity:.3f}",
            plain(f.agent_file or (f.note or "")),
            plain(f.notebook or ""),
            "FLAGGED" if f.flagged else "",
            plain("; ".join(f.review)),
        )
    console().print(table)


def cmd_fetch_kernels(args: argparse.Namespace) -> int:
    from mle_gym.data.kaggle_download import KaggleUnavailable, credentials_present
    from mle_gym.data.kernels import fetch_kernels, how_to_fetch, kernel_refs

    wanted = {c: kernel_refs(args.lists, c) for c in args.competitions}
    if not credentials_present():
        for competition, refs in wanted.items():
            say(how_to_fetch(competition, refs, args.out))
        return 2
    failed_any = False
    for competition, refs in wanted.items():
        try:
            failed = fetch_kernels(refs, args.out / competition)
        except KaggleUnavailable as exc:
            raise SystemExit(str(exc)) from None
        say(f"{competition}: {len(refs) - len(failed)} of {len(refs)} notebooks downloaded")
        for ref in failed:
            say(f"  not downloaded: {ref}", style="yellow")
        failed_any |= bool(failed)
    return 1 if failed_any else 0


def cmd_rules(args: argparse.Namespace) -> int:
    from urllib.parse import urlsplit

    from mle_gym.analysis import rules

    verdicts = rules.audit_run(
        args.run_dir,
        args.model_endpoint,
        args.model,
        api_key_env=args.api_key_env,
        max_input_chars=args.max_input_chars or rules.DEFAULT_MAX_INPUT_CHARS,
        max_tokens=args.max_tokens or rules.DEFAULT_MAX_TOKENS,
    )
    data = {
        "model": args.model,
        "endpoint_host": urlsplit(args.model_endpoint).hostname,
        "questions": rules.QUESTIONS,
        "episodes": [v.to_dict() for v in verdicts],
    }
    out = args.run_dir / AUDITS_DIR
    out.mkdir(exist_ok=True)
    (out / RULES_FILE).write_text(json.dumps(data, indent=2))
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        from rich.table import Table

        table = Table(title=f"rule audit ({args.model})")
        table.add_column("episode")
        for key in rules.QUESTIONS:
            table.add_column(key.replace("_", " "))
        table.add_column("requests")
        table.add_column("flagged")
        for v in verdicts:
            cells = [plain(v.answers.get(k, {}).get("answer", "—")) for k in rules.QUESTIONS]
            flag = "FLAGGED" if v.flagged else (plain(f"error: {v.error}") if v.error else "")
            table.add_row(f"{v.competition_id}/seed-{v.seed}", *cells, str(v.requests), flag)
        console().print(table)
    return 1 if any(v.flagged for v in verdicts) else (2 if any(v.error for v in verdicts) else 0)
