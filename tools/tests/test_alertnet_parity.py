"""The C core (through ctypes on CSources/alertnet's shared library) against the numpy reference and PyTorch,
on random architectures: random input sizes, kernels, strides, paddings and pools."""

import ctypes
import json
import os
import struct
import subprocess

import numpy as np
import pytest
import torch
import torch.nn as nn

import alertnet_ref
import export
from test_export import randomise_batchnorm

TOOLS = os.path.join(os.path.dirname(__file__), "..")

CORE = os.path.join(TOOLS, "..", "CSources", "alertnet")


class _Error(ctypes.Structure):
    _fields_ = [("message", ctypes.c_char * 512)]


@pytest.fixture(scope="module")
def alertnet():
    subprocess.run(["make", "-s", "-C", CORE, "shared"], check=True)
    library = ctypes.CDLL(os.path.join(CORE, "build", "libalertnet.so"))
    library.alertnet_load_file.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_Error)]
    library.alertnet_run.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_float)]
    library.alertnet_free.argtypes = [ctypes.c_void_p]
    library.alertnet_output_count.argtypes = [ctypes.c_void_p]
    library.alertnet_parameter_count.argtypes = [ctypes.c_void_p]
    library.alertnet_parameter_count.restype = ctypes.c_size_t
    library.alertnet_context_start_padding.argtypes = [ctypes.c_void_p]
    library.alertnet_label.argtypes = [ctypes.c_void_p, ctypes.c_int]
    library.alertnet_label.restype = ctypes.c_char_p
    library.alertnet_reset_state.argtypes = [ctypes.c_void_p]
    library.alertnet_is_stateful.argtypes = [ctypes.c_void_p]
    return library


def run_c(library, path, windows: list[np.ndarray]) -> list[np.ndarray]:
    model, error = ctypes.c_void_p(), _Error()
    status = library.alertnet_load_file(str(path).encode(), ctypes.byref(model), ctypes.byref(error))
    assert status == 0, error.message.decode()
    try:
        results = []
        for window in windows:
            x = np.ascontiguousarray(window, dtype=np.float32)
            out = np.zeros(library.alertnet_output_count(model), dtype=np.float32)
            assert library.alertnet_run(model, x.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                        out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))) == 0
            results.append(out.astype(np.float64))
        return results
    finally:
        library.alertnet_free(model)


def random_module(rng: np.random.Generator, frames: int, bins: int, n_out: int) -> nn.Sequential:
    """conv/bn/relu/pool blocks with random geometry, then a global pool or flatten, dense and an output."""
    layers, c, h, w = [], 1, frames, bins
    for _ in range(int(rng.integers(1, 4))):
        kh, kw = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        ph, pw = int(rng.integers(0, 3)), int(rng.integers(0, 3))
        if h + 2 * ph < kh or w + 2 * pw < kw:
            continue
        out = int(rng.integers(2, 9))
        layers.append(nn.Conv2d(c, out, (kh, kw), stride=(sh, sw), padding=(ph, pw), bias=bool(rng.integers(0, 2))))
        c, h, w = out, (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
        if rng.integers(0, 2):
            layers.append(nn.BatchNorm2d(c))
        layers.append(nn.ReLU())
        pk = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        if h >= pk[0] and w >= pk[1] and rng.integers(0, 3):
            stride = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
            padding = (int(rng.integers(0, pk[0] // 2 + 1)), int(rng.integers(0, pk[1] // 2 + 1)))
            pool = nn.MaxPool2d if rng.integers(0, 2) else nn.AvgPool2d
            layers.append(pool(pk, stride=stride, padding=padding))
            h, w = (h + 2 * padding[0] - pk[0]) // stride[0] + 1, (w + 2 * padding[1] - pk[1]) // stride[1] + 1
    head = int(rng.integers(0, 3))
    if head == 0:
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten()]
        flat = c
    elif head == 1:
        layers += [nn.AdaptiveMaxPool2d((1, 1)), nn.Flatten()]
        flat = c
    else:
        layers.append(nn.Flatten())
        flat = c * h * w
    layers.append(nn.Linear(flat, n_out))
    layers.append(nn.Softmax(dim=1) if rng.integers(0, 4) == 0 else nn.Sigmoid())
    return nn.Sequential(*layers)


def randomise(module: nn.Module, generator: torch.Generator) -> nn.Module:
    randomise_batchnorm(module, generator)
    return module.eval()


@pytest.mark.parametrize("seed", range(12))
def test_c_matches_numpy_and_pytorch_on_random_architectures(alertnet, tmp_path, seed):
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    frames, bins, n_out = int(rng.integers(6, 40)), int(rng.integers(5, 33)), int(rng.integers(1, 7))
    module = randomise(random_module(rng, frames, bins, n_out), torch.Generator().manual_seed(seed))
    labels = [f"class{i}" for i in range(n_out)]
    features = dict(export.DEFAULT_FEATURES, n_mels=bins)
    path = tmp_path / "model.safetensors"
    export.export_torch(path, module, features, labels, [0.5] * n_out, {"frames": frames, "step": 1}, "random",
                        f"seed {seed}")
    model = alertnet_ref.load(path)
    windows = [rng.standard_normal((frames, bins)).astype(np.float32) * 3 for _ in range(3)]
    for window, found in zip(windows, run_c(alertnet, path, windows)):
        np.testing.assert_allclose(found, alertnet_ref.forward(model, window), atol=1e-5, rtol=0)
        with torch.no_grad():
            expected = module(torch.from_numpy(window).view(1, 1, frames, bins)).view(-1).double().numpy()
        np.testing.assert_allclose(found, expected, atol=1e-5, rtol=0)


def test_c_matches_numpy_on_the_default_architecture(alertnet, tmp_path):
    path = tmp_path / "default.safetensors"
    export.main(["--demo", str(path), "--seed", "3"])
    model = alertnet_ref.load(path)
    rng = np.random.default_rng(3)
    windows = [(rng.standard_normal((64, 64)) * 10 - 40).astype(np.float32) for _ in range(3)]
    for window, found in zip(windows, run_c(alertnet, path, windows)):
        np.testing.assert_allclose(found, alertnet_ref.forward(model, window), atol=1e-5, rtol=0)


def test_c_rejects_what_the_reference_rejects(alertnet, tmp_path):
    path = tmp_path / "bad.safetensors"
    data = bytearray(open(os.path.join(CORE, "tests", "models", "dense-only.safetensors"), "rb").read())
    data[8:8 + 20] = b"{" + b" " * 19  # garbled JSON
    path.write_bytes(bytes(data))
    with pytest.raises(alertnet_ref.ModelError, match="not valid JSON"):
        alertnet_ref.load(path)
    model, error = ctypes.c_void_p(), _Error()
    assert alertnet.alertnet_load_file(str(path).encode(), ctypes.byref(model), ctypes.byref(error)) == -2
    assert b"not valid JSON" in error.message


def _dense_only_with(tmp_path, key: str, value) -> str:
    """The dense-only fixture with metadata `key` set to `value` as JSON text, written under tmp_path."""
    path = tmp_path / f"{key}.safetensors"
    data = open(os.path.join(CORE, "tests", "models", "dense-only.safetensors"), "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header["__metadata__"][key] = json.dumps(value)
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data[8 + n:])
    return path


@pytest.mark.parametrize("context", [{"frames": 3, "step": 1}, {"frames": 3, "step": 1, "start_padding": 2},
                                     {"frames": 3, "step": 1, "start_padding": 3},
                                     {"frames": 3, "step": 1, "start_padding": -1},
                                     {"frames": 3, "step": 1, "start_padding": 0, "other": 1}])
def test_c_and_the_reference_agree_on_start_padding(alertnet, tmp_path, context):
    """Both loaders accept the same contexts, read the same P, and refuse the same ones."""
    path = _dense_only_with(tmp_path, "context", context)
    try:
        expected = alertnet_ref.load(path).start_padding
    except alertnet_ref.ModelError:
        expected = None
    model, error = ctypes.c_void_p(), _Error()
    status = alertnet.alertnet_load_file(str(path).encode(), ctypes.byref(model), ctypes.byref(error))
    if expected is None:
        assert status == -2 and b"context" in error.message
    else:
        assert status == 0, error.message.decode()
        assert alertnet.alertnet_context_start_padding(model) == expected
        alertnet.alertnet_free(model)


@pytest.mark.parametrize("labels", [["siren"], ["a_1"], ["x" * 32], ["Siren"], ["car horn"], ["si\tren"],
                                    ["sir\x00en"], ["\x1b[2J"], ["\u009b"], ["caf\u00e9"], [""], ["x" * 33]])
def test_c_and_the_reference_agree_on_labels(alertnet, tmp_path, labels):
    """Both loaders accept exactly the labels FORMAT.md allows, [a-z0-9_]{1,32}; neither lets a NUL cut one short."""
    path = _dense_only_with(tmp_path, "labels", labels)
    allowed = all(alertnet_ref.LABEL.fullmatch(label) for label in labels)
    assert allowed == (labels[0] in ("siren", "a_1", "x" * 32))
    if allowed:
        assert alertnet_ref.load(path).labels == labels
    else:
        with pytest.raises(alertnet_ref.ModelError, match="label 0|NUL"):
            alertnet_ref.load(path)
    model, error = ctypes.c_void_p(), _Error()
    status = alertnet.alertnet_load_file(str(path).encode(), ctypes.byref(model), ctypes.byref(error))
    if allowed:
        assert status == 0, error.message.decode()
        assert alertnet.alertnet_label(model, 0) == labels[0].encode()
        alertnet.alertnet_free(model)
    else:
        assert status == -2 and (b"label 0" in error.message or b"NUL" in error.message), error.message
