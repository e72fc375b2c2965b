"""The research tracker against the hand-worked cases the host's tracker also passes (OnsetLagTests.swift), with
and without `onset_lag`: both reading one fixture is how the two stay in agreement."""

import json
import pathlib
import re

import numpy as np
import pytest

from hearalert_train.tracker import TrackerSettings, track

ROOT = pathlib.Path(__file__).resolve().parents[2]

FIXTURE = json.loads((ROOT / "Tests/HearAlertKitTests/Fixtures/tracker/onset_lag_cases.json").read_text())


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=lambda case: case["name"])
def test_tracker_stamps_onsets_as_the_hand_worked_cases(case):
    events = track(np.array(FIXTURE["scores"], dtype=np.float32), np.array(FIXTURE["decision_times"]),
                   np.array(FIXTURE["stream_times"]), FIXTURE["labels"], FIXTURE["thresholds"],
                   TrackerSettings(**case["tracker"]), FIXTURE["end_time"])
    assert len(events) == len(case["expected"])
    for event, expected in zip(events, case["expected"]):
        assert event.label == expected["label"]
        assert event.onset == pytest.approx(expected["onset"], abs=1e-9)
        assert event.offset == pytest.approx(expected["offset"], abs=1e-9)
        assert event.detected_at == pytest.approx(expected["detected_at"], abs=1e-9)


def test_onset_lag_is_left_out_of_the_metadata_when_unset():
    assert "onset_lag" not in TrackerSettings().as_metadata()
    assert TrackerSettings(onset_lag=0.25).as_metadata()["onset_lag"] == 0.25


def test_mirror_defaults_are_the_hosts_fallback():
    """A model exported with default settings must track as the host does with no tracker metadata."""
    swift = (ROOT / "Sources/HearAlertKit/Detection/TrackerSettings.swift").read_text()
    match = re.search(r"static let fallback = Partial\((.*?)\)\n", swift, re.S)
    assert match, "TrackerSettings.Partial.fallback not found in the Swift source"
    host = {key: float(value) for key, value in
            re.findall(r"(\w+): (?:Float\()?([0-9.]+)\)?", match.group(1))}
    mirror = TrackerSettings()
    assert host == {"smoothingFrames": mirror.smoothing_frames, "offRatio": mirror.off_ratio,
                    "minDuration": mirror.min_duration, "mergeGap": mirror.merge_gap, "cooldown": mirror.cooldown,
                    "onsetRiseLookback": mirror.onset_rise_lookback}
