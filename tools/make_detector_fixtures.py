#!/usr/bin/env python3
"""Make the detector's test fixtures: a tiny hand-built alertnet model and a clip it genuinely responds to.

Until the trained default model exists, the detector's tests (file detection, `hearalert listen` through ALSA,
the benchmark) need a model whose scores mean something. This one is built by hand, not trained:

    log-Mel features [T, 64]  ->  avgpool over the T frames  ->  dense [2, 64]  ->  sigmoid

Each output is a band-energy contrast: the mean log-Mel level (dB) in the label's band minus the mean level in
all other bands, scaled and offset so that broadband noise gives ~0 and a tone in the band gives ~1.
    siren        bands centred in 850-1150 Hz   (the clip's siren is a 900/1100 Hz hi-lo)
    smoke_alarm  bands centred in 2900-3500 Hz  (a 3.2 kHz T3 beep pattern, like real smoke alarms)

The clip (16 kHz mono 16-bit WAV, 8 s) is white noise throughout, a siren from 1.0 to 3.0 s and three smoke-alarm
beeps 4.5-5.0, 5.5-6.0 and 6.5-7.0 s (gaps under 1 s: one event, CORPUS.md). Its reference annotations are
written as DCASE TSV. Features here come from librosa (an independent reference for the Swift extractor), and
the script prints the model's scores over the clip from the numpy reference forward pass
(tools/alertnet_ref.py), so one can see the model respond before any Swift runs.

Detector parity (parity.json): the same weights also go out with a start-padded context (tone_model_padded,
start_padding 24 of 32 frames), and a second clip starts in the middle of a siren (alarm_at_start.wav: siren
0.0-1.5 s, a beep 2.5-3.0 s), the case start padding exists for. For each model on each clip the research mirror
(librosa features, tools/hearalert_train data.pad_start and Geometry.decisions, the numpy forward pass,
tracker.track with the model's tracker settings) gives every decision's times and scores and the events, and the
events again with onset_rise_ratio RISE_RATIO (`events_rise`); the Swift host must produce the same
(Tests/HearAlertKitTests/Detection/DetectorParityTests.swift).

    .venv/bin/python tools/make_detector_fixtures.py [--out Tests/HearAlertKitTests/Fixtures/detector] [--seed 7]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys

import librosa
import numpy as np
import soundfile

import alertnet_ref
from export import export
from hearalert_train.data import Geometry, pad_start
from hearalert_train.tracker import TrackerSettings, track

SAMPLE_RATE = 16_000
SPEC = {
    "sample_rate": SAMPLE_RATE, "n_fft": 512, "win_length": 400, "hop_length": 160, "window": "hann",
    "kind": "log_mel", "n_mels": 64, "fmin": 50.0, "fmax": 8000.0, "mel_scale": "slaney", "mel_norm": "slaney",
    "power": 2.0, "log_base": 10.0, "log_multiplier": 10.0, "log_floor": 1e-10, "normalization": None,
}
CONTEXT = {"frames": 32, "step": 4}
LABELS = ["siren", "smoke_alarm"]
BANDS_HZ = {"siren": (850.0, 1150.0), "smoke_alarm": (2900.0, 3500.0)}
# Contrast (dB) at which a score is 0.5, and how steeply it rises: noise sits near 0 dB, the tones far above.
CONTRAST_AT_HALF = 8.0
SLOPE_PER_DB = 0.5
TRACKER = {"smoothing_frames": 3, "off_ratio": 0.5, "min_duration": 0.1, "merge_gap": 1.0, "cooldown": 0.0}
EVENTS = [(1.0, 3.0, "siren"), (4.5, 7.0, "smoke_alarm")]
DURATION = 8.0
# The padded model: the first decision after 32 - 24 = 8 frames (0.102 s) instead of 32 (0.342 s).
START_PADDING = 24
ALARM_AT_START_DURATION = 4.0
MODELS = {"tone_model.safetensors": 0, "tone_model_padded.safetensors": START_PADDING}
CLIPS = ["alerts_clip.wav", "alarm_at_start.wav"]
# The host's scores may differ from these by up to SCORE_TOLERANCE (its features are its own, not librosa's:
# DetectorParityTests.swift); no score may lie closer than twice that to a threshold, or the two could disagree
# about a crossing for a reason that is not a bug.
SCORE_TOLERANCE = 5e-4
MIN_MARGIN = 2 * SCORE_TOLERANCE
# The parity's events are also tracked with this onset_rise_ratio (the host gets it as an override), so the host's
# rise onsets are held to the mirror's on real decisions, start-padded ones included.
RISE_RATIO = 0.3


def band_weights() -> tuple[np.ndarray, np.ndarray]:
    """Dense weights [labels, bands] and bias [labels] computing the scaled, offset in-band contrast."""
    centres = librosa.mel_frequencies(n_mels=SPEC["n_mels"] + 2, fmin=SPEC["fmin"], fmax=SPEC["fmax"],
                                      htk=False)[1:-1]
    weight = np.zeros((len(LABELS), SPEC["n_mels"]), dtype=np.float64)
    for row, label in enumerate(LABELS):
        low, high = BANDS_HZ[label]
        inside = (centres >= low) & (centres <= high)
        weight[row, inside] = 1.0 / inside.sum()
        weight[row, ~inside] = -1.0 / (~inside).sum()
    weight *= SLOPE_PER_DB
    bias = np.full(len(LABELS), -SLOPE_PER_DB * CONTRAST_AT_HALF)
    return weight.astype(np.float32), bias.astype(np.float32)


def synthesise(seed: int, duration: float, siren: tuple[float, float], beeps: tuple[float, ...]) -> np.ndarray:
    """White noise, a 900/1100 Hz hi-lo siren over `siren` (s) and 0.5 s 3.2 kHz beeps starting at `beeps`."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(duration * SAMPLE_RATE)) / SAMPLE_RATE
    clip = 0.01 * rng.standard_normal(t.size)
    sounding = (t >= siren[0]) & (t < siren[1])
    hi_lo = np.where(np.floor((t - siren[0]) / 0.25) % 2 == 0, 900.0, 1100.0)
    phase = 2 * np.pi * np.cumsum(hi_lo) / SAMPLE_RATE
    clip += np.where(sounding, 0.2 * np.sin(phase), 0.0)
    for start in beeps:
        beep = (t >= start) & (t < start + 0.5)
        clip += np.where(beep, 0.2 * np.sin(2 * np.pi * 3200.0 * t), 0.0)
    return clip.astype(np.float32)


def make_clip(seed: int) -> np.ndarray:
    return synthesise(seed, DURATION, (1.0, 3.0), (4.5, 5.5, 6.5))


def make_alarm_at_start(seed: int) -> np.ndarray:
    """A stream that begins while a siren sounds (listening started, or restarted, during an alarm)."""
    return synthesise(seed + 1, ALARM_AT_START_DURATION, (0.0, 1.5), (2.5,))


def mirror(model: alertnet_ref.Model, frames: np.ndarray, duration: float) -> dict:
    """What the research side makes of one clip: every decision (first padded frame, centre and end times,
    scores) and the tracked events. Windows are cut from `pad_start(frames)`, starting where
    `Geometry.decisions` says for the clip's own frame count."""
    geometry = Geometry.of(SPEC, model.frames, model.step, model.start_padding)
    starts, centres, ends = geometry.decisions(len(frames))
    padded = pad_start(frames, geometry)
    scores = np.array([alertnet_ref.forward(model, padded[s:s + model.frames]) for s in starts])
    settings = TrackerSettings(**json.loads(model.metadata["tracker"]))

    def events(settings: TrackerSettings) -> list[dict]:
        return [{"label": e.label, "onset": float(e.onset), "offset": float(e.offset),
                 "detected_at": float(e.detected_at)}
                for e in track(scores, centres, ends, model.labels, model.thresholds, settings, duration)]

    return {"decision_times": centres.tolist(), "stream_times": ends.tolist(), "scores": scores.tolist(),
            "events": events(settings),
            "events_rise": events(dataclasses.replace(settings, onset_rise_ratio=RISE_RATIO))}


def margin(model: alertnet_ref.Model, scores: np.ndarray) -> float:
    """Smallest distance of a smoothed score (the tracker's causal moving average) from an on-, off- or rise level:
    the host's features differ a little from librosa's, and the parity holds exactly only while the tracker's
    comparisons cannot flip."""
    settings = TrackerSettings(**json.loads(model.metadata["tracker"]))
    s = settings.smoothing_frames
    smoothed = np.array([scores[max(0, i + 1 - s):i + 1].mean(axis=0) for i in range(len(scores))])
    thresholds = np.array(model.thresholds)
    edges = np.concatenate([thresholds, thresholds * settings.off_ratio, thresholds * RISE_RATIO])
    return float(np.min(np.abs(smoothed[:, :, None] - edges[None, None, :]))) if len(scores) else float("inf")


def librosa_features(clip: np.ndarray) -> np.ndarray:
    """[frames, 64] log-Mel dB with the FeatureSpec's framing (no centring, window centred in the frame)."""
    power = np.abs(librosa.stft(clip.astype(np.float64), n_fft=SPEC["n_fft"], hop_length=SPEC["hop_length"],
                                win_length=SPEC["win_length"], window="hann", center=False)) ** 2
    mel = librosa.filters.mel(sr=SAMPLE_RATE, n_fft=SPEC["n_fft"], n_mels=SPEC["n_mels"], fmin=SPEC["fmin"],
                              fmax=SPEC["fmax"], htk=False, norm="slaney") @ power
    return (10.0 * np.log10(np.maximum(mel, SPEC["log_floor"]))).T.astype(np.float32)


def write_parity(folder: str) -> None:
    """parity.json: the mirror's decisions and events for every model on every clip in `folder`."""
    cases = []
    for clip_name in CLIPS:
        audio, _ = soundfile.read(os.path.join(folder, clip_name), dtype="float32")
        frames = librosa_features(audio)
        for model_name in MODELS:
            model = alertnet_ref.load(os.path.join(folder, model_name))
            found = mirror(model, frames, len(audio) / SAMPLE_RATE)
            closest = margin(model, np.array(found["scores"]))
            print(f"{clip_name} / {model_name}: {len(found['scores'])} decisions, first at "
                  f"{found['stream_times'][0]:.3f} s; {len(found['events'])} events; closest smoothed score to a "
                  f"threshold {closest:.4f}")
            if closest < MIN_MARGIN:
                raise SystemExit(f"{clip_name} / {model_name}: a smoothed score within {closest:.4f} of a threshold; "
                                 "host and mirror could disagree by feature rounding alone: change the clip")
            cases.append({"clip": clip_name, "model": model_name, **found})
    with open(os.path.join(folder, "parity.json"), "w") as out:
        json.dump({"made_by": "tools/make_detector_fixtures.py: the research mirror on librosa features",
                   "score_tolerance": SCORE_TOLERANCE, "rise_ratio": RISE_RATIO, "cases": cases}, out, indent=1)
        out.write("\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="Tests/HearAlertKitTests/Fixtures/detector", help="output folder")
    parser.add_argument("--seed", type=int, default=7, help="seed of the clip's noise")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    weight, bias = band_weights()
    for name, padding in MODELS.items():
        context = dict(CONTEXT, start_padding=padding)
        description = "test fixture only; detects 1 kHz and 3.2 kHz tones" + (
            f"; windows at a stream's start padded with {padding} copies of its first frame" if padding else "")
        export(os.path.join(args.out, name), {"score.weight": weight, "score.bias": bias},
               [{"op": "avgpool2d", "kernel": [CONTEXT["frames"], 1], "stride": [CONTEXT["frames"], 1]},
                {"op": "flatten"}, {"op": "dense", "weight": "score.weight", "bias": "score.bias"}, {"op": "sigmoid"}],
               SPEC, LABELS, [0.5, 0.5], context, model_name="hearalert-test-tone-bands",
               trained_on="not trained: hand-set band-contrast weights (tools/make_detector_fixtures.py)",
               extra_metadata={"tracker": TRACKER, "description": description})
    model_path = os.path.join(args.out, "tone_model.safetensors")

    clip = make_clip(args.seed)
    clip_path = os.path.join(args.out, "alerts_clip.wav")
    soundfile.write(clip_path, clip, SAMPLE_RATE, subtype="PCM_16")
    annotations_path = os.path.join(args.out, "alerts_clip.tsv")
    with open(annotations_path, "w") as out:
        out.write("filename\tonset\toffset\tevent_label\n")
        for onset, offset, label in EVENTS:
            out.write(f"alerts_clip.wav\t{onset:.3f}\t{offset:.3f}\t{label}\n")

    # What the model makes of the clip, decision by decision, through the independent numpy forward pass.
    model = alertnet_ref.load(model_path)
    frames = librosa_features(soundfile.read(clip_path, dtype="float32")[0])
    print("time(s)  " + "  ".join(f"{label:>11}" for label in LABELS))
    for last in range(CONTEXT["frames"] - 1, len(frames), CONTEXT["step"] * 5):
        window = frames[last - CONTEXT["frames"] + 1:last + 1]
        scores = alertnet_ref.forward(model, window[np.newaxis])
        centre = ((last - CONTEXT["frames"] / 2 + 0.5) * SPEC["hop_length"] + SPEC["n_fft"] / 2) / SAMPLE_RATE
        print(f"{centre:7.2f}  " + "  ".join(f"{score:11.3f}" for score in np.ravel(scores)))
    soundfile.write(os.path.join(args.out, "alarm_at_start.wav"), make_alarm_at_start(args.seed), SAMPLE_RATE,
                    subtype="PCM_16")

    write_parity(args.out)
    for name in (*MODELS, *CLIPS, "alerts_clip.tsv", "parity.json"):
        path = os.path.join(args.out, name)
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
