#!/usr/bin/env python3
"""HearAlert features in numpy: exactly what the Swift host computes, for training and inspection.

The one definition of the features is the FeatureSpec (CSources/alertnet/FORMAT.md). This module reads and
validates a spec with the same rules as the Swift `FeatureSpec` (unknown or missing keys, wrong types and
out-of-range values are errors), and computes features from float samples:

    frame t = samples[t*hop : t*hop + n_fft]          (no centring, no padding)
    window of win_length samples centred in the frame (zeros elsewhere), periodic hann / sqrt_hann / hamming
    |rfft|**power  ->  Mel filterbank (librosa.filters.mel's construction) for log_mel
    log_multiplier * log_base(max(value, log_floor))  ->  optional (x - mean) / std

Computation is in float64 and the result is rounded to float32. The tests (tools/tests/test_features.py)
hold this module to librosa and to the output of `hearalert features`.

    import features
    spec = features.load_spec("spec.json")          # or features.default_spec()
    x = features.compute(samples, spec)             # float32 [frames, bins]
    xb = features.compute_batch(clips, spec)        # float32 [clips, frames, bins], equal-length clips

Run as a script to print the features' shape and range for a WAV file:
    .venv/bin/python tools/features.py clip.wav [--spec spec.json] [-o out.npy]
"""

from __future__ import annotations

import argparse
import json
import math
import numbers
import sys
from pathlib import Path

import numpy as np

__all__ = [
    "FeatureSpecError",
    "default_spec",
    "load_spec",
    "validate",
    "frame_count",
    "window",
    "mel_filterbank",
    "compute",
    "compute_batch",
]

#: The default model's features; `FeatureSpec()` in Swift has the same values.
_DEFAULT_SPEC = {
    "sample_rate": 16000,
    "n_fft": 512,
    "win_length": 512,
    "hop_length": 256,
    "window": "hann",
    "kind": "log_mel",
    "n_mels": 64,
    "fmin": 50.0,
    "fmax": 8000.0,
    "mel_scale": "slaney",
    "mel_norm": "slaney",
    "power": 2.0,
    "log_base": 10.0,
    "log_multiplier": 10.0,
    "log_floor": 1e-10,
    "normalization": None,
}

_INTEGER_KEYS = ("sample_rate", "n_fft", "win_length", "hop_length", "n_mels")
_NUMBER_KEYS = ("fmin", "fmax", "power", "log_base", "log_multiplier", "log_floor")
_CHOICES = {
    "window": ("hann", "sqrt_hann", "hamming"),
    "kind": ("log_power", "log_mel"),
    "mel_scale": ("htk", "slaney"),
    "mel_norm": ("slaney", "none"),
}


class FeatureSpecError(ValueError):
    """A spec that cannot be honoured exactly; the message names the key, as Swift's FeatureSpecError does."""


def default_spec() -> dict:
    """A fresh copy of the default model's FeatureSpec."""
    return dict(_DEFAULT_SPEC)


def load_spec(path_or_dict) -> dict:
    """Reads (a path or str path to JSON, or a dict) and validates a spec; returns a normalised copy.

    Strict like Swift: unknown keys, missing keys (only ``normalization`` may be absent), wrong JSON types (an
    integer key written ``512.0`` or ``5e2`` included) and out-of-range values raise FeatureSpecError. Numbers
    become int/float, normalization arrays float32.
    """
    if isinstance(path_or_dict, dict):
        raw = path_or_dict
    else:
        path = Path(path_or_dict)
        try:
            raw = json.loads(path.read_text())
        except OSError as error:
            raise FeatureSpecError(f"{path}: cannot read feature spec: {error.strerror or error}") from None
        except json.JSONDecodeError:
            raise FeatureSpecError(f"{path}: feature spec: not valid JSON") from None
        try:
            return load_spec(raw)
        except FeatureSpecError as error:
            raise FeatureSpecError(f"{path}: {error}") from None
    if not isinstance(raw, dict):
        raise FeatureSpecError('feature spec: "feature spec" must be a JSON object')
    unknown = sorted(set(raw) - set(_DEFAULT_SPEC))
    if unknown:
        plural = "" if len(unknown) == 1 else "s"
        raise FeatureSpecError(f"feature spec: unknown key{plural} " + ", ".join(f'"{k}"' for k in unknown))
    spec = {}
    for key in _DEFAULT_SPEC:
        if key not in raw:
            if key == "normalization":
                spec[key] = None
                continue
            raise FeatureSpecError(f'feature spec: missing key "{key}"')
        value = raw[key]
        if key in _INTEGER_KEYS:
            # A JSON integer: 512, never 512.0, 5e2 or true (json.loads makes those float and bool), as the Swift
            # host and the C core demand (FORMAT.md, "Integers").
            if not _is_integer(value):
                raise FeatureSpecError(f'feature spec: "{key}" must be an integer')
            spec[key] = int(value)
        elif key in _NUMBER_KEYS:
            if not _is_number(value):
                raise FeatureSpecError(f'feature spec: "{key}" must be a number')
            spec[key] = float(value)
        elif key in _CHOICES:
            names = _CHOICES[key]
            if not isinstance(value, str):
                raise FeatureSpecError(f'feature spec: "{key}" must be one of {", ".join(names)}')
            if value not in names:
                raise FeatureSpecError(f'feature spec: "{key}" "{value}" is not one of {", ".join(names)}')
            spec[key] = value
        else:
            spec[key] = _load_normalization(value)
    validate(spec)
    return spec


def _is_number(value) -> bool:
    """JSON numbers, and numpy scalars from a researcher's own dict; not booleans (JSON true is no number)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _is_integer(value) -> bool:
    """JSON integers, and numpy integers from a researcher's own dict; not floats, even integral ones, nor bools."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _load_normalization(value):
    if value is None:
        return None
    expected = 'null or {"mean": [numbers], "std": [numbers]}'
    if not isinstance(value, dict):
        raise FeatureSpecError(f'feature spec: "normalization" must be {expected}')
    unknown = sorted(set(value) - {"mean", "std"})
    if unknown:
        plural = "" if len(unknown) == 1 else "s"
        raise FeatureSpecError(
            f"feature spec: unknown key{plural} " + ", ".join(f'"normalization.{k}"' for k in unknown))
    result = {}
    for key in ("mean", "std"):
        if key not in value:
            raise FeatureSpecError(f'feature spec: missing key "normalization.{key}"')
        items = value[key]
        if isinstance(items, np.ndarray):
            items = items.tolist()
        if not isinstance(items, list) or not all(_is_number(x) for x in items):
            raise FeatureSpecError(f'feature spec: "normalization.{key}" must be an array of numbers')
        result[key] = np.asarray(items, dtype=np.float32)
    return result


def _bin_count(spec: dict) -> int:
    return spec["n_mels"] if spec["kind"] == "log_mel" else spec["n_fft"] // 2 + 1


def validate(spec: dict) -> None:
    """Raises FeatureSpecError unless every value can produce finite features (Swift's `validate()`)."""

    def require(condition, key, reason):
        if not condition:
            raise FeatureSpecError(f'feature spec: "{key}" {reason}')

    sr, n_fft = spec["sample_rate"], spec["n_fft"]
    require(1 <= sr <= 1_000_000, "sample_rate", f"must be 1...1000000 Hz, got {sr}")
    require(4 <= n_fft <= 65536 and n_fft % 2 == 0, "n_fft", f"must be an even number in 4...65536, got {n_fft}")
    win = spec["win_length"]
    require(1 <= win <= n_fft, "win_length", f"must be 1...n_fft ({n_fft}), got {win}")
    hop = spec["hop_length"]
    require(hop >= 1, "hop_length", f"must be at least 1, got {hop}")
    if spec["kind"] == "log_mel":
        n_mels, fmin, fmax = spec["n_mels"], spec["fmin"], spec["fmax"]
        require(1 <= n_mels <= 4096, "n_mels", f"must be 1...4096, got {n_mels}")
        require(math.isfinite(fmin) and fmin >= 0, "fmin", f"must be a finite frequency >= 0, got {fmin}")
        nyquist = sr / 2
        require(math.isfinite(fmax) and fmin < fmax <= nyquist, "fmax",
                f"must be above fmin ({fmin}) and at most sample_rate/2 ({nyquist}), got {fmax}")
    power = spec["power"]
    require(math.isfinite(power) and power > 0, "power", f"must be a finite number > 0, got {power}")
    base = spec["log_base"]
    require(math.isfinite(base) and base > 0 and base != 1, "log_base", f"must be finite, > 0 and not 1, got {base}")
    multiplier = spec["log_multiplier"]
    require(math.isfinite(multiplier) and multiplier != 0, "log_multiplier",
            f"must be finite and not 0, got {multiplier}")
    floor = spec["log_floor"]
    require(math.isfinite(floor) and floor > 0, "log_floor", f"must be a finite number > 0, got {floor}")
    normalization = spec.get("normalization")
    if normalization is not None:
        bins = _bin_count(spec)
        mean, std = normalization["mean"], normalization["std"]
        require(len(mean) == bins, "normalization", f"mean must have {bins} values (one per bin), got {len(mean)}")
        require(len(std) == bins, "normalization", f"std must have {bins} values (one per bin), got {len(std)}")
        require(bool(np.all(np.isfinite(mean))), "normalization", "mean must be finite numbers")
        require(bool(np.all(np.isfinite(std) & (std > 0))), "normalization", "std must be finite numbers > 0")


def frame_count(sample_count: int, spec: dict) -> int:
    """Whole frames in ``sample_count`` samples: ``1 + (n - n_fft) // hop``, or 0 if shorter than one frame."""
    n_fft, hop = spec["n_fft"], spec["hop_length"]
    return 0 if sample_count < n_fft else 1 + (sample_count - n_fft) // hop


def window(kind: str, length: int) -> np.ndarray:
    """Periodic window (denominator ``length``), float64, as Swift's ``WindowFunction.make``."""
    phase = np.cos(2 * np.pi * np.arange(length) / length)
    if kind == "hann":
        return 0.5 - 0.5 * phase
    if kind == "sqrt_hann":
        return np.sqrt(0.5 - 0.5 * phase)
    if kind == "hamming":
        return 0.54 - 0.46 * phase
    raise FeatureSpecError(f'feature spec: "window" "{kind}" is not one of {", ".join(_CHOICES["window"])}')


def _hz_to_mel(hz, scale):
    hz = np.asarray(hz, dtype=np.float64)
    if scale == "htk":
        return 2595.0 * np.log10(1.0 + hz / 700.0)
    # Slaney's Auditory Toolbox scale: linear (200/3 Hz per Mel) below 1 kHz, 27 Mels per factor 6.4 above.
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    min_log_mel, logstep = min_log_hz / f_sp, np.log(6.4) / 27.0
    return np.where(hz >= min_log_hz, min_log_mel + np.log(np.maximum(hz, 1e-300) / min_log_hz) / logstep,
                    hz / f_sp)


def _mel_to_hz(mel, scale):
    mel = np.asarray(mel, dtype=np.float64)
    if scale == "htk":
        return 700.0 * (10.0 ** (mel / 2595.0) - 1.0)
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    min_log_mel, logstep = min_log_hz / f_sp, np.log(6.4) / 27.0
    return np.where(mel >= min_log_mel, min_log_hz * np.exp(logstep * (mel - min_log_mel)), f_sp * mel)


def mel_filterbank(spec: dict) -> np.ndarray:
    """Mel filterbank float32 [n_mels, n_fft//2+1], constructed as librosa.filters.mel (0.10/0.11)."""
    sr, n_fft, n_mels = spec["sample_rate"], spec["n_fft"], spec["n_mels"]
    scale = spec["mel_scale"]
    bin_hz = np.fft.rfftfreq(n=n_fft, d=1.0 / sr)
    edges = _mel_to_hz(np.linspace(_hz_to_mel(spec["fmin"], scale), _hz_to_mel(spec["fmax"], scale), n_mels + 2),
                       scale)
    widths = np.diff(edges)
    ramps = edges[:, None] - bin_hz[None, :]
    rising = -ramps[:-2] / widths[:-1, None]
    falling = ramps[2:] / widths[1:, None]
    weights = np.maximum(0.0, np.minimum(rising, falling))
    if spec["mel_norm"] == "slaney":
        weights *= (2.0 / (edges[2:] - edges[:-2]))[:, None]
    return weights.astype(np.float32)


def _padded_window(spec: dict) -> np.ndarray:
    n_fft, win = spec["n_fft"], spec["win_length"]
    padded = np.zeros(n_fft)
    offset = (n_fft - win) // 2
    # Rounded to float32 first, as the Swift host stores its window.
    padded[offset:offset + win] = window(spec["window"], win).astype(np.float32)
    return padded


def _features_of_frames(frames: np.ndarray, spec: dict, padded_window: np.ndarray,
                        filterbank: np.ndarray | None) -> np.ndarray:
    """frames [..., n_fft] float64 -> features [..., bins] float32."""
    spectrum = np.fft.rfft(frames * padded_window, axis=-1)
    power = np.abs(spectrum) ** spec["power"]
    values = power @ filterbank.T.astype(np.float64) if filterbank is not None else power
    logs = spec["log_multiplier"] * np.log(np.maximum(values, spec["log_floor"])) / np.log(spec["log_base"])
    normalization = spec.get("normalization")
    if normalization is not None:
        logs = (logs - normalization["mean"].astype(np.float64)) / normalization["std"].astype(np.float64)
    return logs.astype(np.float32)


def compute(samples: np.ndarray, spec: dict, chunk_frames: int = 4096) -> np.ndarray:
    """Features of mono ``samples`` (at spec["sample_rate"]) as float32 [frames, bins].

    Works through ``chunk_frames`` frames at a time, so memory stays bounded for hour-long recordings.
    """
    spec = load_spec(spec)
    samples = np.asarray(samples, dtype=np.float64)
    if samples.ndim != 1:
        raise ValueError(f"samples must be one-dimensional (mono), got shape {samples.shape}")
    n_fft, hop = spec["n_fft"], spec["hop_length"]
    count = frame_count(len(samples), spec)
    result = np.empty((count, _bin_count(spec)), dtype=np.float32)
    padded = _padded_window(spec)
    filterbank = mel_filterbank(spec) if spec["kind"] == "log_mel" else None
    for start in range(0, count, chunk_frames):
        stop = min(count, start + chunk_frames)
        segment = samples[start * hop:(stop - 1) * hop + n_fft]
        frames = np.lib.stride_tricks.sliding_window_view(segment, n_fft)[::hop]
        result[start:stop] = _features_of_frames(frames, spec, padded, filterbank)
    return result


def compute_batch(clips: np.ndarray, spec: dict) -> np.ndarray:
    """Features of equal-length clips [clips, samples] as float32 [clips, frames, bins], vectorised."""
    spec = load_spec(spec)
    clips = np.asarray(clips, dtype=np.float64)
    if clips.ndim != 2:
        raise ValueError(f"clips must be [clips, samples], got shape {clips.shape}")
    count = frame_count(clips.shape[1], spec)
    if count == 0:
        return np.empty((clips.shape[0], 0, _bin_count(spec)), dtype=np.float32)
    frames = np.lib.stride_tricks.sliding_window_view(clips, spec["n_fft"], axis=1)[:, ::spec["hop_length"]]
    filterbank = mel_filterbank(spec) if spec["kind"] == "log_mel" else None
    return _features_of_frames(frames, spec, _padded_window(spec), filterbank)


def _main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Compute HearAlert features of a mono-mixed audio file.")
    parser.add_argument("audio", help="audio file (anything soundfile reads) at the spec's sample rate")
    parser.add_argument("--spec", help="FeatureSpec JSON (default: the default model's spec)")
    parser.add_argument("-o", "--output", help="write float32 [frames, bins] .npy here")
    args = parser.parse_args(argv)
    import soundfile

    try:
        spec = load_spec(args.spec) if args.spec else default_spec()
    except FeatureSpecError as error:
        print(error, file=sys.stderr)
        return 1
    try:
        samples, rate = soundfile.read(args.audio, dtype="float32", always_2d=True)
    except (OSError, RuntimeError) as error:  # soundfile's errors are RuntimeErrors
        print(f"{args.audio}: cannot read audio: {error}", file=sys.stderr)
        return 1
    if rate != spec["sample_rate"]:
        print(f"{args.audio}: {rate} Hz, the spec needs {spec['sample_rate']} Hz (resample first, "
              "or use `hearalert features`, which resamples)", file=sys.stderr)
        return 1
    result = compute(samples.mean(axis=1), spec)
    if args.output:
        try:
            np.save(args.output, result)
        except OSError as error:
            print(f"{args.output}: cannot write: {error.strerror or error}", file=sys.stderr)
            return 1
        print(f"{args.output}: {result.shape[0]} frames x {result.shape[1]} bins")
    else:
        print(f"{result.shape[0]} frames x {result.shape[1]} bins, range {result.min():.3f} .. {result.max():.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(_main())
