"""The research mirror's TrackerSettings reads a model's `tracker` metadata (TrackerSettings(**json.loads(...)))
with the host's rule for counts: `smoothing_frames` must be a JSON integer, 3 and never 3.0 or true, as
TrackerSettingsTests.swift holds the host to; seconds and ratios may be written either way."""

import json

import numpy as np
import pytest

from hearalert_train.tracker import TrackerSettings


@pytest.mark.parametrize("literal", ["3.0", "3e0", "true"])
def test_smoothing_frames_must_be_a_json_integer(literal):
    metadata = json.loads(f'{{"smoothing_frames": {literal}}}')
    with pytest.raises(ValueError, match=r"'smoothing_frames' must be a JSON integer \(like 3, not 3\.0\)"):
        TrackerSettings(**metadata)


def test_integers_are_accepted_wherever_numbers_are():
    settings = TrackerSettings(**json.loads('{"smoothing_frames": 3, "merge_gap": 1, "cooldown": 2e0}'))
    assert settings.smoothing_frames == 3 and settings.merge_gap == 1 and settings.cooldown == 2
    assert TrackerSettings(smoothing_frames=np.int64(2)).smoothing_frames == 2  # a tuning grid's numpy integer
