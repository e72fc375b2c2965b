"""The tracker fixture for `onset_rise_ratio` holds the research mirror's events, which the host's EventTracker
must reproduce (OnsetRiseTests.swift): it must be exactly what tools/fixtures/make_tracker_fixtures.py writes from the
mirror today, and the mirror's default lookback must be the host's."""

import json
import pathlib
import re

from hearalert_train.tracker import DEFAULT_RISE_LOOKBACK
from make_tracker_fixtures import make_fixture

ROOT = pathlib.Path(__file__).resolve().parents[2]

FIXTURE = ROOT / "Tests/HearAlertKitTests/Fixtures/tracker/onset_rise_cases.json"


def test_committed_fixture_is_the_mirrors_events_today():
    assert json.loads(FIXTURE.read_text()) == make_fixture(), \
        "regenerate: PYTHONPATH=tools .venv/bin/python tools/fixtures/make_tracker_fixtures.py"


def test_fixture_rise_moves_onsets_but_no_announcement():
    """With the same settings otherwise, a rise ratio must move some onsets earlier (or the fixture would not test
    the rise) and leave every announcement and offset where it was."""
    cases = {case["name"]: case["expected"] for case in make_fixture()["cases"]}
    crossing, rising = cases["no_rise_ratio"], cases["rise_ratio_0.5"]
    assert [(e["label"], e["offset"], e["detected_at"]) for e in rising] == \
        [(e["label"], e["offset"], e["detected_at"]) for e in crossing]
    assert all(r["onset"] <= c["onset"] for r, c in zip(rising, crossing))
    assert sum(r["onset"] < c["onset"] for r, c in zip(rising, crossing)) >= 4


def test_mirror_lookback_is_the_hosts():
    swift = (ROOT / "Sources/HearAlertKit/Detection/TrackerSettings.swift").read_text()
    match = re.search(r"static let fallback = Partial\(.*?onsetRiseLookback: ([0-9.]+)\)", swift, re.S)
    assert match, "onsetRiseLookback in TrackerSettings.Partial.fallback not found in the Swift source"
    assert float(match.group(1)) == DEFAULT_RISE_LOOKBACK


def test_fixture_longer_lookback_reaches_back_over_near_misses_only():
    """The 2.5 s lookback case must move the onsets bounded by the 1 s lookback (the near-misses before a rise)
    further back, and nothing else, or the fixture would not test the setting."""
    cases = {case["name"]: case["expected"] for case in make_fixture()["cases"]}
    short, long = cases["rise_ratio_0.5"], cases["rise_ratio_0.5_lookback_2.5"]
    assert [(e["label"], e["offset"], e["detected_at"]) for e in long] == \
        [(e["label"], e["offset"], e["detected_at"]) for e in short]
    moved = [(s["onset"], g["onset"]) for s, g in zip(short, long) if s["onset"] != g["onset"]]
    assert len(moved) >= 2 and all(g < s for s, g in moved)
