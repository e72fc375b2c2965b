#!/usr/bin/env python3
"""Read a TensorFlow tensor bundle (the `variables/` of a checkpoint or SavedModel) without TensorFlow.

A bundle with prefix P is two files (TensorFlow's `tensorflow/core/util/tensor_bundle/tensor_bundle.h`):

* `P.index`: an SSTable, the LevelDB table format (`table_format.md` in LevelDB; TensorFlow's copy lives in
  `tensorflow/core/lib/io/`). The file ends in a 48-byte footer: two block handles (metaindex, index; each a
  varint offset and size), zero padding to 40 bytes, then the magic number 0xdb4775248b80fb57 (fixed64, little
  endian). Every block is followed by a 5-byte trailer: a compression byte (0 = none, the only kind bundles
  use) and the masked CRC-32C of the block and that byte. A block is a run of entries, each `varint shared,
  varint unshared, varint value length, key suffix, value` (a key repeats `shared` bytes of the previous key),
  then an array of uint32 restart offsets and their count. The index block maps each data block's last key to
  its handle. The entry with the empty key is a `BundleHeaderProto`; every other key names a tensor and its
  value is a `BundleEntryProto` (`tensorflow/core/protobuf/tensor_bundle.proto`): dtype (1), shape (2),
  shard_id (3), offset (4), size (5), crc32c (6, masked), slices (7).
* `P.data-0000S-of-0000N`: the shards; a tensor is `size` raw little-endian bytes at `offset` in its shard.

Every length, offset and count is checked against the bytes that hold it; every block's and every tensor's
CRC-32C is verified. Anything wrong is a `BundleError` whose message is one line naming the file and what is
wrong. Numeric tensors are read; string tensors and partitioned (sliced) variables are listed but not read.

    bundle = TensorBundle("variables/variables")
    bundle.entries["dense/kernel/.ATTRIBUTES/VARIABLE_VALUE"].shape   # (1024, 521)
    kernel = bundle.read("dense/kernel/.ATTRIBUTES/VARIABLE_VALUE")  # np.ndarray, float32

Run as a script to list a bundle's tensors: `.venv/bin/python tools/tensor_bundle.py PREFIX`.
"""

from __future__ import annotations

import argparse
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["BundleError", "BundleEntry", "TensorBundle", "crc32c"]

_TABLE_MAGIC = 0xDB4775248B80FB57
_FOOTER_SIZE = 48
_BLOCK_TRAILER_SIZE = 5
_CRC_MASK_DELTA = 0xA282EAD8

#: TensorFlow's DataType enum (`tensorflow/core/framework/types.proto`) for the dtypes this reader can read.
_DTYPES = {
    1: np.dtype("<f4"), 2: np.dtype("<f8"), 3: np.dtype("<i4"), 4: np.dtype("u1"), 5: np.dtype("<i2"),
    6: np.dtype("i1"), 9: np.dtype("<i8"), 10: np.dtype("?"), 17: np.dtype("<u2"), 19: np.dtype("<f2"),
    22: np.dtype("<u4"), 23: np.dtype("<u8"),
}
_DT_STRING = 7


class BundleError(ValueError):
    """A tensor bundle that cannot be read; the message is one line naming the file and the fault."""


@dataclass(frozen=True)
class BundleEntry:
    """Where one tensor lives: TensorFlow's `BundleEntryProto`, checked.

    `dtype` is None for a dtype this reader cannot read (strings, resources); `sliced` is true for a partitioned
    variable, whose parts are stored under other keys. Neither kind can be passed to `TensorBundle.read`.
    """

    name: str
    dtype_code: int
    dtype: np.dtype | None
    shape: tuple[int, ...]
    shard: int
    offset: int
    size: int
    crc32c: int
    sliced: bool


# --- CRC-32C (Castagnoli), as LevelDB and TensorFlow checksum blocks and tensors --------------------------------

def _crc_table() -> np.ndarray:
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, (table >> 1) ^ np.uint32(0x82F63B78), table >> 1).astype(np.uint32)
    return table


_CRC_TABLE = _crc_table()
_CRC_TABLE_LIST = [int(v) for v in _CRC_TABLE]


def _crc32c_bytewise(data: bytes) -> int:
    crc, table = 0xFFFFFFFF, _CRC_TABLE_LIST
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _advance(registers: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Feed each row of bytes to its own CRC register (initial value and final xor not applied)."""
    for column in range(rows.shape[1]):
        registers = _CRC_TABLE[(registers ^ rows[:, column]) & 0xFF] ^ (registers >> 8)
    return registers


def crc32c(data: bytes | memoryview) -> int:
    """CRC-32C of `data` (RFC 3720's checksum; `crc32c(b"123456789") == 0xE3069283`).

    Large inputs are split into equal rows that numpy checksums side by side; the rows' registers are then
    chained. CRC-32C is linear over GF(2), so passing a register through L zero bytes is a fixed 32x32 bit
    matrix, applied here as four 256-entry tables. Xor-ing the initial 0xFFFFFFFF into the register equals
    complementing the first four bytes, and leading zero bytes leave a zero register unchanged, so the data is
    front-padded with zeros to whole rows.
    """
    data = bytes(data)
    n = len(data)
    if n < 1 << 16:
        return _crc32c_bytewise(data)
    row = int(np.ceil(np.sqrt(n)))
    rows = -(-n // row)
    padded = np.zeros(rows * row, dtype=np.uint8)
    padded[rows * row - n:] = np.frombuffer(data, dtype=np.uint8)
    padded[rows * row - n:rows * row - n + 4] ^= 0xFF
    registers = _advance(np.zeros(rows, dtype=np.uint32), padded.reshape(rows, row))
    # The images of the 32 unit registers after `row` zero bytes, then one table per register byte.
    images = _advance(np.uint32(1) << np.arange(32, dtype=np.uint32), np.zeros((32, row), dtype=np.uint8))
    values = np.arange(256, dtype=np.uint32)
    tables = []
    for byte in range(4):
        table = np.zeros(256, dtype=np.uint32)
        for bit in range(8):
            table ^= np.where((values >> bit) & 1, images[8 * byte + bit], 0).astype(np.uint32)
        tables.append([int(v) for v in table])
    t0, t1, t2, t3 = tables
    crc = 0
    for register in registers.tolist():
        crc = t0[crc & 0xFF] ^ t1[(crc >> 8) & 0xFF] ^ t2[(crc >> 16) & 0xFF] ^ t3[crc >> 24] ^ register
    return crc ^ 0xFFFFFFFF


def _unmask(masked: int) -> int:
    rotated = (masked - _CRC_MASK_DELTA) & 0xFFFFFFFF
    return ((rotated >> 17) | (rotated << 15)) & 0xFFFFFFFF


# --- varints and protobuf wire format ----------------------------------------------------------------------------

def _varint(buf: bytes, pos: int, end: int, what: str) -> tuple[int, int]:
    """Decode a base-128 varint of at most 64 bits from buf[pos:end]; return (value, position after it)."""
    value = 0
    for shift in range(0, 70, 7):
        if pos >= end:
            raise BundleError(f"{what}: a varint runs past the end of its bytes")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            if value >= 1 << 64:
                raise BundleError(f"{what}: a varint is longer than 64 bits")
            return value, pos
    raise BundleError(f"{what}: a varint is longer than 10 bytes")


def _proto_fields(buf: bytes, what: str) -> list[tuple[int, int, int | bytes]]:
    """Split a protobuf message into (field number, wire type, value): an int, or bytes for length-delimited."""
    fields, pos, end = [], 0, len(buf)
    while pos < end:
        tag, pos = _varint(buf, pos, end, what)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise BundleError(f"{what}: protobuf field number 0")
        if wire == 0:
            value, pos = _varint(buf, pos, end, what)
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            if pos + width > end:
                raise BundleError(f"{what}: a fixed-width protobuf field runs past the end of its bytes")
            value = int.from_bytes(buf[pos:pos + width], "little")
            pos += width
        elif wire == 2:
            length, pos = _varint(buf, pos, end, what)
            if length > end - pos:
                raise BundleError(f"{what}: a protobuf field of {length} bytes runs past the end of its bytes")
            value = bytes(buf[pos:pos + length])
            pos += length
        else:
            raise BundleError(f"{what}: protobuf wire type {wire} (groups) is not used by tensor bundles")
        fields.append((number, wire, value))
    return fields


def _int64(value: int) -> int:
    """A varint read as a protobuf int64 (two's complement)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _parse_shape(buf: bytes, what: str) -> tuple[int, ...]:
    """TensorShapeProto: dim (2) = {size (1), name (2)}, unknown_rank (3)."""
    dims = []
    for number, wire, value in _proto_fields(buf, what):
        if number == 2 and wire == 2:
            size = 0
            for dim_number, dim_wire, dim_value in _proto_fields(value, what):
                if dim_number == 1 and dim_wire == 0:
                    size = _int64(dim_value)
            if size < 0:
                raise BundleError(f"{what}: a dimension of unknown size ({size})")
            dims.append(size)
        elif number == 3 and wire == 0 and value:
            raise BundleError(f"{what}: a shape of unknown rank")
    return tuple(dims)


def _parse_entry(name: str, buf: bytes, what: str) -> BundleEntry:
    dtype_code, shape, shard, offset, size, crc, sliced = 0, (), 0, 0, 0, 0, False
    for number, wire, value in _proto_fields(buf, what):
        if number == 1 and wire == 0:
            dtype_code = value
        elif number == 2 and wire == 2:
            shape = _parse_shape(value, what)
        elif number == 3 and wire == 0:
            shard = _int64(value)
        elif number == 4 and wire == 0:
            offset = _int64(value)
        elif number == 5 and wire == 0:
            size = _int64(value)
        elif number == 6 and wire == 5:
            crc = value
        elif number == 7 and wire == 2:
            sliced = True
    if shard < 0 or offset < 0 or size < 0:
        raise BundleError(f"{what}: negative shard, offset or size ({shard}, {offset}, {size})")
    dtype = _DTYPES.get(dtype_code)
    if dtype is not None and not sliced:
        expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if size != expected:
            raise BundleError(f"{what}: {size} bytes stored for a {dtype.name} tensor of shape {list(shape)}, "
                              f"which needs {expected}")
    return BundleEntry(name, dtype_code, dtype, shape, shard, offset, size, crc, sliced)


# --- the SSTable ---------------------------------------------------------------------------------------------------

def _block(index: bytes, handle: tuple[int, int], path: Path, what: str) -> bytes:
    """The contents of the block at `handle` (offset, size), after checking its trailer."""
    offset, size = handle
    if offset + size + _BLOCK_TRAILER_SIZE > len(index) - _FOOTER_SIZE:
        raise BundleError(f"{path}: {what} at offset {offset} ({size} bytes) runs past the end of the blocks "
                          f"({len(index) - _FOOTER_SIZE} bytes); the file is truncated or corrupt")
    contents = index[offset:offset + size]
    compression = index[offset + size]
    stored = int.from_bytes(index[offset + size + 1:offset + size + 5], "little")
    if _unmask(stored) != crc32c(index[offset:offset + size + 1]):
        raise BundleError(f"{path}: {what} at offset {offset} fails its CRC-32C check; the file is corrupt")
    if compression != 0:
        raise BundleError(f"{path}: {what} at offset {offset} is compressed (type {compression}); tensor bundles "
                          "are written uncompressed, and this reader reads only those")
    return contents


def _block_entries(block: bytes, path: Path, what: str) -> list[tuple[bytes, bytes]]:
    """The (key, value) pairs of one block, keys rebuilt from their shared prefixes."""
    if len(block) < 4:
        raise BundleError(f"{path}: {what} is {len(block)} bytes, too short for its restart count")
    restarts = int.from_bytes(block[-4:], "little")
    if restarts > (len(block) - 4) // 4:
        raise BundleError(f"{path}: {what} claims {restarts} restart points, more than its {len(block)} bytes hold")
    end = len(block) - 4 - 4 * restarts
    entries, pos, key = [], 0, b""
    while pos < end:
        shared, pos = _varint(block, pos, end, f"{path}: {what}")
        unshared, pos = _varint(block, pos, end, f"{path}: {what}")
        value_length, pos = _varint(block, pos, end, f"{path}: {what}")
        if shared > len(key):
            raise BundleError(f"{path}: {what} shares {shared} bytes of a {len(key)}-byte previous key")
        if unshared + value_length > end - pos:
            raise BundleError(f"{path}: {what} has an entry running past the end of its entries")
        new_key = key[:shared] + block[pos:pos + unshared]
        pos += unshared
        if entries and new_key <= key:
            raise BundleError(f"{path}: {what} has keys out of order ({new_key!r} after {key!r})")
        key = new_key
        entries.append((key, block[pos:pos + value_length]))
        pos += value_length
    return entries


def _handle(buf: bytes, pos: int, end: int, what: str) -> tuple[tuple[int, int], int]:
    offset, pos = _varint(buf, pos, end, what)
    size, pos = _varint(buf, pos, end, what)
    return (offset, size), pos


def _read_table(path: Path) -> list[tuple[bytes, bytes]]:
    """Every (key, value) of an SSTable, in key order."""
    try:
        index = path.read_bytes()
    except OSError as e:
        raise BundleError(f"{path}: cannot read the bundle's index ({e.strerror})") from None
    if len(index) < _FOOTER_SIZE:
        raise BundleError(f"{path}: {len(index)} bytes, shorter than an SSTable footer ({_FOOTER_SIZE}); "
                          "the file is truncated or not a TensorFlow index")
    footer = len(index) - _FOOTER_SIZE
    if int.from_bytes(index[-8:], "little") != _TABLE_MAGIC:
        raise BundleError(f"{path}: no SSTable magic number at the end; the file is truncated or not a "
                          "TensorFlow index")
    meta_handle, pos = _handle(index, footer, footer + 40, f"{path}: footer")
    index_handle, _ = _handle(index, pos, footer + 40, f"{path}: footer")
    _block_entries(_block(index, meta_handle, path, "metaindex block"), path, "metaindex block")  # checked, unused
    entries, previous = [], None
    for last_key, handle_bytes in _block_entries(_block(index, index_handle, path, "index block"), path,
                                                 "index block"):
        handle, _ = _handle(handle_bytes, 0, len(handle_bytes), f"{path}: index block")
        what = f"data block at offset {handle[0]}"
        block = _block_entries(_block(index, handle, path, what), path, what)
        if block and (previous is not None and block[0][0] <= previous or block[-1][0] > last_key):
            raise BundleError(f"{path}: {what} holds keys outside its place in the index")
        if block:
            previous = block[-1][0]
        entries.extend(block)
    return entries


class TensorBundle:
    """A tensor bundle, opened by its prefix (`.../variables/variables` for a SavedModel)."""

    def __init__(self, prefix: str | Path):
        prefix = Path(prefix)
        self.index_path = prefix.with_name(prefix.name + ".index")
        header, entries = None, {}
        for key, value in _read_table(self.index_path):
            if key == b"":
                header = value
                continue
            try:
                name = key.decode("utf-8")
            except UnicodeDecodeError:
                raise BundleError(f"{self.index_path}: a tensor name is not UTF-8 ({key[:40]!r})") from None
            entries[name] = _parse_entry(name, value, f"{self.index_path}: entry {name!r}")
        if header is None:
            raise BundleError(f"{self.index_path}: no bundle header (the entry with the empty key)")
        shards, endianness = 1, 0
        for number, wire, value in _proto_fields(header, f"{self.index_path}: bundle header"):
            if number == 1 and wire == 0:
                shards = _int64(value)
            elif number == 2 and wire == 0:
                endianness = value
        if not 1 <= shards <= 99999:
            raise BundleError(f"{self.index_path}: the bundle header gives {shards} shards")
        if endianness != 0:
            raise BundleError(f"{self.index_path}: the bundle is big-endian; this reader reads little-endian ones")
        self.shard_paths = [prefix.with_name(f"{prefix.name}.data-{s:05d}-of-{shards:05d}") for s in range(shards)]
        for entry in entries.values():
            if entry.shard >= shards:
                raise BundleError(f"{self.index_path}: entry {entry.name!r} is in shard {entry.shard}, "
                                  f"but the bundle has {shards}")
        self.entries: dict[str, BundleEntry] = entries
        self._shards: dict[int, bytes] = {}

    def _shard(self, number: int) -> bytes:
        if number not in self._shards:
            path = self.shard_paths[number]
            try:
                self._shards[number] = path.read_bytes()
            except OSError as e:
                raise BundleError(f"{path}: cannot read the bundle's data shard ({e.strerror})") from None
        return self._shards[number]

    def read(self, name: str) -> np.ndarray:
        """The tensor `name` as a new native-endian numpy array, after checking its place and CRC-32C."""
        entry = self.entries.get(name)
        if entry is None:
            raise BundleError(f"{self.index_path}: no tensor named {name!r}")
        if entry.dtype is None or entry.sliced:
            kind = "partitioned" if entry.sliced else f"of TensorFlow dtype {entry.dtype_code}"
            raise BundleError(f"{self.index_path}: tensor {name!r} is {kind}, which this reader does not read")
        data = self._shard(entry.shard)
        path = self.shard_paths[entry.shard]
        if entry.offset + entry.size > len(data):
            raise BundleError(f"{path}: tensor {name!r} at offset {entry.offset} ({entry.size} bytes) runs past "
                              f"the end of the file ({len(data)} bytes); the file is truncated")
        raw = memoryview(data)[entry.offset:entry.offset + entry.size]
        if crc32c(raw) != _unmask(entry.crc32c):
            raise BundleError(f"{path}: tensor {name!r} fails its CRC-32C check; the file is corrupt")
        array = np.frombuffer(raw, dtype=entry.dtype).reshape(entry.shape)
        return array.astype(entry.dtype.newbyteorder("="), copy=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("prefix", type=Path, help="the bundle's prefix: PREFIX.index and PREFIX.data-* exist")
    args = p.parse_args(argv)
    try:
        bundle = TensorBundle(args.prefix)
    except BundleError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for name, entry in bundle.entries.items():
        dtype = entry.dtype.name if entry.dtype is not None else f"dtype {entry.dtype_code}"
        print(f"{name}\t{dtype}\t{list(entry.shape)}\t{entry.size} bytes")
    print(f"{len(bundle.entries)} tensors in {args.prefix}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
