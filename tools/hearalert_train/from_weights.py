"""A PyTorch network that computes what an alertnet weight file computes (FORMAT.md), built from the file alone.

Thresholds and tracker settings are chosen on a development set after training. Rebuilding the network from the
shipped file, rather than from the training code that made it, lets that choice be made again on a new
development set without retraining, and for any file the C core accepts (tools/retune.py). The layers are
PyTorch's own; `tools/alertnet_ref.py`'s numpy forward pass is the independent reference they are tested against.
"""

from __future__ import annotations

import torch
from torch import nn

import alertnet_ref


class _ChannelAffine(nn.Module):
    """Batch normalisation in inference form, y = x·scale + shift per channel (dimension 1), for [N, C, H, W]
    and [N, C] alike: FORMAT.md allows `batchnorm` after a convolution and after a dense layer."""

    def __init__(self, scale: torch.Tensor, shift: torch.Tensor):
        super().__init__()
        self.register_buffer("scale", scale)
        self.register_buffer("shift", shift)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = (1, -1) + (1,) * (x.dim() - 2)
        return x * self.scale.view(shape) + self.shift.view(shape)


def _tensor(model: alertnet_ref.Model, name: str) -> torch.Tensor:
    return torch.from_numpy(model.tensors[name].astype("float32"))


def _layer(model: alertnet_ref.Model, layer: dict) -> list[nn.Module]:
    op = layer["op"]
    if op == "conv2d":
        weight = _tensor(model, layer["weight"])
        conv = nn.Conv2d(weight.shape[1], weight.shape[0], tuple(weight.shape[2:]),
                         stride=tuple(layer.get("stride", [1, 1])), padding=tuple(layer.get("padding", [0, 0])),
                         bias="bias" in layer)
        conv.weight.data.copy_(weight)
        if "bias" in layer:
            conv.bias.data.copy_(_tensor(model, layer["bias"]))
        return [conv]
    if op == "batchnorm":
        scale = _tensor(model, layer["weight"]) / torch.sqrt(_tensor(model, layer["running_var"]) + layer["eps"])
        return [_ChannelAffine(scale, _tensor(model, layer["bias"]) - _tensor(model, layer["running_mean"]) * scale)]
    if op in ("maxpool2d", "avgpool2d"):
        kernel = tuple(layer["kernel"])
        stride = tuple(layer.get("stride", layer["kernel"]))
        padding = tuple(layer.get("padding", [0, 0]))
        if op == "maxpool2d":
            return [nn.MaxPool2d(kernel, stride, padding)]
        return [nn.AvgPool2d(kernel, stride, padding, count_include_pad=True)]
    if op == "dense":
        weight = _tensor(model, layer["weight"])
        dense = nn.Linear(weight.shape[1], weight.shape[0], bias="bias" in layer)
        dense.weight.data.copy_(weight)
        if "bias" in layer:
            dense.bias.data.copy_(_tensor(model, layer["bias"]))
        return [dense]
    simple = {"relu": [nn.ReLU()], "flatten": [nn.Flatten()], "sigmoid": [nn.Sigmoid()],
              "softmax": [nn.Softmax(dim=1)],
              "global_avgpool": [nn.AdaptiveAvgPool2d(1), nn.Flatten()],
              "global_maxpool": [nn.AdaptiveMaxPool2d(1), nn.Flatten()]}
    if op not in simple:  # alertnet_ref.validate refuses unknown ops first; this guards a FORMAT.md addition
        raise alertnet_ref.ModelError(f"no PyTorch equivalent for op {op!r}")
    return simple[op]


def torch_module(model: alertnet_ref.Model) -> nn.Sequential:
    """The network of a validated weight file (`alertnet_ref.load`), in eval mode: input [N, 1, T, F] feature
    windows, output [N, labels] probabilities, as the C core computes them for one window at a time."""
    layers = [module for layer in model.graph for module in _layer(model, layer)]
    return nn.Sequential(*layers).eval()
