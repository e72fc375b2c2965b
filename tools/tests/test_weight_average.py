"""The weight average train.py can score and export (--weight-average): the recurrence it keeps, what it copies
rather than averages, and that keeping it leaves the training itself bit for bit as it was."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hearalert_train.averaging import weight_average


def _net() -> torch.nn.Sequential:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))


def test_average_follows_the_warmed_up_recurrence():
    net = _net()
    average = weight_average(net, decay=0.6)
    # Reference, written out by hand in numpy: the first update copies the weights; update n after it (n = 1, 2,
    # ...) keeps d_n = min(0.6, (1 + n) / (10 + n)) of the average. d_n reaches the 0.6 cap at n = 12.5, so 16
    # updates exercise both the warm-up and the cap.
    expected = None
    for step in range(17):
        with torch.no_grad():
            net[0].weight.fill_(float(step) - 3.0)
        average.update_parameters(net)
        if expected is None:
            expected = float(step) - 3.0
        else:
            d = min(0.6, (1.0 + step) / (10.0 + step))
            expected = d * expected + (1.0 - d) * (float(step) - 3.0)
        np.testing.assert_allclose(average.module[0].weight.detach().numpy(), expected, rtol=1e-6, atol=1e-6)


def test_running_statistics_are_averaged_and_the_batch_counter_copied():
    net = _net()
    average = weight_average(net, decay=0.5)
    net.train()
    net(torch.randn(8, 3))
    average.update_parameters(net)  # the first update copies
    first_mean = net[1].running_mean.clone()
    for _ in range(2):
        net(torch.randn(8, 3))
    average.update_parameters(net)  # update 1 keeps d_1 = 2/11 of the average
    d = 2.0 / 11.0
    torch.testing.assert_close(average.module[1].running_mean, d * first_mean + (1 - d) * net[1].running_mean)
    assert int(average.module[1].num_batches_tracked) == int(net[1].num_batches_tracked) == 3


@pytest.mark.parametrize("decay", [0.0, 1.0, -0.1])
def test_decays_outside_the_open_unit_interval_are_refused(decay):
    with pytest.raises(ValueError):
        weight_average(_net(), decay)


def _train(steps: int, with_average: bool):
    net = _net()
    opt = torch.optim.AdamW(net.parameters(), lr=1e-2)
    average = weight_average(net, 0.9) if with_average else None
    torch.manual_seed(1)
    for _ in range(steps):
        net.train()
        x = torch.randn(16, 3)
        loss = (net(x) - x[:, :2]).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if average:
            average.update_parameters(net)
    return net, average


def test_keeping_an_average_leaves_the_training_bit_for_bit_unchanged():
    plain, _ = _train(20, with_average=False)
    averaged_run, average = _train(20, with_average=True)
    for a, b in zip(plain.state_dict().values(), averaged_run.state_dict().values()):
        assert torch.equal(a, b)
    # ... while the average itself is a different set of weights, held apart from the trained ones.
    assert not torch.equal(average.module[0].weight, averaged_run[0].weight)
    assert average.module[0].weight.data_ptr() != averaged_run[0].weight.data_ptr()
