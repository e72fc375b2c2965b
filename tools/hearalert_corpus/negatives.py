"""Hard negatives: sounds that share an alert's tonality or rhythm but are not alerts.

Music (chords, struck keys, drums), whistling, bird-like chirps, clicks (typing, ticking) and TV-like speech
(band-limited, compressed, over a music bed). A detector that fires on these would ring all day.
"""

from __future__ import annotations

import numpy as np

from .signals import SR, bandpass, harmonic_tone, highpass, normalise, place, samples, struck
from .speech import SpeechSource, speech_track

_MAJOR = [0, 2, 4, 5, 7, 9, 11]


def music(rng: np.random.Generator, n: int) -> np.ndarray:
    beat = 60.0 / rng.uniform(60, 170)
    root = rng.uniform(110, 260)
    x = np.zeros(n + SR, dtype=np.float32)
    t_end = n / SR
    instrument = rng.choice(["keys", "pad", "pluck"])
    pos, bar = 0.0, 0
    while pos < t_end:
        degree = int(rng.choice([0, 3, 4, 5]))
        chord = [_MAJOR[(degree + k) % 7] + 12 * ((degree + k) // 7) for k in (0, 2, 4)]
        length = beat * int(rng.choice([2, 4]))
        for semitone in chord:
            f = root * 2 ** (semitone / 12)
            if instrument == "pad":
                tone = harmonic_tone(np.full(samples(length), f * rng.uniform(0.998, 1.002)), 8, 1.2, rng)
                tone *= np.hanning(len(tone)).astype(np.float32)
            else:
                tau = rng.uniform(0.3, 1.0) if instrument == "keys" else rng.uniform(0.08, 0.25)
                tone = struck(f, np.arange(1, 7, dtype=float), tau / np.arange(1, 7), 1 / np.arange(1, 7) ** 1.2,
                              length, rng)
            place(x, 0.3 * tone, samples(pos))
        for b in range(int(round(length / beat))):  # melody note and drums on each beat
            s = samples(pos + b * beat)
            mel = root * 2 * 2 ** (_MAJOR[int(rng.integers(7))] / 12)
            place(x, 0.25 * struck(mel, np.array([1.0, 2.0, 3.0]), np.array([0.3, 0.15, 0.1]),
                                   np.array([1.0, 0.4, 0.2]), beat, rng), s)
            kick = np.sin(2 * np.pi * np.cumsum(np.linspace(120, 45, samples(0.15))) / SR)
            place(x, 0.6 * kick * np.exp(-np.arange(samples(0.15)) / (0.04 * SR)), s)
            if rng.random() < 0.7:
                hat = highpass(rng.standard_normal(samples(0.05)).astype(np.float32), 6000, order=2)
                place(x, 0.15 * hat * np.exp(-np.arange(len(hat)) / (0.01 * SR)), s + samples(beat / 2))
        pos += length
        bar += 1
    return normalise(x[:n])


def whistling(rng: np.random.Generator, n: int) -> np.ndarray:
    """A person whistling a tune: gliding notes with vibrato and breath noise."""
    notes = []
    pos = 0
    while pos < n:
        length = samples(rng.uniform(0.15, 0.8))
        notes.append(np.full(length, rng.uniform(700, 2600)))
        pos += length
    track = np.concatenate(notes)[:n]
    glide = samples(0.04)
    track = np.convolve(track, np.ones(glide) / glide, mode="same")
    track[:glide], track[-glide:] = track[glide], track[-glide - 1]
    t = np.arange(n) / SR
    track *= 1 + 0.01 * np.sin(2 * np.pi * rng.uniform(4, 7) * t)
    tone = harmonic_tone(track, 2, 3.0, rng)
    breath = bandpass(rng.standard_normal(n).astype(np.float32), 800, 4000)
    phrase = (np.sin(2 * np.pi * t / rng.uniform(1.5, 4)) > -0.4).astype(np.float32)
    phrase = np.convolve(phrase, np.ones(samples(0.03)) / samples(0.03), mode="same").astype(np.float32)
    return normalise((tone + 0.05 * normalise(breath)) * phrase)


def chirps(rng: np.random.Generator, n: int) -> np.ndarray:
    """Bird-like song: bursts of fast frequency sweeps between 2 and 7 kHz."""
    x = np.zeros(n + SR, dtype=np.float32)
    pos = samples(rng.uniform(0, 0.5))
    while pos < n:
        for _ in range(int(rng.integers(1, 8))):
            length = samples(rng.uniform(0.03, 0.15))
            f0, f1 = rng.uniform(2000, 7000, size=2)
            freq = np.linspace(f0, f1, length) * (1 + 0.05 * np.sin(np.linspace(0, rng.uniform(2, 20), length)))
            chirp = harmonic_tone(freq, 2, 2.0, rng) * np.hanning(length).astype(np.float32)
            place(x, chirp, pos)
            pos += length + samples(rng.uniform(0.02, 0.12))
        pos += samples(rng.uniform(0.3, 2.5))
    return normalise(x[:n])


def clicks(rng: np.random.Generator, n: int) -> np.ndarray:
    """Typing, a ticking clock, dishes: short broadband or resonant transients."""
    x = np.zeros(n + SR, dtype=np.float32)
    regular = rng.random() < 0.4
    period = rng.uniform(0.1, 1.0)
    pos = 0.0
    while pos < n / SR:
        length = samples(rng.uniform(0.003, 0.03))
        click = rng.standard_normal(length).astype(np.float32) * np.exp(-np.arange(length) / (0.2 * length))
        if rng.random() < 0.3:  # dish or glass clink: a short resonant ring
            click = struck(rng.uniform(1500, 6000), np.array([1.0, 2.3, 3.9]), np.array([0.05, 0.03, 0.02]),
                           np.array([1.0, 0.5, 0.3]), 0.15, rng)
        place(x, click * rng.uniform(0.3, 1.0), samples(pos))
        pos += period * rng.uniform(0.95, 1.05) if regular else rng.exponential(0.18)
    return normalise(x[:n])


def tv_speech(rng: np.random.Generator, n: int, speech: SpeechSource, workdir: str) -> np.ndarray:
    """Speech from a small loudspeaker: band-limited, compressed, sometimes over a music bed."""
    voice, _ = speech_track(rng, n, speech, workdir, density=rng.uniform(0.6, 1.0))
    voice = bandpass(voice, rng.uniform(150, 400), rng.uniform(3000, 6000))
    voice = np.tanh(rng.uniform(1, 4) * normalise(voice)) if rng.random() < 0.6 else normalise(voice)
    if rng.random() < 0.5:
        voice = normalise(voice) + 10 ** (rng.uniform(-20, -6) / 20) * music(rng, n)
    return normalise(voice)


KINDS = ("music", "whistling", "chirps", "clicks", "tv_speech")


def hard_negative(rng: np.random.Generator, n: int, speech: SpeechSource, workdir: str) -> tuple[np.ndarray, str]:
    """One random hard negative, `n` samples long (unit RMS over its active part)."""
    kind = str(rng.choice(KINDS))
    if kind == "music":
        x = music(rng, n)
    elif kind == "whistling":
        x = whistling(rng, n)
    elif kind == "chirps":
        x = chirps(rng, n)
    elif kind == "clicks":
        x = clicks(rng, n)
    else:
        x = tv_speech(rng, n, speech, workdir)
    return x, kind
