"""announcement_delays: the user's wait for every alert reported, independent of how its onset was stamped.
Times counted by hand below."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from hearalert_train.evaluation import announcement_delays, onset_latencies
from hearalert_train.tracker import Detection


def _corpus(events: dict):
    return SimpleNamespace(files=[SimpleNamespace(filename=n, duration=10.0) for n in events],
                           events_of=lambda name: [SimpleNamespace(label=l, onset=a, offset=b) for l, a, b in events[name]])


EVENTS = {
    # a siren 1-5 s: stamped 0.9 s late (outside the collar), announced at 3.2 s
    "late.wav": [("siren", 1.0, 5.0)],
    # a horn 2-3 s stamped right, announced at 2.3 s
    "right.wav": [("car_horn", 2.0, 3.0)],
    # a doorbell 1-2 s heard only as a phone ring; a smoke alarm 4-6 s never detected
    "missed.wav": [("doorbell", 1.0, 2.0), ("smoke_alarm", 4.0, 6.0)],
    # two alarm-clock events 1-3 s and 4.5-6 s; one detection spans both (announced at 1.4 s), a second
    # fragment over the second event is announced at 5.0 s: the earlier announcement tells the user
    "merged.wav": [("alarm_clock", 1.0, 3.0), ("alarm_clock", 4.5, 6.0)],
}
DETECTIONS = {
    "late.wav": [Detection("siren", 1.9, 5.0, 3.2)],
    "right.wav": [Detection("car_horn", 2.05, 3.0, 2.3)],
    "missed.wav": [Detection("phone_ring", 1.0, 2.0, 1.3), Detection("smoke_alarm", 6.5, 7.0, 6.8)],
    "merged.wav": [Detection("alarm_clock", 1.0, 6.0, 1.4), Detection("alarm_clock", 4.6, 6.0, 5.0)],
}


def test_every_reported_alert_counts_however_its_onset_was_stamped():
    delays = announcement_delays(_corpus(EVENTS), DETECTIONS)
    assert delays.keys() == {"siren", "car_horn", "alarm_clock"}
    assert delays["siren"] == [pytest.approx(2.2)]
    assert delays["car_horn"] == [pytest.approx(0.3)]
    # the second alarm-clock event was already being reported when it began (announced 3.1 s before its
    # onset): the user waited 0 s for it, not -3.1
    assert delays["alarm_clock"] == [pytest.approx(0.4), 0.0]


def test_the_collar_matched_latency_leaves_the_late_stamp_out():
    # The contrast the measure exists for: the late-stamped siren is not in the matched latencies at all.
    matched = onset_latencies(_corpus(EVENTS), DETECTIONS)
    assert "siren" not in matched
    assert matched["car_horn"] == [pytest.approx(0.3)]


def test_a_detection_touching_an_event_only_at_its_edge_does_not_report_it():
    events = {"edge.wav": [("siren", 2.0, 4.0)]}
    dets = {"edge.wav": [Detection("siren", 0.5, 2.0, 1.0), Detection("siren", 4.0, 5.0, 4.2)]}
    assert announcement_delays(_corpus(events), dets) == {}
