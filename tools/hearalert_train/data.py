"""Training data: corpus clips in memory, window geometry, targets, class-balanced sampling and augmentation.

A window is what the network sees at one decision: T feature frames, i.e. (T-1)·hop + n_fft samples. Its
target for a label is how much of the label's events covers the last `region` seconds of the window (normalised
by the event's own length when it is shorter, so a 100 ms horn tap can still be fully "on"). The region sets when
the network fires after an onset; see train.py for how it relates to the host stamping decisions at the window
centre.

Augmentation works on waveforms, which the corpus makes possible because it stores the alert component
(alerts/) beside the mixture: background = mixture - alerts, then the alert is remixed at a new SNR, a second
alert or another clip's background may be added, and the overall gain is changed (with clipping).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import soundfile as sf

from corpus_format import Corpus


@dataclass(frozen=True)
class Geometry:
    frames: int
    step: int
    hop: int
    n_fft: int
    sample_rate: int

    @classmethod
    def of(cls, spec: dict, frames: int, step: int) -> "Geometry":
        return cls(frames, step, spec["hop_length"], spec["n_fft"], spec["sample_rate"])

    @property
    def window_samples(self) -> int:
        return (self.frames - 1) * self.hop + self.n_fft

    def decisions(self, feature_frames: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """First frame of every window of a clip with `feature_frames` frames, and each window's centre and end
        time in seconds (the host's decision time and stream time)."""
        starts = np.arange(0, max(0, feature_frames - self.frames + 1), self.step)
        begin = starts * self.hop
        end = begin + self.window_samples
        return starts, (begin + end) / 2 / self.sample_rate, end / self.sample_rate


@dataclass
class ClipAudio:
    name: str
    mixture: np.ndarray            # int16
    alerts: np.ndarray | None      # int16, sample-aligned, or None when the corpus has no alerts/ component
    events: list[tuple[float, float, int]]
    alert_snr_db: float | None


def load_clips(corpus: Corpus, labels: list[str], with_alerts: bool = True) -> list[ClipAudio]:
    clips = []
    rate = corpus.sample_rate
    for f in corpus.files:
        mix, sr = sf.read(str(corpus.audio_path(f.filename)), dtype="int16", always_2d=True)
        if sr != rate or mix.shape[1] != 1:
            raise ValueError(f"{corpus.audio_path(f.filename)}: training needs {rate} Hz mono audio")
        alerts = None
        path = corpus.audio_path(f.filename, "alerts")
        if with_alerts and path.exists():
            alerts = sf.read(str(path), dtype="int16", always_2d=True)[0][:, 0]
        events = [(e.onset, e.offset, labels.index(e.label)) for e in corpus.events_of(f.filename)
                  if e.label in labels]
        snr = corpus.file_extras(f.filename).get("alert_snr_db")
        clips.append(ClipAudio(f.filename, mix[:, 0], alerts, events, snr))
    return clips


def window_targets(events: list[tuple[float, float, int]], end: float, n_labels: int, region: float) -> np.ndarray:
    target = np.zeros(n_labels, dtype=np.float32)
    for onset, offset, k in events:
        cover = min(offset, end) - max(onset, end - region)
        if cover > 0:
            target[k] = max(target[k], min(1.0, cover / min(region, offset - onset)))
    return target


class WindowSampler:
    """Class-balanced batches of augmented training windows (waveforms) with their targets."""

    def __init__(self, clips: list[ClipAudio], geometry: Geometry, n_labels: int, region: float,
                 rng: np.random.Generator, positive_fraction: float = 0.6, mix_fraction: float = 0.25,
                 background_fraction: float = 0.15, snr_range: tuple[float, float] = (-12.0, 15.0)):
        self.clips, self.geometry, self.n_labels, self.region, self.rng = clips, geometry, n_labels, region, rng
        self.positive_fraction, self.mix_fraction = positive_fraction, mix_fraction
        self.background_fraction, self.snr_range = background_fraction, snr_range
        self.by_label: list[list[tuple[int, float, float]]] = [[] for _ in range(n_labels)]
        for i, clip in enumerate(clips):
            for onset, offset, k in clip.events:
                self.by_label[k].append((i, onset, offset))
        self.present = [k for k in range(n_labels) if self.by_label[k]]

    def _positive_start(self, label: int) -> tuple[int, int]:
        rng = self.rng
        i, onset, offset = self.by_label[label][int(rng.integers(len(self.by_label[label])))]
        if rng.random() < 0.5:  # around the onset, where latency is decided
            end = rng.uniform(onset - 0.2, onset + 0.8)
        else:
            end = rng.uniform(onset, offset + 0.6)
        return i, self._start_for_end(i, end)

    def _start_for_end(self, i: int, end: float) -> int:
        w = self.geometry.window_samples
        start = int(round(end * self.geometry.sample_rate)) - w
        return int(np.clip(start, 0, len(self.clips[i].mixture) - w))

    def _random_start(self) -> tuple[int, int]:
        i = int(self.rng.integers(len(self.clips)))
        return i, int(self.rng.integers(0, len(self.clips[i].mixture) - self.geometry.window_samples + 1))

    def _parts(self, i: int, start: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        clip, w = self.clips[i], self.geometry.window_samples
        mix = clip.mixture[start:start + w].astype(np.float32) / 32768.0
        alert = (clip.alerts[start:start + w].astype(np.float32) / 32768.0 if clip.alerts is not None
                 else np.zeros(w, dtype=np.float32))
        end = (start + w) / self.geometry.sample_rate
        return mix - alert, alert, window_targets(clip.events, end, self.n_labels, self.region)

    def _sample(self) -> tuple[np.ndarray, np.ndarray]:
        rng = self.rng
        if self.present and rng.random() < self.positive_fraction:
            i, start = self._positive_start(int(rng.choice(self.present)))
        else:
            i, start = self._random_start()
        background, alert, target = self._parts(i, start)
        snr = self.clips[i].alert_snr_db
        if snr is not None and rng.random() < 0.6:
            alert = alert * np.float32(10 ** ((rng.uniform(*self.snr_range) - snr) / 20))
        if self.present and rng.random() < self.mix_fraction:  # a second alert from another clip
            j, start2 = self._positive_start(int(rng.choice(self.present)))
            _, alert2, target2 = self._parts(j, start2)
            alert = alert + alert2 * np.float32(10 ** (rng.uniform(-10, 3) / 20))
            target = np.maximum(target, target2)
        if rng.random() < self.background_fraction:  # another clip's background on top
            j, start2 = self._random_start()
            background2, _, _ = self._parts(j, start2)
            background = background + background2 * np.float32(10 ** (rng.uniform(-10, 0) / 20))
        x = (background + alert) * np.float32(10 ** (rng.uniform(-15, 10) / 20))
        return np.clip(x, -1.0, 1.0), target

    def batch(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        xs, ys = zip(*(self._sample() for _ in range(size)))
        return np.stack(xs), np.stack(ys)
