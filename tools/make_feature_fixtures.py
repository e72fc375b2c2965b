#!/usr/bin/env python3
"""Makes the feature parity fixtures from librosa, an independent reference for the Swift FeatureExtractor.

Writes into Tests/HearAlertKitTests/Fixtures/features/ (default):
  <clip>.wav              16-bit PCM, 16 kHz mono test signals: tones, a sweep, white and pink noise, speech
                          (espeak-ng). The references are computed from the 16-bit samples as read back, so the
                          Swift side (libsndfile, int/32768) sees exactly the same input.
  spec_<name>.json        FeatureSpecs exercising both kinds, every window, both Mel scales and norms, dB and
                          natural log, power 1 and 2, win_length < n_fft, and normalisation.
  <clip>.<spec>.npy       float32 [frames, bins] reference features: librosa.stft(center=False) in float64,
                          |X|**power, librosa.filters.mel, librosa.power_to_db or numpy's log, normalisation.
  melbank.<spec>.npy      librosa.filters.mel itself for the log_mel specs, float32 [n_mels, n_fft/2+1].
  manifest.json           the clips and specs, for the tests to iterate over.

Usage: .venv/bin/python tools/make_feature_fixtures.py [--out DIR] [--seed 7] [--seconds 0.5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import librosa
import numpy as np
import scipy.signal
import soundfile

SAMPLE_RATE = 16000
ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "Tests" / "HearAlertKitTests" / "Fixtures" / "features"

SPECS = {
    # The default model's features (Swift `FeatureSpec()`).
    "default": {
        "sample_rate": 16000, "n_fft": 512, "win_length": 512, "hop_length": 256, "window": "hann",
        "kind": "log_mel", "n_mels": 64, "fmin": 50.0, "fmax": 8000.0, "mel_scale": "slaney",
        "mel_norm": "slaney", "power": 2.0, "log_base": 10.0, "log_multiplier": 10.0, "log_floor": 1e-10,
        "normalization": None,
    },
    # The published detector's log-power spectrum (natural log, as its training used), Hamming, short window.
    "logpower": {
        "sample_rate": 16000, "n_fft": 512, "win_length": 400, "hop_length": 256, "window": "hamming",
        "kind": "log_power", "n_mels": 64, "fmin": 0.0, "fmax": 8000.0, "mel_scale": "slaney",
        "mel_norm": "slaney", "power": 2.0, "log_base": 2.718281828459045, "log_multiplier": 1.0,
        "log_floor": 1e-10, "normalization": None,
    },
    # HTK Mel scale, peak-1 filters, magnitude (power 1), sqrt-Hann, 10 ms hop, and per-band normalisation.
    "htk_norm": {
        "sample_rate": 16000, "n_fft": 512, "win_length": 400, "hop_length": 160, "window": "sqrt_hann",
        "kind": "log_mel", "n_mels": 40, "fmin": 0.0, "fmax": 7600.0, "mel_scale": "htk",
        "mel_norm": "none", "power": 1.0, "log_base": 2.718281828459045, "log_multiplier": 1.0,
        "log_floor": 1e-6,
        "normalization": {
            "mean": [round(float(v), 4) for v in np.linspace(-4.0, 2.0, 40)],
            "std": [round(float(v), 4) for v in np.linspace(0.5, 2.5, 40)],
        },
    },
}


def make_clips(seconds: float, seed: int) -> dict[str, np.ndarray]:
    """Test signals at 16 kHz, float64 in [-1, 1]."""
    rng = np.random.default_rng(seed)
    n = int(round(seconds * SAMPLE_RATE))
    t = np.arange(n) / SAMPLE_RATE
    clips = {
        "tone440": 0.5 * np.sin(2 * np.pi * 440.0 * t),
        "tones3k": 0.3 * np.sin(2 * np.pi * 3000.0 * t) + 0.2 * np.sin(2 * np.pi * 6100.0 * t + 1.0),
        "sweep": 0.5 * scipy.signal.chirp(t, f0=100.0, t1=seconds, f1=7500.0, method="logarithmic"),
        "white": np.clip(0.1 * rng.standard_normal(n), -1, 1),
        "pink": pink_noise(n, rng),
        "speech": speech(seconds * 2),
    }
    return clips


def pink_noise(n: int, rng: np.random.Generator) -> np.ndarray:
    """1/f power noise by shaping white noise's spectrum, scaled to RMS 0.1."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    frequencies = np.fft.rfftfreq(n)
    spectrum[1:] /= np.sqrt(frequencies[1:])
    spectrum[0] = 0
    noise = np.fft.irfft(spectrum, n)
    return np.clip(0.1 * noise / np.sqrt(np.mean(noise ** 2)), -1, 1)


def speech(seconds: float) -> np.ndarray:
    """espeak-ng saying an alert-related sentence, resampled to 16 kHz, leading silence trimmed."""
    if shutil.which("espeak-ng") is None:
        raise SystemExit("espeak-ng is not installed (apt-get install espeak-ng)")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "speech.wav"
        subprocess.run(["espeak-ng", "-v", "en", "-s", "160", "-w", str(path),
                        "Please keep the door closed, the alarm is ringing."], check=True)
        voice, rate = soundfile.read(path, dtype="float64")
    voice = librosa.resample(voice, orig_sr=rate, target_sr=SAMPLE_RATE, res_type="soxr_hq")
    start = int(np.argmax(np.abs(voice) > 0.02))
    clip = voice[start:start + int(round(seconds * SAMPLE_RATE))]
    return 0.5 * clip / np.max(np.abs(clip))


def window_for(spec: dict):
    """The window as librosa takes it: a scipy name (periodic) or, for sqrt_hann, an array."""
    if spec["window"] == "sqrt_hann":
        return np.sqrt(scipy.signal.get_window("hann", spec["win_length"], fftbins=True))
    return spec["window"]


def melbank(spec: dict) -> np.ndarray:
    return librosa.filters.mel(sr=spec["sample_rate"], n_fft=spec["n_fft"], n_mels=spec["n_mels"],
                               fmin=spec["fmin"], fmax=spec["fmax"], htk=spec["mel_scale"] == "htk",
                               norm="slaney" if spec["mel_norm"] == "slaney" else None)


def reference_features(samples: np.ndarray, spec: dict) -> np.ndarray:
    stft = librosa.stft(samples.astype(np.float64), n_fft=spec["n_fft"], hop_length=spec["hop_length"],
                        win_length=spec["win_length"], window=window_for(spec), center=False)
    values = np.abs(stft) ** spec["power"]
    if spec["kind"] == "log_mel":
        values = melbank(spec).astype(np.float64) @ values
    if spec["log_base"] == 10.0 and spec["log_multiplier"] == 10.0:
        logs = librosa.power_to_db(values, ref=1.0, amin=spec["log_floor"], top_db=None)
    else:
        logs = spec["log_multiplier"] * np.log(np.maximum(values, spec["log_floor"])) / np.log(spec["log_base"])
    logs = logs.T
    if spec["normalization"] is not None:
        mean = np.asarray(spec["normalization"]["mean"], dtype=np.float32).astype(np.float64)
        std = np.asarray(spec["normalization"]["std"], dtype=np.float32).astype(np.float64)
        logs = (logs - mean) / std
    return logs.astype(np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=7, help="noise seed (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=0.5, help="clip length; speech is twice this")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    for name, spec in SPECS.items():
        (args.out / f"spec_{name}.json").write_text(json.dumps(spec, indent=2) + "\n")
        if spec["kind"] == "log_mel":
            np.save(args.out / f"melbank.{name}.npy", melbank(spec).astype(np.float32))
    written = []
    clips = make_clips(args.seconds, args.seed)
    for clip, signal in clips.items():
        path = args.out / f"{clip}.wav"
        soundfile.write(path, signal, SAMPLE_RATE, subtype="PCM_16")
        samples, _ = soundfile.read(path, dtype="float64")  # exactly what the host will decode
        for name, spec in SPECS.items():
            features = reference_features(samples, spec)
            np.save(args.out / f"{clip}.{name}.npy", np.ascontiguousarray(features))
            written.append(f"{clip}.{name}.npy {features.shape}")
    manifest = {"clips": list(clips), "specs": list(SPECS),
                "made_by": "tools/make_feature_fixtures.py", "librosa": librosa.__version__,
                "numpy": np.__version__, "seed": args.seed, "seconds": args.seconds}
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    total = sum(p.stat().st_size for p in args.out.iterdir())
    print(f"wrote {len(written)} feature references, {len(SPECS)} specs and the clips to {args.out} "
          f"({total / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
