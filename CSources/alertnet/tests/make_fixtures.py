#!/usr/bin/env python3
"""Regenerate the committed test models (tests/models/) and their numpy-reference expectations.

Each model is written by tools/export.py; each NAME.expect holds input windows and the probabilities that
tools/alertnet_ref.py (float64 numpy, direct convolution) computes for them, printed with 9 significant digits.
The C tests (make test), the fuzzer's seed corpus (fuzz/corpus/) and the Swift tests
(Tests/HearAlertKitTests/Fixtures/alertnet/, the first two models) use these files.

Example: .venv/bin/python CSources/alertnet/tests/make_fixtures.py --seed 0
"""

import argparse
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools"))
import alertnet_ref  # noqa: E402
import export  # noqa: E402


def features(bins: int, kind: str = "log_mel") -> dict:
    spec = dict(export.DEFAULT_FEATURES)
    if kind == "log_mel":
        spec["n_mels"] = bins
    else:
        spec.update(kind="log_power", n_fft=2 * (bins - 1))
    return spec


def conv(rng, tensors, name, out, inp, kh, kw, stride, padding, bias=True) -> dict:
    tensors[f"{name}.weight"] = rng.standard_normal((out, inp, kh, kw)) * np.sqrt(2.0 / (inp * kh * kw))
    layer = {"op": "conv2d", "weight": f"{name}.weight", "stride": stride, "padding": padding}
    if bias:
        tensors[f"{name}.bias"] = rng.standard_normal(out) * 0.1
        layer["bias"] = f"{name}.bias"
    return layer


def batchnorm(rng, tensors, name, channels) -> dict:
    tensors[f"{name}.weight"] = rng.uniform(0.5, 1.5, channels)
    tensors[f"{name}.bias"] = rng.uniform(-0.3, 0.3, channels)
    tensors[f"{name}.running_mean"] = rng.uniform(-0.5, 0.5, channels)
    tensors[f"{name}.running_var"] = rng.uniform(0.5, 2.0, channels)
    return {"op": "batchnorm", "weight": f"{name}.weight", "bias": f"{name}.bias",
            "running_mean": f"{name}.running_mean", "running_var": f"{name}.running_var", "eps": 1e-5}


def dense(rng, tensors, name, out, inp, bias=True) -> dict:
    tensors[f"{name}.weight"] = rng.standard_normal((out, inp)) * np.sqrt(1.0 / inp)
    layer = {"op": "dense", "weight": f"{name}.weight"}
    if bias:
        tensors[f"{name}.bias"] = rng.standard_normal(out) * 0.1
        layer["bias"] = f"{name}.bias"
    return layer


def models(rng):
    """(name, frames, feature spec, labels, tensors, graph) for each fixture."""
    t = {}
    yield ("conv-bn-maxpool-gap-sigmoid", 12, features(10), ["siren", "car_horn", "doorbell"], t, [
        conv(rng, t, "c1", 4, 1, 3, 3, [1, 1], [1, 1]), batchnorm(rng, t, "bn1", 4), {"op": "relu"},
        {"op": "maxpool2d", "kernel": [2, 2]}, conv(rng, t, "c2", 6, 4, 3, 3, [1, 1], [1, 1]), {"op": "relu"},
        {"op": "global_avgpool"}, dense(rng, t, "out", 3, 6), {"op": "sigmoid"}])
    t = {}
    yield ("strided-avgpool-flatten-softmax", 9, features(8), ["a", "b"], t, [
        conv(rng, t, "c1", 3, 1, 5, 3, [2, 1], [2, 0], bias=False), {"op": "relu"},
        {"op": "avgpool2d", "kernel": [3, 2], "stride": [2, 1], "padding": [1, 1]}, {"op": "flatten"},
        dense(rng, t, "out", 2, 3 * 3 * 7), {"op": "softmax"}])
    t = {}
    yield ("log-power-maxpool-padding-gmp", 7, features(9, "log_power"), ["x", "y", "z", "w"], t, [
        conv(rng, t, "c1", 5, 1, 2, 4, [1, 2], [0, 1]), {"op": "maxpool2d", "kernel": [3, 3], "stride": [1, 2],
                                                          "padding": [1, 1]},
        batchnorm(rng, t, "bn", 5), {"op": "relu"}, conv(rng, t, "c2", 3, 5, 1, 1, [1, 1], [0, 0]),
        {"op": "global_maxpool"}, batchnorm(rng, t, "bn_flat", 3), dense(rng, t, "out", 4, 3, bias=False),
        {"op": "sigmoid"}])
    t = {}
    yield ("dense-only", 3, features(4), ["only"], t, [
        {"op": "flatten"}, dense(rng, t, "hidden", 5, 12), {"op": "relu"}, dense(rng, t, "out", 1, 5),
        {"op": "sigmoid"}])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--windows", type=int, default=3, help="input windows per model (default 3)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    out_dir = os.path.join(HERE, "models")
    corpus = os.path.join(HERE, "..", "fuzz", "corpus")
    swift = os.path.join(HERE, "..", "..", "..", "Tests", "HearAlertKitTests", "Fixtures", "alertnet")
    os.makedirs(swift, exist_ok=True)
    os.makedirs(out_dir, exist_ok=True)
    os.makedirs(corpus, exist_ok=True)
    names = []
    for name, frames, spec, labels, tensors, graph in models(rng):
        path = os.path.join(out_dir, f"{name}.safetensors")
        export.export(path, tensors, graph, spec, labels, [0.5] * len(labels), {"frames": frames, "step": 2},
                      name, f"nothing: random weights, seed {args.seed}")
        model = alertnet_ref.load(path)
        with open(os.path.join(out_dir, f"{name}.expect"), "w") as handle:
            for _ in range(args.windows):
                window = rng.standard_normal(model.input_shape) * 3.0
                window = window.astype(np.float32)  # the C side reads float32 inputs
                probabilities = alertnet_ref.forward(model, window)
                handle.write(f"input {window.size}\n" + " ".join(f"{v:.9g}" for v in window.reshape(-1)) + "\n")
                handle.write(f"output {probabilities.size}\n" + " ".join(f"{v:.9g}" for v in probabilities) + "\n")
        shutil.copy(path, os.path.join(corpus, f"{name}.safetensors"))
        if len(names) < 2:
            for suffix in (".safetensors", ".expect"):
                shutil.copy(os.path.join(out_dir, name + suffix), os.path.join(swift, name + suffix))
        names.append(name)
        print(f"wrote {path} ({os.path.getsize(path)} bytes) and its .expect")
    with open(os.path.join(out_dir, "MANIFEST"), "w") as handle:
        handle.write("\n".join(names) + "\n")
    print(f"wrote {os.path.join(out_dir, 'MANIFEST')}; seeds copied to {os.path.normpath(corpus)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
