"""Reads and writes TFRecord files and the `tf.train.Example` messages in them, without
TensorFlow.

MLE-bench chooses the test images of siim-isic-melanoma-classification by the image names
stored in two TFRecord shards, and publishes those shards. A TFRecord file is a sequence
of records, each framed as

    uint64 length | uint32 masked CRC-32C of length | data | uint32 masked CRC-32C of data

(little endian), and each record's data is a serialized `tf.train.Example` protobuf.
"""

from __future__ import annotations

import struct
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np

FeatureValues = list[bytes] | list[float] | list[int]

_POLYNOMIAL = 0x82F63B78  # CRC-32C (Castagnoli), bit-reflected
_MASK_DELTA = 0xA282EAD8
_BLOCK = 256  # bytes per lane when a long buffer is checksummed lane-parallel


def _byte_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _POLYNOMIAL if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _byte_table()
_TABLE_NP = np.array(_TABLE, dtype=np.uint32)


def _advance(register: int, data: bytes | memoryview) -> int:
    """Feed bytes into a CRC register one at a time (no initial value, no final xor)."""
    for byte in data:
        register = _TABLE[(register ^ byte) & 0xFF] ^ (register >> 8)
    return register


def _zero_block_tables() -> tuple[list[int], ...]:
    """Byte tables of the linear map "feed `_BLOCK` zero bytes", one per register byte."""
    images = [_advance(1 << bit, bytes(_BLOCK)) for bit in range(32)]
    tables = []
    for shift in range(0, 32, 8):
        table = [0] * 256
        for value in range(1, 256):
            lowest = value & -value
            table[value] = table[value ^ lowest] ^ images[shift + lowest.bit_length() - 1]
        tables.append(table)
    return tuple(tables)


_SKIP_BLOCK = _zero_block_tables()


def crc32c(data: bytes | memoryview) -> int:
    """CRC-32C of `data`.

    Records hold whole images, so a pure byte loop would be far too slow. The register
    update is linear, so whole blocks are checksummed side by side with numpy from a zero
    register and then chained: the register before a block, fed `_BLOCK` zero bytes, xor
    the block's own value, is the register after it.
    """
    blocks = len(data) // _BLOCK
    register = 0xFFFFFFFF
    if blocks:
        lanes = np.frombuffer(data, np.uint8, count=blocks * _BLOCK).reshape(blocks, _BLOCK)
        partial = np.zeros(blocks, dtype=np.uint32)
        for column in lanes.T.astype(np.uint32):
            partial = _TABLE_NP[(partial ^ column) & 0xFF] ^ (partial >> 8)
        t0, t1, t2, t3 = _SKIP_BLOCK
        for value in partial.tolist():
            register = (
                t0[register & 0xFF]
                ^ t1[(register >> 8) & 0xFF]
                ^ t2[(register >> 16) & 0xFF]
                ^ t3[register >> 24]
                ^ value
            )
    register = _advance(register, memoryview(data)[blocks * _BLOCK :])
    return register ^ 0xFFFFFFFF


def masked_crc32c(data: bytes | memoryview) -> int:
    """TFRecord's stored checksum: the CRC rotated right by 15 bits plus a constant."""
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


class TFRecordError(ValueError):
    """The file is not a well-formed TFRecord file or holds a malformed Example."""


def _read_exact(handle: BinaryIO, size: int, what: str, index: int) -> bytes:
    chunk = handle.read(size)
    if len(chunk) != size:
        raise TFRecordError(f"record {index} is truncated: its {what} is incomplete")
    return chunk


def _check(data: bytes, stored: bytes, what: str, index: int) -> None:
    if struct.unpack("<I", stored)[0] != masked_crc32c(data):
        raise TFRecordError(f"record {index}: the checksum of its {what} does not match")


def read_records(path: Path) -> Iterator[bytes]:
    """Yield each record's data, checking both checksums as TensorFlow does."""
    with path.open("rb") as handle:
        index = 0
        while header := handle.read(8):
            if len(header) != 8:
                raise TFRecordError(f"record {index} is truncated: its length is incomplete")
            _check(header, _read_exact(handle, 4, "length checksum", index), "length", index)
            (length,) = struct.unpack("<Q", header)
            data = _read_exact(handle, length, "data", index)
            _check(data, _read_exact(handle, 4, "data checksum", index), "data", index)
            yield data
            index += 1


def _varint(buffer: memoryview, position: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if position >= len(buffer):
            raise TFRecordError("malformed Example: a varint runs past the end")
        byte = buffer[position]
        value |= (byte & 0x7F) << shift
        position += 1
        if not byte & 0x80:
            return value, position
        shift += 7


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


Field = tuple[int, int, int | memoryview, memoryview]


def _fields(buffer: memoryview) -> Iterator[Field]:
    """Yield each field of a protobuf message: (number, wire type, value, raw bytes)."""
    position = 0
    while position < len(buffer):
        start = position
        key, position = _varint(buffer, position)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, position = _varint(buffer, position)
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            value, position = buffer[position : position + size], position + size
        elif wire == 2:
            size, position = _varint(buffer, position)
            value, position = buffer[position : position + size], position + size
        else:
            raise TFRecordError(f"malformed Example: unsupported wire type {wire}")
        if position > len(buffer):
            raise TFRecordError("malformed Example: a field runs past the end")
        yield number, wire, value, buffer[start:position]


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _int64s(buffer: memoryview) -> list[int]:
    values: list[int] = []
    for number, wire, value, _ in _fields(buffer):
        if number != 1:
            continue
        if wire == 2:  # packed
            position = 0
            while position < len(value):
                item, position = _varint(value, position)
                values.append(_signed64(item))
        elif wire == 0:
            values.append(_signed64(value))
    return values


_FLOAT = {(1, 2), (1, 5)}  # FloatList.value, packed or one fixed32 per value


def _floats(buffer: memoryview) -> list[float]:
    raw = b"".join(
        bytes(value) for number, wire, value, _ in _fields(buffer) if (number, wire) in _FLOAT
    )
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def _bytes(buffer: memoryview) -> list[bytes]:
    return [bytes(value) for number, wire, value, _ in _fields(buffer) if (number, wire) == (1, 2)]


_KINDS = {1: _bytes, 2: _floats, 3: _int64s}  # Feature's bytes_list, float_list, int64_list


def _feature(buffer: memoryview) -> FeatureValues:
    values: FeatureValues = []
    for number, wire, value, _ in _fields(buffer):
        if number in _KINDS and wire == 2:
            values = _KINDS[number](value)
    return values


def _entries(record: bytes) -> Iterator[tuple[str, memoryview, memoryview]]:
    """Yield (name, Feature message, raw map entry) for each feature of an Example."""
    for number, wire, features, _ in _fields(memoryview(record)):
        if (number, wire) != (1, 2):  # Example.features
            continue
        for entry_number, entry_wire, entry, raw in _fields(features):
            if (entry_number, entry_wire) != (1, 2):  # Features.feature, a map entry
                continue
            name, feature = "", memoryview(b"")
            for part, part_wire, value, _ in _fields(entry):
                if (part, part_wire) == (1, 2):
                    name = bytes(value).decode("utf-8")
                elif (part, part_wire) == (2, 2):
                    feature = value
            yield name, feature, raw


def parse_example(record: bytes) -> dict[str, FeatureValues]:
    """The features of a serialized `tf.train.Example`, by name."""
    return {name: _feature(feature) for name, feature, _ in _entries(record)}


def without_features(record: bytes, names: Collection[str]) -> bytes:
    """The serialized Example with the named features removed; the others keep their bytes."""
    kept = b"".join(bytes(raw) for name, _, raw in _entries(record) if name not in names)
    return b"\x0a" + _encode_varint(len(kept)) + kept


def write_records(path: Path, records: Iterable[bytes]) -> None:
    """Write records in TFRecord framing, with their checksums."""
    with path.open("wb") as handle:
        for data in records:
            header = struct.pack("<Q", len(data))
            handle.write(header + struct.pack("<I", masked_crc32c(header)))
            handle.write(data + struct.pack("<I", masked_crc32c(data)))
