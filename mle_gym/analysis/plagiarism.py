"""Plagiarism audit: each episode's kept code against public notebooks of its competition,
compared by Dolos (the tool MLE-bench's plagiarism detector uses), run under Node.

Every kept text file of the agent is compared, whatever its name (a copy saved as
`solution.txt` counts as much as `solution.py`), as Python; notebooks (`.ipynb`, the agent's
and Kaggle's) by their code cells joined into one script. Per episode the audit reports the
highest similarity between one of the agent's files and one notebook, and flags it above the
threshold (MLE-bench's review threshold, 0.6, by default).

The agent chooses what Dolos reads, so Dolos runs per batch of files, each run bounded in
time, heap and stack, within a time bound per episode; a batch that fails is split until
the file that fails it stands alone. What could not be compared, a kept-code folder that
was cut short, or none at all beside a submission, flags the episode for review with the
reason: nothing an agent leaves can end the audit of a run or slip a file past it unsaid.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mle_gym.data.cache import cache_root
from mle_gym.runs.jsonfile import read_json
from mle_gym.runs.layout import CODE_DIR, CODE_INDEX
from mle_gym.runs.store import RunStore

#: MLE-bench flags submissions whose code is more similar than this to a public notebook.
DEFAULT_THRESHOLD = 0.6
#: Largest agent file compared (kept code copies files up to 1 MiB by default).
MAX_FILE_BYTES = 1024**2
#: One Dolos run: at most this many agent files and bytes, beside all the notebooks.
BATCH_FILES = 100
BATCH_BYTES = 2 * 1024**2
#: Node's bounds per run: seconds, heap (MiB) and stack (KiB, V8's usual size, said aloud).
DOLOS_TIMEOUT = 300.0
DOLOS_HEAP_MB = 2048
DOLOS_STACK_KB = 984
#: All of one episode's Dolos runs together.
EPISODE_SECONDS = 600.0

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


class DolosFailed(RuntimeError):
    """One Dolos run crashed, ran past its bounds or answered something else than pairs."""


@dataclass(frozen=True)
class Finding:
    """One episode's result. `flagged`: the similarity is over the threshold, or the episode
    needs a reviewer for the reasons in `review` (files Dolos could not compare, kept code
    cut short or missing). `not_compared`: agent files left out, with why; `binary`: files
    with a NUL byte, counted and not compared."""

    competition_id: str
    seed: int
    agent_files: int
    notebooks: int
    similarity: float | None
    agent_file: str | None
    notebook: str | None
    flagged: bool
    note: str | None = None
    review: list[str] = field(default_factory=list)
    not_compared: dict[str, str] = field(default_factory=dict)
    binary: int = 0

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


Source = tuple[Path, str]  # the copy Dolos reads, and the name to report


def kernel_files(folder: Path, out: Path) -> list[Source]:
    """The notebooks (`.py`, `.ipynb`) of `folder`, written under `out` as Dolos reads them."""
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not path.is_file() or path.suffix not in (".py", ".ipynb"):
            continue
        text = notebook_code(path) if path.suffix == ".ipynb" else path.read_text(errors="replace")
        found.append(_write(out / "kernels", len(found), path, text, folder))
    return found


def agent_sources(code: Path, out: Path) -> tuple[list[Source], dict[str, str], int]:
    """Every text file under `code`, whatever its name, written under `out` as Dolos reads
    it (a notebook by its code cells; anything else as it is); the files left out with why
    (size, checked before reading); and how many hold a NUL byte (binary: not compared)."""
    found: list[Source] = []
    left_out: dict[str, str] = {}
    binary = 0
    paths = sorted(Path(folder) / name for folder, _, names in os.walk(code) for name in names)
    for path in paths:
        shown = str(path.relative_to(code))
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode):
            continue
        if info.st_size > MAX_FILE_BYTES:
            left_out[shown] = f"over {MAX_FILE_BYTES:,} bytes"
            continue
        data = path.read_bytes()
        if b"\0" in data:
            binary += 1
            continue
        cells = notebook_code(path) if path.suffix == ".ipynb" else ""
        text = cells if cells.strip() else data.decode(errors="replace")  # not a notebook
        found.append(_write(out / "agent", len(found), path, text, code))
    return found, left_out, binary


def _write(folder: Path, number: int, path: Path, text: str, top: Path) -> Source:
    """`text` as a numbered `.py` file in `folder` (Dolos picks Python by the suffix; the
    agent's own name, whatever bytes it holds, is only ever reported)."""
    copy = folder / f"{number:05d}.py"
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text(text, errors="replace")
    return copy, str(path.relative_to(top))


def dolos_pairs(files: list[Path], timeout: float = DOLOS_TIMEOUT) -> list[dict[str, Any]]:
    """Every pair of `files` with Dolos's similarity (0 to 1), from one Node run bounded in
    time, heap and stack; `DolosFailed` says why when it ends otherwise."""
    where = check_dolos()
    argv = ["node", f"--max-old-space-size={DOLOS_HEAP_MB}", f"--stack-size={DOLOS_STACK_KB}"]
    try:
        result = subprocess.run(
            [*argv, "--input-type=module", "--eval", _PAIRS_SCRIPT],
            input=json.dumps({"files": [str(f) for f in files]}),
            capture_output=True,
            text=True,
            errors="replace",
            cwd=where,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise DolosFailed(f"ran past its {timeout:.0f} s bound") from None
    if result.returncode != 0:
        raise DolosFailed(_why(result.returncode, result.stderr))
    try:
        pairs = json.loads(result.stdout)
    except json.JSONDecodeError:
        raise DolosFailed("its output was not JSON") from None
    if not isinstance(pairs, list):
        raise DolosFailed("its output was not a list of pairs")
    return pairs


def _why(code: int, stderr: str) -> str:
    """The line of Node's error output that names the error (RangeError, heap limit)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    named = [line for line in lines if "Error" in line.split(":")[0] or "FATAL" in line]
    line = (named or lines or ["no message"])[0][:300]
    how = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
    return f"{how}: {line}"


def _batches(files: list[Source]) -> list[list[Source]]:
    """`files` in order, cut into runs of at most BATCH_FILES files and BATCH_BYTES bytes."""
    batches: list[list[Source]] = []
    size = 0
    for source in files:
        bytes_ = source[0].stat().st_size
        if not batches or len(batches[-1]) >= BATCH_FILES or size + bytes_ > BATCH_BYTES:
            batches.append([])
            size = 0
        batches[-1].append(source)
        size += bytes_
    return batches


def _compare(
    batch: list[Source], books: list[Source], deadline: float, failed: dict[str, str]
) -> list[dict[str, Any]]:
    """Dolos's pairs for `batch` beside the notebooks. A run that fails is split in halves,
    down to the one file that fails it, which goes into `failed` with the reason."""
    left = deadline - time.monotonic()
    if left <= 0:
        failed.update({name: "the episode's time bound was spent first" for _, name in batch})
        return []
    try:
        return dolos_pairs([copy for copy, _ in batch + books], min(DOLOS_TIMEOUT, left))
    except DolosFailed as exc:
        if len(batch) == 1:
            failed[batch[0][1]] = f"Dolos failed: {exc}"
            return []
    half = len(batch) // 2
    return _compare(batch[:half], books, deadline, failed) + _compare(
        batch[half:], books, deadline, failed
    )


def audit_episode(
    competition_id: str,
    seed: int,
    code: Path,
    kernels: Path,
    threshold: float,
    doubts: tuple[str, ...] = (),
    seconds: float = EPISODE_SECONDS,
) -> Finding:
    """The highest similarity between the episode's code and a notebook of `kernels`.
    `doubts`: reasons to review the episode found before (kept code cut short, or none
    beside a submission); Dolos's failures add theirs."""
    deadline = time.monotonic() + seconds
    with tempfile.TemporaryDirectory(prefix="mle-gym-dolos-") as scratch:
        mine, left_out, binary = (
            agent_sources(code, Path(scratch)) if code.is_dir() else ([], {}, 0)
        )
        books = kernel_files(kernels, Path(scratch))
        failed: dict[str, str] = {}
        pairs = []
        if mine and books:
            for batch in _batches(mine):
                pairs += _compare(batch, books, deadline, failed)
        review = list(doubts)
        not_compared = {**left_out, **failed}
        if not_compared:
            name, why = next(iter(not_compared.items()))
            review.append(f"audit failed for {len(not_compared)} file(s), e.g. {name}: {why}")
        base = Finding(
            competition_id, seed, len(mine) - len(failed), len(books), None, None, None,
            bool(review), review=review, not_compared=not_compared, binary=binary,
        )  # fmt: skip
        if not mine or not books:
            what = "no kept code (text files)" if not mine else f"no notebooks in {kernels}"
            return _with(base, note=what)
        names = {str(copy): name for copy, name in mine + books}
        agent_copies = {str(copy) for copy, _ in mine}
        best: dict[str, Any] | None = None
        for pair in pairs:
            if (pair["left"] in agent_copies) == (pair["right"] in agent_copies):
                continue
            if best is None or pair["similarity"] > best["similarity"]:
                best = pair
        if best is None:
            return _with(base, note="no file could be compared" if failed else "no pair found")
        ours, theirs = (
            (best["left"], best["right"])
            if best["left"] in agent_copies
            else (best["right"], best["left"])
        )
        similarity = round(float(best["similarity"]), 4)
        return _with(
            base,
            similarity=similarity,
            agent_file=names.get(ours),
            notebook=names.get(theirs),
            flagged=similarity > threshold or bool(review),
        )


def kept_code_doubts(episode: Path, result: dict[str, Any] | None) -> tuple[str, ...]:
    """Reasons to review an episode whose kept code may not be all it wrote: keeping failed,
    the listing was cut short, files small enough to keep were not kept (past the total or
    the time bound, unreadable), or nothing was kept although a submission was made."""
    reasons = []
    code = (result or {}).get("code") or {}
    if code.get("error"):
        reasons.append(f"keeping the code failed: {code['error']}")
    try:
        index = read_json(episode / CODE_INDEX)
    except (OSError, ValueError):
        index = None
    if isinstance(index, dict):
        bound = (index.get("bounds") or {}).get("max_file_bytes", MAX_FILE_BYTES)
        if index.get("listing_truncated"):
            listed = len(index.get("files", []))
            reasons.append(f"kept code incomplete: the listing stopped at {listed} files")
        small = [
            f for f in index.get("files", []) if not f.get("kept") and f.get("bytes", 0) <= bound
        ]
        if small:
            reasons.append(
                f"kept code incomplete: {len(small)} file(s) of at most {bound:,} bytes not "
                f"kept, e.g. {small[0].get('path')} ({small[0].get('reason')})"
            )
    if (result or {}).get("submission") and not _has_files(episode / CODE_DIR):
        reasons.append("no kept code, but the episode made a submission")
    return tuple(reasons)


def _has_files(code: Path) -> bool:
    """Whether `code` holds a file (binary or not: the finding counts which were read)."""
    return code.is_dir() and any(
        Path(folder, name).is_file() for folder, _, names in os.walk(code) for name in names
    )


def audit_run(root: Path, kernels: Path, threshold: float = DEFAULT_THRESHOLD) -> list[Finding]:
    """Every finished episode of the run in `root`; `kernels/<competition>/` when it exists,
    else `kernels` itself, holds the notebooks. One episode's failure is its own finding."""
    check_dolos()
    findings = []
    store = RunStore(root)
    for record in store.records():
        if record.state != "done":
            continue
        episode = store.episodes / record.key
        per_competition = kernels / record.competition_id
        folder = per_competition if per_competition.is_dir() else kernels
        doubts = kept_code_doubts(episode, record.result)
        try:
            finding = audit_episode(
                record.competition_id, record.seed, episode / CODE_DIR, folder, threshold, doubts
            )
        except (OSError, ValueError, DolosFailed) as exc:
            review = [*doubts, f"audit failed: {type(exc).__name__}: {exc}"]
            finding = Finding(
                record.competition_id, record.seed, 0, 0, None, None, None, True, review=review
            )
        findings.append(finding)
    return findings


def _with(finding: Finding, **changes: Any) -> Finding:
    return Finding(**{**asdict(finding), **changes})
