"""hearalert_train/real_report.py: the real-set figures from hand-made events with known answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus_format import FORMAT_NAME, FORMAT_VERSION, AudioFile, Corpus, Event
from hearalert_corpus import LABELS
from hearalert_train.real_report import format_real_report, heard_sources, real_report
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
    # per label, so a slow label shows: siren 0.3 (mix_0; mix_2's siren was missed), doorbell 0.6, smoke alarm 0.4
    by_label = r["announcement_delay"]["by_label"]
    assert {k: v["count"] for k, v in by_label.items()} == {"siren": 1, "doorbell": 1, "smoke_alarm": 1}
    assert {k: v["median_s"] for k, v in by_label.items()} == pytest.approx({"siren": 0.3, "doorbell": 0.6,
                                                                            "smoke_alarm": 0.4})
    assert "median by label: siren 0.3 s (1), smoke_alarm 0.4 s (1), doorbell 0.6 s (1)" in \
        format_real_report("x", r, list(LABELS))


def test_false_alarms_are_traced_to_their_kind_of_audio_and_source_recording() -> None:
    # Two alert-free excerpts: one of speech (two recordings back to back, the second from 600 s), one of music.
    files = [AudioFile("free_0.wav", 1800.0), AudioFile("free_1.wav", 900.0)]
    extras = {"free_0.wav": {"kind": "free", "source_kind": "speech",
                             "pieces": [{"source": "alert_free/speech/a__one.wav", "offset_s": 0.0, "at_s": 0.0},
                                        {"source": "alert_free/speech/b__two.wav", "offset_s": 0.0, "at_s": 600.0}]},
              "free_1.wav": {"kind": "free", "source_kind": "music",
                             "pieces": [{"source": "alert_free/music/c__three.wav", "offset_s": 30.0, "at_s": 0.0}]}}
    corpus = Corpus(Path("/nowhere"), {"labels": list(LABELS), "files": extras}, files, [])
    detections = {"free_0.wav": [Detection("siren", 100, 101, 100.3),       # a__one
                                 Detection("phone_ring", 700, 702, 700.4),  # b__two
                                 Detection("phone_ring", 1500, 1502, 1500.4)],
                  "free_1.wav": [Detection("car_horn", 10, 11, 10.2)]}
    fa = real_report(corpus, detections, list(LABELS))["false_alarms"]
    # speech: 3 in 0.5 h = 6/h; music: 1 in 0.25 h = 4/h
    assert fa["by_kind"] == {"music": {"hours": 0.25, "count": 1, "per_hour": 4.0},
                             "speech": {"hours": 0.5, "count": 3, "per_hour": 6.0}}
    assert fa["worst_sources"] == [
        {"source": "alert_free/speech/b__two.wav", "count": 2, "by_label": {"phone_ring": 2}},
        {"source": "alert_free/music/c__three.wav", "count": 1, "by_label": {"car_horn": 1}},
        {"source": "alert_free/speech/a__one.wav", "count": 1, "by_label": {"siren": 1}}]


def test_a_set_without_sources_reports_no_breakdown() -> None:
    r = real_report(_corpus(), {"free_0.wav": [Detection("siren", 10, 12, 10.5)]}, list(LABELS))
    assert "by_kind" not in r["false_alarms"] and "worst_sources" not in r["false_alarms"]


def test_alerts_found_are_split_by_the_recordings_heard_in_training() -> None:
    # Training set: two alert files playing recording A (alone and mixed), and an alert-free excerpt whose
    # background pieces are not alerts, so only A counts as heard.
    train = Corpus(Path("/nowhere"), {"labels": list(LABELS), "files": {
        "iso_0.wav": {"kind": "isolated", "source": "alerts/siren/A.wav"},
        "mix_0.wav": {"kind": "mixture", "source": "alerts/siren/A.wav", "background": "alert_free/music/m.wav"},
        "free_0.wav": {"kind": "free", "pieces": [{"source": "alert_free/music/m.wav", "at_s": 0.0}]}}},
        [AudioFile("iso_0.wav", 5.0), AudioFile("mix_0.wav", 10.0), AudioFile("free_0.wav", 10.0)],
        [Event("iso_0.wav", 1.0, 4.0, "siren"), Event("mix_0.wav", 2.0, 5.0, "siren")])
    heard = heard_sources([train])
    assert heard == {"alerts/siren/A.wav"}
    # Scored set: A alone and mixed (found alone only), B (a doorbell never heard) alone and mixed (found mixed).
    files = [AudioFile(n, 10.0) for n in ("iso_a.wav", "mix_a.wav", "iso_b.wav", "mix_b.wav")]
    extras = {"iso_a.wav": {"kind": "isolated", "source": "alerts/siren/A.wav"},
              "mix_a.wav": {"kind": "mixture", "source": "alerts/siren/A.wav", "alert_snr_db": 5.0},
              "iso_b.wav": {"kind": "isolated", "source": "alerts/doorbell/B.wav"},
              "mix_b.wav": {"kind": "mixture", "source": "alerts/doorbell/B.wav", "alert_snr_db": 5.0}}
    events = [Event("iso_a.wav", 1.0, 4.0, "siren"), Event("mix_a.wav", 2.0, 5.0, "siren"),
              Event("iso_b.wav", 1.0, 3.0, "doorbell"), Event("mix_b.wav", 4.0, 6.0, "doorbell")]
    scored = Corpus(Path("/nowhere"), {"labels": list(LABELS), "files": extras}, files, events)
    detections = {"iso_a.wav": [Detection("siren", 1.2, 4.0, 1.5)],
                  "mix_a.wav": [Detection("phone_ring", 2.0, 5.0, 2.4)],  # wrong label: not found
                  "mix_b.wav": [Detection("doorbell", 4.1, 6.0, 4.3)]}
    split = real_report(scored, detections, list(LABELS), heard)["heard_split"]
    assert split["heard"]["recordings"] == 1 and split["not_heard"]["recordings"] == 1
    assert split["heard"]["isolated"]["per_label"] == {"siren": [1, 1]}
    assert split["heard"]["mixtures_found"]["per_label"] == {"siren": [0, 1]}
    assert split["not_heard"]["isolated"]["per_label"] == {"doorbell": [0, 1]}
    assert split["not_heard"]["mixtures_found"]["per_label"] == {"doorbell": [1, 1]}
    assert "heard_split" not in real_report(scored, detections, list(LABELS))
    text = format_real_report("m", real_report(scored, detections, list(LABELS), heard), list(LABELS))
    assert "alerts heard in training (1 recordings): isolated 1 of 1, mixtures 0 of 1 | siren 1/1, 0/1" in text
    assert "alerts never heard (1 recordings): isolated 0 of 1, mixtures 1 of 1 | doorbell 0/1, 1/1" in text


def test_score_real_refuses_a_heard_set_without_alert_recordings(tmp_path, capsys) -> None:
    import json

    import score_real
    from hearalert_corpus.writer import write_tables

    def write(root: Path, rows: list[dict]) -> Path:
        root.mkdir()
        write_tables(root, rows, {"format": FORMAT_NAME, "version": FORMAT_VERSION, "sample_rate": 16000,
                                  "labels": list(LABELS), "generator": "test", "seed": 0})
        return root

    scored = write(tmp_path / "scored", [{"name": "iso_0.wav", "duration": 10.0, "events": [(1.0, 4.0, "siren")],
                                          "info": {"kind": "isolated", "source": "alerts/siren/A.wav",
                                                   "alert_snr_db": None}}])
    free = write(tmp_path / "free", [{"name": "free_0.wav", "duration": 10.0, "events": [],
                                      "info": {"kind": "free", "alert_snr_db": None}}])
    report = tmp_path / "host.json"
    report.write_text(json.dumps({"files": [{"filename": "iso_0.wav", "detections": []}]}))
    assert score_real.main(["--corpus", str(scored), "--host-report", str(report), "--heard", str(free)]) == 1
    assert "no alert file naming its recording" in capsys.readouterr().err
