"""The TFRecord reader against known CRC values, hand-encoded protobuf and a second writer."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from mle_gym.competitions import tfrecord
from mle_gym.competitions.tfrecord import (
    TFRecordError,
    crc32c,
    masked_crc32c,
    parse_example,
    read_records,
    without_features,
    write_records,
)
from tests.fixtures.raw.siim_isic_melanoma_classification import (
    encode_example,
    write_tfrecord,
)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", 0x00000000),
        (b"123456789", 0xE3069283),  # the standard check value
        (bytes(32), 0x8A9136AA),  # RFC 3720, appendix B.4
        (b"\xff" * 32, 0x62A8AB43),
        (bytes(range(32)), 0x46DD794E),
        (bytes(range(31, -1, -1)), 0x113FDB5C),
    ],
)
def test_crc32c_known_values(data: bytes, expected: int) -> None:
    assert crc32c(data) == expected


@pytest.mark.parametrize("size", [255, 256, 257, 4096, 100_003])
def test_crc32c_block_path_matches_byte_loop(size: int) -> None:
    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes()
    assert crc32c(data) == tfrecord._advance(0xFFFFFFFF, data) ^ 0xFFFFFFFF


def test_masked_crc_rotates_and_adds_the_delta() -> None:
    assert masked_crc32c(b"") == 0xA282EAD8
    crc = 0xE3069283
    rotated = ((crc >> 15) | (crc << 17)) & 0xFFFFFFFF
    assert masked_crc32c(b"123456789") == (rotated + 0xA282EAD8) & 0xFFFFFFFF


def test_parse_hand_encoded_example() -> None:
    # Example{features{feature{"id": bytes_list{"ab"}}}}, written out field by field
    record = bytes.fromhex("0a0e0a0c0a02696412060a040a026162")
    assert parse_example(record) == {"id": [b"ab"]}


def test_parse_unpacked_and_negative_int64() -> None:
    # int64_list{value: 5, value: -1} with one varint field per value (not packed)
    int64_list = bytes.fromhex("080508ffffffffffffffffff01")
    feature = b"\x1a" + bytes([len(int64_list)]) + int64_list
    entry = b"\x0a\x01n" + b"\x12" + bytes([len(feature)]) + feature
    features = b"\x0a" + bytes([len(entry)]) + entry
    assert parse_example(b"\x0a" + bytes([len(features)]) + features) == {"n": [5, -1]}


@pytest.mark.parametrize(
    "float_list",
    [
        b"\x0a\x08" + struct.pack("<2f", 1.5, -2.0),  # packed
        b"\x0d" + struct.pack("<f", 1.5) + b"\x0d" + struct.pack("<f", -2.0),  # one per value
    ],
    ids=["packed", "unpacked"],
)
def test_parse_floats(float_list: bytes) -> None:
    feature = b"\x12" + bytes([len(float_list)]) + float_list
    entry = b"\x0a\x01f" + b"\x12" + bytes([len(feature)]) + feature
    features = b"\x0a" + bytes([len(entry)]) + entry
    assert parse_example(b"\x0a" + bytes([len(features)]) + features) == {"f": [1.5, -2.0]}


def test_round_trip_through_the_fixture_writer(tmp_path: Path) -> None:
    examples = [
        {"image_name": [b"ISIC_0000001"], "target": [1], "image": [bytes(range(256)) * 3]},
        {"image_name": [b"ISIC_0000002"], "target": [0], "scores": [0.25, 0.5]},
        {"tags": [b"a", b"", b"c"], "offset": [-7, 1 << 40]},
    ]
    path = tmp_path / "shard.tfrec"
    write_tfrecord(path, [encode_example(e) for e in examples] + [b""])
    records = list(read_records(path))
    assert [parse_example(r) for r in records] == [*examples, {}]


def test_written_records_are_read_back(tmp_path: Path) -> None:
    path = tmp_path / "ours.tfrec"
    records = [b"", b"x", bytes(1000)]
    write_records(path, records)
    assert list(read_records(path)) == records
    fixture_path = tmp_path / "theirs.tfrec"
    write_tfrecord(fixture_path, records)
    assert path.read_bytes() == fixture_path.read_bytes()


def test_without_features_keeps_the_rest_unchanged() -> None:
    example = {"image_name": [b"ISIC_1"], "target": [1], "diagnosis": [3], "age": [45]}
    stripped = without_features(encode_example(example), {"target", "diagnosis"})
    assert stripped == encode_example({"image_name": [b"ISIC_1"], "age": [45]})
    assert without_features(encode_example(example), set()) == encode_example(example)


def _shard(tmp_path: Path) -> Path:
    path = tmp_path / "shard.tfrec"
    write_tfrecord(path, [encode_example({"image_name": [b"ISIC_1"]})] * 2)
    return path


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def test_corrupt_data_is_rejected(tmp_path: Path) -> None:
    path = _shard(tmp_path)
    _flip(path, 12 + 3)
    with pytest.raises(TFRecordError, match="record 0: the checksum of its data does not match"):
        list(read_records(path))


def test_corrupt_length_is_rejected(tmp_path: Path) -> None:
    path = _shard(tmp_path)
    record_size = len(path.read_bytes()) // 2
    _flip(path, record_size)
    with pytest.raises(TFRecordError, match="record 1: the checksum of its length"):
        list(read_records(path))


@pytest.mark.parametrize(("cut", "part"), [(5, "length"), (20, "data"), (2, "data checksum")])
def test_truncated_file_is_rejected(tmp_path: Path, cut: int, part: str) -> None:
    path = _shard(tmp_path)
    data = path.read_bytes()
    record_size = len(data) // 2
    cut_at = {"length": record_size + cut, "data": record_size + cut}.get(part, len(data) - cut)
    path.write_bytes(data[:cut_at])
    with pytest.raises(TFRecordError, match=f"record 1 is truncated: its {part} is incomplete"):
        list(read_records(path))


def test_malformed_example_is_rejected() -> None:
    with pytest.raises(TFRecordError, match="runs past the end"):
        parse_example(b"\x0a\x10\x0a")
