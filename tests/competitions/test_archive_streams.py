"""archive_streams: 7z members streamed chunk by chunk, JSON arrays parsed element by element."""

from __future__ import annotations

import json
from pathlib import Path

import py7zr
import pytest

from mle_gym.competitions.archive_streams import (
    JsonArrayReader,
    member_names,
    only_member_named,
    stream_7z,
)

VALUES = [
    {"id": "dfd5f913", "band_1": [-27.878361, -27.15416, 1e-05], "inc_angle": "na"},
    {"id": "e25388fd", "band_1": [-12.242375], "inc_angle": 38.1562, "is_iceberg": 0},
    12,
    -2.5e-07,
    "text with \u00e9 and \\u escapes",
    [],
    None,
    True,
]


def _feed(text: bytes, size: int, limit: int | None = None) -> list:
    found: list = []
    reader = JsonArrayReader(found.append, limit)
    for start in range(0, len(text), size):
        reader.write(text[start : start + size])
    reader.close()
    return found


@pytest.mark.parametrize("size", [1, 2, 7, 64, 10_000])
def test_every_chunking_gives_what_json_load_gives(size: int) -> None:
    for text in (json.dumps(VALUES), json.dumps(VALUES, indent=2, ensure_ascii=False)):
        assert _feed(text.encode(), size) == json.loads(text)


def test_empty_array_and_numbers_split_between_chunks() -> None:
    assert _feed(b" [ ] ", 1) == []
    assert _feed(b"[123456, 7.25]", 3) == [123456, 7.25]
    assert _feed(b"[-2.5e-07,1E+3]", 5) == [-2.5e-07, 1000.0]


def test_limit_stops_after_the_first_elements() -> None:
    text = json.dumps(VALUES).encode()
    assert _feed(text, 5, limit=2) == VALUES[:2]
    # what follows the limit is not parsed, even if broken
    assert _feed(b'[{"a": 1}, {broken', 4, limit=1) == [{"a": 1}]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (b'{"a": 1}', r"does not start with '\['"),
        (b"[1, 2", r"ends after 2 element"),
        (b"[1 2]", r"expected ',' after element 1"),
        (b"[1, {bad}]", r"Expecting property name"),
    ],
)
def test_malformed_input_is_reported(text: bytes, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        _feed(text, 3)


class _Collected(bytearray):
    """A receiver keeping a member's bytes, and whether its end was signalled."""

    closed = False

    def write(self, chunk: bytes) -> None:
        assert not self.closed
        self.extend(chunk)

    def close(self) -> None:
        self.closed = True


def unpacked(archive: Path) -> dict[str, bytes]:
    """Every file in a 7z archive, read through `stream_7z`."""
    found: dict[str, _Collected] = {}
    stream_7z(archive, member_names(archive), lambda name: found.setdefault(name, _Collected()))
    assert all(data.closed for data in found.values())
    return {name: bytes(data) for name, data in found.items()}


def _archive(path: Path, members: dict[str, bytes]) -> Path:
    with py7zr.SevenZipFile(path, "w") as target:
        for name, data in members.items():
            target.writestr(data, name)
    return path


def test_stream_7z_hands_over_only_the_named_members(tmp_path: Path) -> None:
    big = bytes(range(256)) * 4096
    archive = _archive(tmp_path / "a.7z", {"data/big.bin": big, "data/small.txt": b"hi"})
    assert member_names(archive) == ["data/big.bin", "data/small.txt"]
    sizes: list[int] = []

    class Sizes(_Collected):
        def write(self, chunk: bytes) -> None:
            sizes.append(len(chunk))
            super().write(chunk)

    found: dict[str, _Collected] = {}
    stream_7z(archive, ["data/big.bin"], lambda name: found.setdefault(name, Sizes()))
    assert list(found) == ["data/big.bin"] and found["data/big.bin"] == big
    assert found["data/big.bin"].closed and sum(sizes) == len(big)
    assert unpacked(archive) == {"data/big.bin": big, "data/small.txt": b"hi"}


def test_only_member_named_finds_one_file_in_any_folder(tmp_path: Path) -> None:
    archive = _archive(tmp_path / "a.7z", {"data/processed/train.json": b"[]", "x/y.csv": b""})
    assert only_member_named(archive, "train.json") == "data/processed/train.json"
    with pytest.raises(ValueError, match=r"holds 0 files named test\.json"):
        only_member_named(archive, "test.json")
