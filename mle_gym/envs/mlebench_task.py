"""MLE-bench's own task (`task="mlebench"` or `"mlebench-obfuscated"`), read at run time
from the user's copy of MLE-bench.

Every published MLE-bench number was produced with MLE-bench's instructions
(`environment/instructions.txt`) and the competition's Kaggle page
(`mlebench/competitions/<id>/description.md`), or their obfuscated versions in its
contamination experiment. mle_gym ships none of that text: it reads it from the user's
checkout (`mlebench_dir=`, else $MLE_GYM_MLEBENCH_DIR, else an importable `mlebench`
package installed from a clone) and shows it at MLE-bench's container paths.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: The task options: mle_gym's own statement, MLE-bench's, MLE-bench's obfuscated one.
TASKS = ("mle_gym", "mlebench", "mlebench-obfuscated")
MLEBENCH_DIR_VARIABLE = "MLE_GYM_MLEBENCH_DIR"
MLEBENCH_REPOSITORY = "https://github.com/openai/mle-bench"

#: MLE-bench's container paths (its environment/Dockerfile and agents/.shared_env).
INSTRUCTIONS_PATH = "/home/instructions.txt"
OBFUSCATED_INSTRUCTIONS_PATH = "/home/instructions_obfuscated.txt"
VALIDATE_SCRIPT_PATH = "/home/validate_submission.sh"
DESCRIPTION_NAME = "description.md"
OBFUSCATED_DESCRIPTION_NAME = "description_obfuscated.md"
#: Its grading server's port on the sandbox's own loopback.
VALIDATION_PORT = 5000
#: How that server's /validate decides here: the format check (default: no metric runs
#: on the answers during the episode), or the metric, as MLE-bench's own server does.
VALIDATION_MODES = ("format", "metric")


class MLEBenchNotFound(FileNotFoundError):
    """The user's MLE-bench copy, or one of its files, is missing (the message says which
    and how to get it)."""


def _how_to_get() -> str:
    return (
        f"task='mlebench' reads MLE-bench's own files from your copy of it: "
        f"`git clone {MLEBENCH_REPOSITORY}` and pass mlebench_dir=<the clone> "
        f"(or set ${MLEBENCH_DIR_VARIABLE}, or `pip install -e <the clone>`)"
    )


def find_mlebench_dir(mlebench_dir: str | Path | None = None) -> Path:
    """The root of the user's MLE-bench checkout: `mlebench_dir`, else
    $MLE_GYM_MLEBENCH_DIR, else the clone an importable `mlebench` package lives in."""
    given = mlebench_dir or os.environ.get(MLEBENCH_DIR_VARIABLE)
    if given:
        root = Path(given).expanduser()
        if not root.is_dir():
            raise MLEBenchNotFound(f"no MLE-bench checkout at {root}. {_how_to_get()}")
        return root
    spec = importlib.util.find_spec("mlebench")
    if spec is not None and spec.origin:
        return Path(spec.origin).resolve().parent.parent
    raise MLEBenchNotFound(f"no MLE-bench checkout was given. {_how_to_get()}")


def _read(path: Path) -> str:
    if not path.is_file():
        raise MLEBenchNotFound(f"{path} is missing from the MLE-bench checkout. {_how_to_get()}")
    return path.read_text(encoding="utf-8")


@dataclass(frozen=True)
class MLEBenchTask:
    """MLE-bench's text for one competition, as its container shows it to an agent.

    `instructions` and `description` are what /home/instructions.txt and
    /home/data/description.md hold: the plain files, or in the obfuscated task the
    obfuscated ones (what MLE-bench's agents read after their OBFUSCATE=true step, with
    the plain text nowhere in the sandbox). The plain task also carries
    /home/instructions_obfuscated.txt, as MLE-bench's image does (its prepare step puts only
    description.md beside the data)."""

    competition_id: str
    obfuscated: bool
    instructions: str
    description: str
    validate_script: str
    #: The obfuscated instructions, shown beside the plain ones; None in the obfuscated task.
    other_instructions: str | None

    @classmethod
    def load(cls, root: Path, competition_id: str, obfuscated: bool) -> MLEBenchTask:
        environment = root / "environment"
        competition = root / "mlebench" / "competitions" / competition_id
        if not competition.is_dir():
            raise MLEBenchNotFound(
                f"{competition} is missing: {competition_id} is not an MLE-bench competition "
                f"in this checkout, so it has no MLE-bench task. {_how_to_get()}"
            )
        plain_instructions = _read(environment / "instructions.txt")
        hidden_instructions = _read(environment / "instructions_obfuscated.txt")
        description = _read(
            competition / (OBFUSCATED_DESCRIPTION_NAME if obfuscated else DESCRIPTION_NAME)
        )
        return cls(
            competition_id=competition_id,
            obfuscated=obfuscated,
            instructions=hidden_instructions if obfuscated else plain_instructions,
            description=description,
            validate_script=_read(environment / "validate_submission.sh"),
            other_instructions=None if obfuscated else hidden_instructions,
        )


def format_time_limit(seconds: float) -> str:
    """The time limit as MLE-bench's agents print it into their prompt ("Xhrs Ymins Zsecs")."""
    total = int(seconds)
    return f"{total // 3600}hrs {total % 3600 // 60}mins {total % 60}secs"


def mlebench_variables(
    competition_id: str,
    *,
    time_limit: float,
    max_steps: int,
    hardware: str,
    agent_dir: str,
    submission_dir: str,
    logs_dir: str,
    code_dir: str,
) -> dict[str, str]:
    """The variables MLE-bench's runner and agents' start scripts give the agent: the
    container's directories (agents/.shared_env), COMPETITION_ID (agents/run.py), the
    budget its agents' configs set (TIME_LIMIT_SECS, STEP_LIMIT) and what their start.sh
    derives (TIME_LIMIT, HARDWARE), here from the env's own budget and sandbox."""
    return {
        "COMPETITION_ID": competition_id,
        "SUBMISSION_DIR": submission_dir,
        "LOGS_DIR": logs_dir,
        "CODE_DIR": code_dir,
        "AGENT_DIR": agent_dir,
        "TIME_LIMIT_SECS": str(int(time_limit)),
        "TIME_LIMIT": format_time_limit(time_limit),
        "STEP_LIMIT": str(max_steps),
        "HARDWARE": hardware,
    }


_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def fill_placeholders(text: str, variables: Mapping[str, str]) -> str:
    """`text` with `$NAME` and `${NAME}` replaced for each NAME in `variables`, as MLE-bench's
    agents fill their prompt with `envsubst`; other `$` text is left as it is."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return variables.get(name, match.group(0))

    return _PLACEHOLDER.sub(value, text)
