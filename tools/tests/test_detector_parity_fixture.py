"""The detector parity fixture (Tests/HearAlertKitTests/Fixtures/detector/parity.json) is what the research mirror
computes today: regenerated with tools/make_detector_fixtures.py, it matches the committed files, so a change to
`pad_start`, `Geometry.decisions` or the tracker that the host does not follow shows up here and, through
DetectorParityTests.swift, there."""

import json
import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import make_detector_fixtures  # noqa: E402

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
        assert new["events"] == old["events"]


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
