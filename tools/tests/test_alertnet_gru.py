"""The gru layer end to end: PyTorch's nn.GRU, the numpy reference (tools/alertnet_ref.py) and the C core (ctypes)
agree over streams of frames fed one run at a time, the state carried in the loaded model and reset by the host;
tools/export.py writes nn.GRU as the format's gru and refuses what the format cannot hold."""

import ctypes
import json

import numpy as np
import pytest
import torch
import torch.nn as nn

import alertnet_ref
import export
from test_alertnet_parity import _Error, alertnet  # noqa: F401 (alertnet is the ctypes fixture)

FRAMES = 60  # streamed per case: the brief asks for at least 50


class CModel:
    """One loaded C model: a stream of runs, as the enhancer will drive it."""

    def __init__(self, library, path):
        self.library, self.handle, error = library, ctypes.c_void_p(), _Error()
        status = library.alertnet_load_file(str(path).encode(), ctypes.byref(self.handle), ctypes.byref(error))
        assert status == 0, error.message.decode()
        self.outputs = library.alertnet_output_count(self.handle)

    def run(self, window: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(window, dtype=np.float32)
        out = np.zeros(self.outputs, dtype=np.float32)
        assert self.library.alertnet_run(self.handle, x.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                         out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))) == 0
        return out.astype(np.float64)

    def reset(self):
        assert self.library.alertnet_reset_state(self.handle) == 0

    def close(self):
        self.library.alertnet_free(self.handle)


class Estimator(nn.Module):
    """The enhancer's kind of network: a GRU over frames, then per frame a dense layer and a sigmoid."""

    def __init__(self, inputs: int, hidden: int, outputs: int, bias: bool = True):
        super().__init__()
        self.gru = nn.GRU(inputs, hidden, batch_first=True, bias=bias)
        self.out = nn.Linear(hidden, outputs)

    def forward(self, x, h=None):
        y, h = self.gru(x, h)
        return torch.sigmoid(self.out(y)), h

    def layers(self) -> nn.Sequential:
        """Its modules in the order forward applies them, as export_torch takes them."""
        return nn.Sequential(self.gru, self.out, nn.Sigmoid())


def estimator(seed: int, inputs: int, hidden: int, outputs: int, bias: bool = True) -> Estimator:
    torch.manual_seed(seed)
    module = Estimator(inputs, hidden, outputs, bias).eval()
    with torch.no_grad():  # wider than PyTorch's 1/sqrt(H) start, so the gates leave their linear range
        for parameter in module.gru.parameters():
            parameter.mul_(2.0)
    return module


def write(module: nn.Module, path, inputs: int, outputs: int, frames: int = 1):
    features = dict(export.DEFAULT_FEATURES, n_mels=inputs)
    export.export_torch(path, module, features, [f"band_{i:02d}" for i in range(outputs)], [0.5] * outputs,
                        {"frames": frames, "step": frames}, "gru test", "nothing: random weights")


def stream(rng, inputs: int) -> np.ndarray:
    return (rng.standard_normal((FRAMES, inputs)) * 2.0).astype(np.float32)


def pytorch_per_frame(module: Estimator, frames: np.ndarray) -> np.ndarray:
    """Each frame's output, the state carried by hand from call to call (the enhancer's schedule)."""
    outputs, h = [], None
    with torch.no_grad():
        for frame in frames:
            y, h = module(torch.from_numpy(frame).view(1, 1, -1), h)
            outputs.append(y.view(-1).double().numpy())
    return np.array(outputs)


@pytest.mark.parametrize("seed, inputs, hidden, outputs, bias", [
    (0, 6, 5, 3, True), (1, 1, 1, 1, True), (2, 9, 16, 4, False), (3, 42, 96, 32, True)])
def test_c_and_numpy_follow_pytorch_over_a_stream(alertnet, tmp_path, seed, inputs, hidden, outputs, bias):
    module = estimator(seed, inputs, hidden, outputs, bias)
    path = tmp_path / "gru.safetensors"
    write(module.layers(), path, inputs, outputs)
    frames = stream(np.random.default_rng(seed), inputs)
    expected = pytorch_per_frame(module, frames)
    with torch.no_grad():  # the whole stream as one sequence in PyTorch: the same numbers
        whole = module(torch.from_numpy(frames).view(1, FRAMES, inputs))[0].view(FRAMES, outputs).double().numpy()
    np.testing.assert_allclose(whole, expected, atol=1e-5, rtol=0)

    reference, c = alertnet_ref.load(path), CModel(alertnet, path)
    try:
        assert reference.stateful and alertnet.alertnet_is_stateful(c.handle) == 1
        numpy_found = np.array([alertnet_ref.forward(reference, frame.reshape(1, -1)) for frame in frames])
        c_found = np.array([c.run(frame) for frame in frames])
        np.testing.assert_allclose(numpy_found, expected, atol=1e-4, rtol=0)
        np.testing.assert_allclose(c_found, expected, atol=1e-4, rtol=0)
        # a reset starts the stream again: the first frames answer as they did
        c.reset()
        alertnet_ref.reset_state(reference)
        for index in range(5):
            np.testing.assert_allclose(c.run(frames[index]), expected[index], atol=1e-4, rtol=0)
            np.testing.assert_allclose(alertnet_ref.forward(reference, frames[index].reshape(1, -1)),
                                       expected[index], atol=1e-4, rtol=0)
    finally:
        c.close()


def test_runs_of_several_frames_answer_for_their_newest(alertnet, tmp_path):
    """context.frames = 4: each run consumes 4 new frames and answers with PyTorch's output for the 4th."""
    module = estimator(7, 8, 12, 5)
    path = tmp_path / "gru4.safetensors"
    write(module.layers(), path, 8, 5, frames=4)
    frames = stream(np.random.default_rng(7), 8)
    expected = pytorch_per_frame(module, frames)
    reference, c = alertnet_ref.load(path), CModel(alertnet, path)
    try:
        for start in range(0, FRAMES, 4):
            chunk = frames[start:start + 4]
            np.testing.assert_allclose(c.run(chunk), expected[start + 3], atol=1e-4, rtol=0)
            np.testing.assert_allclose(alertnet_ref.forward(reference, chunk), expected[start + 3], atol=1e-4, rtol=0)
    finally:
        c.close()


def test_stacked_grus_with_a_softmax_per_step(alertnet, tmp_path):
    torch.manual_seed(11)
    first, second, out = nn.GRU(5, 7, batch_first=True), nn.GRU(7, 4, batch_first=True, bias=False), nn.Linear(4, 3)
    path = tmp_path / "stacked.safetensors"
    write(nn.Sequential(first, second, nn.ReLU(), out, nn.Softmax(dim=-1)).eval(), path, 5, 3)
    frames = stream(np.random.default_rng(11), 5)
    with torch.no_grad():
        y = torch.softmax(out(torch.relu(second(first(torch.from_numpy(frames).view(1, FRAMES, 5))[0])[0])), dim=-1)
    expected = y.view(FRAMES, 3).double().numpy()
    reference, c = alertnet_ref.load(path), CModel(alertnet, path)
    try:
        for frame, want in zip(frames, expected):
            np.testing.assert_allclose(c.run(frame), want, atol=1e-4, rtol=0)
            np.testing.assert_allclose(alertnet_ref.forward(reference, frame.reshape(1, -1)), want, atol=1e-4, rtol=0)
    finally:
        c.close()


@pytest.mark.parametrize("module, message", [
    (nn.GRU(4, 3, num_layers=2), "only one layer, one direction and no projection"),
    (nn.GRU(4, 3, bidirectional=True), "only one layer, one direction and no projection"),
    (nn.Sequential(nn.GRU(4, 3), nn.Linear(3, 2), nn.Softmax(dim=1)), r"softmax must run over the class dimension "
                                                                      r"\(dim=2 or -1 after a GRU\)"),
])
def test_export_refuses_what_the_format_cannot_hold(tmp_path, module, message):
    with pytest.raises(ValueError, match=message):
        write(module, tmp_path / "refused.safetensors", 4, 2)


def test_a_stateless_model_is_not_stateful(alertnet, tmp_path):
    path = tmp_path / "dense.safetensors"
    write(nn.Sequential(nn.Flatten(), nn.Linear(4, 2), nn.Sigmoid()), path, 4, 2)
    c = CModel(alertnet, path)
    try:
        assert alertnet.alertnet_is_stateful(c.handle) == 0 and not alertnet_ref.load(path).stateful
    finally:
        c.close()


def _metadata(graph: list[dict], inputs: int, labels: int) -> dict[str, str]:
    return {"format": "alertnet", "format_version": "1", "model_name": "bad gru", "trained_on": "nothing",
            "features": json.dumps(dict(export.DEFAULT_FEATURES, n_mels=inputs)),
            "context": json.dumps({"frames": 2, "step": 2}), "graph": json.dumps(graph),
            "labels": json.dumps([f"l{i}" for i in range(labels)]), "thresholds": json.dumps([0.5] * labels)}


GRU = {"op": "gru", "weight_ih": "wi", "weight_hh": "wh"}


@pytest.mark.parametrize("tensors, graph, labels, c_says, numpy_says", [
    ({"wi": (6, 4), "wh": (6, 3)}, [GRU, {"op": "sigmoid"}], 2, "expected shape [3H, H] (gates r, z, n), found [6, 3]",
     r"expected shape \[3H, H\] \(gates r, z, n\), found \[6, 3\]"),
    ({"wi": (6, 5), "wh": (6, 2)}, [GRU, {"op": "sigmoid"}], 2, "tensor \"wi\": expected shape [6, 4], found [6, 5]",
     r"tensor 'wi': expected shape \[6, 4\], found \[6, 5\]"),
    ({"wi": (6, 4), "wh": (6, 2), "b": (5,)}, [dict(GRU, bias_hh="b"), {"op": "sigmoid"}], 2,
     "tensor \"b\": expected shape [6], found [5]", r"tensor 'b': expected shape \[6\], found \[5\]"),
    ({"wi": (6, 4), "wh": (6, 2)}, [dict(GRU, hidden_size=2), {"op": "sigmoid"}], 2,
     "unknown field \"hidden_size\"", "unknown field 'hidden_size'"),
    ({"wi": (6, 8), "wh": (6, 2)}, [{"op": "flatten"}, GRU, {"op": "sigmoid"}], 2,
     "needs a sequence [1, T, I] or [T, I], got [8]", r"needs a sequence \[1, T, I\] or \[T, I\], got \[8\]"),
    ({"wi": (6, 4), "wh": (6, 2)}, [GRU, {"op": "sigmoid"}], 3, "outputs 2 values per step, expected 3",
     r"outputs \[2, 2\], expected \[3\]"),
])
def test_c_and_numpy_refuse_the_same_gru_files(alertnet, tmp_path, tensors, graph, labels, c_says, numpy_says):
    path = tmp_path / "bad.safetensors"
    arrays = {name: np.full(shape, 0.1, dtype=np.float32) for name, shape in tensors.items()}
    export._write_safetensors(path, arrays, _metadata(graph, 4, labels))
    with pytest.raises(alertnet_ref.ModelError, match=numpy_says):
        alertnet_ref.load(path)
    handle, error = ctypes.c_void_p(), _Error()
    assert alertnet.alertnet_load_file(str(path).encode(), ctypes.byref(handle), ctypes.byref(error)) == -2
    assert c_says.encode() in error.message, error.message
