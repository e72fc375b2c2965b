"""The weight average train.py can score and export (--weight-average): the recurrence it keeps, what it copies
rather than averages, and that keeping it leaves the training itself bit for bit as it was."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hearalert_train.averaging import WeightAverage  # noqa: E402


def _net() -> torch.nn.Sequential:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))


def test_average_follows_the_warmed_up_recurrence():
    net = _net()
    average = WeightAverage(net, decay=0.6)
    # Reference, written out by hand in numpy: a_0 = initial weights; update n (from 0) keeps
    # d_n = min(0.6, (1 + n) / (10 + n)) of the average. d_n reaches the 0.6 cap at n = 12.5, so 16 updates
    # exercise both the warm-up and the cap.
    expected = net[0].weight.detach().numpy().astype(np.float64).copy()
    for n in range(16):
        with torch.no_grad():
            net[0].weight.fill_(float(n) - 3.0)
        average.update()
        d = min(0.6, (1.0 + n) / (10.0 + n))
        expected = d * expected + (1.0 - d) * (float(n) - 3.0)
        np.testing.assert_allclose(average.model[0].weight.numpy(), expected, rtol=1e-6, atol=1e-6)
    assert average.updates == 16


def test_running_statistics_are_averaged_and_the_batch_counter_copied():
    net = _net()
    average = WeightAverage(net, decay=0.5)
    net.train()
    for _ in range(3):
        net(torch.randn(8, 3))
    live_mean = net[1].running_mean.clone()
    average.update()  # d_0 = 0.1: the average takes 90 % of the live statistics
    start_mean = torch.zeros(2)  # BatchNorm's running mean starts at zero, as the copy's did
    torch.testing.assert_close(average.model[1].running_mean, 0.1 * start_mean + 0.9 * live_mean)
    assert int(average.model[1].num_batches_tracked) == int(net[1].num_batches_tracked) == 3


def test_the_average_is_a_frozen_copy_in_evaluation_mode():
    net = _net()
    average = WeightAverage(net, decay=0.9)
    assert not average.model.training
    assert all(not p.requires_grad for p in average.model.parameters())
    assert all(p.requires_grad for p in net.parameters())
    assert average.model[0].weight.data_ptr() != net[0].weight.data_ptr()


@pytest.mark.parametrize("decay", [0.0, 1.0, -0.1])
def test_decays_outside_the_open_unit_interval_are_refused(decay):
    with pytest.raises(ValueError):
        WeightAverage(_net(), decay)


def _train(steps: int, with_average: bool) -> tuple[torch.nn.Module, WeightAverage | None]:
    net = _net()
    opt = torch.optim.AdamW(net.parameters(), lr=1e-2)
    average = WeightAverage(net, 0.9) if with_average else None
    torch.manual_seed(1)
    for _ in range(steps):
        net.train()
        x = torch.randn(16, 3)
        loss = (net(x) - x[:, :2]).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if average:
            average.update()
    return net, average


def test_keeping_an_average_leaves_the_training_bit_for_bit_unchanged():
    plain, _ = _train(20, with_average=False)
    averaged_run, average = _train(20, with_average=True)
    for a, b in zip(plain.state_dict().values(), averaged_run.state_dict().values()):
        assert torch.equal(a, b)
    # ... while the average itself is a different set of weights.
    assert not torch.equal(average.model[0].weight, averaged_run[0].weight)
