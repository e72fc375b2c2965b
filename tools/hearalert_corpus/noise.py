"""Background noise: coloured, multi-talker babble, traffic-like, appliance hum, and recordings (--noise-dir)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .signals import SR, bandpass, harmonic_tone, lowpass, normalise, random_eq
from .sources import load_audio, random_excerpt
from .speech import SpeechSource, speech_track


def power_law(rng: np.random.Generator, n: int, exponent: float) -> np.ndarray:
    """Gaussian noise with a 1/f^exponent power spectrum (white 0, pink 1, brown 2), flat below 20 Hz: float64,
    not normalised (callers scale it in their own precision)."""
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.maximum(np.fft.rfftfreq(n, 1 / SR), 20.0)
    return np.fft.irfft(spec / f ** (exponent / 2), n=n)


def coloured(rng: np.random.Generator, n: int) -> np.ndarray:
    """Power-law noise of a random exponent in 0…2.2 with a random EQ on top."""
    alpha = rng.uniform(0.0, 2.2)
    return random_eq(normalise(power_law(rng, n, alpha).astype(np.float32)), rng)


def babble(rng: np.random.Generator, n: int, speech: SpeechSource, workdir: str) -> np.ndarray:
    """A crowd: 3–8 simultaneous talkers, each talking most of the time."""
    x = np.zeros(n, dtype=np.float32)
    for _ in range(int(rng.integers(3, 9))):
        track, _ = speech_track(rng, n, speech, workdir, density=rng.uniform(0.7, 1.0))
        x += track * 10 ** (rng.uniform(-6, 0) / 20)
    return lowpass(normalise(x), rng.uniform(3000, 7000), order=2)


def traffic(rng: np.random.Generator, n: int) -> np.ndarray:
    """Road noise: low rumble, engine harmonics, and cars passing by (swelling band-limited noise)."""
    t = np.arange(n) / SR
    rumble = lowpass(rng.standard_normal(n).astype(np.float32), rng.uniform(150, 800), order=2)
    rumble = normalise(rumble) * (1 + 0.3 * np.sin(2 * np.pi * rng.uniform(0.05, 0.3) * t))
    x = rumble.astype(np.float32)
    engine_f = rng.uniform(25, 90) * (1 + 0.1 * np.sin(2 * np.pi * rng.uniform(0.05, 0.5) * t))
    x += 0.3 * harmonic_tone(engine_f, 12, 1.0, rng)
    for _ in range(int(rng.integers(0, 5))):
        centre, width = rng.uniform(0, n / SR), rng.uniform(0.8, 4.0)
        env = np.exp(-0.5 * ((t - centre) / (width / 2)) ** 2).astype(np.float32)
        hiss = bandpass(rng.standard_normal(n).astype(np.float32), rng.uniform(100, 400), rng.uniform(1500, 5000))
        x += rng.uniform(0.5, 2.0) * normalise(hiss) * env
    return normalise(x)


def hum(rng: np.random.Generator, n: int) -> np.ndarray:
    """Appliances and ventilation: mains hum with harmonics over broadband fan noise."""
    mains = float(rng.choice([50.0, 60.0]))
    tone = harmonic_tone(np.full(n, mains * rng.uniform(0.995, 1.005)), int(rng.integers(3, 12)),
                         rng.uniform(0.5, 1.5), rng)
    fan = lowpass(rng.standard_normal(n).astype(np.float32), rng.uniform(500, 4000), order=2)
    return normalise(normalise(tone) * rng.uniform(0.1, 1.0) + normalise(fan))


def background(rng: np.random.Generator, n: int, speech: SpeechSource, workdir: str,
               recordings: list[Path]) -> tuple[np.ndarray, list[str]]:
    """One or two noise types at random relative levels, normalised to unit RMS."""
    kinds = ["coloured", "babble", "traffic", "hum"] + (["recorded"] * 3 if recordings else [])
    chosen = list(rng.choice(kinds, size=int(rng.integers(1, 3)), replace=False))
    x = np.zeros(n, dtype=np.float32)
    names = []
    for kind in chosen:
        if kind == "coloured":
            part = coloured(rng, n)
        elif kind == "babble":
            part = babble(rng, n, speech, workdir)
        elif kind == "traffic":
            part = traffic(rng, n)
        elif kind == "hum":
            part = hum(rng, n)
        else:
            path = recordings[int(rng.integers(len(recordings)))]
            part = normalise(random_excerpt(load_audio(path), n, rng))
            kind = f"recorded:{path.name}"
        x += part * 10 ** (rng.uniform(-10, 0) / 20)
        names.append(str(kind))
    return normalise(x), names
