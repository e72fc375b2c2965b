"""hearalert_train/real_report.py: the real-set figures from hand-made events with known answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus_format import AudioFile, Corpus, Event
from hearalert_corpus import LABELS
from hearalert_train.real_report import real_report
from hearalert_train.tracker import Detection


def _corpus() -> Corpus:
    files = [AudioFile("free_0.wav", 1800.0), AudioFile("free_1.wav", 1800.0),
             AudioFile("mix_0.wav", 10.0), AudioFile("mix_1.wav", 10.0), AudioFile("mix_2.wav", 10.0),
             AudioFile("iso_0.wav", 5.0), AudioFile("iso_1.wav", 5.0)]
    kinds = {"free_0.wav": "free", "free_1.wav": "free", "mix_0.wav": "mixture", "mix_1.wav": "mixture",
             "mix_2.wav": "mixture", "iso_0.wav": "isolated", "iso_1.wav": "isolated"}
    snr = {"mix_0.wav": 5.0, "mix_1.wav": 12.0, "mix_2.wav": -3.0}
    extras = {name: {"kind": kind, "alert_snr_db": snr.get(name)} for name, kind in kinds.items()}
    events = [Event("mix_0.wav", 2.0, 4.0, "siren"), Event("mix_1.wav", 3.0, 5.0, "doorbell"),
              Event("mix_2.wav", 2.0, 6.0, "siren"), Event("iso_0.wav", 1.0, 4.0, "smoke_alarm"),
              Event("iso_1.wav", 1.0, 4.0, "phone_ring")]
    return Corpus(Path("/nowhere"), {"labels": list(LABELS), "files": extras}, files, events)


def test_counts_false_alarms_found_alerts_f1_and_delay() -> None:
    detections = {
        "free_0.wav": [Detection("siren", 10, 12, 10.5), Detection("car_horn", 50, 51, 50.2)],
        "free_1.wav": [Detection("siren", 100, 103, 100.4)],
        "mix_0.wav": [Detection("siren", 2.1, 4.0, 2.3)],        # onset within the collar: a hit
        "mix_1.wav": [Detection("doorbell", 3.5, 5.0, 3.6)],     # overlaps, but 0.5 s late: found, not an F1 hit
        "mix_2.wav": [],
        "iso_0.wav": [Detection("smoke_alarm", 1.0, 4.0, 1.4)],
        "iso_1.wav": [Detection("alarm_clock", 1.0, 4.0, 1.2)],  # wrong label: not found
    }
    r = real_report(_corpus(), detections, list(LABELS))
    assert r["false_alarms"] == {"per_hour": 3.0, "count": 3, "hours": 1.0,
                                 "by_label": dict({label: 0 for label in LABELS}, siren=2, car_horn=1)}
    assert (r["isolated"]["found"], r["isolated"]["events"]) == (1, 2)
    assert r["isolated"]["per_label"] == {"smoke_alarm": [1, 1], "phone_ring": [0, 1]}
    assert (r["mixtures_found"]["found"], r["mixtures_found"]["events"]) == (2, 3)
    # >= 0 dB: mix_0 (siren hit) and mix_1 (doorbell miss plus a false doorbell): siren F1 1, doorbell F1 0
    assert r["f1_at_0db_and_above"]["files"] == 2
    assert r["f1_at_0db_and_above"]["per_label"]["siren"] == 1.0
    assert r["f1_at_0db_and_above"]["macro"] == pytest.approx(0.5)
    assert r["f1_by_alert_snr_db"]["-5..0"] == {"files": 1, "macro_f1": 0.0}
    # delays over every alert found: 0.3 (mix_0), 0.6 (mix_1), 0.4 (iso_0)
    assert r["announcement_delay"]["median_s"] == pytest.approx(0.4) and r["announcement_delay"]["count"] == 3
