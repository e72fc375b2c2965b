"""tools/tensor_bundle.py: bundles built byte by byte here (an independent writer of the LevelDB table and
protobuf formats, with a bit-at-a-time CRC-32C), the CRC against RFC 3720's test vectors, and every truncation
and corruption of an index giving one clear line, never another exception."""

import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

TOOLS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOOLS))

import tensor_bundle  # noqa: E402
from tensor_bundle import BundleError, TensorBundle  # noqa: E402


def crc32c_bitwise(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def mask(crc: int) -> int:
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field_varint(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


def field_bytes(number: int, value: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(value)) + value


def entry_proto(dtype: int, shape, offset: int, raw: bytes, size: int | None = None) -> bytes:
    shape_proto = b"".join(field_bytes(2, field_varint(1, d)) for d in shape)
    return (field_varint(1, dtype) + field_bytes(2, shape_proto) + field_varint(4, offset)
            + field_varint(5, len(raw) if size is None else size) + varint(6 << 3 | 5)
            + struct.pack("<I", mask(crc32c_bitwise(raw))))


def block(entries, restart_every: int = 2) -> bytes:
    """A LevelDB block: prefix-compressed entries, restart points every `restart_every` entries."""
    out, restarts, previous = bytearray(), [], b""
    for i, (key, value) in enumerate(entries):
        shared = 0
        if i % restart_every == 0:
            restarts.append(len(out))
        else:
            while shared < min(len(key), len(previous)) and key[shared] == previous[shared]:
                shared += 1
        out += varint(shared) + varint(len(key) - shared) + varint(len(value)) + key[shared:] + value
        previous = key
    for r in restarts or [0]:
        out += struct.pack("<I", r)
    return bytes(out + struct.pack("<I", len(restarts or [0])))


def with_trailer(contents: bytes) -> bytes:
    return contents + b"\x00" + struct.pack("<I", mask(crc32c_bitwise(contents + b"\x00")))


def write_bundle(prefix: Path, tensors: dict, extra_entries=(), blocks: int = 2) -> None:
    """Write PREFIX.index and PREFIX.data-00000-of-00001 holding `tensors` (name -> (dtype code, array))."""
    data, entries = b"", []
    for name, (dtype, array) in sorted(tensors.items()):
        raw = np.ascontiguousarray(array).tobytes()
        entries.append((name.encode(), entry_proto(dtype, array.shape, len(data), raw)))
        data += raw
    header = field_varint(1, 1) + field_bytes(3, field_varint(1, 1))  # num_shards 1, version {producer 1}
    entries = sorted([(b"", header), *entries, *extra_entries])
    index, index_entries = b"", []
    per_block = -(-len(entries) // blocks)
    for first in range(0, len(entries), per_block):
        part = block(entries[first:first + per_block])
        index_entries.append((entries[first:first + per_block][-1][0], varint(len(index)) + varint(len(part))))
        index += with_trailer(part)
    meta = block([])
    meta_handle = varint(len(index)) + varint(len(meta))
    index += with_trailer(meta)
    top = block(index_entries, restart_every=1)
    top_handle = varint(len(index)) + varint(len(top))
    index += with_trailer(top)
    footer = (meta_handle + top_handle).ljust(40, b"\x00") + struct.pack("<Q", 0xDB4775248B80FB57)
    prefix.with_name(prefix.name + ".index").write_bytes(index + footer)
    prefix.with_name(prefix.name + ".data-00000-of-00001").write_bytes(data)


def sample_tensors():
    return {
        "dense/kernel/.ATTRIBUTES/VARIABLE_VALUE": (1, np.arange(6, dtype="<f4").reshape(2, 3) / 7),
        "dense/bias/.ATTRIBUTES/VARIABLE_VALUE": (1, np.array([-1.5, 2.25], dtype="<f4")),
        "step/.ATTRIBUTES/VARIABLE_VALUE": (9, np.array(123456789012, dtype="<i8")),
        "mask/.ATTRIBUTES/VARIABLE_VALUE": (4, np.array([[0, 255], [7, 8]], dtype="u1")),
        "scale/.ATTRIBUTES/VARIABLE_VALUE": (2, np.array([np.pi], dtype="<f8")),
    }


@pytest.fixture
def bundle_prefix(tmp_path):
    prefix = tmp_path / "variables"
    write_bundle(prefix, sample_tensors())
    return prefix


def index_of(prefix: Path) -> Path:
    return prefix.with_name(prefix.name + ".index")


def data_of(prefix: Path) -> Path:
    return prefix.with_name(prefix.name + ".data-00000-of-00001")


def assert_one_line(error: Exception) -> None:
    message = str(error)
    assert message and "\n" not in message


def test_crc32c_matches_rfc3720_test_vectors():
    assert tensor_bundle.crc32c(bytes(32)) == 0x8A9136AA
    assert tensor_bundle.crc32c(b"\xff" * 32) == 0x62A8AB43
    assert tensor_bundle.crc32c(bytes(range(32))) == 0x46DD794E
    assert tensor_bundle.crc32c(bytes(range(31, -1, -1))) == 0x113FDB5C
    assert tensor_bundle.crc32c(b"123456789") == 0xE3069283


@pytest.mark.parametrize("length", [65536, 65537, 70001, 131072 + 5])
def test_crc32c_of_large_inputs_matches_the_bitwise_definition(length):
    data = np.random.default_rng(length).integers(0, 256, length, dtype=np.uint8).tobytes()
    assert tensor_bundle.crc32c(data) == crc32c_bitwise(data)


def test_reads_every_tensor_of_a_hand_built_bundle(bundle_prefix):
    bundle = TensorBundle(bundle_prefix)
    assert set(bundle.entries) == set(sample_tensors())
    for name, (_, expected) in sample_tensors().items():
        got = bundle.read(name)
        assert got.dtype == expected.dtype.newbyteorder("=") and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
        assert bundle.entries[name].shape == expected.shape


def test_every_truncation_of_the_index_is_one_clear_line(bundle_prefix):
    full = index_of(bundle_prefix).read_bytes()
    for length in range(len(full)):
        index_of(bundle_prefix).write_bytes(full[:length])
        with pytest.raises(BundleError) as caught:
            TensorBundle(bundle_prefix)
        assert_one_line(caught.value)
        assert str(index_of(bundle_prefix)) in str(caught.value)


def test_every_corrupt_byte_of_the_index_is_caught(bundle_prefix):
    """A flipped byte is caught by a CRC, the magic number or a bounds check; only the footer's zero padding
    (which nothing reads) may change without effect, and then the bundle reads exactly as before."""
    full = index_of(bundle_prefix).read_bytes()
    harmless = 0
    for position in range(len(full)):
        corrupt = bytearray(full)
        corrupt[position] ^= 0x41
        index_of(bundle_prefix).write_bytes(bytes(corrupt))
        try:
            bundle = TensorBundle(bundle_prefix)
        except BundleError as e:
            assert_one_line(e)
            continue
        harmless += 1
        assert len(full) - 48 <= position < len(full) - 8, f"a flip at byte {position} went unnoticed"
        assert {n: bundle.read(n).tolist() for n in bundle.entries} == \
            {n: a.tolist() for n, (_, a) in sample_tensors().items()}
    assert harmless < 40


def test_a_truncated_or_corrupt_data_shard_is_caught_when_read(bundle_prefix):
    data = data_of(bundle_prefix).read_bytes()
    data_of(bundle_prefix).write_bytes(data[:-3])
    bundle = TensorBundle(bundle_prefix)
    last = max(bundle.entries.values(), key=lambda e: e.offset).name
    with pytest.raises(BundleError, match="runs past the end of the file"):
        bundle.read(last)
    corrupt = bytearray(data)
    corrupt[bundle.entries[last].offset] ^= 1
    data_of(bundle_prefix).write_bytes(bytes(corrupt))
    with pytest.raises(BundleError, match="CRC-32C"):
        TensorBundle(bundle_prefix).read(last)


def test_a_size_that_disagrees_with_the_shape_is_refused(tmp_path):
    prefix = tmp_path / "variables"
    raw = np.zeros(6, dtype="<f4").tobytes()
    write_bundle(prefix, {}, extra_entries=[(b"w", entry_proto(1, (2, 4), 0, raw, size=len(raw)))])
    data_of(prefix).write_bytes(raw)
    with pytest.raises(BundleError, match=r"24 bytes stored for a float32 tensor of shape \[2, 4\], which needs 32"):
        TensorBundle(prefix)


def test_string_tensors_are_listed_but_not_read(tmp_path):
    prefix = tmp_path / "variables"
    write_bundle(prefix, {"x": (1, np.ones(2, dtype="<f4"))},
                 extra_entries=[(b"_CHECKPOINTABLE_OBJECT_GRAPH", entry_proto(7, (), 8, b"abc"))])
    bundle = TensorBundle(prefix)
    assert bundle.entries["_CHECKPOINTABLE_OBJECT_GRAPH"].dtype is None
    with pytest.raises(BundleError, match="dtype 7"):
        bundle.read("_CHECKPOINTABLE_OBJECT_GRAPH")
    with pytest.raises(BundleError, match="no tensor named 'y'"):
        bundle.read("y")


def test_command_line_lists_tensors_and_reports_a_bad_index_in_one_line(bundle_prefix):
    run = subprocess.run([sys.executable, str(TOOLS / "tensor_bundle.py"), str(bundle_prefix)],
                         capture_output=True, text=True)
    assert run.returncode == 0
    assert "dense/kernel/.ATTRIBUTES/VARIABLE_VALUE\tfloat32\t[2, 3]\t24 bytes" in run.stdout
    index_of(bundle_prefix).write_bytes(index_of(bundle_prefix).read_bytes()[:-1])
    run = subprocess.run([sys.executable, str(TOOLS / "tensor_bundle.py"), str(bundle_prefix)],
                         capture_output=True, text=True)
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("error: ") and "magic number" in run.stderr
