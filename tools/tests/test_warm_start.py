"""Fine-tuning from a weight file (hearalert_train/warm_start.py): the training network it seeds must compute
what the file computes, checked against the numpy reference forward pass (alertnet_ref.forward), which shares no
code with the copy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import alertnet_ref
import export
import train
from hearalert_train import warm_start

FRAMES, BINS, CHANNELS = 48, 64, [8, 8, 16, 16]


def _random_file(tmp_path, seed: int, channels=CHANNELS) -> alertnet_ref.Model:
    """A trained-looking file: random weights and BatchNorm statistics far from the identity, exported."""
    torch.manual_seed(seed)
    model = train.build_model(FRAMES, BINS, len(train.LABELS), channels)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.uniform_(-2, 2)
                module.running_var.uniform_(0.2, 3)
                module.weight.uniform_(-1.5, 1.5)
                module.bias.uniform_(-1, 1)
    spec = dict(train.model_spec(), normalization={"mean": [0.0] * BINS, "std": [1.0] * BINS})
    path = tmp_path / f"m{seed}.safetensors"
    export.export_torch(path, model.eval(), spec, train.LABELS, [0.5] * len(train.LABELS),
                        {"frames": FRAMES, "step": 6}, "test", "random")
    return alertnet_ref.load(path)


def test_the_seeded_network_computes_what_the_file_computes(tmp_path):
    source = _random_file(tmp_path, seed=3)
    torch.manual_seed(99)  # a different random start: everything must come from the file
    model = train.build_model(FRAMES, BINS, len(train.LABELS), CHANNELS)
    calibration = torch.randn(32, 1, FRAMES, BINS)
    assert warm_start.load_into(model, source, calibration) <= 1e-4
    fresh = np.random.default_rng(5).standard_normal((4, FRAMES, BINS)).astype(np.float32)
    with torch.no_grad():
        ours = model.eval()(torch.from_numpy(fresh)[:, None]).numpy()
    reference = np.stack([alertnet_ref.forward(source, window) for window in fresh])
    np.testing.assert_allclose(ours, reference, atol=1e-4)
    # In training mode the BatchNorms normalise with the batch's own statistics: on the calibration batch they
    # were set to give back their input, so training starts from the file's behaviour (dropout aside).
    model.train()
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.eval()
    with torch.no_grad():
        in_training = model(calibration).numpy()
    expected = np.stack([alertnet_ref.forward(source, window) for window in calibration[:, 0].numpy()])
    np.testing.assert_allclose(in_training, expected, atol=1e-4)


def test_a_file_of_another_shape_is_refused(tmp_path):
    source = _random_file(tmp_path, seed=3, channels=[8, 8, 16, 32])
    model = train.build_model(FRAMES, BINS, len(train.LABELS), CHANNELS)
    with pytest.raises(warm_start.WarmStartError, match="differs from the one training builds"):
        warm_start.load_into(model, source, torch.randn(4, 1, FRAMES, BINS))


def test_features_must_match_except_normalisation():
    spec = train.model_spec()
    warm_start.check_features(dict(spec, normalization={"mean": [0.0], "std": [1.0]}), spec)
    with pytest.raises(warm_start.WarmStartError, match="n_mels"):
        warm_start.check_features(dict(spec, n_mels=40, normalization={"mean": [0.0], "std": [1.0]}), spec)
    with pytest.raises(warm_start.WarmStartError, match="no feature normalisation"):
        warm_start.check_features(dict(spec), spec)
