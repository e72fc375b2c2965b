#!/usr/bin/env python3
"""Numpy reference forward pass for alertnet weight files, written independently of the C core.

It parses the safetensors container by hand (struct + json, not the safetensors package), applies the checks
FORMAT.md lists, and runs the graph in float64 with direct (non-im2col) convolution, so its outputs are golden
numbers for the C core's parity tests.

A model with a ``gru`` layer is stateful, as in the C core: ``forward`` continues the stream from the hidden state
the previous call left in the Model (zero after loading), and ``reset_state`` starts it again.

Example: ``tools/alertnet_ref.py model.safetensors --seed 1`` runs one random input window and prints the
probabilities; ``--input window.npy`` runs a saved ``[T, F]`` window instead.
"""

from __future__ import annotations

import argparse
import json
import re
import struct
import sys
from dataclasses import dataclass, field

import numpy as np

MAX_HEADER = 100 * 1024 * 1024
# A label is an identifier (FORMAT.md, "labels"): hosts print it, put it in TSV rows and hook environments.
LABEL = re.compile(r"[a-z0-9_]{1,32}")


# What a file's network is for (metadata `task`, FORMAT.md); absent means the first, a detector.
TASKS = ("alert_detection", "noise_estimation")

# The fields each op understands besides "op" (anything else is rejected, as the C loader does).
FIELDS = {
    "conv2d": {"weight", "bias", "stride", "padding"},
    "batchnorm": {"weight", "bias", "running_mean", "running_var", "eps"},
    "maxpool2d": {"kernel", "stride", "padding"},
    "avgpool2d": {"kernel", "stride", "padding"},
    "dense": {"weight", "bias"},
    "gru": {"weight_ih", "weight_hh", "bias_ih", "bias_hh"},
    **{op: set() for op in ("relu", "global_avgpool", "global_maxpool", "flatten", "sigmoid", "softmax")},
}


class ModelError(ValueError):
    """The file is not a valid alertnet model; the message says why."""


@dataclass
class Model:
    metadata: dict[str, str]
    tensors: dict[str, np.ndarray]
    graph: list[dict]
    labels: list[str]
    thresholds: list[float]
    features: dict
    frames: int
    step: int
    bins: int
    shapes: list[tuple[int, ...]] = field(default_factory=list)  # output shape of each layer
    # Copies of a stream's first frame standing before it (context start_padding, FORMAT.md): 0 <= P < frames.
    start_padding: int = 0
    # Each gru layer's hidden state by layer index, carried from one forward call to the next.
    states: dict[int, np.ndarray] = field(default_factory=dict)

    @property
    def stateful(self) -> bool:
        return bool(self.states)

    @property
    def input_shape(self) -> tuple[int, int]:
        return self.frames, self.bins


def _json(metadata: dict, key: str):
    if key not in metadata:
        raise ModelError(f"metadata key {key!r} is missing")
    try:
        value = json.loads(metadata[key])
    except json.JSONDecodeError as error:
        raise ModelError(f"metadata {key!r} is not valid JSON: {error}") from None
    _refuse_nul(value, f"metadata {key!r}")
    return value


def _refuse_nul(value, what: str) -> None:
    """A decoded \\u0000 in any string or key: C strings would end there, so FORMAT.md refuses it."""
    if isinstance(value, dict):
        for key, item in value.items():
            _refuse_nul(key, what)
            _refuse_nul(item, what)
    elif isinstance(value, list):
        for item in value:
            _refuse_nul(item, what)
    elif isinstance(value, str) and "\0" in value:
        raise ModelError(f"{what} holds a NUL character (\\u0000)")


def _is_int(value) -> bool:
    """A JSON integer as json.loads gives it: 3 is an int, 3.0 a float, and true a bool (an int to Python)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _positive_int(value, what: str) -> int:
    if not _is_int(value) or value < 1:
        raise ModelError(f"{what} must be a positive integer, got {value!r}")
    return value


def _pair(layer: dict, key: str, default, minimum: int, index: int) -> tuple[int, int]:
    value = layer.get(key, default)
    if (not isinstance(value, list) or len(value) != 2
            or not all(_is_int(v) and v >= minimum for v in value)):
        raise ModelError(f"layer {index} ({layer['op']}): {key} must be two integers >= {minimum}, got {value!r}")
    return value[0], value[1]


def parse(data: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    """Split a safetensors file into (metadata, tensors) with every container check."""
    if len(data) < 8:
        raise ModelError(f"file is {len(data)} bytes, shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", data[:8])
    if n > MAX_HEADER:
        raise ModelError(f"header length {n} exceeds the {MAX_HEADER}-byte limit")
    if 8 + n > len(data):
        raise ModelError(f"header length {n} runs past the end of the {len(data)}-byte file")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelError(f"header is not valid JSON: {error}") from None
    if not isinstance(header, dict):
        raise ModelError("header is not a JSON object")
    _refuse_nul(header, "header")
    buffer = data[8 + n:]
    metadata = header.pop("__metadata__", None)
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise ModelError("__metadata__ is missing or not an object of strings")
    tensors, ranges = {}, []
    for name, info in header.items():
        if not isinstance(info, dict):
            raise ModelError(f"tensor {name!r}: entry is not an object")
        if info.get("dtype") != "F32":
            raise ModelError(f"tensor {name!r}: dtype {info.get('dtype')!r} is not supported (only F32)")
        shape, offsets = info.get("shape"), info.get("data_offsets")
        if not isinstance(shape, list) or not all(_is_int(d) and d >= 1 for d in shape):
            raise ModelError(f"tensor {name!r}: bad shape {shape!r}")
        if (not isinstance(offsets, list) or len(offsets) != 2 or not all(_is_int(o) for o in offsets)
                or not 0 <= offsets[0] <= offsets[1] <= len(buffer)):
            raise ModelError(f"tensor {name!r}: data_offsets {offsets!r} outside the {len(buffer)}-byte data")
        count = int(np.prod(shape, dtype=object))
        if offsets[1] - offsets[0] != 4 * count:
            raise ModelError(f"tensor {name!r}: {offsets[1] - offsets[0]} bytes for shape {shape}")
        values = np.frombuffer(buffer, dtype="<f4", count=count, offset=offsets[0]).reshape(shape)
        if not np.all(np.isfinite(values)):
            raise ModelError(f"tensor {name!r}: holds non-finite values")
        tensors[name] = values.astype(np.float64)
        ranges.append((offsets[0], offsets[1], name))
    ranges.sort()
    for (_, end, first), (begin, _, second) in zip(ranges, ranges[1:]):
        if begin < end:
            raise ModelError(f"tensors {first!r} and {second!r} overlap")
    return metadata, tensors


def _shape_of(name: str, tensors: dict, expected: tuple[int, ...], used: set, index: int, op: str) -> np.ndarray:
    if name not in tensors:
        raise ModelError(f"layer {index} ({op}): tensor {name!r} is missing")
    found = tuple(tensors[name].shape)
    if found != tuple(expected):
        raise ModelError(f"tensor {name!r}: expected shape {list(expected)}, found {list(found)}")
    used.add(name)
    return tensors[name]


def _pool_out(size: int, kernel: int, stride: int, pad: int, what: str) -> int:
    if size + 2 * pad < kernel:
        raise ModelError(f"{what}: kernel {kernel} larger than padded input {size + 2 * pad}")
    return (size + 2 * pad - kernel) // stride + 1


def validate(metadata: dict, tensors: dict) -> Model:
    """Check metadata and graph against the tensors; compute each layer's output shape."""
    if metadata.get("format") != "alertnet":
        raise ModelError(f"metadata format is {metadata.get('format')!r}, expected 'alertnet'")
    if metadata.get("format_version") != "1":
        raise ModelError(f"format_version {metadata.get('format_version')!r} is not supported (expected '1')")
    for key in ("model_name", "trained_on"):
        if key not in metadata:
            raise ModelError(f"metadata key {key!r} is missing")
    if metadata.get("task", TASKS[0]) not in TASKS:
        raise ModelError(f"metadata task {metadata['task']!r} is not one of {', '.join(TASKS)}")
    features = _json(metadata, "features")
    if not isinstance(features, dict):
        raise ModelError("features is not a JSON object")
    kind = features.get("kind")
    if kind == "log_mel":
        bins = _positive_int(features.get("n_mels"), "features.n_mels")
    elif kind == "log_power":
        bins = _positive_int(features.get("n_fft"), "features.n_fft") // 2 + 1
    else:
        raise ModelError(f"features.kind {kind!r} is not 'log_mel' or 'log_power'")
    context = _json(metadata, "context")
    if not isinstance(context, dict):
        raise ModelError("context is not a JSON object")
    frames = _positive_int(context.get("frames"), "context.frames")
    step = _positive_int(context.get("step"), "context.step")
    start_padding = context.get("start_padding", 0)
    if not _is_int(start_padding) or not 0 <= start_padding < frames:
        raise ModelError(f"context.start_padding must be an integer in [0, {frames - 1}] (frames - 1), "
                         f"got {start_padding!r}")
    labels = _json(metadata, "labels")
    if not isinstance(labels, list) or not labels or not all(isinstance(x, str) for x in labels):
        raise ModelError("labels must be a non-empty JSON array of strings")
    for index, label in enumerate(labels):
        if not LABEL.fullmatch(label):
            raise ModelError(f"label {index} ({label!r}) must be 1 to 32 characters of a-z, 0-9 and _")
    if len(set(labels)) != len(labels):
        raise ModelError("labels must be distinct")
    thresholds = _json(metadata, "thresholds")
    if (not isinstance(thresholds, list) or len(thresholds) != len(labels)
            or not all(isinstance(t, (int, float)) and not isinstance(t, bool) and 0 < t < 1 for t in thresholds)):
        raise ModelError("thresholds must be one number in (0, 1) per label")
    graph = _json(metadata, "graph")
    if not isinstance(graph, list) or not graph:
        raise ModelError("graph must be a non-empty JSON array")

    if not {"frames", "step"} <= set(context) <= {"frames", "step", "start_padding"}:
        raise ModelError("context must be {\"frames\": T, \"step\": S}, optionally with \"start_padding\": P; "
                         f"found keys {sorted(context)}")
    shape: tuple[int, ...] = (1, frames, bins)
    used: set[str] = set()
    shapes = []
    for index, layer in enumerate(graph):
        if not isinstance(layer, dict) or not isinstance(layer.get("op"), str):
            raise ModelError(f"layer {index}: not an object with an 'op'")
        op = layer["op"]
        where = f"layer {index} ({op})"
        if op not in FIELDS:
            raise ModelError(f"layer {index}: unknown op {op!r}")
        unknown = set(layer) - FIELDS[op] - {"op"}
        if unknown:
            raise ModelError(f"{where}: unknown field {sorted(unknown)[0]!r}")
        spatial = op in ("conv2d", "maxpool2d", "avgpool2d", "global_avgpool", "global_maxpool", "flatten")
        if spatial and len(shape) != 3:
            raise ModelError(f"{where}: needs a [C, H, W] input, got {list(shape)}")
        if op == "conv2d":
            weight = layer.get("weight")
            if not isinstance(weight, str) or weight not in tensors:
                raise ModelError(f"{where}: weight tensor {weight!r} is missing")
            w_shape = tensors[weight].shape
            if len(w_shape) != 4:
                raise ModelError(f"tensor {weight!r}: expected 4 dimensions [O, {shape[0]}, KH, KW], "
                                 f"found {list(w_shape)}")
            out_c, _, kh, kw = w_shape
            _shape_of(weight, tensors, (out_c, shape[0], kh, kw), used, index, op)
            if "bias" in layer:
                _shape_of(layer["bias"], tensors, (out_c,), used, index, op)
            sh, sw = _pair(layer, "stride", [1, 1], 1, index)
            ph, pw = _pair(layer, "padding", [0, 0], 0, index)
            shape = (out_c, _pool_out(shape[1], kh, sh, ph, where), _pool_out(shape[2], kw, sw, pw, where))
        elif op == "batchnorm":
            if len(shape) not in (1, 3):
                raise ModelError(f"{where}: needs [C] or [C, H, W], got {list(shape)}")
            for key in ("weight", "bias", "running_mean", "running_var"):
                _shape_of(layer.get(key), tensors, (shape[0],), used, index, op)
            eps = layer.get("eps")
            if not isinstance(eps, (int, float)) or isinstance(eps, bool) or not eps > 0:
                raise ModelError(f"{where}: eps must be a positive number")
            if np.any(tensors[layer["running_var"]] + eps <= 0):
                raise ModelError(f"{where}: running_var + eps must be positive")
        elif op in ("maxpool2d", "avgpool2d"):
            kh, kw = _pair(layer, "kernel", None, 1, index)
            sh, sw = _pair(layer, "stride", [kh, kw], 1, index)
            ph, pw = _pair(layer, "padding", [0, 0], 0, index)
            if 2 * ph > kh or 2 * pw > kw:
                raise ModelError(f"{where}: padding must be at most half the kernel")
            shape = (shape[0], _pool_out(shape[1], kh, sh, ph, where), _pool_out(shape[2], kw, sw, pw, where))
        elif op in ("global_avgpool", "global_maxpool"):
            shape = (shape[0],)
        elif op == "flatten":
            shape = (shape[0] * shape[1] * shape[2],)
        elif op == "dense":
            if len(shape) == 3:
                raise ModelError(f"{where}: needs a flat input, got {list(shape)} (add flatten or a global pool)")
            weight = layer.get("weight")
            if not isinstance(weight, str) or weight not in tensors:
                raise ModelError(f"{where}: weight tensor {weight!r} is missing")
            w_shape = tensors[weight].shape
            if len(w_shape) != 2:
                raise ModelError(f"tensor {weight!r}: expected [O, {shape[-1]}], found {list(w_shape)}")
            _shape_of(weight, tensors, (w_shape[0], shape[-1]), used, index, op)
            if "bias" in layer:
                _shape_of(layer["bias"], tensors, (w_shape[0],), used, index, op)
            shape = shape[:-1] + (w_shape[0],)  # [N] -> [O]; a sequence [T, N] -> [T, O], row by row
        elif op == "gru":
            if not (len(shape) == 2 or (len(shape) == 3 and shape[0] == 1)):
                raise ModelError(f"{where}: needs a sequence [1, T, I] or [T, I], got {list(shape)}")
            steps, inputs = shape[-2:]
            weight_hh = layer.get("weight_hh")
            if not isinstance(weight_hh, str) or weight_hh not in tensors:
                raise ModelError(f"{where}: weight_hh tensor {weight_hh!r} is missing")
            hh_shape = tensors[weight_hh].shape
            if len(hh_shape) != 2 or hh_shape[0] != 3 * hh_shape[1]:
                raise ModelError(f"tensor {weight_hh!r}: expected shape [3H, H] (gates r, z, n), found {list(hh_shape)}")
            hidden = hh_shape[1]
            _shape_of(weight_hh, tensors, (3 * hidden, hidden), used, index, op)
            _shape_of(layer.get("weight_ih"), tensors, (3 * hidden, inputs), used, index, op)
            for key in ("bias_ih", "bias_hh"):
                if key in layer:
                    _shape_of(layer[key], tensors, (3 * hidden,), used, index, op)
            shape = (steps, hidden)
        # relu, sigmoid, softmax keep the shape
        shapes.append(shape)
    if graph[-1]["op"] not in ("sigmoid", "softmax"):
        raise ModelError("the last layer must be sigmoid or softmax (the outputs are probabilities)")
    # A sequence [T, K] answers with its last row, the newest step's.
    if len(shape) == 3 or shape[-1] != len(labels):
        raise ModelError(f"the graph outputs {list(shape)}, expected [{len(labels)}] (one per label)")
    unused = sorted(set(tensors) - used)
    if unused:
        raise ModelError(f"tensor {unused[0]!r} is not used by the graph")
    states = {index: np.zeros(shapes[index][-1]) for index, layer in enumerate(graph) if layer["op"] == "gru"}
    return Model(metadata, tensors, graph, labels, [float(t) for t in thresholds], features, frames, step, bins,
                 shapes, start_padding, states)


def load(path) -> Model:
    with open(path, "rb") as handle:
        return loads(handle.read())


def loads(data: bytes) -> Model:
    metadata, tensors = parse(data)
    return validate(metadata, tensors)


def _pad(x: np.ndarray, ph: int, pw: int, value: float) -> np.ndarray:
    return np.pad(x, ((0, 0), (ph, ph), (pw, pw)), constant_values=value)


def _windows(x: np.ndarray, kh: int, kw: int, sh: int, sw: int):
    """Yield (i, j, x[:, i::sh, j::sw] cropped to the output size) for each kernel offset."""
    out_h = (x.shape[1] - kh) // sh + 1
    out_w = (x.shape[2] - kw) // sw + 1
    for i in range(kh):
        for j in range(kw):
            yield i, j, x[:, i:i + sh * (out_h - 1) + 1:sh, j:j + sw * (out_w - 1) + 1:sw]


def reset_state(model: Model) -> None:
    """Zero every gru layer's hidden state (where a loaded model starts, PyTorch's default h0)."""
    for state in model.states.values():
        state[:] = 0.0


def _gru(x: np.ndarray, h: np.ndarray, layer: dict, t: dict) -> np.ndarray:
    """PyTorch nn.GRU over the rows of x, from and into h (in place); returns every step's h. Gates r, z, n."""
    hidden = h.size
    w_ih, w_hh = t[layer["weight_ih"]], t[layer["weight_hh"]]
    b_ih = t[layer["bias_ih"]] if "bias_ih" in layer else np.zeros(3 * hidden)
    b_hh = t[layer["bias_hh"]] if "bias_hh" in layer else np.zeros(3 * hidden)
    rows = []
    for frame in x:
        gi, gh = w_ih @ frame + b_ih, w_hh @ h + b_hh
        r = 1.0 / (1.0 + np.exp(-(gi[:hidden] + gh[:hidden])))
        z = 1.0 / (1.0 + np.exp(-(gi[hidden:2 * hidden] + gh[hidden:2 * hidden])))
        n = np.tanh(gi[2 * hidden:] + r * gh[2 * hidden:])
        h[:] = (1.0 - z) * n + z * h
        rows.append(h.copy())
    return np.array(rows)


def forward(model: Model, window: np.ndarray) -> np.ndarray:
    """Run one [T, F] window; return the probabilities (float64). A stateful model continues its stream."""
    x = np.asarray(window, dtype=np.float64).reshape(1, model.frames, model.bins)
    t = model.tensors
    for index, layer in enumerate(model.graph):
        op = layer["op"]
        if op == "conv2d":
            w = t[layer["weight"]]
            sh, sw = layer.get("stride", [1, 1])
            ph, pw = layer.get("padding", [0, 0])
            padded = _pad(x, ph, pw, 0.0)
            y = None
            for i, j, patch in _windows(padded, w.shape[2], w.shape[3], sh, sw):
                term = np.tensordot(w[:, :, i, j], patch, axes=([1], [0]))
                y = term if y is None else y + term
            if "bias" in layer:
                y = y + t[layer["bias"]].reshape(-1, *([1] * (y.ndim - 1)))
            x = y
        elif op == "batchnorm":
            scale = t[layer["weight"]] / np.sqrt(t[layer["running_var"]] + layer["eps"])
            shift = t[layer["bias"]] - t[layer["running_mean"]] * scale
            extra = [1] * (x.ndim - 1)
            x = x * scale.reshape(-1, *extra) + shift.reshape(-1, *extra)
        elif op == "relu":
            x = np.maximum(x, 0.0)
        elif op in ("maxpool2d", "avgpool2d"):
            kh, kw = layer["kernel"]
            sh, sw = layer.get("stride", [kh, kw])
            ph, pw = layer.get("padding", [0, 0])
            padded = _pad(x, ph, pw, -np.inf if op == "maxpool2d" else 0.0)
            patches = [patch for _, _, patch in _windows(padded, kh, kw, sh, sw)]
            x = np.max(patches, axis=0) if op == "maxpool2d" else np.sum(patches, axis=0) / (kh * kw)
        elif op == "global_avgpool":
            x = x.mean(axis=(1, 2))
        elif op == "global_maxpool":
            x = x.max(axis=(1, 2))
        elif op == "flatten":
            x = x.reshape(-1)
        elif op == "dense":
            bias = t[layer["bias"]] if "bias" in layer else 0.0
            x = t[layer["weight"]] @ x + bias if x.ndim == 1 else x @ t[layer["weight"]].T + bias
        elif op == "gru":
            x = _gru(x.reshape(x.shape[-2:]), model.states[index], layer, t)
        elif op == "sigmoid":
            x = 1.0 / (1.0 + np.exp(-x))
        elif op == "softmax":
            if x.ndim == 2:  # per step
                e = np.exp(x - x.max(axis=1, keepdims=True))
                x = e / e.sum(axis=1, keepdims=True)
            else:
                e = np.exp(x - x.max())
                x = e / e.sum()
    return x[-1] if x.ndim == 2 else x


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="alertnet weight file (.safetensors)")
    parser.add_argument("--input", help="a .npy [T, F] window (default: random normal)")
    parser.add_argument("--seed", type=int, default=0, help="seed for the random window (default 0)")
    args = parser.parse_args(argv)
    try:
        model = load(args.model)
    except (OSError, ModelError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if args.input:
        try:
            window = np.load(args.input)
        except (OSError, ValueError) as error:
            print(f"error: {args.input}: {error}", file=sys.stderr)
            return 1
        if window.shape != model.input_shape:
            print(f"error: {args.input}: shape {list(window.shape)}, the model takes {list(model.input_shape)} "
                  "[frames, bins]", file=sys.stderr)
            return 1
    else:
        window = np.random.default_rng(args.seed).standard_normal(model.input_shape)
    for label, p in zip(model.labels, forward(model, window)):
        print(f"{label}\t{p:.9f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
