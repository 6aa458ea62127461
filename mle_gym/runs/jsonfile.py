"""JSON files of a run: written whole or not at all, read as None when absent; JSON Lines
read as far as they are whole."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def write_json(path: Path, data: Any) -> None:
    """Write atomically, so a killed process never leaves half a file, and a failed write
    (a full disk) leaves no temporary one."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    try:
        tmp.write_text(json.dumps(data, indent=2, default=str))
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def read_json(path: Path) -> Any:
    return json.loads(path.read_text()) if path.is_file() else None


def read_json_lines(path: Path) -> Iterator[dict[str, Any]]:
    """The objects of a JSON Lines file in order; a line cut short by a killed writer, or
    one that is no object, is skipped, and a missing file has none."""
    if not path.is_file():
        return
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict):
                yield event
