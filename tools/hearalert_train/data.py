"""Training data: cached clip features, window geometry, targets, class-balanced sampling and augmentation.

A window is what the network sees at one decision: T feature frames, i.e. (T-1)·hop + n_fft samples. Its
target for a label is how much of the label's events covers the last `region` seconds of the window (normalised
by the event's own length when it is shorter, so a 100 ms horn tap can still be fully "on"). The region sets when
the network fires after an onset; see train.py for how it relates to the host stamping decisions at the window
centre.

Features are computed once per clip with tools/features.py (no normalisation) for three components: the
mixture (audio/), the alert component (alerts/) and the background (mixture minus alerts). Augmentation then
works in the Mel power domain, where uncorrelated sounds add: the alert is remixed at a new SNR, a second alert or
another clip's background may be added, and the overall level changes (an exact shift of log features). A share
of windows uses the exact mixture features with only a level change, so the network also sees true mixtures.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import soundfile as sf

import features as feature_lib
from corpus_format import Corpus


@dataclass(frozen=True)
class Geometry:
    frames: int
    step: int
    hop: int
    n_fft: int
    sample_rate: int
    # Copies of a stream's first frame that stand in for the audio before it (context key start_padding), so
    # the first decision comes after frames - start_padding real frames instead of a whole window.
    start_padding: int = 0

    @classmethod
    def of(cls, spec: dict, frames: int, step: int, start_padding: int = 0) -> "Geometry":
        return cls(frames, step, spec["hop_length"], spec["n_fft"], spec["sample_rate"], start_padding)

    @property
    def window_samples(self) -> int:
        return (self.frames - 1) * self.hop + self.n_fft

    def window_end(self, first_frame: int) -> float:
        """Time (s) of the end of the window starting at `first_frame`: when its decision can be made."""
        return (first_frame * self.hop + self.window_samples) / self.sample_rate

    def decisions(self, feature_frames: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """First frame of every window of a clip with `feature_frames` frames, and each window's centre and end
        time in seconds (the host's decision time and stream time). With start padding, first frames count
        from the first padding copy (index 0 of `pad_start(features)`); times stay those of the real audio."""
        starts = np.arange(0, max(0, feature_frames + self.start_padding - self.frames + 1), self.step)
        begin = (starts - self.start_padding) * self.hop
        end = begin + self.window_samples
        return starts, (begin + end) / 2 / self.sample_rate, end / self.sample_rate


@dataclass
class ClipFeatures:
    """Unnormalised log-Mel features (dB) of one clip's components, [frames, bins] float32."""
    name: str
    mixture: np.ndarray
    background: np.ndarray
    alert: np.ndarray | None
    events: list[tuple[float, float, int]]
    alert_snr_db: float | None
    negative: str | None = None  # kind of hard negative (music, whistling...) mixed into the background


def _component_features(job: tuple[str, str, dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    mix_path, alert_path, spec = job
    mix, _ = sf.read(mix_path, dtype="float32", always_2d=True)
    mix = mix.mean(axis=1)
    mix_f = feature_lib.compute(mix, spec)
    if not Path(alert_path).exists():
        return mix_f, mix_f, None
    alert, _ = sf.read(alert_path, dtype="float32", always_2d=True)
    alert = alert.mean(axis=1)
    return mix_f, feature_lib.compute(mix - alert, spec), feature_lib.compute(alert, spec)


def _cache_key(corpus: Corpus, spec: dict) -> str:
    h = hashlib.sha1()
    h.update(json.dumps(spec, sort_keys=True).encode())
    h.update(str(corpus.root.resolve()).encode())
    h.update((corpus.root / "files.tsv").read_bytes())
    h.update((corpus.root / "corpus.json").read_bytes())
    return h.hexdigest()[:16]


def load_features(corpus: Corpus, labels: list[str], spec: dict, workers: int = 2,
                  cache_dir: Path | None = None) -> list[ClipFeatures]:
    """Features of every clip's components, computed in parallel and cached in `cache_dir` (an .npz per corpus
    and spec) so a second run on the same corpus starts at once."""
    cache = cache_dir / f"features-{_cache_key(corpus, spec)}.npz" if cache_dir else None
    names = [f.filename for f in corpus.files]
    if cache is not None and cache.exists():
        with np.load(cache) as z:
            parts = [(z[f"m{i}"], z[f"b{i}"], z[f"a{i}"] if f"a{i}" in z else None) for i in range(len(names))]
    else:
        jobs = [(str(corpus.audio_path(n)), str(corpus.audio_path(n, "alerts")), spec) for n in names]
        with get_context("fork").Pool(workers) as pool:
            parts = pool.map(_component_features, jobs, chunksize=8)
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            arrays = {}
            for i, (m, b, a) in enumerate(parts):
                arrays[f"m{i}"], arrays[f"b{i}"] = m, b
                if a is not None:
                    arrays[f"a{i}"] = a
            np.savez(cache, **arrays)
    clips = []
    for name, (m, b, a) in zip(names, parts):
        events = [(e.onset, e.offset, labels.index(e.label)) for e in corpus.events_of(name) if e.label in labels]
        extras = corpus.file_extras(name)
        negative = (extras.get("negative") or {}).get("kind")
        clips.append(ClipFeatures(name, m, b, a, events, extras.get("alert_snr_db"), negative))
    return clips


def pad_start(features: np.ndarray, geometry: Geometry) -> np.ndarray:
    """`features` [frames, bins] behind `geometry.start_padding` copies of its first frame, as the host fills
    its context at the start of a stream."""
    if len(features) == 0:
        return features
    return _frames(features, -geometry.start_padding, len(features) + geometry.start_padding)


def _frames(feature: np.ndarray, first: int, count: int) -> np.ndarray:
    """Frames first..first+count of a clip's features; frames before the clip repeat its first frame."""
    if first >= 0:
        return feature[first:first + count]
    return np.concatenate([np.repeat(feature[:1], -first, axis=0), feature[:first + count]])


def window_targets(events: list[tuple[float, float, int]], end: float, n_labels: int, region: float) -> np.ndarray:
    target = np.zeros(n_labels, dtype=np.float32)
    for onset, offset, k in events:
        cover = min(offset, end) - max(onset, end - region)
        if cover > 0:
            target[k] = max(target[k], min(1.0, cover / min(region, offset - onset)))
    return target


def near_onset(events: list[tuple[float, float, int]], end: float, n_labels: int, span: float) -> np.ndarray:
    """1 for each label one of whose events began within the `span` seconds before `end` (a window ending in an
    alert's first moments, where an early, confident decision sets the onset latency), else 0."""
    near = np.zeros(n_labels, dtype=np.float32)
    for onset, _, k in events:
        if onset < end <= onset + span:
            near[k] = 1.0
    return near


def _shift_bands(feature: np.ndarray, k: int, floor: np.floating) -> np.ndarray:
    """Move a [frames, bands] log-Mel window `k` bands up (k > 0) or down, filling with the floor."""
    if k == 0:
        return feature
    out = np.full_like(feature, floor)
    if k > 0:
        out[:, k:] = feature[:, :-k]
    else:
        out[:, :k] = feature[:, -k:]
    return out


COLOUR_POINTS = 5  # control points of colour_curve, spread evenly from the lowest band to the highest


def colour_curve(bands: int, depth_db: float, rng: np.random.Generator) -> np.ndarray:
    """A smooth random frequency response as power gains per Mel band: straight lines in dB between
    COLOUR_POINTS evenly spaced points, each drawn uniformly within +-`depth_db`.

    A new device plays its tone through another loudspeaker and casing, which colours the spectrum the network
    learnt from a few dozen recordings. train.py's `spectral_tilt` colours whole windows (the listener's microphone
    and room: alert and background alike); this colours the alert alone, and a shift of bands (`_shift_bands`)
    moves its tone instead, drawn independently of it."""
    points = rng.uniform(-depth_db, depth_db, COLOUR_POINTS)
    curve_db = np.interp(np.arange(bands), np.linspace(0, bands - 1, COLOUR_POINTS), points)
    return np.power(np.float32(10.0), (curve_db / 10).astype(np.float32))


# s after an onset that count as an alert's first moments for near_onset (train.py --onset-weight): the latency
# target is 0.3 s, and a decision in this span decides whether the onset is announced in time.
ONSET_SPAN = 0.5
LEVEL_CHANGE_DB = (-15.0, 10.0)  # overall level change of a training window: quiet and loud rooms, near and far


class WindowSampler:
    """Class-balanced batches of augmented training windows (normalised features) with their targets."""

    def __init__(self, clips: list[ClipFeatures], geometry: Geometry, spec: dict, n_labels: int, region: float,
                 rng: np.random.Generator, positive_fraction: float = 0.6, exact_fraction: float = 0.35,
                 mix_fraction: float = 0.25, background_fraction: float = 0.2,
                 snr_range: tuple[float, float] = (-12.0, 15.0), hard_negative_fraction: float = 0.0,
                 real_clips: frozenset[int] = frozenset(), real_positive_fraction: float = 0.0,
                 alert_colour_db: float = 0.0):
        self.clips, self.geometry, self.n_labels, self.region, self.rng = clips, geometry, n_labels, region, rng
        # Windows of a background holding a hard negative (music, whistling, chirps, clicks, TV speech), with the
        # clip's alert left out: the sounds most false alarms come from, seen more often than the corpus mixes them.
        self.hard_negatives = [i for i, clip in enumerate(clips) if clip.negative is not None]
        self.hard_negative_fraction = hard_negative_fraction if self.hard_negatives else 0.0
        self.positive_fraction, self.exact_fraction = positive_fraction, exact_fraction
        self.mix_fraction, self.background_fraction, self.snr_range = mix_fraction, background_fraction, snr_range
        norm = spec["normalization"]
        self.mean = np.asarray(norm["mean"], dtype=np.float32)
        self.std = np.asarray(norm["std"], dtype=np.float32)
        self.base, self.multiplier = np.float32(spec["log_base"]), np.float32(spec["log_multiplier"])
        self.floor = self._feature(np.float32(spec["log_floor"]))
        self.by_label: list[list[tuple[int, float, float]]] = [[] for _ in range(n_labels)]
        for i, clip in enumerate(clips):
            for onset, offset, k in clip.events:
                self.by_label[k].append((i, onset, offset))
        self.present = [k for k in range(n_labels) if self.by_label[k]]
        # Events of real recordings (clips whose index is in `real_clips`), by label: a few dozen real alerts
        # beside thousands of synthetic ones would otherwise be a few per cent of the positive windows.
        self.real_by_label = [[event for event in events if event[0] in real_clips] for events in self.by_label]
        self.real_positive_fraction = real_positive_fraction
        self.alert_colour_db = alert_colour_db

    def _power(self, feature: np.ndarray, gain_db: float = 0.0) -> np.ndarray:
        """Mel power from log features (the spec's log base and multiplier), scaled by `gain_db`."""
        return np.power(self.base, feature / self.multiplier) * np.float32(10 ** (gain_db / 10))

    def _feature(self, power: np.ndarray) -> np.ndarray:
        return self.multiplier * np.log(np.maximum(power, np.float32(1e-30))) / np.log(self.base)

    def _start_for_end(self, i: int, end: float) -> int:
        g = self.geometry
        first = int(round((end * g.sample_rate - g.window_samples) / g.hop))
        return int(np.clip(first, -g.start_padding, len(self.clips[i].mixture) - g.frames))

    def _positive(self, label: int) -> tuple[int, int]:
        rng = self.rng
        events = self.by_label[label]
        if self.real_positive_fraction and self.real_by_label[label] and rng.random() < self.real_positive_fraction:
            events = self.real_by_label[label]
        i, onset, offset = events[int(rng.integers(len(events)))]
        if rng.random() < 0.5:  # around the onset, where latency and onset accuracy are decided
            end = rng.uniform(onset - 0.2, onset + 0.8)
        else:
            end = rng.uniform(onset, offset + 0.6)
        return i, self._start_for_end(i, end)

    def _random(self) -> tuple[int, int]:
        i = int(self.rng.integers(len(self.clips)))
        return i, int(self.rng.integers(-self.geometry.start_padding,
                                        len(self.clips[i].mixture) - self.geometry.frames + 1))

    def _targets(self, i: int, first: int) -> tuple[np.ndarray, np.ndarray]:
        """The window's targets and its near-onset flags (`near_onset` over ONSET_SPAN)."""
        events, end = self.clips[i].events, self.geometry.window_end(first)
        return (window_targets(events, end, self.n_labels, self.region),
                near_onset(events, end, self.n_labels, ONSET_SPAN))

    def _sample(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rng, t = self.rng, self.geometry.frames
        if self.hard_negative_fraction and rng.random() < self.hard_negative_fraction:
            return self._hard_negative()
        if self.present and rng.random() < self.positive_fraction:
            i, first = self._positive(int(rng.choice(self.present)))
        else:
            i, first = self._random()
        clip = self.clips[i]
        target, near = self._targets(i, first)
        level = float(rng.uniform(*LEVEL_CHANGE_DB))
        if clip.alert is None or rng.random() < self.exact_fraction:
            feature = self._feature(self._power(_frames(clip.mixture, first, t), level))
        else:
            alert_gain = 0.0
            if clip.alert_snr_db is not None and rng.random() < 0.7:
                alert_gain = rng.uniform(*self.snr_range) - clip.alert_snr_db
            alert = _frames(clip.alert, first, t)
            if rng.random() < 0.5:  # a few Mel bands up or down: roughly a pitch shift, new devices' tones
                alert = _shift_bands(alert, int(rng.integers(-3, 4)), self.floor)
            alert_power = self._power(alert, alert_gain)
            if self.alert_colour_db and rng.random() < 0.5:  # another device's loudspeaker and casing
                alert_power = alert_power * colour_curve(alert.shape[1], self.alert_colour_db, rng)
            power = self._power(_frames(clip.background, first, t)) + alert_power
            if self.present and rng.random() < self.mix_fraction:  # a second alert from another clip
                j, first2 = self._positive(int(rng.choice(self.present)))
                if self.clips[j].alert is not None:
                    power = power + self._power(_frames(self.clips[j].alert, first2, t), rng.uniform(-10, 3))
                    target2, near2 = self._targets(j, first2)
                    target, near = np.maximum(target, target2), np.maximum(near, near2)
            if rng.random() < self.background_fraction:  # another clip's background on top
                j, first2 = self._random()
                power = power + self._power(_frames(self.clips[j].background, first2, t), rng.uniform(-10, 0))
            feature = self._feature(power * np.float32(10 ** (level / 10)))
        return self._normalise(feature), target, near

    def _hard_negative(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rng, g = self.rng, self.geometry
        i = self.hard_negatives[int(rng.integers(len(self.hard_negatives)))]
        first = int(rng.integers(-g.start_padding, len(self.clips[i].background) - g.frames + 1))
        feature = self._feature(self._power(_frames(self.clips[i].background, first, g.frames),
                                            float(rng.uniform(*LEVEL_CHANGE_DB))))
        zeros = np.zeros(self.n_labels, dtype=np.float32)
        return self._normalise(feature), zeros, zeros.copy()

    def _normalise(self, feature: np.ndarray) -> np.ndarray:
        """Floor and per-band normalisation, then (sometimes) a SpecAugment frequency mask."""
        rng = self.rng
        feature = (np.maximum(feature, self.floor) - self.mean) / self.std
        if rng.random() < 0.3:  # frequency masking (SpecAugment): no single band may decide
            width = int(rng.integers(1, 8))
            low = int(rng.integers(0, feature.shape[1] - width))
            feature[:, low:low + width] = 0.0
        return feature

    def batch(self, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Windows [size, frames, bands], targets [size, labels] and near-onset flags [size, labels]."""
        xs, ys, nears = zip(*(self._sample() for _ in range(size)))
        return np.stack(xs).astype(np.float32), np.stack(ys), np.stack(nears)
