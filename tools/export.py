#!/usr/bin/env python3
"""Write an alertnet weight file (safetensors + metadata) from numpy tensors or a PyTorch ``nn.Sequential``.

The format is defined in ``CSources/alertnet/FORMAT.md``. Two entry points:

* ``export(path, tensors, graph, ...)`` writes exactly the tensors and layer graph it is given;
* ``export_torch(path, module, ...)`` walks an ``nn.Sequential`` (nested Sequentials are flattened), folds every
  ``BatchNorm2d`` that directly follows a ``Conv2d`` into that convolution, and calls ``export``. An ``nn.GRU``
  (one layer, one direction) becomes a stateful ``gru`` layer: list a recurrent network's modules in the order its
  forward applies them, e.g. ``nn.Sequential(net.gru, net.out, nn.Sigmoid())`` (PyTorch itself cannot run such a
  Sequential, as a GRU returns a tuple; the file runs it, with the state kept between runs).

Both validate the result before returning by reading the written file back with the independent numpy
reference (``tools/alertnet_ref.py``), so a graph the C core would reject fails here, at export time, with the
same kind of message (tensor name, expected shape, found shape).

Example (command line): ``tools/export.py --demo out.safetensors`` writes a randomly initialised model of the
default architecture, useful for benchmarks and for trying the ``hearalert model`` commands.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import struct
import sys
from typing import Any

import numpy as np

import alertnet_ref
from hearalert_corpus import LABELS

FORMAT_NAME = "alertnet"
FORMAT_VERSION = "1"

# Weight fields each op may name, and whether they are required.
_TENSOR_FIELDS: dict[str, dict[str, bool]] = {
    "conv2d": {"weight": True, "bias": False},
    "batchnorm": {"weight": True, "bias": True, "running_mean": True, "running_var": True},
    "dense": {"weight": True, "bias": False},
    "gru": {"weight_ih": True, "weight_hh": True, "bias_ih": False, "bias_hh": False},
}


def export(path, tensors: dict[str, np.ndarray], graph: list[dict], features: dict, labels: list[str],
           thresholds: list[float], context: dict, model_name: str, trained_on: str,
           extra_metadata: dict | None = None) -> None:
    """Write an alertnet file.

    Args:
        path: where to write (conventionally ``*.safetensors``).
        tensors: every weight tensor, by name; converted to float32 C-order. Each must be named by ``graph``.
        graph: ordered layers as in FORMAT.md, e.g. ``{"op": "conv2d", "weight": "c1.w", "bias": "c1.b",
            "stride": [2, 2], "padding": [2, 2]}``.
        features: the FeatureSpec as a dict (FORMAT.md); decides the input width F.
        labels: output names in order; ``thresholds``: one default on-threshold in (0, 1) per label.
        context: ``{"frames": T, "step": S}``, optionally with ``"start_padding": P`` (0 <= P < T: copies of a
            stream's first frame the model was trained to see before it; written only when P > 0, so unpadded
            files stay byte for byte as before).
        model_name, trained_on: free text for the model card and ``hearalert model inspect``.
        extra_metadata: optional extra keys (``description``, ``license``, ``tracker``...); values that are not
            strings are stored as JSON text.
    Raises:
        ValueError: naming what is inconsistent (unknown op, missing/unused tensor, shape mismatch, bad label or
            threshold).
    """
    if len(labels) == 0 or len(labels) != len(thresholds):
        raise ValueError(f"need one threshold per label: {len(labels)} labels, {len(thresholds)} thresholds")
    for label, threshold in zip(labels, thresholds):
        if not isinstance(label, str) or not alertnet_ref.LABEL.fullmatch(label):
            raise ValueError(f"label {label!r} must be 1 to 32 characters of a-z, 0-9 and _ (FORMAT.md)")
        if not (0.0 < float(threshold) < 1.0):
            raise ValueError(f"threshold for {label!r} must be in (0, 1), got {threshold}")
    for key in ("frames", "step"):
        if not isinstance(context.get(key), int) or context[key] < 1:
            raise ValueError(f"context[{key!r}] must be a positive integer, got {context.get(key)!r}")
    unknown = sorted(set(context) - {"frames", "step", "start_padding"})
    if unknown:
        raise ValueError(f"context has unknown key(s) {unknown}: only frames, step and start_padding are allowed")
    start_padding = context.get("start_padding", 0)
    if (not isinstance(start_padding, int) or isinstance(start_padding, bool)
            or not 0 <= start_padding < context["frames"]):
        raise ValueError(f"context['start_padding'] must be an integer in [0, {context['frames'] - 1}] "
                         f"(frames - 1), got {start_padding!r}")
    written_context = {"frames": int(context["frames"]), "step": int(context["step"])}
    if start_padding > 0:
        written_context["start_padding"] = int(start_padding)

    named: set[str] = set()
    for index, layer in enumerate(graph):
        op = layer.get("op")
        if op not in alertnet_ref.FIELDS:
            raise ValueError(f"layer {index}: unknown op {op!r}")
        for field, required in _TENSOR_FIELDS.get(op, {}).items():
            name = layer.get(field)
            if name is None:
                if required:
                    raise ValueError(f"layer {index} ({op}): missing tensor field {field!r}")
                continue
            if name not in tensors:
                raise ValueError(f"layer {index} ({op}): tensor {name!r} is not among the tensors given")
            named.add(name)
    unused = sorted(set(tensors) - named)
    if unused:
        raise ValueError(f"tensors not used by the graph: {', '.join(unused)}")

    arrays = {}
    for name, value in tensors.items():
        array = np.ascontiguousarray(np.asarray(value, dtype=np.float32))
        if not np.all(np.isfinite(array)):
            raise ValueError(f"tensor {name!r} holds non-finite values")
        arrays[name] = array

    metadata = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "model_name": str(model_name),
        "trained_on": str(trained_on),
        "features": json.dumps(features),
        "context": json.dumps(written_context),
        "labels": json.dumps([str(label) for label in labels]),
        "thresholds": json.dumps([float(t) for t in thresholds]),
        "graph": json.dumps(graph),
    }
    for key, value in (extra_metadata or {}).items():
        if key in metadata:
            raise ValueError(f"extra metadata may not override {key!r}")
        metadata[key] = value if isinstance(value, str) else json.dumps(value)

    _write_safetensors(path, arrays, metadata)
    try:
        alertnet_ref.load(path)  # same checks the C loader makes, from the bytes just written
    except alertnet_ref.ModelError as error:
        os.remove(path)
        raise ValueError(f"exported file is not a valid alertnet model: {error}") from error


def _write_safetensors(path, arrays: dict[str, np.ndarray], metadata: dict[str, str]) -> None:
    """The safetensors layout, written by hand so the bytes are deterministic (sorted keys); the safetensors
    package reads it back (tools/tests/test_export.py)."""
    header: dict[str, Any] = {"__metadata__": dict(sorted(metadata.items()))}
    offset = 0
    for name in sorted(arrays):
        size = arrays[name].size * 4
        header[name] = {"dtype": "F32", "shape": list(arrays[name].shape), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data then starts 8-byte aligned
    # Written beside the target and renamed into place: a failed export (disk full, interrupted) never leaves a
    # truncated model where a working one was.
    partial = f"{path}.partial"
    try:
        with open(partial, "wb") as handle:
            handle.write(struct.pack("<Q", len(text)) + text)
            for name in sorted(arrays):
                handle.write(arrays[name].astype("<f4").tobytes())
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(partial)
        raise


def _pair(value: Any, what: str) -> list[int]:
    if isinstance(value, str):
        raise ValueError(f"{what}={value!r} is not supported; give explicit numbers")
    if isinstance(value, int):
        return [value, value]
    pair = [int(v) for v in value]
    if len(pair) != 2:
        raise ValueError(f"{what} must have two values, got {value!r}")
    return pair


def _is_global(output_size: Any) -> bool:
    return output_size == 1 or tuple(output_size) == (1, 1)


def _flatten_sequential(module) -> list:
    import torch.nn as nn

    layers = []
    for child in module.children() if isinstance(module, nn.Sequential) else [module]:
        layers.extend(_flatten_sequential(child) if isinstance(child, nn.Sequential) else [child])
    return layers


def torch_graph(module) -> tuple[dict[str, np.ndarray], list[dict]]:
    """Translate an ``nn.Sequential`` into (tensors, graph), folding BatchNorm2d into a preceding Conv2d.

    Dropout, Dropout2d and Identity are skipped (identity at inference). Anything else raises ValueError
    naming the module, so an unsupported layer never exports silently wrong.
    """
    import torch
    import torch.nn as nn

    modules = _flatten_sequential(module)
    tensors: dict[str, np.ndarray] = {}
    graph: list[dict] = []

    def put(name: str, value) -> str:
        tensors[name] = value.detach().to(torch.float64).cpu().numpy()
        return name

    index = 0
    while index < len(modules):
        layer = modules[index]
        prefix = f"layers.{len(graph)}"
        if isinstance(layer, nn.Conv2d):
            if layer.groups != 1 or tuple(layer.dilation) != (1, 1) or layer.padding_mode != "zeros":
                raise ValueError(f"{layer}: only groups=1, dilation=1, zero padding are supported")
            weight = layer.weight.detach().to(torch.float64)
            bias = (layer.bias.detach().to(torch.float64) if layer.bias is not None
                    else torch.zeros(weight.shape[0], dtype=torch.float64))
            following = modules[index + 1] if index + 1 < len(modules) else None
            if isinstance(following, nn.BatchNorm2d):
                scale, shift = _batchnorm_affine(following)
                weight = weight * scale.view(-1, 1, 1, 1)
                bias = bias * scale + shift
                index += 1
            entry = {"op": "conv2d", "weight": put(f"{prefix}.weight", weight),
                     "stride": _pair(layer.stride, "stride"), "padding": _pair(layer.padding, "padding")}
            if layer.bias is not None or isinstance(following, nn.BatchNorm2d):
                entry["bias"] = put(f"{prefix}.bias", bias)
            graph.append(entry)
        elif isinstance(layer, nn.BatchNorm2d):
            if not layer.track_running_stats or layer.running_mean is None:
                raise ValueError(f"{layer}: needs running statistics")
            weight = layer.weight if layer.affine else torch.ones_like(layer.running_mean)
            bias = layer.bias if layer.affine else torch.zeros_like(layer.running_mean)
            graph.append({"op": "batchnorm", "weight": put(f"{prefix}.weight", weight),
                          "bias": put(f"{prefix}.bias", bias),
                          "running_mean": put(f"{prefix}.running_mean", layer.running_mean),
                          "running_var": put(f"{prefix}.running_var", layer.running_var),
                          "eps": float(layer.eps)})
        elif isinstance(layer, nn.ReLU):
            graph.append({"op": "relu"})
        elif isinstance(layer, nn.MaxPool2d):
            if layer.ceil_mode or _pair(layer.dilation, "dilation") != [1, 1] or layer.return_indices:
                raise ValueError(f"{layer}: ceil_mode, dilation and return_indices are not supported")
            graph.append({"op": "maxpool2d", "kernel": _pair(layer.kernel_size, "kernel_size"),
                          "stride": _pair(layer.stride, "stride"), "padding": _pair(layer.padding, "padding")})
        elif isinstance(layer, nn.AvgPool2d):
            if layer.ceil_mode or not layer.count_include_pad or layer.divisor_override is not None:
                raise ValueError(f"{layer}: only ceil_mode=False, count_include_pad=True, no divisor_override")
            graph.append({"op": "avgpool2d", "kernel": _pair(layer.kernel_size, "kernel_size"),
                          "stride": _pair(layer.stride, "stride"), "padding": _pair(layer.padding, "padding")})
        elif isinstance(layer, nn.AdaptiveAvgPool2d) and _is_global(layer.output_size):
            graph.append({"op": "global_avgpool"})
            # PyTorch keeps [C,1,1]; a following Flatten is then a no-op on alertnet's [C].
            if index + 1 < len(modules) and isinstance(modules[index + 1], nn.Flatten):
                index += 1
        elif isinstance(layer, nn.AdaptiveMaxPool2d) and _is_global(layer.output_size):
            graph.append({"op": "global_maxpool"})
            if index + 1 < len(modules) and isinstance(modules[index + 1], nn.Flatten):
                index += 1
        elif isinstance(layer, nn.Flatten):
            if layer.start_dim != 1 or layer.end_dim != -1:
                raise ValueError(f"{layer}: only Flatten(start_dim=1, end_dim=-1) is supported")
            graph.append({"op": "flatten"})
        elif isinstance(layer, nn.Linear):
            entry = {"op": "dense", "weight": put(f"{prefix}.weight", layer.weight)}
            if layer.bias is not None:
                entry["bias"] = put(f"{prefix}.bias", layer.bias)
            graph.append(entry)
        elif isinstance(layer, nn.GRU):
            if layer.num_layers != 1 or layer.bidirectional or layer.proj_size != 0:
                raise ValueError(f"{layer}: only one layer, one direction and no projection are supported "
                                 "(stack nn.GRU modules for depth)")
            # batch_first changes only the module's own input layout, not its weights: the file's sequence is
            # always [T, I], so either exports alike.
            entry = {"op": "gru", "weight_ih": put(f"{prefix}.weight_ih", layer.weight_ih_l0),
                     "weight_hh": put(f"{prefix}.weight_hh", layer.weight_hh_l0)}
            if layer.bias:
                entry["bias_ih"] = put(f"{prefix}.bias_ih", layer.bias_ih_l0)
                entry["bias_hh"] = put(f"{prefix}.bias_hh", layer.bias_hh_l0)
            graph.append(entry)
        elif isinstance(layer, nn.Sigmoid):
            graph.append({"op": "sigmoid"})
        elif isinstance(layer, nn.Softmax):
            # the class dimension: 1 of [batch, K], or 2 of a recurrent network's [batch, T, K]
            sequence = any(entry["op"] == "gru" for entry in graph)
            if layer.dim not in ((2, -1) if sequence else (1, -1)):
                raise ValueError(f"{layer}: softmax must run over the class dimension "
                                 f"({'dim=2 or -1 after a GRU' if sequence else 'dim=1 or -1'})")
            graph.append({"op": "softmax"})
        elif isinstance(layer, (nn.Dropout, nn.Dropout2d, nn.Identity)):
            pass
        else:
            raise ValueError(f"unsupported module {layer.__class__.__name__}: {layer}")
        index += 1
    return tensors, graph


def _batchnorm_affine(batchnorm):
    """BatchNorm2d at inference as y = scale·x + shift (per channel), in float64."""
    import torch

    mean = batchnorm.running_mean.detach().to(torch.float64)
    var = batchnorm.running_var.detach().to(torch.float64)
    gamma = (batchnorm.weight.detach().to(torch.float64) if batchnorm.affine else torch.ones_like(mean))
    beta = (batchnorm.bias.detach().to(torch.float64) if batchnorm.affine else torch.zeros_like(mean))
    scale = gamma / torch.sqrt(var + batchnorm.eps)
    return scale, beta - mean * scale


def export_torch(path, module, features, labels, thresholds, context, model_name, trained_on,
                 extra_metadata=None) -> None:
    """Export an ``nn.Sequential`` (in eval form) with ``export``; see ``torch_graph`` for what is supported.

    The module's input is ``[batch, 1, T, F]`` with T = ``context["frames"]`` and F the feature width; a recurrent
    network's is the sequence ``[batch, T, F]`` (``batch_first``), T new frames per run.
    """
    tensors, graph = torch_graph(module)
    export(path, tensors, graph, features, labels, thresholds, context, model_name, trained_on, extra_metadata)


# The default model's shape (issue 3): four conv blocks over 64 frames x 64 Mel bands, one class per label of
# hearalert_corpus.LABELS.
DEFAULT_FEATURES = {
    "sample_rate": 16000, "n_fft": 512, "win_length": 400, "hop_length": 160, "window": "hann",
    "kind": "log_mel", "n_mels": 64, "fmin": 50.0, "fmax": 8000.0, "mel_scale": "slaney", "mel_norm": "slaney",
    "power": 2.0, "log_base": 10.0, "log_multiplier": 10.0, "log_floor": 1e-10, "normalization": None,
}


def default_architecture(n_classes: int = 6, channels=(16, 32, 64, 128)):
    """The CNN the default model uses (~100k parameters, ~8 MFLOPs per 64x64 window with the default channels)."""
    import torch.nn as nn

    c1, c2, c3, c4 = channels

    def block(c_in, c_out, kernel, stride, padding, pool):
        layers = [nn.Conv2d(c_in, c_out, kernel, stride=stride, padding=padding), nn.BatchNorm2d(c_out), nn.ReLU()]
        return layers + ([nn.MaxPool2d(2)] if pool else [])

    return nn.Sequential(*block(1, c1, 5, 2, 2, True), *block(c1, c2, 3, 1, 1, True), *block(c2, c3, 3, 1, 1, True),
                         *block(c3, c4, 3, 1, 1, False), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(c4, n_classes), nn.Sigmoid())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--demo", metavar="OUT", required=True,
                        help="write a randomly initialised default-architecture model to OUT")
    parser.add_argument("--seed", type=int, default=0, help="random seed for the demo weights (default 0)")
    args = parser.parse_args(argv)

    import torch

    torch.manual_seed(args.seed)
    model = default_architecture(len(LABELS))
    for module in model.modules():  # non-trivial BN statistics so folding is exercised
        if isinstance(module, torch.nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
    model.eval()
    try:
        export_torch(args.demo, model, DEFAULT_FEATURES, list(LABELS), [0.5] * len(LABELS),
                     {"frames": 64, "step": 10}, "random-default-architecture",
                     f"nothing: random weights, seed {args.seed}",
                     {"description": "Random weights with the default architecture; for benchmarks and demos."})
    except OSError as error:
        print(f"{args.demo}: cannot write: {error.strerror or error}", file=sys.stderr)
        return 1
    size = os.path.getsize(args.demo)
    print(f"wrote {args.demo} ({size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
