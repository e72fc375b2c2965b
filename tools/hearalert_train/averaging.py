"""An exponential moving average of a network's weights, kept beside the network while it trains (torch's
AveragedModel with a warmed-up decay).

Why: the last weights of a run depend on the last few hundred batches it happened to draw, and seeds of the
default recipe differ by up to 0.05 in validation F1 and by a third in the real recordings they find. Averaging
the weights over the last few thousand steps smooths that noise at no cost at inference: the averaged network has
the same shape and the same FLOPs, and exports like any other. (Measured for the default recipe in
models/EXPERIMENTS.md, 2026-11-22, "Weight averaging": it did not help there, so the recipe does not use it.)

What is averaged: parameters and floating-point buffers alike (`use_buffers`), so BatchNorm's running statistics
describe roughly the averaged weights' inputs; its integer batch counter is copied. The first update copies the
network; update n after it keeps min(decay, (1 + n) / (10 + n)) of the average, so the first steps' random weights
are forgotten quickly instead of weighing on the average for thousands of steps.

The average draws no random numbers and does not touch the trained network, so a run with it follows exactly the
trajectory of a run without it: the two differ only in which weights are scored and exported.
"""

from __future__ import annotations

import torch
from torch.optim.swa_utils import AveragedModel


def warmed_up_decay(decay: float, updates: int) -> float:
    """The share of the average kept by an update made after `updates` earlier averaging updates."""
    return min(decay, (1.0 + updates) / (10.0 + updates))


def weight_average(model: torch.nn.Module, decay: float) -> AveragedModel:
    """The averaged copy of `model` (its network is `.module`); call `.update_parameters(model)` after every
    optimiser step."""
    if not 0.0 < decay < 1.0:
        raise ValueError(f"decay {decay} is not in (0, 1)")

    def average(averaged: torch.Tensor, current: torch.Tensor, updates: torch.Tensor) -> torch.Tensor:
        if not averaged.dtype.is_floating_point:
            return current  # BatchNorm's batch counter: copied, not averaged
        return torch.lerp(averaged, current, 1.0 - warmed_up_decay(decay, int(updates)))

    return AveragedModel(model, avg_fn=average, use_buffers=True)
