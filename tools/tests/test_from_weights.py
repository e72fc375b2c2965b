"""The PyTorch network rebuilt from a weight file (hearalert_train/from_weights.py) against the numpy reference
forward pass (tools/alertnet_ref.py), on the shipped model and on a small graph that uses every op."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import alertnet_ref
import export
from hearalert_train.from_weights import torch_module

MODEL = Path(__file__).resolve().parents[2] / "models" / "default.safetensors"
SPEC = dict(export.DEFAULT_FEATURES, n_mels=8)


def _compare(model: alertnet_ref.Model, windows: np.ndarray, tolerance: float) -> None:
    with torch.no_grad():
        ours = torch_module(model)(torch.from_numpy(windows[:, None].astype(np.float32))).numpy()
    reference = np.stack([alertnet_ref.forward(model, w) for w in windows])
    assert np.max(np.abs(ours - reference)) <= tolerance


def test_the_shipped_model_computes_what_the_reference_computes():
    model = alertnet_ref.load(MODEL)
    windows = np.random.default_rng(1).normal(-6.0, 3.0, (3, model.frames, model.bins))
    _compare(model, windows, 1e-5)


def _every_op_file(path: Path, head: str) -> alertnet_ref.Model:
    rng = np.random.default_rng(2)
    tensors = {"c1.w": rng.normal(0, 0.5, (3, 1, 3, 3)), "c1.b": rng.normal(0, 0.1, 3),
               "bn.w": rng.uniform(0.5, 1.5, 3), "bn.b": rng.normal(0, 0.1, 3), "bn.m": rng.normal(0, 0.1, 3),
               "bn.v": rng.uniform(0.5, 1.5, 3), "c2.w": rng.normal(0, 0.5, (4, 3, 2, 2)),
               "d1.w": rng.normal(0, 0.5, (5, 4 * 3 * 2)), "d1.b": rng.normal(0, 0.1, 5),
               "bn2.w": rng.uniform(0.5, 1.5, 5), "bn2.b": rng.normal(0, 0.1, 5), "bn2.m": rng.normal(0, 0.1, 5),
               "bn2.v": rng.uniform(0.5, 1.5, 5), "d2.w": rng.normal(0, 0.5, (2, 5))}
    graph = [{"op": "conv2d", "weight": "c1.w", "bias": "c1.b", "stride": [1, 1], "padding": [1, 1]},
             {"op": "batchnorm", "weight": "bn.w", "bias": "bn.b", "running_mean": "bn.m", "running_var": "bn.v",
              "eps": 1e-5},
             {"op": "relu"},
             {"op": "maxpool2d", "kernel": [3, 2], "stride": [2, 2], "padding": [1, 1]},
             {"op": "conv2d", "weight": "c2.w"},
             {"op": "avgpool2d", "kernel": [2, 2], "stride": [1, 1], "padding": [1, 1]},
             {"op": "maxpool2d", "kernel": [2, 2]}, {"op": "flatten"},
             {"op": "dense", "weight": "d1.w", "bias": "d1.b"},
             {"op": "batchnorm", "weight": "bn2.w", "bias": "bn2.b", "running_mean": "bn2.m", "running_var": "bn2.v",
              "eps": 1e-3},
             {"op": "relu"}, {"op": "dense", "weight": "d2.w"}, {"op": head}]
    export.export(path, tensors, graph, SPEC, ["a", "b"], [0.5, 0.5], {"frames": 12, "step": 1}, "every op", "test")
    return alertnet_ref.load(path)


@pytest.mark.parametrize("head", ["sigmoid", "softmax"])
def test_every_op_matches_the_reference(tmp_path, head):
    model = _every_op_file(tmp_path / "m.safetensors", head)
    assert model.shapes[6] == (4, 3, 2)  # where the graph above leaves its pools: [4, 3, 2]
    windows = np.random.default_rng(3).normal(0.0, 1.0, (4, model.frames, model.bins))
    _compare(model, windows, 1e-5)


@pytest.mark.parametrize("pool", ["global_avgpool", "global_maxpool"])
def test_global_pools_match_the_reference(tmp_path, pool):
    rng = np.random.default_rng(4)
    tensors = {"c.w": rng.normal(0, 0.5, (3, 1, 3, 3)), "d.w": rng.normal(0, 0.5, (2, 3))}
    graph = [{"op": "conv2d", "weight": "c.w"}, {"op": pool}, {"op": "dense", "weight": "d.w"}, {"op": "sigmoid"}]
    export.export(tmp_path / "g.safetensors", tensors, graph, SPEC, ["a", "b"], [0.5, 0.5],
                  {"frames": 10, "step": 1}, "pools", "test")
    model = alertnet_ref.load(tmp_path / "g.safetensors")
    _compare(model, rng.normal(0.0, 1.0, (3, model.frames, model.bins)), 1e-5)
