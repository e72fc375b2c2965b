"""The false-alarm budget that keeps a target rate with 95 % confidence (hearalert_train.evaluation.confident_budget),
against Poisson upper limits computed here by bisection on the Poisson distribution function and against the
published one-sided 95 % limits (Gehrels, ApJ 303, 1986, table 1, confidence 0.95: 2.996, 4.744, 6.296 and 10.513 events for 0, 1, 2
and 5 observed)."""

from __future__ import annotations

import math

import pytest

from hearalert_train.evaluation import confident_budget


def poisson_cdf(k: int, mean: float) -> float:
    term = total = math.exp(-mean)
    for i in range(1, k + 1):
        term *= mean / i
        total += term
    return total


def upper_limit(k: int, confidence: float = 0.95) -> float:
    """The mean at which seeing k or fewer events has probability 1 − confidence."""
    low, high = 0.0, 10.0 * (k + 3)
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if poisson_cdf(k, mid) > 1 - confidence else (low, mid)
    return (low + high) / 2


@pytest.mark.parametrize("observed, limit", [(0, 2.996), (1, 4.744), (2, 6.296), (5, 10.513)])
def test_the_limits_are_the_published_ones(observed, limit):
    assert upper_limit(observed) == pytest.approx(limit, abs=0.002)
    # One hour at a target just over the limit allows that many events; just under, one fewer.
    assert confident_budget(limit + 0.01, 1.0) == observed
    if observed:
        assert confident_budget(limit - 0.01, 1.0) == observed - 1


@pytest.mark.parametrize("target, hours", [(2.0, 11.143), (1.0, 11.143), (2.0, 3.755), (0.5, 40.0), (3.0, 1.2)])
def test_the_budget_is_the_largest_rate_whose_upper_limit_keeps_the_target(target, hours):
    k = round(confident_budget(target, hours) * hours)
    assert upper_limit(k) <= target * hours < upper_limit(k + 1)
    assert confident_budget(target, hours) == pytest.approx(k / hours)
    assert confident_budget(target, hours) < target


def test_too_few_hours_to_show_the_target_is_an_error_saying_how_many_are_needed():
    with pytest.raises(ValueError, match=r"needs at least 1\.50 h"):
        confident_budget(2.0, 1.0)
