"""alertnet_ref.py: the numpy reference rejects malformed files with messages naming what is wrong."""

import json
import os
import struct

import numpy as np
import pytest

import alertnet_ref

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "..", "CSources", "alertnet", "tests", "models",
                       "dense-only.safetensors")


def split(data: bytes) -> tuple[dict, bytes]:
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + n]), data[8 + n:]


def join(header: dict, buffer: bytes) -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + buffer


@pytest.fixture
def parts():
    with open(FIXTURE, "rb") as handle:
        return split(handle.read())


def test_fixture_loads_and_runs(parts):
    model = alertnet_ref.loads(join(*parts))
    assert model.input_shape == (3, 4) and model.labels == ["only"]
    p = alertnet_ref.forward(model, np.zeros((3, 4)))
    assert p.shape == (1,) and 0 < p[0] < 1


def test_truncated_and_oversized_headers_are_rejected(parts):
    data = join(*parts)
    with pytest.raises(alertnet_ref.ModelError, match="shorter than the 8-byte"):
        alertnet_ref.loads(data[:5])
    with pytest.raises(alertnet_ref.ModelError, match="runs past the end"):
        alertnet_ref.loads(data[:40])
    with pytest.raises(alertnet_ref.ModelError, match="exceeds"):
        alertnet_ref.loads(struct.pack("<Q", 200 << 20) + data[8:])


@pytest.mark.parametrize("change, message", [
    (lambda h: h["hidden.weight"].update(dtype="F16"), "dtype 'F16' is not supported"),
    (lambda h: h["hidden.weight"].update(data_offsets=[0, 10 ** 6]), "outside the"),
    (lambda h: h["out.bias"].update(data_offsets=h["hidden.weight"]["data_offsets"][:1]
                                    + [h["hidden.weight"]["data_offsets"][0] + 4]), "overlap"),
    (lambda h: h["hidden.weight"].update(shape=[12, 5]), r"expected shape \[12, 12\], found \[12, 5\]"),
    # json.loads reads true as a bool, which Python counts as an int: refused like the C core refuses it.
    (lambda h: h["hidden.weight"].update(shape=[12, True]), r"bad shape \[12, True\]"),
    (lambda h: h["out.bias"].update(data_offsets=[False, h["out.bias"]["data_offsets"][1]]), "data_offsets"),
    (lambda h: h["__metadata__"].update(format="other"), "format"),
    (lambda h: h["__metadata__"].update(thresholds="[1.5]"), "thresholds"),
    (lambda h: h["__metadata__"].update(graph=json.dumps(json.loads(h["__metadata__"]["graph"])[:-1])),
     "last layer must be sigmoid or softmax"),
    (lambda h: h["__metadata__"].update(graph=json.dumps(
        [{"op": "flatten", "axis": 1}] + json.loads(h["__metadata__"]["graph"])[1:])), "unknown field 'axis'"),
])
def test_bad_headers_are_rejected(parts, change, message):
    header, buffer = parts
    change(header)
    with pytest.raises(alertnet_ref.ModelError, match=message):
        alertnet_ref.loads(join(header, buffer))


def test_unused_tensor_is_rejected(parts):
    header, buffer = parts
    header["stray"] = {"dtype": "F32", "shape": [1], "data_offsets": [len(buffer), len(buffer) + 4]}
    with pytest.raises(alertnet_ref.ModelError, match="'stray' is not used"):
        alertnet_ref.loads(join(header, buffer + b"\0\0\0\0"))


def test_non_finite_values_are_rejected(parts):
    header, buffer = parts
    begin = header["out.bias"]["data_offsets"][0]
    buffer = buffer[:begin] + struct.pack("<f", float("nan")) + buffer[begin + 4:]
    with pytest.raises(alertnet_ref.ModelError, match="non-finite"):
        alertnet_ref.loads(join(header, buffer))


def test_script_refuses_a_window_of_the_wrong_shape(tmp_path, capsys):
    frames, bins = alertnet_ref.load(FIXTURE).input_shape
    window = tmp_path / "window.npy"
    np.save(window, np.zeros((frames + 1, bins), dtype=np.float32))
    assert alertnet_ref.main([FIXTURE, "--input", str(window)]) == 1
    assert capsys.readouterr().err == (f"error: {window}: shape [{frames + 1}, {bins}], the model takes "
                                       f"[{frames}, {bins}] [frames, bins]\n")


def test_script_reports_a_missing_window_in_one_line(capsys):
    assert alertnet_ref.main([FIXTURE, "--input", "/nonexistent/window.npy"]) == 1
    assert capsys.readouterr().err.startswith("error: /nonexistent/window.npy: ")


def _with_context(parts, context: dict) -> bytes:
    header, buffer = parts
    header["__metadata__"]["context"] = json.dumps(context)
    return join(header, buffer)


@pytest.mark.parametrize("padding", [None, 0, 1, 2])
def test_start_padding_below_the_window_is_read(parts, padding):
    context = {"frames": 3, "step": 1} if padding is None else {"frames": 3, "step": 1, "start_padding": padding}
    assert alertnet_ref.loads(_with_context(parts, context)).start_padding == (padding or 0)


@pytest.mark.parametrize("context, message", [
    ({"frames": 3, "step": 1, "start_padding": 3}, r"start_padding must be an integer in \[0, 2\].*got 3"),
    ({"frames": 3, "step": 1, "start_padding": -1}, r"start_padding must be an integer in \[0, 2\].*got -1"),
    ({"frames": 3, "step": 1, "start_padding": 1.5}, "start_padding must be an integer"),
    ({"frames": 3, "step": 1, "start_padding": True}, "start_padding must be an integer"),
    ({"frames": 3, "step": 1, "start_padding": "1"}, "start_padding must be an integer"),
    ({"frames": 3, "step": 1, "padding": 1}, r"found keys \['frames', 'padding', 'step'\]"),
    ({"frames": 3, "step": 1, "start_padding": 1, "extra": 0}, "optionally with \"start_padding\""),
])
def test_bad_start_padding_and_other_context_keys_are_rejected(parts, context, message):
    with pytest.raises(alertnet_ref.ModelError, match=message):
        alertnet_ref.loads(_with_context(parts, context))
