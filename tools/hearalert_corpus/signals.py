"""DSP building blocks shared by the alert, negative and noise synthesisers.

All signals are float32 mono at SAMPLE_RATE. Every random choice comes from the `rng` a caller passes, so a
clip is reproducible from its seed alone.
"""

from __future__ import annotations

import numpy as np
import soxr
from scipy import signal as sps

from . import SAMPLE_RATE

SR = SAMPLE_RATE
NYQUIST_GUARD = 0.48 * SR  # harmonics above this are dropped rather than aliased


def seconds(n: int) -> float:
    return n / SR


def samples(t: float) -> int:
    return int(round(t * SR))


def harmonic_tone(freq: np.ndarray, n_harmonics: int, rolloff: float, rng: np.random.Generator,
                  odd_only: bool = False, phase_jitter: bool = True) -> np.ndarray:
    """A periodic tone following the per-sample frequency track `freq` (Hz).

    Harmonic k has amplitude k^-rolloff; harmonics that would pass the Nyquist guard at any instant are muted
    there, so fast sweeps never alias.
    """
    phase = 2 * np.pi * np.cumsum(freq) / SR
    out = np.zeros(len(freq), dtype=np.float64)
    ks = range(1, 2 * n_harmonics, 2) if odd_only else range(1, n_harmonics + 1)
    for k in ks:
        mask = (k * freq) < NYQUIST_GUARD
        if not mask.any():
            break
        offset = rng.uniform(0, 2 * np.pi) if phase_jitter else 0.0
        out += mask * np.sin(k * phase + offset) / k ** rolloff
    peak = np.max(np.abs(out)) or 1.0
    return (out / peak).astype(np.float32)


def gate(n: int, segments: list[tuple[float, float]], ramp: float = 0.005) -> np.ndarray:
    """Amplitude gate that is 1 inside `segments` (seconds) with raised-cosine ramps of `ramp` seconds."""
    env = np.zeros(n, dtype=np.float32)
    for start, end in segments:
        a, b = max(0, samples(start)), min(n, samples(end))
        if b <= a:
            continue
        env[a:b] = 1.0
        k = min(max(1, samples(ramp)), (b - a) // 2)
        if k > 0:
            fade = 0.5 - 0.5 * np.cos(np.linspace(0, np.pi, k, dtype=np.float32))
            env[a:a + k] *= fade
            env[b - k:b] *= fade[::-1]
    return env


def struck(freq: float, ratios: np.ndarray, decays: np.ndarray, amps: np.ndarray, duration: float,
           rng: np.random.Generator) -> np.ndarray:
    """A struck resonator (bell, chime bar, gong): inharmonic partials `freq * ratios`, each decaying
    exponentially with its own time constant (seconds) from a sharp attack."""
    n = samples(duration)
    t = np.arange(n) / SR
    out = np.zeros(n, dtype=np.float64)
    for ratio, tau, amp in zip(ratios, decays, amps):
        f = freq * ratio
        if f >= NYQUIST_GUARD:
            continue
        out += amp * np.exp(-t / tau) * np.sin(2 * np.pi * f * t + rng.uniform(0, 2 * np.pi))
    attack = min(n, samples(0.002))
    out[:attack] *= np.linspace(0, 1, attack)
    return out.astype(np.float32)


def at_speed(x: np.ndarray, speed: float) -> np.ndarray:
    """`x` played `speed` times as fast: every frequency times `speed`, its length divided by it (soxr, HQ), as
    another device of the same kind would sound; float32."""
    if speed == 1.0:
        return x.astype(np.float32)
    return soxr.resample(x.astype(np.float32), SAMPLE_RATE * speed, SAMPLE_RATE, quality="HQ").astype(np.float32)


def place(dst: np.ndarray, src: np.ndarray, start: int) -> None:
    """Add `src` into `dst` at sample `start`, clipping at both ends."""
    a, b = max(0, start), min(len(dst), start + len(src))
    if b > a:
        dst[a:b] += src[a - start:b - start]


def lowpass(x: np.ndarray, cutoff: float, order: int = 4) -> np.ndarray:
    if cutoff >= NYQUIST_GUARD:
        return x
    sos = sps.butter(order, cutoff, btype="low", fs=SR, output="sos")
    return sps.sosfilt(sos, x).astype(np.float32)


def highpass(x: np.ndarray, cutoff: float, order: int = 4) -> np.ndarray:
    sos = sps.butter(order, cutoff, btype="high", fs=SR, output="sos")
    return sps.sosfilt(sos, x).astype(np.float32)


def bandpass(x: np.ndarray, low: float, high: float, order: int = 4) -> np.ndarray:
    high = min(high, NYQUIST_GUARD)
    sos = sps.butter(order, [low, high], btype="band", fs=SR, output="sos")
    return sps.sosfilt(sos, x).astype(np.float32)


def random_eq_gain(rng: np.random.Generator, n: int, bands: int = 3, max_gain_db: float = 9.0) -> np.ndarray:
    """Gains for `np.fft.rfft` of an `n`-sample signal: a random smooth colouring (loudspeaker, microphone,
    wall) made of a tilt and a few peaking bands. Drawn once, it can colour several components alike."""
    f = np.fft.rfftfreq(n, 1 / SR)
    logf = np.log2(np.maximum(f, 20.0) / 1000.0)
    gain_db = rng.uniform(-3, 3) * logf  # tilt in dB per octave
    for _ in range(bands):
        centre = rng.uniform(np.log2(0.1), np.log2(6.0))
        width = rng.uniform(0.3, 1.5)
        gain_db += rng.uniform(-max_gain_db, max_gain_db) * np.exp(-0.5 * ((logf - centre) / width) ** 2)
    return 10 ** (gain_db / 20)


def apply_gain_curve(x: np.ndarray, gain: np.ndarray) -> np.ndarray:
    return np.fft.irfft(np.fft.rfft(x) * gain, n=len(x)).astype(np.float32)


def random_eq(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return apply_gain_curve(x, random_eq_gain(rng, len(x)))


def active_power(x: np.ndarray, floor_db: float = -40.0, frame: int = 320) -> float:
    """Mean power over the 20 ms frames within `floor_db` of the loudest: the level of a sound while it sounds
    (a simplified active level in the spirit of ITU-T P.56), so pauses do not dilute an SNR."""
    m = len(x) // frame
    if m == 0:
        return float(np.mean(np.square(x, dtype=np.float64)) + 1e-20)
    e = np.square(x[: m * frame], dtype=np.float64).reshape(m, frame).mean(axis=1)
    return float(e[e >= e.max() * 10 ** (floor_db / 10)].mean() + 1e-20)


def doppler_pass(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A source passing the listener in a straight line: per-sample frequency factor and amplitude (1/r,
    peak 1). Speed 5–30 m/s, closest approach 4–40 m, closest point anywhere in the clip or just outside."""
    c = 343.0
    speed = rng.uniform(5, 30)
    closest = rng.uniform(4, 40)
    t = np.arange(n) / SR
    tc = rng.uniform(-0.2, 1.2) * t[-1]
    along = speed * (t - tc)
    r = np.sqrt(closest ** 2 + along ** 2)
    radial_speed = speed * along / r  # > 0 when receding
    factor = c / (c + radial_speed)
    amp = closest / r
    return factor.astype(np.float64), amp.astype(np.float32)


def distance_colour(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Far sources lose highs (air absorption, obstacles): a random gentle low-pass, sometimes none."""
    if rng.random() < 0.4:
        return x
    return lowpass(x, rng.uniform(2500, 7500), order=2)


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64)) + 1e-20))


def normalise(x: np.ndarray) -> np.ndarray:
    """Scale to unit RMS (silence stays silence)."""
    r = rms(x)
    return (x / r).astype(np.float32) if r > 1e-9 else x.astype(np.float32)
