"""A scripted policy that needs no LLM: look at the data, write a training script, run it,
validate and submit, all through the env's tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

TRAIN_SCRIPT = (Path(__file__).parent / "tabular_train.py").read_text()


class ScriptedTabularPolicy:
    """A random forest for tabular competitions, as a fixed sequence of tool calls.

    It learns where things are from `info["paths"]`, so it works on every backend.
    """

    name = "scripted"

    def __init__(self) -> None:
        self._plan: list[dict[str, Any]] = []

    def reset(self) -> None:
        self._plan = []

    def act(self, observation: str, info: dict[str, Any]) -> dict[str, Any]:
        if not self._plan and info.get("step", 0) == 0:
            self._plan = self._make_plan(info["paths"])
        if not self._plan:
            return {"tool": "submit"}
        return self._plan.pop(0)

    @staticmethod
    def _make_plan(paths: dict[str, str]) -> list[dict[str, Any]]:
        data, code, submission = paths["data"], paths["code"], paths["submission_file"]
        script = f"{code}/train.py"
        return [
            {"tool": "bash", "command": f"ls -la {data} && head -n 3 {data}/*.csv | cut -c 1-300"},
            {"tool": "create", "path": script, "file_text": TRAIN_SCRIPT},
            {"tool": "bash", "command": f"cd {code} && python train.py {data} {submission}"},
            {"tool": "validate"},
            {"tool": "submit"},
        ]
