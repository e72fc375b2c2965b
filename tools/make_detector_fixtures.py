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

    .venv/bin/python tools/make_detector_fixtures.py [--out Tests/HearAlertKitTests/Fixtures/detector] [--seed 7]
"""

from __future__ import annotations

import argparse
import os
import sys

import librosa
import numpy as np
import soundfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import alertnet_ref  # noqa: E402  (tools/ is not a package)
from export import export  # noqa: E402

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


def make_clip(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(int(DURATION * SAMPLE_RATE)) / SAMPLE_RATE
    clip = 0.01 * rng.standard_normal(t.size)
    siren = (t >= 1.0) & (t < 3.0)
    hi_lo = np.where(np.floor((t - 1.0) / 0.25) % 2 == 0, 900.0, 1100.0)
    phase = 2 * np.pi * np.cumsum(hi_lo) / SAMPLE_RATE
    clip += np.where(siren, 0.2 * np.sin(phase), 0.0)
    for start in (4.5, 5.5, 6.5):
        beep = (t >= start) & (t < start + 0.5)
        clip += np.where(beep, 0.2 * np.sin(2 * np.pi * 3200.0 * t), 0.0)
    return clip.astype(np.float32)


def librosa_features(clip: np.ndarray) -> np.ndarray:
    """[frames, 64] log-Mel dB with the FeatureSpec's framing (no centring, window centred in the frame)."""
    power = np.abs(librosa.stft(clip.astype(np.float64), n_fft=SPEC["n_fft"], hop_length=SPEC["hop_length"],
                                win_length=SPEC["win_length"], window="hann", center=False)) ** 2
    mel = librosa.filters.mel(sr=SAMPLE_RATE, n_fft=SPEC["n_fft"], n_mels=SPEC["n_mels"], fmin=SPEC["fmin"],
                              fmax=SPEC["fmax"], htk=False, norm="slaney") @ power
    return (10.0 * np.log10(np.maximum(mel, SPEC["log_floor"]))).T.astype(np.float32)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="Tests/HearAlertKitTests/Fixtures/detector", help="output folder")
    parser.add_argument("--seed", type=int, default=7, help="seed of the clip's noise")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    weight, bias = band_weights()
    model_path = os.path.join(args.out, "tone_model.safetensors")
    export(model_path, {"score.weight": weight, "score.bias": bias},
           [{"op": "avgpool2d", "kernel": [CONTEXT["frames"], 1], "stride": [CONTEXT["frames"], 1]},
            {"op": "flatten"}, {"op": "dense", "weight": "score.weight", "bias": "score.bias"}, {"op": "sigmoid"}],
           SPEC, LABELS, [0.5, 0.5], CONTEXT, model_name="hearalert-test-tone-bands",
           trained_on="not trained: hand-set band-contrast weights (tools/make_detector_fixtures.py)",
           extra_metadata={"tracker": TRACKER, "description": "test fixture only; detects 1 kHz and 3.2 kHz tones"})

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
    for path in (model_path, clip_path, annotations_path):
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
