"""MLE-bench's own task (`--task mlebench` / `mlebench-obfuscated`) in an exported Harbor task.

The agent's image gets MLE-bench's files at MLE-bench's paths, read at export time from the
user's MLE-bench checkout into the task's build context (the user's export directory; this
repository holds none of that text): /home/instructions.txt (and, in the plain task,
/home/instructions_obfuscated.txt), /home/data/description.md beside the public data, and
the variables MLE-bench's agents read (COMPETITION_ID, SUBMISSION_DIR, ..., TIME_LIMIT).

Validation is not available in Harbor, by design: MLE-bench's endpoint grades the file
against the competition's answers, and in a Harbor task those exist only in the separate
verifier, which starts after the agent's environment has stopped; a validator inside the
agent's container would need the answers there. So /home/validate_submission.sh is a script
that says so and exits 1, nothing listens on localhost:5000, and instruction.md ends with a
note saying both.

With `--data mount` the public folder's entries are bound one by one at /home/data/<name>
(the image's own /home/data holds description.md), so the prepared folder is not touched;
an unprepared competition has no entries to bind yet and is skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from mle_gym.envs.mlebench_setup import hardware
from mle_gym.envs.mlebench_task import (
    DESCRIPTION_NAME,
    INSTRUCTIONS_PATH,
    OBFUSCATED_INSTRUCTIONS_PATH,
    VALIDATE_SCRIPT_PATH,
    VALIDATION_PORT,
    MLEBenchTask,
    fill_placeholders,
    find_mlebench_dir,
    mlebench_variables,
)
from mle_gym.sandbox.base import SandboxPaths, public_entries

#: The build context's folder for MLE-bench's files.
CONTEXT = "mlebench"
#: Where a Harbor agent's own files go (MLE-bench's AGENT_DIR).
AGENT_DIR = "/home/agent"

NOT_AVAILABLE = (
    "Submission not checked: this Harbor task has no validation server. MLE-bench validates "
    "a submission by grading it against the competition's answers, and here only Harbor's "
    "separate verifier has them (it runs after you stop). Check the format yourself against "
    "/home/data/sample_submission.csv: the same columns, ids and number of rows."
)


def validate_script() -> str:
    """What /home/validate_submission.sh is in a Harbor task: it says why it cannot check."""
    return (
        "#!/bin/bash\n"
        "# mle_gym's Harbor export of MLE-bench's task (docs/harbor.md): no validation here.\n"
        f"echo {json.dumps(NOT_AVAILABLE)} >&2\nexit 1\n"
    )


@dataclass(frozen=True)
class HarborMLEBench:
    """MLE-bench's text for one exported competition and the variables its agents read."""

    task: MLEBenchTask
    variables: dict[str, str]

    @classmethod
    def load(
        cls,
        competition_id: str,
        task: str,
        mlebench_dir: str | Path | None,
        time_limit: float,
        gpus: int,
    ) -> HarborMLEBench:
        text = MLEBenchTask.load(
            find_mlebench_dir(mlebench_dir), competition_id, task == "mlebench-obfuscated"
        )
        paths = SandboxPaths()
        variables = mlebench_variables(
            competition_id,
            time_limit=time_limit,
            max_steps=0,
            hardware=hardware(gpus),
            agent_dir=AGENT_DIR,
            submission_dir=paths.submission,
            logs_dir=paths.logs,
            code_dir=paths.code,
        )
        variables.pop("STEP_LIMIT")  # a Harbor trial has a time budget, no step budget
        return cls(text, variables)

    def instruction(self) -> str:
        """instruction.md: MLE-bench's instructions, filled as its agents fill them, and what
        differs in Harbor."""
        text = fill_placeholders(self.task.instructions, self.variables).rstrip()
        return (
            f"{text}\n\n## In this Harbor task\n"
            f"The validation server (`http://localhost:{VALIDATION_PORT}/validate`) is not "
            f"available here and `{VALIDATE_SCRIPT_PATH}` only says so: {NOT_AVAILABLE}\n"
        )

    def context_files(self) -> dict[str, str]:
        """The build context's files, by path relative to environment/."""
        files = {
            f"{CONTEXT}/instructions.txt": self.task.instructions,
            f"{CONTEXT}/{DESCRIPTION_NAME}": self.task.description,
            f"{CONTEXT}/validate_submission.sh": validate_script(),
        }
        if self.task.other_instructions is not None:
            files[f"{CONTEXT}/instructions_obfuscated.txt"] = self.task.other_instructions
        return files

    def dockerfile_lines(self) -> str:
        """COPY the files to MLE-bench's paths and set its variables. COPY makes them
        root's, with the modes the export wrote (0644, the script 0755): the agent's user
        reads them and changes none."""
        data = SandboxPaths().data
        copies = [
            f"COPY {CONTEXT}/instructions.txt {INSTRUCTIONS_PATH}",
            f"COPY {CONTEXT}/{DESCRIPTION_NAME} {data}/{DESCRIPTION_NAME}",
            f"COPY {CONTEXT}/validate_submission.sh {VALIDATE_SCRIPT_PATH}",
        ]
        if self.task.other_instructions is not None:
            copies.append(
                f"COPY {CONTEXT}/instructions_obfuscated.txt {OBFUSCATED_INSTRUCTIONS_PATH}"
            )
        env = " \\\n    ".join(f"{k}={json.dumps(v)}" for k, v in sorted(self.variables.items()))
        return (
            "# MLE-bench's files (read from your MLE-bench checkout at export) at its paths\n"
            + "\n".join(copies)
            + f"\nENV {env}\n"
        )


def data_volumes(public: Path) -> list[tuple[Path, str]]:
    """`--data mount`: each entry of the public folder at /home/data/<name>, so that the
    image's description.md sits beside them (a bind of the whole folder would hide it)."""
    data = SandboxPaths().data
    return [(entry, f"{data}/{entry.name}") for entry in public_entries(public)]
