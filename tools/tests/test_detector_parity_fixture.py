"""The detector parity fixture (Tests/HearAlertKitTests/Fixtures/detector/parity.json) is what the research side
computes today: regenerated with tools/fixtures/make_detector_fixtures.py it matches the committed files, and
training's own scoring path (evaluation.predict, detect) reaches the same decisions and events. A change to `pad_start`,
`Geometry.decisions`, `predict` or the tracker that the host does not follow shows up here and, through
DetectorParityTests.swift, there."""

import json
import pathlib
import shutil

import numpy as np
import pytest
import soundfile
import torch

import make_detector_fixtures
from corpus_format import AudioFile, Corpus
from hearalert_train.data import Geometry
from hearalert_train.evaluation import detect, predict
from hearalert_train.tracker import TrackerSettings

ROOT = pathlib.Path(__file__).resolve().parents[2]

COMMITTED = ROOT / "Tests/HearAlertKitTests/Fixtures/detector"


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory):
    out = tmp_path_factory.mktemp("detector")
    assert make_detector_fixtures.main(["--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("name", ["tone_model.safetensors", "tone_model_padded.safetensors", "alerts_clip.wav",
                                  "alarm_at_start.wav", "alerts_clip.tsv"])
def test_models_and_clips_are_the_committed_ones(regenerated, name):
    assert (regenerated / name).read_bytes() == (COMMITTED / name).read_bytes()


def test_mirror_decisions_and_events_are_the_committed_ones(regenerated):
    found = json.loads((regenerated / "parity.json").read_text())
    committed = json.loads((COMMITTED / "parity.json").read_text())
    assert [(c["clip"], c["model"]) for c in found["cases"]] == [(c["clip"], c["model"]) for c in committed["cases"]]
    for new, old in zip(found["cases"], committed["cases"]):
        assert new["decision_times"] == old["decision_times"] and new["stream_times"] == old["stream_times"]
        np.testing.assert_allclose(new["scores"], old["scores"], atol=1e-9, rtol=0)
        assert new["events"] == old["events"] and new["events_rise"] == old["events_rise"]
    assert found["rise_ratio"] == committed["rise_ratio"]


def test_rise_events_move_onsets_earlier_but_no_announcement():
    """The rise-ratio events must differ from the plain ones somewhere, or the host's rise would go untested."""
    cases = json.loads((COMMITTED / "parity.json").read_text())["cases"]
    moved = 0
    for case in cases:
        plain, rise = case["events"], case["events_rise"]
        assert [(e["label"], e["offset"], e["detected_at"]) for e in rise] == \
            [(e["label"], e["offset"], e["detected_at"]) for e in plain]
        assert all(r["onset"] <= p["onset"] for r, p in zip(rise, plain))
        moved += sum(r["onset"] < p["onset"] for r, p in zip(rise, plain))
    assert moved >= len(cases)


def test_padded_model_decides_after_t_minus_p_frames_and_stamps_nothing_before_zero():
    cases = {(c["clip"], c["model"]): c for c in json.loads((COMMITTED / "parity.json").read_text())["cases"]}
    spec, frames, padding = make_detector_fixtures.SPEC, make_detector_fixtures.CONTEXT["frames"], \
        make_detector_fixtures.START_PADDING
    first = ((frames - padding - 1) * spec["hop_length"] + spec["n_fft"]) / spec["sample_rate"]
    padded = cases[("alarm_at_start.wav", "tone_model_padded.safetensors")]
    assert padded["stream_times"][0] == pytest.approx(first, abs=1e-12)
    assert padded["decision_times"][0] < 0
    assert all(e["onset"] >= 0 for c in cases.values() for e in c["events"])
    plain = cases[("alarm_at_start.wav", "tone_model.safetensors")]
    siren = next(e for e in padded["events"] if e["label"] == "siren")
    unpadded = next(e for e in plain["events"] if e["label"] == "siren")
    assert siren["onset"] == 0 and siren["detected_at"] < unpadded["detected_at"]


@pytest.mark.parametrize("model_name", list(make_detector_fixtures.MODELS))
def test_training_predict_and_tracker_give_the_fixture(tmp_path, model_name):
    """The path training scores models with (evaluation.predict on a corpus, then detect) reaches the fixture's
    decisions and events for the same weights as a PyTorch module: what the host is held to is what training
    measured."""
    fixtures = make_detector_fixtures
    (tmp_path / "audio").mkdir()
    files = []
    for clip in fixtures.CLIPS:
        shutil.copy(COMMITTED / clip, tmp_path / "audio" / clip)
        files.append(AudioFile(clip, soundfile.info(str(COMMITTED / clip)).duration))
    corpus = Corpus(tmp_path, {"labels": fixtures.TONE_MODEL_LABELS, "sample_rate": fixtures.SAMPLE_RATE}, files, [])
    weight, bias = fixtures.band_weights()
    frames = fixtures.CONTEXT["frames"]
    dense = torch.nn.Linear(weight.shape[1], weight.shape[0])
    with torch.no_grad():
        dense.weight.copy_(torch.from_numpy(weight))
        dense.bias.copy_(torch.from_numpy(bias))
    module = torch.nn.Sequential(torch.nn.AvgPool2d((frames, 1)), torch.nn.Flatten(), dense, torch.nn.Sigmoid())
    geometry = Geometry.of(fixtures.SPEC, frames, fixtures.CONTEXT["step"], fixtures.MODELS[model_name])

    predictions = predict(module, corpus, fixtures.SPEC, geometry)
    detections = detect(predictions, fixtures.TONE_MODEL_LABELS, [0.5, 0.5], TrackerSettings(**fixtures.TRACKER))
    committed = json.loads((COMMITTED / "parity.json").read_text())
    for prediction in predictions:
        want = next(c for c in committed["cases"] if c["clip"] == prediction.name and c["model"] == model_name)
        np.testing.assert_allclose(prediction.centres, want["decision_times"], atol=1e-12, rtol=0)
        np.testing.assert_allclose(prediction.ends, want["stream_times"], atol=1e-12, rtol=0)
        np.testing.assert_allclose(prediction.scores, want["scores"], atol=committed["score_tolerance"], rtol=0)
        found = [(d.label, d.onset, d.offset, d.detected_at) for d in detections[prediction.name]]
        expected = [(e["label"], e["onset"], e["offset"], e["detected_at"]) for e in want["events"]]
        assert [f[0] for f in found] == [e[0] for e in expected]
        np.testing.assert_allclose([f[1:] for f in found], [e[1:] for e in expected], atol=1e-9, rtol=0)
