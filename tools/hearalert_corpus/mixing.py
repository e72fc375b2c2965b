"""One corpus clip: speech and noise at a speech SNR, alerts at an alert SNR, hard negatives, a room.

Level definitions (recorded per file in corpus.json, see tools/README.md):
  speech_snr_db = 10·log10(active power of the speech / mean power of the noise)
  alert_snr_db  = 10·log10(active power of each alert / mean power of the background), where the background is
                  everything that is not an alert (speech, noise, hard negatives) and "active power" is the mean
                  power over the 20 ms frames within 40 dB of the loudest (signals.active_power).
Both are measured at the microphone, after the room.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.signal import fftconvolve

from . import LABELS
from .alerts import Alert, synthesise
from .negatives import hard_negative
from .noise import background
from .rooms import SOURCES_PER_ROOM, Room
from .signals import SR, active_power, apply_gain_curve, at_speed, random_eq_gain, rms, samples
from .sources import active_segments, load_audio, random_excerpt
from .speech import SpeechSource, speech_track

EVENT_GAP = 1.0  # CORPUS.md: gaps shorter than 1 s inside one alert belong to the same event


@dataclass
class MixSettings:
    clip_seconds: float = 10.0
    alert_free_fraction: float = 0.25
    two_alert_fraction: float = 0.3
    speech_fraction: float = 0.8
    negative_fraction: float = 0.35
    room_fraction: float = 0.75
    real_alert_fraction: float = 0.5
    speech_snr_db: tuple[float, float] = (-5.0, 20.0)
    alert_snr_db: tuple[float, float] = (-10.0, 15.0)
    level_dbfs: tuple[float, float] = (-42.0, -18.0)


@dataclass
class Sources:
    """Everything one split draws from."""
    speech: SpeechSource
    rooms: list[Room]
    noise_recordings: list[Path] = field(default_factory=list)
    alert_recordings: dict[str, list[Path]] = field(default_factory=dict)


@dataclass
class Clip:
    mixture: np.ndarray
    clean: np.ndarray
    alerts: np.ndarray
    events: list[tuple[float, float, str]]
    info: dict


def merge_segments(segments: list[tuple[float, float]], gap: float = EVENT_GAP) -> list[tuple[float, float]]:
    """Sounding segments → events: sort, then join neighbours separated by less than `gap` seconds."""
    merged: list[list[float]] = []
    for a, b in sorted(segments):
        if merged and a - merged[-1][1] < gap:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]


def _real_alert(label: str, paths: list[Path], rng: np.random.Generator, duration: float) -> Alert:
    path = paths[int(rng.integers(len(paths)))]
    x = load_audio(path)
    # A few recordings per label are reused many times: play each a little faster or slower (pitch and cadence
    # together, ±10 %, as another device of the same kind would sound) so no copy is exactly the recording.
    x = at_speed(x, float(rng.uniform(0.9, 1.1)))
    x = random_excerpt(x, min(len(x), samples(duration)), rng)
    x = x / (np.max(np.abs(x)) + 1e-9)
    return Alert(label, f"recorded:{path.name}", x.astype(np.float32), active_segments(x))


def make_clip(rng: np.random.Generator, settings: MixSettings, sources: Sources, workdir: str) -> Clip:
    n = samples(settings.clip_seconds)
    room = sources.rooms[int(rng.integers(len(sources.rooms)))] if sources.rooms and \
        rng.random() < settings.room_fraction else None
    slots = rng.permutation(SOURCES_PER_ROOM)
    mic_eq = random_eq_gain(rng, n, max_gain_db=6.0) if rng.random() < 0.5 else None

    def at_mic(x: np.ndarray, slot: int) -> np.ndarray:
        if room is not None:
            x = fftconvolve(x, room.rirs[slots[slot]])[:n].astype(np.float32)
        return apply_gain_curve(x, mic_eq) if mic_eq is not None else x

    info: dict = {"room": room.describe() if room is not None else None}

    speech = np.zeros(n, dtype=np.float32)
    info["speech_snr_db"] = None
    if rng.random() < settings.speech_fraction:
        track, voices = speech_track(rng, n, sources.speech, workdir)
        speech = at_mic(track, 0)
        info["voices"] = voices[:4]
    noise, info["noise"] = background(rng, n, sources.speech, workdir, sources.noise_recordings)
    if rng.random() < 0.5:
        noise = at_mic(noise, 2)
    elif mic_eq is not None:
        noise = apply_gain_curve(noise, mic_eq)
    if speech.any():
        snr = float(rng.uniform(*settings.speech_snr_db))
        noise = noise / rms(noise) * np.sqrt(active_power(speech)) / 10 ** (snr / 20)
        info["speech_snr_db"] = round(snr, 2)
    else:
        noise = noise / rms(noise) * 0.1
    bg = speech + noise

    info["negative"] = None
    if rng.random() < settings.negative_fraction:
        length = samples(rng.uniform(2.0, settings.clip_seconds))
        neg, kind = hard_negative(rng, length, sources.speech, workdir)
        placed = np.zeros(n, dtype=np.float32)
        start = int(rng.integers(0, n - length + 1))
        placed[start:start + length] = neg
        placed = at_mic(placed, 3)
        level_db = float(rng.uniform(-5, 10))
        placed *= np.sqrt(active_power(bg) / active_power(placed)) * 10 ** (level_db / 20)
        bg = bg + placed
        info["negative"] = {"kind": kind, "level_db": round(level_db, 2)}

    alert_mix = np.zeros(n, dtype=np.float32)
    events: list[tuple[float, float, str]] = []
    info["alert_snr_db"] = None
    info["alerts"] = []
    if rng.random() >= settings.alert_free_fraction:
        count = 2 if rng.random() < settings.two_alert_fraction else 1
        labels = rng.choice(LABELS, size=count, replace=False)
        snr = float(rng.uniform(*settings.alert_snr_db))
        bg_power = float(np.mean(np.square(bg, dtype=np.float64)))
        for i, label in enumerate(labels):
            label = str(label)
            duration = float(rng.uniform(1.0, min(9.0, settings.clip_seconds)))
            recorded = sources.alert_recordings.get(label, [])
            if recorded and rng.random() < settings.real_alert_fraction:
                alert = _real_alert(label, recorded, rng, duration)
            else:
                alert = synthesise(label, rng, duration)
            length = len(alert.samples) / SR
            if rng.random() < 0.85:
                start = rng.uniform(0, max(0.0, settings.clip_seconds - length))
            else:  # cut by the clip's start or end, as in continuous listening
                start = rng.uniform(-0.5 * length, settings.clip_seconds - 0.5 * length)
            placed = np.zeros(n, dtype=np.float32)
            a = samples(start)
            src = alert.samples[max(0, -a):max(0, min(len(alert.samples), n - a))]
            placed[max(0, a):max(0, a) + len(src)] = src
            segs = [(max(0.0, s + start), min(settings.clip_seconds, e + start)) for s, e in alert.segments]
            segs = [(s, e) for s, e in segs if e - s >= 0.03]
            if not segs or not placed.any():
                continue
            placed = at_mic(placed, 1 if i == 0 else 4)
            placed *= np.sqrt(bg_power / active_power(placed)) * 10 ** (snr / 20)
            alert_mix += placed
            events += [(round(s, 3), round(e, 3), label) for s, e in merge_segments(segs)]
            info["alerts"].append({"label": label, "kind": alert.kind, "start_s": round(start, 3)})
        if info["alerts"]:
            info["alert_snr_db"] = round(snr, 2)

    mixture = bg + alert_mix
    level = float(rng.uniform(*settings.level_dbfs))
    gain = 10 ** (level / 20) / rms(mixture)
    peak = float(np.max(np.abs(mixture))) * gain
    if peak > 0.98:
        gain *= 0.98 / peak
    info["level_dbfs"] = round(20 * np.log10(rms(mixture) * gain), 2)
    events.sort(key=lambda e: (e[0], e[2]))
    return Clip((mixture * gain).astype(np.float32), (speech * gain).astype(np.float32),
                (alert_mix * gain).astype(np.float32), events, info)
