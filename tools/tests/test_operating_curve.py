"""tools/operating_curve.py: a curve from hand-made scores whose false alarms and finds are known by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import operating_curve
from corpus_format import AudioFile, Corpus, Event
from hearalert_corpus import LABELS
from hearalert_train.evaluation import ClipPrediction
from hearalert_train.tracker import TrackerSettings

STEP = 0.1  # s between decisions


def _scores(duration: float, label: str, start: float, stop: float, level: float) -> ClipPrediction:
    """Every label at 0.01, `label` at `level` from `start` to `stop` s; decisions every STEP s."""
    ends = np.arange(0.5, duration + 1e-9, STEP)
    scores = np.full((len(ends), len(LABELS)), 0.01)
    scores[(ends >= start) & (ends < stop), LABELS.index(label)] = level
    return ClipPrediction("", duration, scores, ends - 0.25, ends)


def _set() -> tuple[Corpus, list[ClipPrediction]]:
    files = [AudioFile("free_0.wav", 3600.0), AudioFile("iso_0.wav", 6.0), AudioFile("mix_0.wav", 10.0)]
    extras = {"free_0.wav": {"kind": "free"}, "iso_0.wav": {"kind": "isolated"},
              "mix_0.wav": {"kind": "mixture", "alert_snr_db": 5.0}}
    events = [Event("iso_0.wav", 1.0, 4.0, "smoke_alarm"), Event("mix_0.wav", 2.0, 5.0, "doorbell")]
    corpus = Corpus(Path("/nowhere"), {"labels": list(LABELS), "files": extras}, files, events)
    predictions = []
    # music the network takes for a siren at 0.92, twice in the hour; a smoke alarm it scores 0.95; a doorbell 0.985
    for name, (label, start, stop, level) in {"free_0.wav": ("siren", 100.0, 102.0, 0.92),
                                              "iso_0.wav": ("smoke_alarm", 1.2, 4.0, 0.95),
                                              "mix_0.wav": ("doorbell", 2.2, 5.0, 0.985)}.items():
        p = _scores(next(f.duration for f in files if f.filename == name), label, start, stop, level)
        if name == "free_0.wav":
            p.scores[(p.ends >= 2000.0) & (p.ends < 2002.0), LABELS.index("siren")] = 0.92
        p.name = name
        predictions.append(p)
    return corpus, predictions


def test_each_point_counts_what_that_threshold_lets_through():
    corpus, predictions = _set()
    settings = TrackerSettings(smoothing_frames=1, min_duration=0.0)
    points = operating_curve.curve(corpus, predictions, list(LABELS), [0.9, 0.93, 0.97, 0.99], settings, {})
    got = [(p["false_alarms"], p["isolated_found"], p["mixed_found"]) for p in points]
    assert got == [(2, 1, 1), (0, 1, 1), (0, 0, 1), (0, 0, 0)]
    assert points[0]["false_alarms_per_hour"] == 2.0 and (points[0]["isolated"], points[0]["mixed"]) == (1, 1)
    # A floor holds one label up and leaves the others at the row's threshold.
    floored = operating_curve.curve(corpus, predictions, list(LABELS), [0.9], settings, {"siren": 0.98})[0]
    assert (floored["false_alarms"], floored["isolated_found"], floored["mixed_found"]) == (0, 1, 1)
    assert floored["thresholds"] == [0.98 if label == "siren" else 0.9 for label in LABELS]
    first_row = operating_curve.format_curve(points).splitlines()[1].split()
    assert first_row[:6] == ["0.9", "2", "(", "2.00)", "1/1", "1/1"]


def test_bad_thresholds_and_floors_are_refused_before_any_work(capsys):
    for bad in (["--thresholds", "0.9,1.5"], ["--thresholds", ","], ["--floor", "sirens=0.98"],
                ["--floor", "siren=2"]):
        with pytest.raises(SystemExit):
            operating_curve.parse_args(["--model", "m", "--corpus", "c"] + bad)
    assert "not a label" in capsys.readouterr().err
    assert operating_curve.parse_args(["--model", "m", "--corpus", "c", "--thresholds", "0.97,0.9,0.97"]).thresholds \
        == [0.9, 0.97]


def test_the_tool_draws_a_files_curve_from_its_kept_scores(monkeypatch, tmp_path, capsys):
    corpus, predictions = _set()
    monkeypatch.setattr(operating_curve, "read_corpus", lambda path: corpus)
    monkeypatch.setattr(operating_curve, "scores_of", lambda model, corpora, cache: [predictions])
    model = Path(__file__).parent.parent.parent / "models" / "default.safetensors"
    out = tmp_path / "curve.json"
    assert operating_curve.main(["--model", str(model), "--corpus", "set", "--thresholds", "0.9,0.97",
                                 "--floor", "siren=0.98", "--json", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["floors"] == {"siren": 0.98} and [p["false_alarms"] for p in written["points"]] == [0, 0]
    assert [p["isolated_found"] for p in written["points"]] == [1, 0]
    assert "threshold  false alarms" in capsys.readouterr().out
