"""Plagiarism audit: each episode's kept code against public notebooks of its competition,
compared by Dolos (the tool MLE-bench's plagiarism detector uses), run under Node.

Python scripts are compared as they are; notebooks (`.ipynb`) by their code cells, joined
into one script. Per episode the audit reports the highest similarity between one of the
agent's files and one notebook, and flags it above the threshold (MLE-bench's review
threshold, 0.6, by default).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mle_gym.batch.store import CODE_DIR, RunStore
from mle_gym.data.cache import cache_root

#: MLE-bench flags submissions whose code is more similar than this to a public notebook.
DEFAULT_THRESHOLD = 0.6
MAX_FILES = 500
DOLOS_TIMEOUT = 600.0

# Reads {"files": [...]} on stdin, writes every pair's paths and similarity as JSON.
_PAIRS_SCRIPT = """
import { Dolos } from "@dodona/dolos-lib";
let input = "";
for await (const chunk of process.stdin) input += chunk;
const { files } = JSON.parse(input);
const report = await new Dolos().analyzePaths(files);
const pairs = report.allPairs().map((p) => ({
  left: p.leftFile.path, right: p.rightFile.path, similarity: p.similarity,
}));
process.stdout.write(JSON.stringify(pairs));
"""


class DolosUnavailable(RuntimeError):
    """Node or @dodona/dolos-lib is missing; the message says how to install them."""


@dataclass(frozen=True)
class Finding:
    competition_id: str
    seed: int
    agent_files: int
    notebooks: int
    similarity: float | None
    agent_file: str | None
    notebook: str | None
    flagged: bool
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def dolos_dir() -> Path:
    """Where `.ci/setup.d/dolos.sh` installs @dodona/dolos-lib: `$MLE_GYM_DOLOS_DIR`, else
    `dolos` under `$MLE_GYM_HOME`, as every large cache (.ci/cache-dirs.sh)."""
    configured = os.environ.get("MLE_GYM_DOLOS_DIR")
    return Path(configured).expanduser() if configured else cache_root() / "dolos"


def check_dolos() -> Path:
    """The install folder of dolos-lib, or DolosUnavailable saying how to get it."""
    where = dolos_dir()
    if shutil.which("node") is None:
        raise DolosUnavailable(
            "Node.js is needed for the plagiarism audit: apt-get install nodejs npm "
            "(or see .ci/setup.d/dolos.sh)"
        )
    if not (where / "node_modules" / "@dodona" / "dolos-lib").is_dir():
        raise DolosUnavailable(
            f"@dodona/dolos-lib is not installed in {where}: run `bash .ci/setup.d/dolos.sh`, "
            f"or `npm install --prefix {where} @dodona/dolos-lib`, or set MLE_GYM_DOLOS_DIR"
        )
    return where


def notebook_code(path: Path) -> str:
    """A notebook's code cells as one script (markdown and outputs left out)."""
    try:
        cells = json.loads(path.read_text(errors="replace")).get("cells", [])
    except (json.JSONDecodeError, AttributeError):
        return ""
    sources = []
    for cell in cells:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            sources.append("".join(source) if isinstance(source, list) else str(source))
    return "\n\n".join(sources) + "\n"


def comparable_files(folder: Path, out: Path, tag: str) -> list[tuple[Path, str]]:
    """Scripts of `folder` as Dolos reads them, written under `out`: (the copy, the name to
    report). Notebooks become scripts of their code cells."""
    found = []
    for path in sorted(folder.rglob("*")):
        if len(found) >= MAX_FILES or not path.is_file() or path.is_symlink():
            continue
        name = str(path.relative_to(folder))
        if path.suffix == ".py":
            text = path.read_text(errors="replace")
        elif path.suffix == ".ipynb":
            text = notebook_code(path)
        else:
            continue
        copy = out / tag / f"{len(found):04d}_{path.name}.py"
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(text)
        found.append((copy, name))
    return found


def dolos_pairs(files: list[Path], timeout: float = DOLOS_TIMEOUT) -> list[dict[str, Any]]:
    """Every pair of `files` with Dolos's similarity (0 to 1)."""
    where = check_dolos()
    result = subprocess.run(
        ["node", "--input-type=module", "--eval", _PAIRS_SCRIPT],
        input=json.dumps({"files": [str(f) for f in files]}),
        capture_output=True,
        text=True,
        cwd=where,
        timeout=timeout,
    )
    if result.returncode != 0:
        raise RuntimeError(f"Dolos failed: {result.stderr.strip()[-2000:]}")
    return json.loads(result.stdout)


def audit_episode(
    competition_id: str, seed: int, code: Path, kernels: Path, threshold: float
) -> Finding:
    """The highest similarity between the episode's code and a notebook of `kernels`."""
    with tempfile.TemporaryDirectory(prefix="mle-gym-dolos-") as scratch:
        agent = comparable_files(code, Path(scratch), "agent") if code.is_dir() else []
        books = comparable_files(kernels, Path(scratch), "kernels")
        base = Finding(competition_id, seed, len(agent), len(books), None, None, None, False)
        if not agent or not books:
            what = "no kept code (.py, .ipynb)" if not agent else f"no notebooks in {kernels}"
            return _with_note(base, what)
        names = {str(copy): name for copy, name in agent + books}
        agent_copies = {str(copy) for copy, _ in agent}
        best: dict[str, Any] | None = None
        for pair in dolos_pairs([copy for copy, _ in agent + books]):
            left_agent, right_agent = pair["left"] in agent_copies, pair["right"] in agent_copies
            if left_agent == right_agent:
                continue
            if best is None or pair["similarity"] > best["similarity"]:
                best = pair
        if best is None:
            return _with_note(base, "Dolos found no pair")
        mine, theirs = (
            (best["left"], best["right"])
            if best["left"] in agent_copies
            else (best["right"], best["left"])
        )
        similarity = round(float(best["similarity"]), 4)
        return Finding(
            competition_id, seed, len(agent), len(books), similarity,
            names.get(mine), names.get(theirs), similarity > threshold,
        )  # fmt: skip


def audit_run(root: Path, kernels: Path, threshold: float = DEFAULT_THRESHOLD) -> list[Finding]:
    """Every finished episode of the run in `root`; `kernels/<competition>/` when it exists,
    else `kernels` itself, holds the notebooks."""
    check_dolos()
    findings = []
    for record in RunStore(root).records():
        if record.state != "done":
            continue
        episode = Path(root) / "episodes" / record.competition_id / f"seed-{record.seed}"
        per_competition = kernels / record.competition_id
        folder = per_competition if per_competition.is_dir() else kernels
        findings.append(
            audit_episode(record.competition_id, record.seed, episode / CODE_DIR, folder, threshold)
        )
    return findings


def _with_note(finding: Finding, note: str) -> Finding:
    return Finding(**{**asdict(finding), "note": note})
