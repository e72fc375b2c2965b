"""Researcher-provided recordings (speech, noise, real alerts): listing, split assignment, loading.

A file's split is a stable hash of its path relative to the folder given, so the same recording always lands in
the same split (80 % train, 10 % val, 10 % test) whatever the seed: no source overlap between splits.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

from . import SAMPLE_RATE, SPLITS

AUDIO_SUFFIXES = {".wav", ".flac", ".ogg", ".oga", ".aiff", ".aif", ".au", ".mp3"}


def split_of(relative_path: str, buckets: tuple[int, int, int] = (8, 1, 1)) -> str:
    """The split a recording belongs to, from a hash of its relative path."""
    h = int(hashlib.sha1(relative_path.encode("utf-8")).hexdigest(), 16) % sum(buckets)
    edge = 0
    for split, size in zip(SPLITS, buckets):
        edge += size
        if h < edge:
            return split
    raise AssertionError("unreachable")


def list_audio(folder: str | Path | None, split: str) -> list[Path]:
    """Audio files under `folder` (recursively) that belong to `split`, sorted for determinism."""
    if folder is None:
        return []
    root = Path(folder)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: not a folder")
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in AUDIO_SUFFIXES)
    return [p for p in files if split_of(p.relative_to(root).as_posix()) == split]


def load_audio(path: Path) -> np.ndarray:
    """A recording as float32 mono at SAMPLE_RATE (downmixed, resampled with soxr)."""
    data, rate = sf.read(str(path), dtype="float32", always_2d=True)
    mono = data.mean(axis=1)
    if rate != SAMPLE_RATE:
        mono = soxr.resample(mono, rate, SAMPLE_RATE, quality="HQ")
    return np.ascontiguousarray(mono, dtype=np.float32)


def random_excerpt(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """`n` samples from a random place in `x`, looping a short recording to fill."""
    if len(x) == 0:
        return np.zeros(n, dtype=np.float32)
    if len(x) < n:
        x = np.tile(x, n // len(x) + 1)
    start = int(rng.integers(0, len(x) - n + 1))
    return x[start:start + n].copy()


def active_segments(x: np.ndarray, threshold_db: float = -25.0, frame: float = 0.02) -> list[tuple[float, float]]:
    """Where a recording is sounding: 20 ms frames within `threshold_db` of its loudest frame."""
    hop = int(frame * SAMPLE_RATE)
    n_frames = len(x) // hop
    if n_frames == 0:
        return []
    energy = np.square(x[: n_frames * hop].astype(np.float64)).reshape(n_frames, hop).mean(axis=1)
    on = energy > energy.max() * 10 ** (threshold_db / 10)
    segs, start = [], None
    for i, flag in enumerate(on):
        if flag and start is None:
            start = i
        if not flag and start is not None:
            segs.append((start * frame, i * frame))
            start = None
    if start is not None:
        segs.append((start * frame, n_frames * frame))
    return segs
