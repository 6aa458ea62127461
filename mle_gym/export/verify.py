"""The verifier of an exported Harbor task: grade the collected submission, write the reward.

Runs inside the grader image (see `mle_gym.export.grader_image`), where Harbor has put the
agent's /home/submission and the task's compose file has mounted the answers. It grades as
`mle_gym.evaluate` does (the same bounded child, the same `outcome`), so a trial's reward
is the env's reward for that file. Harbor reads `reward.json`, whose values must be finite
numbers: booleans become 0/1 and an unscorable submission has no `score` key; the whole
report goes to `report.json` beside it.

The submission comes from the agent, so it is only read if it is a regular file reached
without a link: a symbolic (or hard) link to /home/answers/... would otherwise make the
answers grade themselves (Harbor's docker provider copies symbolic links as links). It is
not read either when it is larger than the env would copy out (`submission_cap`: 20 times
the answers, at least 64 MiB): its size is all that is looked at, so a huge file costs no
parsing, and the report says why, in the env's words.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import stat
from pathlib import Path
from typing import Any


def rewards(result: dict[str, Any]) -> dict[str, float | int]:
    """Harbor's reward dict from `mle_gym.evaluate`'s result."""
    out: dict[str, float | int] = {"reward": float(result["reward"])}
    score = result.get("score")
    if isinstance(score, (int, float)) and math.isfinite(score):
        out["score"] = float(score)
    for key in ("valid", "above_median", "any_medal"):
        out[key] = int(bool(result.get(key)))
    return out


def refusal(submission: Path, cap: int) -> str | None:
    """Why `submission` must not be read (a link, not a regular file, or over `cap` bytes);
    None if it may."""
    if not os.path.lexists(submission):
        return None  # missing: graded as a missing submission
    for path in (submission, *submission.parents):
        if path.is_symlink():
            return f"{path} is a symbolic link; the submission must be a regular file"
    info = submission.lstat()
    if not stat.S_ISREG(info.st_mode):
        return f"{submission} is not a regular file"
    if info.st_nlink > 1:  # a hard link could share the answers' inode
        return f"{submission} has other hard links; the submission must be a file of its own"
    if info.st_size > cap:  # the env's words for the same file (FileToolError via copy_out)
        return f"the submission could not be read: {submission} is over the {cap:,}-byte limit"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--competition", required=True)
    parser.add_argument("--submission", type=Path, required=True)
    parser.add_argument("--answers", type=Path, required=True, help="the private/ directory")
    parser.add_argument("--out", type=Path, required=True, help="Harbor's /logs/verifier")
    parser.add_argument("--reward-mode", default="normalized")
    args = parser.parse_args(argv)

    from mle_gym.grading.bounded import grade_bounded
    from mle_gym.grading.outcome import outcome
    from mle_gym.grading.submission_cap import submission_cap

    refused = refusal(args.submission, submission_cap(args.answers))
    submission = args.submission if args.submission.is_file() and not refused else None
    report = grade_bounded(args.competition, submission, args.answers)
    if refused:
        report = dataclasses.replace(report, submission_exists=True, error=refused)
    result = outcome(report, args.reward_mode)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    (args.out / "reward.json").write_text(json.dumps(rewards(result)) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "report"}, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
