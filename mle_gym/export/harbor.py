"""Write competitions as Harbor task directories (harbor 0.24's task format).

One directory per competition:

    task.toml          timeouts, resources, no network, metadata, the submission as an artifact
    instruction.md     the statement the env's reset() shows, plus how this episode ends
    environment/       the agent's container: our agent image with the public data
    tests/             the verifier's container: our grader image with the answers

The answers go only to the verifier, which Harbor runs in a SEPARATE environment after the
agent's is stopped; the submission reaches it as a Harbor artifact (/home/submission).

How the data gets in (`data=`):
- "mount" (default): each Dockerfile only names its base image and a docker-compose.yaml
  beside it bind-mounts the cache read-only. A competition's data can be hundreds of GB,
  which a build would send to the engine and store as an image layer, per task; mounting
  costs nothing, so a whole split exports in about a second. It needs the cache on the host
  that runs the container (one machine, or a shared file system at the same path).
- "copy": the data is hard-linked into the build contexts (environment/data, tests/answers;
  a copy only across file systems) and the Dockerfiles COPY it in, for providers that build
  images remotely (Modal, Daytona, ...). Still no copy on disk, but each build copies.

An unprepared competition is still exported with "mount" (its files need no data) and
reported, so a split exports on a fresh machine and `mle-gym prepare` fills the cache the
mounts point at (starting it before fails, naming the missing path); "copy" skips it. The
output is a function of the competition, the options and the cache path: the same export
twice gives the same bytes.

`task="mlebench"` / `"mlebench-obfuscated"` exports MLE-bench's own prompt instead of ours
(mle_gym.export.harbor_mlebench: its files in the agent's image, read from the user's
MLE-bench checkout at export; no validation server, by design).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mle_gym import __version__
from mle_gym.competitions import get_competition
from mle_gym.competitions.spec import Competition
from mle_gym.data.cache import CompetitionDirs, cache_root
from mle_gym.envs.mlebench_task import TASKS
from mle_gym.export.harbor_mlebench import HarborMLEBench, data_volumes
from mle_gym.grading.bounded import GradingLimits
from mle_gym.sandbox.base import SandboxPaths
from mle_gym.sandbox.image_names import DEFAULT_IMAGE

ORG = "mle-gym"
#: Where the verifier container sees the answers (never a path of the agent's container).
ANSWERS_DIR = "/home/answers"
#: Written in every exported task: an existing directory without it is not replaced.
MARKER_KEY = "mle_gym_version"


@dataclass(frozen=True)
class HarborOptions:
    """What every exported task gets; the defaults are the env's."""

    #: The agent's wall-clock budget (the env's `time_limit`).
    time_limit: float = 24 * 3600.0
    cpus: int = 4
    memory_mb: int = 16 * 1024
    gpus: int = 0
    #: The agent image; None: $MLE_GYM_IMAGE, else mle-gym-agent:latest (as the sandbox).
    image: str | None = None
    #: The verifier's base; None: the grader image built for `agent_image` on this machine.
    grader_image: str | None = None
    reward_mode: str = "normalized"
    #: "mount": bind-mount the cache (no copy; hosts that see the cache). "copy": hard-link
    #: the data into the build contexts, so any provider that builds a Dockerfile has it.
    data: str = "mount"
    #: The prompt: "mle_gym" (our statement), or MLE-bench's ("mlebench",
    #: "mlebench-obfuscated") read from `mlebench_dir` (else $MLE_GYM_MLEBENCH_DIR, else an
    #: installed mlebench package).
    task: str = "mle_gym"
    mlebench_dir: str | None = None

    @property
    def agent_image(self) -> str:
        return self.image or os.environ.get("MLE_GYM_IMAGE") or DEFAULT_IMAGE


@dataclass(frozen=True)
class Exported:
    """One task written (or skipped, saying why): where, and whether its data is there."""

    competition_id: str
    path: Path
    prepared: bool
    skipped: str | None = None


def instruction(comp: Competition, options: HarborOptions) -> str:
    """The env's task statement (same paths, same text) and how a Harbor episode ends.

    The env's reset() also appends its tools' manual; a Harbor agent brings its own tools,
    so that part is replaced by what holds for every agent: where the submission goes and
    the budget.
    """
    paths = SandboxPaths()
    submission = f"{paths.submission}/{comp.submission.filename}"
    statement = comp.render_statement(paths.data, paths.code, paths.submission)
    return (
        f"{statement.rstrip()}\n\n## Submitting\n"
        f"Write your predictions to `{submission}`; when you stop, that file is graded "
        f"(a missing or malformed file is an invalid submission). The data in `{paths.data}` "
        f"is read-only; work in `{paths.code}`. You have {options.time_limit:,.0f} seconds "
        "and no network access.\n"
    )


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML for {value!r}")


def _toml(sections: dict[str, dict[str, object]], top: dict[str, object]) -> str:
    lines = [f"{k} = {_toml_value(v)}" for k, v in top.items()]
    for name, table in sections.items():
        lines += ["", f"[{name}]", *(f"{k} = {_toml_value(v)}" for k, v in table.items())]
    return "\n".join(lines) + "\n"


def task_toml(comp: Competition, options: HarborOptions, prepared: bool) -> str:
    """Harbor's task.toml: separate verifier, no network anywhere, the submission collected."""
    limits = GradingLimits()
    verifier_memory_mb = limits.memory // 2**20 + 2048  # the grading child's cap + Python
    top: dict[str, object] = {"schema_version": "1.4", "artifacts": [SandboxPaths().submission]}
    return _toml(
        {
            "task": {
                "name": f"{ORG}/{comp.id}",
                "version": __version__,
                "description": f"{comp.name} (MLE-bench, {comp.split} split), as mle_gym's env",
                "keywords": ["mle-bench", "kaggle", comp.split],
            },
            "metadata": {
                "competition_id": comp.id,
                "env_id": comp.env_id,
                "split": comp.split,
                "metric": comp.metric,
                "lower_is_better": comp.lower_is_better,
                "reward_mode": options.reward_mode,
                "data_prepared": prepared,
                "task": options.task,
                MARKER_KEY: __version__,
            },
            "verifier": {
                "timeout_sec": float(limits.wall_seconds + 300),
                "environment_mode": "separate",
                "network_mode": "no-network",
            },
            "verifier.environment": {
                "network_mode": "no-network",
                "cpus": 2,
                "memory_mb": verifier_memory_mb,
            },
            "agent": {"timeout_sec": float(options.time_limit), "user": "agent"},
            "environment": {
                "network_mode": "no-network",
                "cpus": options.cpus,
                "memory_mb": options.memory_mb,
                "gpus": options.gpus,
                "workdir": SandboxPaths().code,
            },
        },
        top,
    )


def _compose(*volumes: tuple[Path, str]) -> str:
    """A compose override that bind-mounts each `(source, target)` read-only in `main`."""
    return "services:\n  main:\n    volumes:\n" + "".join(
        "      - type: bind\n"
        f"        source: {json.dumps(str(source))}\n        target: {target}\n"
        "        read_only: true\n"
        for source, target in volumes
    )


def _agent_dockerfile(
    comp: Competition, options: HarborOptions, mlebench: HarborMLEBench | None = None
) -> str:
    data = SandboxPaths().data
    how = (
        f"copied from data/ (hard links of the public files) to {data}"
        if options.data == "copy"
        else f"bind-mounted read-only at {data} by docker-compose.yaml"
    )
    copy = f"COPY data/ {data}/\n" if options.data == "copy" else ""
    return (
        f"# The agent's environment for {comp.id}: mle_gym's agent image, the public data\n"
        f"# {how}. The answers are never here: only the separate verifier (tests/) has them.\n"
        f"FROM {options.agent_image}\n{copy}"
        f"{mlebench.dockerfile_lines() if mlebench else ''}WORKDIR {SandboxPaths().code}\n"
    )


def _verifier_dockerfile(comp: Competition, options: HarborOptions, grader: str) -> str:
    copy = f"COPY answers/ {ANSWERS_DIR}/\n" if options.data == "copy" else ""
    where = "answers/" if options.data == "copy" else "docker-compose.yaml"
    return (
        f"# The verifier of {comp.id}: mle_gym's grader on the agent image\n"
        f"# (`mle-gym export harbor --build-grader` builds it). Answers: {where}.\n"
        f"FROM {grader}\n{copy}COPY test.sh /tests/test.sh\nWORKDIR /tests\n"
    )


def _test_sh(comp: Competition, options: HarborOptions) -> str:
    submission = f"{SandboxPaths().submission}/{comp.submission.filename}"
    return (
        "#!/bin/bash\n"
        "# Grade the collected submission as mle_gym's env does; writes\n"
        "# /logs/verifier/reward.json (reward, score, valid, above_median, any_medal)\n"
        "# and /logs/verifier/report.json (the full grading report).\n"
        f"exec python3 -m mle_gym.export.verify --competition {comp.id} \\\n"
        f"    --submission {submission} --answers {ANSWERS_DIR} \\\n"
        f"    --out /logs/verifier --reward-mode {options.reward_mode}\n"
    )


def task_files(
    comp: Competition,
    options: HarborOptions,
    dirs: CompetitionDirs,
    grader: str,
    mlebench: HarborMLEBench | None = None,
) -> dict[str, str]:
    """Every text file of the task directory, by relative path (copied data aside)."""
    files = {
        "task.toml": task_toml(comp, options, dirs.is_prepared()),
        "instruction.md": mlebench.instruction() if mlebench else instruction(comp, options),
        "environment/Dockerfile": _agent_dockerfile(comp, options, mlebench),
        "tests/Dockerfile": _verifier_dockerfile(comp, options, grader),
        "tests/test.sh": _test_sh(comp, options),
    }
    if mlebench:
        files.update({f"environment/{k}": v for k, v in mlebench.context_files().items()})
    if options.data == "mount":
        public = data_volumes(dirs.public) if mlebench else [(dirs.public, SandboxPaths().data)]
        files["environment/docker-compose.yaml"] = _compose(*public)
        files["tests/docker-compose.yaml"] = _compose((dirs.private, ANSWERS_DIR))
    return files


def _link_tree(source: Path, target: Path) -> None:
    """`target` as a copy of `source` made of hard links (copies across file systems).

    The answer keys mle_gym caches beside the answers are left out: derived, and written
    by later grades, they would make two exports differ.
    """
    from mle_gym.grading.answer_keys import FOLDER

    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source)
        if FOLDER in rel.parts:
            continue
        dest = target / rel
        if path.is_dir():
            dest.mkdir(parents=True, exist_ok=True)
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path.resolve(), dest)
        except OSError:  # another file system, or links not allowed
            shutil.copy2(path, dest)


def _replaceable(task_dir: Path) -> bool:
    """Only a directory an export made (or nothing) is overwritten."""
    if not task_dir.exists():
        return True
    config = task_dir / "task.toml"
    return config.is_file() and MARKER_KEY in config.read_text(errors="replace")


def write_task(
    comp: Competition,
    out: Path,
    options: HarborOptions,
    *,
    root: Path | None = None,
    grader: str,
) -> Exported:
    """Write `out/<id>/`, replacing an earlier export of it.

    With `data="copy"` an unprepared competition is skipped (there is nothing to copy), and
    so is it in MLE-bench's task with `data="mount"` (its entries are bound one by one).
    """
    dirs = CompetitionDirs.of(comp.id, root)
    task_dir = out / comp.id
    if options.data == "copy" and not dirs.is_prepared():
        return Exported(comp.id, task_dir, False, skipped="not prepared, nothing to copy")
    mlebench = None
    if options.task != "mle_gym":
        mlebench = HarborMLEBench.load(
            comp.id, options.task, options.mlebench_dir, options.time_limit, options.gpus
        )
        if not dirs.is_prepared():
            return Exported(
                comp.id, task_dir, False,
                skipped="not prepared: MLE-bench's task binds the data's entries one by one",
            )  # fmt: skip
    if not _replaceable(task_dir):
        raise FileExistsError(f"{task_dir} exists and is not an mle-gym export; not replacing it")
    shutil.rmtree(task_dir, ignore_errors=True)
    for rel, text in task_files(comp, options, dirs, grader, mlebench).items():
        path = task_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o755 if rel.endswith(".sh") else 0o644)
    if options.data == "copy":
        _link_tree(dirs.public, task_dir / "environment" / "data")
        _link_tree(dirs.private, task_dir / "tests" / "answers")
    return Exported(comp.id, task_dir, dirs.is_prepared())


def export_harbor(
    competition_ids: Iterable[str],
    out: str | os.PathLike,
    options: HarborOptions | None = None,
    *,
    root: str | os.PathLike | None = None,
) -> list[Exported]:
    """Export each competition to `out/<id>/` as a Harbor task; returns what was written."""
    from mle_gym.export.grader_image import grader_tag

    options = options or HarborOptions()
    if options.data not in ("mount", "copy"):
        raise ValueError(f"data must be 'mount' or 'copy', got {options.data!r}")
    if options.task not in TASKS:
        raise ValueError(f"task must be one of {', '.join(TASKS)}, got {options.task!r}")
    grader = options.grader_image or grader_tag(options.agent_image)
    out_dir = Path(out).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    cache = (Path(root) if root is not None else cache_root()).resolve()
    comps = [get_competition(c) for c in dict.fromkeys(competition_ids)]
    return [write_task(c, out_dir, options, root=cache, grader=grader) for c in comps]
