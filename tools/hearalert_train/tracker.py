"""The event tracker, mirroring the Swift host's `EventTracker` (Sources/HearAlertKit/Detection/EventTracker.swift)
so thresholds and tracker settings tuned here mean the same thing there.

Per label: moving average over the last `smoothing_frames` decisions (scores and their times); hysteresis (on at
the threshold, off below threshold·off_ratio); a rise is announced once it has lasted `min_duration`; after the
score falls, the event ends if it does not return within `merge_gap`; after an event, its label may not start again
until `cooldown` seconds after the offset. With `onset_rise_ratio` an onset is stamped where the score's run at
or above ratio·threshold began (at most `onset_rise_lookback` s before the crossing, never inside a cooldown), which
places onsets of slowly rising scores near the sound's start without delaying the announcement. Decision times
are the centre of the model's input window, or, when `onset_lag` is set, the window's end minus `onset_lag` (for
onsets and offsets alike, as the host does); an event's `detected_at` is the stream time when it was announced (the
end of the window that confirmed it).
"""

from __future__ import annotations

import numbers
from dataclasses import asdict, dataclass

import numpy as np

#: Settings that are counts: a model's `tracker` metadata must write them as JSON integers (`3`, never `3.0` or
#: `true`, which json.loads makes a float and a bool), as the host's TrackerSettings requires.
INTEGER_SETTINGS = ("smoothing_frames",)


@dataclass(frozen=True)
class TrackerSettings:
    # Defaults are the host's fallback (TrackerSettings.fallback in Swift; tools/tests/test_tracker_onset_lag.py
    # holds them together), so a file exported with them behaves as one with no tracker metadata.
    smoothing_frames: int = 3
    off_ratio: float = 0.5
    min_duration: float = 0.1
    merge_gap: float = 1.0
    cooldown: float = 0.0
    onset_lag: float | None = None  # s from true onset to the end of the first firing window; None: window centre
    # Stamp an onset where the score first rose to this fraction of the threshold (within onset_rise_lookback s
    # before the crossing) instead of at the crossing; None: at the crossing.
    onset_rise_ratio: float | None = None
    # s: how far before a threshold crossing a rise may stamp the onset. The host's default when the file has no
    # value (TrackerSettings.defaultOnsetRiseLookback in Swift; tools/tests/test_tracker_onset_rise.py).
    onset_rise_lookback: float = 1.0

    def __post_init__(self):
        # TrackerSettings(**json.loads(model.metadata["tracker"])) is how a model's settings are read back, so the
        # host's rule is checked here: refusing 3.0 keeps both sides agreeing on which files are valid.
        for name in INTEGER_SETTINGS:
            value = getattr(self, name)
            if not isinstance(value, numbers.Integral) or isinstance(value, (bool, np.bool_)):
                raise ValueError(f"tracker setting '{name}' must be a JSON integer (like 3, not 3.0), got {value!r}")

    def as_metadata(self) -> dict:
        # The optional keys are left out when they do nothing, so such files read as before.
        unset = {"onset_lag": self.onset_lag is None, "onset_rise_ratio": self.onset_rise_ratio is None,
                 "onset_rise_lookback": self.onset_rise_ratio is None}
        return {k: v for k, v in asdict(self).items() if not unset.get(k, False)}


DEFAULT_RISE_LOOKBACK = TrackerSettings.onset_rise_lookback


@dataclass(frozen=True)
class Detection:
    label: str
    onset: float
    offset: float
    detected_at: float


def track(scores: np.ndarray, decision_times: np.ndarray, stream_times: np.ndarray, labels: list[str],
          thresholds: list[float], settings: TrackerSettings, end_time: float) -> list[Detection]:
    """Events from one file's decisions: `scores` [decisions, labels], times in seconds; events still open at
    the end close at `end_time` (the file's duration), as the host's `finish` does."""
    out: list[Detection] = []
    if settings.onset_lag is not None:
        decision_times = np.asarray(stream_times, dtype=np.float64) - settings.onset_lag
    # Nothing is stamped before the stream began (a start-padded first window, or a lag past the start).
    decision_times = np.maximum(np.asarray(decision_times, dtype=np.float64), 0.0)
    n, n_labels = scores.shape
    s = settings.smoothing_frames
    # Causal moving average over the last s decisions (fewer at the start), as the Swift ring does.
    csum = np.cumsum(np.vstack([np.zeros((1, n_labels)), scores.astype(np.float64)]), axis=0)
    tsum = np.cumsum(np.concatenate([[0.0], decision_times.astype(np.float64)]))
    idx = np.arange(n)
    lo = np.maximum(0, idx + 1 - s)
    count = (idx + 1 - lo)[:, None]
    smoothed = ((csum[idx + 1] - csum[lo]) / count).astype(np.float32)
    times = (tsum[idx + 1] - tsum[lo]) / count[:, 0]
    for k, label in enumerate(labels):
        on = np.float32(thresholds[k])
        off = np.float32(thresholds[k]) * np.float32(settings.off_ratio)
        low = None if settings.onset_rise_ratio is None else np.float32(thresholds[k]) * np.float32(
            settings.onset_rise_ratio)
        phase, onset, detected, offset = "idle", 0.0, 0.0, 0.0
        cooldown_until = -np.inf
        rise = None  # time of the first decision of the current run at or above `low`
        for i in range(n):
            score, t, now = smoothed[i, k], times[i], stream_times[i]
            if low is not None:
                rise = (t if rise is None else rise) if score >= low else None
            if phase == "idle":
                if score >= on and t >= cooldown_until:
                    onset = t if rise is None else max(rise, t - settings.onset_rise_lookback, cooldown_until)
                    crossing = t  # the minimum duration counts from the crossing, not the stamped onset
                    phase = "pending"
                    if t - crossing >= settings.min_duration:
                        phase, detected = "active", now
            elif phase == "pending":
                if score < off:
                    phase = "idle"
                elif t - crossing >= settings.min_duration:
                    phase, detected = "active", now
            elif phase == "active":
                if score < off:
                    phase, offset = "ending", t
            elif phase == "ending":
                if score >= on:
                    phase = "active"
                elif t - offset >= settings.merge_gap:
                    out.append(Detection(label, onset, offset, detected))
                    phase = "idle"
                    cooldown_until = offset + settings.cooldown
        if phase == "active":
            out.append(Detection(label, onset, max(onset, end_time), detected))
        elif phase == "ending":
            out.append(Detection(label, onset, offset, detected))
    return out
