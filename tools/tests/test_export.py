"""export.py: what it writes reads back through the independent numpy reference and matches PyTorch."""

import json
import os
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import alertnet_ref  # noqa: E402
import export  # noqa: E402

FEATURES = dict(export.DEFAULT_FEATURES, n_mels=12)


def _randomise_batchnorm(module: nn.Module, generator: torch.Generator) -> None:
    for child in module.modules():
        if isinstance(child, nn.BatchNorm2d):
            with torch.no_grad():
                child.running_mean.uniform_(-0.5, 0.5, generator=generator)
                child.running_var.uniform_(0.5, 2.0, generator=generator)
                child.weight.uniform_(0.5, 1.5, generator=generator)
                child.bias.uniform_(-0.3, 0.3, generator=generator)


def _export_and_compare(tmp_path, module: nn.Module, frames: int, labels: list[str], seed: int) -> None:
    generator = torch.Generator().manual_seed(seed)
    _randomise_batchnorm(module, generator)
    module.eval()
    path = tmp_path / "model.safetensors"
    export.export_torch(path, module, FEATURES, labels, [0.5] * len(labels), {"frames": frames, "step": 2},
                        "test", "random weights")
    model = alertnet_ref.load(path)
    for trial in range(3):
        window = torch.randn(frames, FEATURES["n_mels"], generator=generator)
        with torch.no_grad():
            expected = module(window.view(1, 1, frames, -1)).view(-1).double().numpy()
        found = alertnet_ref.forward(model, window.numpy())
        np.testing.assert_allclose(found, expected, atol=1e-5, rtol=0)


ARCHITECTURES = {
    "default-like": lambda: nn.Sequential(
        nn.Conv2d(1, 4, 5, stride=2, padding=2), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        nn.Linear(8, 3), nn.Sigmoid()),
    "nested-avgpool-softmax": lambda: nn.Sequential(
        nn.Sequential(nn.Conv2d(1, 3, (3, 2), stride=(1, 2), padding=(1, 0), bias=False), nn.ReLU()),
        nn.AvgPool2d(3, stride=2, padding=1), nn.BatchNorm2d(3), nn.Dropout(0.2),
        nn.Flatten(), nn.Linear(3 * 8 * 3, 3), nn.Softmax(dim=1)),
    "maxpool-padding-global-max": lambda: nn.Sequential(
        nn.Conv2d(1, 5, 3), nn.BatchNorm2d(5), nn.MaxPool2d((3, 2), stride=(2, 1), padding=(1, 1)), nn.ReLU(),
        nn.AdaptiveMaxPool2d((1, 1)), nn.Flatten(), nn.Linear(5, 3, bias=False), nn.Sigmoid()),
}


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_export_torch_matches_pytorch(tmp_path, name):
    torch.manual_seed(1)
    _export_and_compare(tmp_path, ARCHITECTURES[name](), frames=16, labels=["a", "b", "c"], seed=2)


def test_batchnorm_after_conv_is_folded(tmp_path):
    tensors, graph = export.torch_graph(ARCHITECTURES["default-like"]())
    assert [layer["op"] for layer in graph] == ["conv2d", "relu", "maxpool2d", "conv2d", "relu", "global_avgpool",
                                                "dense", "sigmoid"]
    assert len(tensors) == 6


def test_metadata_holds_the_contract_keys(tmp_path):
    path = tmp_path / "m.safetensors"
    export.export_torch(path, ARCHITECTURES["default-like"]().eval(), FEATURES, ["a", "b", "c"], [0.3, 0.5, 0.7],
                        {"frames": 16, "step": 4}, "name", "corpus X seed 1", {"tracker": {"off_ratio": 0.5}})
    metadata = alertnet_ref.load(path).metadata
    assert metadata["format"] == "alertnet" and metadata["format_version"] == "1"
    assert json.loads(metadata["features"]) == FEATURES
    assert json.loads(metadata["context"]) == {"frames": 16, "step": 4}
    assert json.loads(metadata["thresholds"]) == [0.3, 0.5, 0.7]
    assert json.loads(metadata["tracker"]) == {"off_ratio": 0.5}


def _export_default_like(path, context: dict) -> None:
    torch.manual_seed(0)  # the same weights every time, so two files differ only by what the context makes them
    export.export_torch(path, ARCHITECTURES["default-like"]().eval(), FEATURES, ["a", "b", "c"], [0.5] * 3, context,
                        "name", "random weights")


@pytest.mark.parametrize("padding", [1, 15])
def test_start_padding_is_written_and_read_back(tmp_path, padding):
    path = tmp_path / "m.safetensors"
    _export_default_like(path, {"frames": 16, "step": 4, "start_padding": padding})
    model = alertnet_ref.load(path)
    assert json.loads(model.metadata["context"]) == {"frames": 16, "step": 4, "start_padding": padding}
    assert model.start_padding == padding


def test_zero_start_padding_writes_the_file_of_no_padding(tmp_path):
    """P = 0 is today's behaviour, so the key is left out and the bytes are those of a file without it."""
    _export_default_like(tmp_path / "zero.safetensors", {"frames": 16, "step": 4, "start_padding": 0})
    _export_default_like(tmp_path / "none.safetensors", {"frames": 16, "step": 4})
    context = alertnet_ref.load(tmp_path / "zero.safetensors").metadata["context"]
    assert json.loads(context) == {"frames": 16, "step": 4}
    assert (tmp_path / "zero.safetensors").read_bytes() == (tmp_path / "none.safetensors").read_bytes()


@pytest.mark.parametrize("context, message", [
    ({"frames": 16, "step": 4, "start_padding": 16}, r"start_padding'\] must be an integer in \[0, 15\].*got 16"),
    ({"frames": 16, "step": 4, "start_padding": -1}, r"start_padding'\] must be an integer in \[0, 15\].*got -1"),
    ({"frames": 16, "step": 4, "start_padding": 2.0}, r"start_padding'\] must be an integer"),
    ({"frames": 16, "step": 4, "padding": 2}, r"unknown key\(s\) \['padding'\]"),
])
def test_bad_start_padding_is_refused_at_export(tmp_path, context, message):
    with pytest.raises(ValueError, match=message):
        _export_default_like(tmp_path / "m.safetensors", context)
    assert not (tmp_path / "m.safetensors").exists()


@pytest.mark.parametrize("label", ["Siren", "car horn", "si\tren", "sir\x00en", "\x1b[2J", "caf\u00e9", "", "a" * 33])
def test_a_label_that_is_not_an_identifier_is_refused_at_export(tmp_path, label):
    module = nn.Sequential(nn.Flatten(), nn.Linear(16 * 12, 2), nn.Sigmoid())
    with pytest.raises(ValueError, match="must be 1 to 32 characters of a-z, 0-9 and _"):
        export.export_torch(tmp_path / "m.safetensors", module, FEATURES, ["siren", label], [0.5, 0.5],
                            {"frames": 16, "step": 2}, "test", "random weights")
    assert not (tmp_path / "m.safetensors").exists()


@pytest.mark.parametrize("module, message", [
    (nn.Sequential(nn.Conv2d(1, 2, 3, dilation=2)), "dilation"),
    (nn.Sequential(nn.Conv2d(1, 2, 3, padding="same")), "padding"),
    (nn.Sequential(nn.GELU()), "unsupported module GELU"),
    (nn.Sequential(nn.MaxPool2d(2, ceil_mode=True)), "ceil_mode"),
])
def test_unsupported_modules_are_rejected(module, message):
    with pytest.raises(ValueError, match=message):
        export.torch_graph(module)


def test_graph_inconsistent_with_tensors_is_rejected_at_export(tmp_path):
    tensors = {"w": np.ones((3, 5), np.float32)}
    graph = [{"op": "flatten"}, {"op": "dense", "weight": "w"}, {"op": "sigmoid"}]
    with pytest.raises(ValueError, match=r"tensor 'w': expected shape \[3, 48\], found \[3, 5\]"):
        export.export(tmp_path / "m.safetensors", tensors, graph, FEATURES, ["a", "b", "c"], [0.5] * 3,
                      {"frames": 4, "step": 1}, "n", "t")
    assert not (tmp_path / "m.safetensors").exists()
    with pytest.raises(ValueError, match="not used by the graph: extra"):
        export.export(tmp_path / "m.safetensors", dict(tensors, extra=np.ones(2)), graph, FEATURES, ["a", "b", "c"],
                      [0.5] * 3, {"frames": 4, "step": 1}, "n", "t")


def test_files_are_deterministic_and_read_by_the_safetensors_package(tmp_path):
    from safetensors import safe_open

    module = ARCHITECTURES["default-like"]().eval()
    paths = [tmp_path / "a.safetensors", tmp_path / "b.safetensors"]
    for path in paths:
        export.export_torch(path, module, FEATURES, ["a", "b", "c"], [0.5] * 3, {"frames": 16, "step": 4}, "n", "t")
    assert paths[0].read_bytes() == paths[1].read_bytes()
    tensors, _ = export.torch_graph(module)
    with safe_open(str(paths[0]), framework="numpy") as handle:
        assert handle.metadata()["format"] == "alertnet"
        assert sorted(handle.keys()) == sorted(tensors)
        for name, value in tensors.items():
            np.testing.assert_array_equal(handle.get_tensor(name), value.astype(np.float32))


def test_a_failed_export_keeps_the_previous_file(tmp_path):
    class DiskFull:  # fails while the tensor data is being written, after the header
        size, shape = 2, (2,)

        def astype(self, _):
            raise OSError(28, "No space left on device")

    path = tmp_path / "model.safetensors"
    path.write_bytes(b"the previous model")
    with pytest.raises(OSError):
        export._write_safetensors(path, {"w": DiskFull()}, {})
    assert path.read_bytes() == b"the previous model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.safetensors"]


def test_script_reports_an_unwritable_output_in_one_line(capsys):
    assert export.main(["--demo", "/nonexistent/model.safetensors"]) == 1
    assert capsys.readouterr().err == "/nonexistent/model.safetensors: cannot write: No such file or directory\n"
