"""Start training from a shipped weight file instead of random weights (train.py --init).

A weight file keeps what the network computes, not how it was trained: export folds every BatchNorm into the
convolution before it, and the Dropout layers vanish. To go on training such a network, its convolutions and
dense layers are copied into a fresh training network of the same shape, and each BatchNorm is set so that, on a
calibration batch of training windows, it passes its input through unchanged: its mean and variance become the
batch's, and its scale and shift undo the normalisation (weight = sqrt(var + eps), bias = mean). In eval mode the
network then computes exactly what the file does; in training mode it does so on that batch and nearly so on the
next ones, so fine-tuning starts from the file's behaviour rather than from a perturbed copy of it.

The file must have been made by the same architecture and features: the fresh network's own export graph must
match the file's, op for op and shape for shape, and the features must match except for normalisation (which
the file's weights were learned against and so is taken from the file).
"""

from __future__ import annotations

import numpy as np
import torch

import alertnet_ref
import export
from hearalert_train.from_weights import torch_module


class WarmStartError(ValueError):
    """The weight file cannot seed this training network; the message says why."""


def _structure(graph: list[dict], tensors: dict[str, np.ndarray]) -> list[tuple]:
    """A graph's ops with their settings and the shapes of their tensors, names left out."""
    out = []
    for layer in graph:
        settings = tuple(sorted((k, str(v)) for k, v in layer.items() if not isinstance(v, str) or k == "op"))
        shapes = tuple(tuple(tensors[v].shape) for k, v in sorted(layer.items()) if k != "op" and isinstance(v, str))
        out.append((settings, shapes))
    return out


def check_features(file_features: dict, spec: dict) -> None:
    """Refuse a file whose features differ from the ones training computes (normalisation aside)."""
    differing = sorted(key for key in set(file_features) | set(spec)
                       if key != "normalization" and file_features.get(key) != spec.get(key))
    if differing:
        raise WarmStartError("its features differ from training's in " + ", ".join(
            f"{key} ({file_features.get(key)!r} vs {spec.get(key)!r})" for key in differing))
    if not file_features.get("normalization"):
        raise WarmStartError("it holds no feature normalisation to keep")


def load_into(model: torch.nn.Sequential, source: alertnet_ref.Model, calibration: torch.Tensor,
              tolerance: float = 1e-4) -> float:
    """Copy `source`'s weights into `model` (the training network, same architecture) and set its BatchNorms
    to pass their input through on `calibration` ([N, 1, T, F] normalised windows). Returns the largest difference
    between the two networks' outputs on the calibration batch; raises WarmStartError when they differ by more
    than `tolerance`, or when the shapes do not match."""
    fresh_tensors, fresh_graph = export.torch_graph(model.eval())
    if _structure(fresh_graph, fresh_tensors) != _structure(source.graph, source.tensors):
        raise WarmStartError("its network differs from the one training builds (check --frames and --channels: "
                             f"the file has {source.frames} frames and layers "
                             f"{[layer['op'] for layer in source.graph]})")
    layers = export._flatten_sequential(model)
    weighted = [m for m in layers if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
    entries = [layer for layer in source.graph if layer["op"] in ("conv2d", "dense")]
    with torch.no_grad():
        for module, entry in zip(weighted, entries, strict=True):
            module.weight.copy_(torch.from_numpy(source.tensors[entry["weight"]].astype(np.float32)))
            module.bias.copy_(torch.from_numpy(source.tensors[entry["bias"]].astype(np.float32)))
        x = calibration
        for module in layers:  # in order, so each BatchNorm sees what the file's network computes before it
            if isinstance(module, torch.nn.BatchNorm2d):
                mean = x.mean(dim=(0, 2, 3))
                var = x.var(dim=(0, 2, 3), unbiased=False)
                module.running_mean.copy_(mean)
                module.running_var.copy_(var)
                module.weight.copy_(torch.sqrt(var + module.eps))
                module.bias.copy_(mean)
            module.eval()
            x = module(x)
        reference = torch_module(source)(calibration)
        difference = float((x - reference).abs().max())
    if not difference <= tolerance:
        raise WarmStartError(f"the copied network differs from the file's by {difference:.2e} (> {tolerance})")
    return difference
