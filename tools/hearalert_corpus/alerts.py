"""The six alert labels, synthesised with wide random variation so a model cannot memorise one waveform.

Each generator returns an `Alert`: the dry signal (peak-normalised) and the segments (seconds from its start)
during which it is actually sounding. The mixer turns segments into CORPUS.md events (gaps < 1 s merged).
Patterns follow the standards and devices they imitate: ISO 8201 / NFPA 72 temporal-three (T3) for smoke and
fire alarms, temporal-four (T4) for CO alarms, national telephone ring cadences (ITU-T E.180 supplement),
the wail / yelp / hi-lo / two-tone families of emergency-vehicle sirens.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import LABELS
from .signals import SR, distance_colour, doppler_pass, gate, harmonic_tone, place, samples, struck


@dataclass
class Alert:
    label: str
    kind: str
    samples: np.ndarray
    segments: list[tuple[float, float]] = field(default_factory=list)


def _finish(label: str, kind: str, x: np.ndarray, segments: list[tuple[float, float]],
            rng: np.random.Generator) -> Alert:
    x = distance_colour(x.astype(np.float32), rng)
    peak = float(np.max(np.abs(x))) or 1.0
    dur = len(x) / SR
    segs = [(max(0.0, a), min(dur, b)) for a, b in segments if min(dur, b) - max(0.0, a) > 0.02]
    return Alert(label, kind, (x / peak).astype(np.float32), segs)


def _pattern(cycle: list[float], duration: float, rng: np.random.Generator, jitter: float = 0.05,
             start_on: bool = True) -> list[tuple[float, float]]:
    """Repeat an on/off cadence (seconds, starting with "on") until `duration`; each interval jittered."""
    segs, t, i = [], 0.0, 0
    scale = rng.uniform(1 - jitter, 1 + jitter)
    while t < duration:
        length = cycle[i % len(cycle)] * scale
        if (i % 2 == 0) == start_on:
            segs.append((t, min(duration, t + length)))
        t += length
        i += 1
    return segs


def _timbre(rng: np.random.Generator, richness: tuple[int, int] = (1, 14)) -> dict:
    return {"n_harmonics": int(rng.integers(*richness)), "rolloff": float(rng.uniform(0.4, 2.2)),
            "odd_only": bool(rng.random() < 0.35)}


# --- siren -------------------------------------------------------------------------------------------------

def siren(rng: np.random.Generator, duration: float) -> Alert:
    n = samples(duration)
    t = np.arange(n) / SR
    kind = rng.choice(["wail", "yelp", "phaser", "hi_lo", "two_tone", "air_raid"],
                      p=[0.25, 0.2, 0.07, 0.18, 0.18, 0.12])
    # Real sirens sweep anything from a narrow 1.1:1 (645 -> 570 Hz heard down a street) to over 3:1.
    lo = rng.uniform(400, 900)
    hi = min(2000.0, lo * rng.uniform(1.12, 3.2))
    if kind in ("wail", "yelp", "phaser"):
        period = {"wail": rng.uniform(2.0, 7.0), "yelp": rng.uniform(0.15, 0.5), "phaser": rng.uniform(0.05, 0.12)}[kind]
        ph = (t / period + rng.uniform(0, 1)) % 1.0
        shape = rng.choice(["sine", "triangle", "rise"])
        if shape == "sine":
            u = 0.5 - 0.5 * np.cos(2 * np.pi * ph)
        elif shape == "triangle":
            u = 1 - np.abs(2 * ph - 1)
        else:  # slow rise, quick fall: mechanical-siren-like
            u = np.where(ph < 0.8, ph / 0.8, (1 - ph) / 0.2)
        freq = lo + (hi - lo) * u
    elif kind in ("hi_lo", "two_tone"):
        f1 = rng.uniform(380, 750)
        ratio = rng.uniform(1.28, 1.38) if kind == "two_tone" else rng.uniform(1.12, 1.6)
        half = rng.uniform(0.3, 1.0)
        high = ((t / half + rng.integers(0, 2)) % 2.0) >= 1.0
        glide = samples(rng.uniform(0.002, 0.04))
        step = np.where(high, f1 * ratio, f1)
        if glide > 1:
            step = np.convolve(step, np.ones(glide) / glide, mode="same")
            step[:glide] = step[glide]
        freq = step
    else:  # air raid: rotor siren spinning up, holding, spinning down; sometimes rising and falling again
        peak = rng.uniform(350, 800)
        up, down = rng.uniform(1.5, 4.0), rng.uniform(1.5, 4.0)
        env = np.clip(np.minimum(t / up, (duration - t) / down), 0, 1)
        if rng.random() < 0.5:
            env = env * (0.75 + 0.25 * np.cos(2 * np.pi * t / rng.uniform(3, 8)))
        freq = 80 + (peak - 80) * env
    freq = freq * (1 + 0.003 * rng.standard_normal() + 0.002 * np.sin(2 * np.pi * rng.uniform(3, 7) * t))
    amp = np.ones(n, dtype=np.float32)
    if rng.random() < 0.45:
        factor, amp = doppler_pass(n, rng)
        freq = freq * factor
    x = harmonic_tone(freq, **_timbre(rng, (1, 16)), rng=rng)
    if kind == "air_raid" and rng.random() < 0.5:  # multi-port rotors sound a chord
        x = x + 0.7 * harmonic_tone(freq * rng.uniform(1.18, 1.26), 6, 1.0, rng)
    if rng.random() < 0.3:
        x = np.tanh(rng.uniform(1.5, 5) * x)  # overdriven horn loudspeaker
    x = x * amp * gate(n, [(0, duration)], ramp=0.05)
    return _finish("siren", str(kind), x, [(0.0, duration)], rng)


# --- car horn ----------------------------------------------------------------------------------------------

def car_horn(rng: np.random.Generator, duration: float) -> Alert:
    kind = rng.choice(["taps", "blast", "mixed", "truck"], p=[0.35, 0.3, 0.2, 0.15])
    if kind == "taps":
        segs, t = [], 0.0
        for _ in range(int(rng.integers(1, 5))):
            length = rng.uniform(0.08, 0.35)
            segs.append((t, t + length))
            t += length + rng.uniform(0.07, 0.45)
    elif kind == "blast":
        segs = [(0.0, rng.uniform(0.5, 3.5))]
    else:
        segs, t = [], 0.0
        for _ in range(int(rng.integers(2, 5))):
            length = rng.uniform(0.12, 2.0)
            segs.append((t, t + length))
            t += length + rng.uniform(0.1, 0.6)
    end = min(duration, segs[-1][1])
    segs = [(a, min(b, duration)) for a, b in segs if a < duration]
    n = samples(end + 0.05)
    t = np.arange(n) / SR
    base = rng.uniform(150, 280) if kind == "truck" else rng.uniform(280, 540)
    n_tones = 3 if kind == "truck" and rng.random() < 0.6 else (2 if rng.random() < 0.65 else 1)
    # Dual horns are tuned from a beating near-unison (fire-engine air horns, 215/222 Hz) through a second
    # (463/521 Hz) to a major third or more; triple horns add roughly a fifth.
    ratios = [1.0, rng.uniform(1.03, 1.4), rng.uniform(1.45, 1.6)][:n_tones]
    factor = np.ones(n)
    amp = np.ones(n, dtype=np.float32)
    if rng.random() < 0.2:
        factor, amp = doppler_pass(n, rng)
    x = np.zeros(n, dtype=np.float32)
    for r in ratios:
        freq = base * r * factor * (1 + 0.004 * np.sin(2 * np.pi * rng.uniform(4, 12) * t))
        x += harmonic_tone(freq, int(rng.integers(8, 30)), rng.uniform(0.3, 1.3), rng)
    x = np.tanh(rng.uniform(1, 4) * x)
    x = x * amp * gate(n, segs, ramp=rng.uniform(0.004, 0.02))
    return _finish("car_horn", str(kind), x, segs, rng)


# --- smoke / fire / CO alarm -------------------------------------------------------------------------------

def smoke_alarm(rng: np.random.Generator, duration: float) -> Alert:
    kind = rng.choice(["t3_piezo", "t4_co", "t3_low_520", "fire_bell", "fire_horn", "continuous_piezo"],
                      p=[0.32, 0.16, 0.14, 0.14, 0.14, 0.10])
    n = samples(duration)
    t = np.arange(n) / SR
    t3 = [0.5, 0.5, 0.5, 0.5, 0.5, 1.5]
    if kind == "t3_piezo" or kind == "continuous_piezo":
        f = rng.uniform(2700, 3700)
        warble = rng.uniform(0, 120) * np.sin(2 * np.pi * rng.uniform(5, 40) * t) if rng.random() < 0.4 else 0
        x = harmonic_tone(np.full(n, f) + warble, int(rng.integers(1, 3)), rng.uniform(0.8, 2.0), rng)
        segs = _pattern(t3, duration, rng) if kind == "t3_piezo" else [(0.0, duration)]
    elif kind == "t4_co":
        f = rng.uniform(2700, 3700)
        x = harmonic_tone(np.full(n, f), int(rng.integers(1, 3)), 1.5, rng)
        on, off = rng.uniform(0.08, 0.12), rng.uniform(0.08, 0.12)
        segs = _pattern([on, off] * 3 + [on, rng.uniform(4.5, 5.5)], duration, rng, jitter=0.02)
    elif kind == "t3_low_520":  # low-frequency square wave alarm for sleepers and the hard of hearing
        f = rng.uniform(500, 540)
        x = harmonic_tone(np.full(n, f), 15, 1.0, rng, odd_only=True)
        segs = _pattern(t3, duration, rng)
    elif kind == "fire_bell":
        x = _bell_ringing(rng, n, f0=rng.uniform(500, 1500), strike_rate=rng.uniform(12, 25))
        segs = [(0.0, duration)]
    else:  # fire horn: harsh buzzy tone, T3 or continuous
        f = rng.uniform(300, 800)
        x = np.tanh(3 * harmonic_tone(np.full(n, f), 25, 0.6, rng))
        x = x * (1 + 0.5 * np.sign(np.sin(2 * np.pi * rng.uniform(60, 120) * t)))
        segs = _pattern(t3, duration, rng) if rng.random() < 0.6 else [(0.0, duration)]
    x = x * gate(n, segs, ramp=0.004)
    return _finish("smoke_alarm", str(kind), x, segs, rng)


def _bell_ringing(rng: np.random.Generator, n: int, f0: float, strike_rate: float,
                  two_bells: bool = False) -> np.ndarray:
    """A bell (or two) struck repeatedly by a clapper: the sound of fire bells, old alarm clocks and phones."""
    ratios = np.array([1.0, rng.uniform(2.3, 2.8), rng.uniform(3.8, 4.6), rng.uniform(5.2, 6.6)])
    amps = np.array([1.0, rng.uniform(0.3, 0.9), rng.uniform(0.2, 0.6), rng.uniform(0.1, 0.4)])
    decays = np.array([rng.uniform(0.15, 0.8), 0.2, 0.1, 0.06])
    strikes = [struck(f0, ratios, decays, amps, 1.0, rng)]
    if two_bells:
        strikes.append(struck(f0 * rng.uniform(1.05, 1.3), ratios, decays, amps, 1.0, rng))
    x = np.zeros(n + samples(1.0), dtype=np.float32)
    period = SR / strike_rate
    i, pos = 0, 0.0
    while pos < n:
        place(x, strikes[i % len(strikes)] * rng.uniform(0.7, 1.0), int(pos))
        pos += period * rng.uniform(0.9, 1.1)
        i += 1
    return x[:n]


# --- alarm clock -------------------------------------------------------------------------------------------

def alarm_clock(rng: np.random.Generator, duration: float) -> Alert:
    kind = rng.choice(["beep_groups", "beep_fast", "progressive", "bell_clock"], p=[0.4, 0.2, 0.15, 0.25])
    n = samples(duration)
    t = np.arange(n) / SR
    if kind == "bell_clock":
        x = _bell_ringing(rng, n, f0=rng.uniform(1200, 3000), strike_rate=rng.uniform(10, 30), two_bells=True)
        segs = [(0.0, duration)] if rng.random() < 0.6 else _pattern([rng.uniform(1, 3), rng.uniform(0.3, 0.9)],
                                                                        duration, rng)
    else:
        f = rng.uniform(1800, 4300) if rng.random() < 0.7 else rng.uniform(700, 1800)
        x = harmonic_tone(np.full(n, f), int(rng.integers(1, 8)), rng.uniform(0.8, 2.0), rng, odd_only=True)
        on, gap = rng.uniform(0.04, 0.16), rng.uniform(0.04, 0.15)
        if kind == "beep_fast":
            segs = _pattern([on, rng.uniform(0.1, 0.5)], duration, rng)
        else:
            segs, pos, count = [], 0.0, int(rng.integers(1, 6))
            while pos < duration:
                k = count if kind == "beep_groups" else min(8, 1 + len(segs) // 3)
                for _ in range(k):
                    segs.append((pos, min(duration, pos + on)))
                    pos += on + gap
                pos += rng.uniform(0.25, 0.9)
            segs = [(a, b) for a, b in segs if a < duration]
    x = x * gate(n, segs, ramp=0.003)
    return _finish("alarm_clock", str(kind), x, segs, rng)


# --- doorbell ----------------------------------------------------------------------------------------------

_BAR_RATIOS = np.array([1.0, 2.756, 5.404, 8.933])      # free-free bar (chime bar) modes
_TUBE_RATIOS = np.array([1.0, 2.0, 3.0, 4.2, 5.4])        # tubular bell, roughly
_WESTMINSTER = [[4, 0, 2, -5], [0, 4, 2, -5], [0, 2, 4, 0], [4, 0, 2, -5], [-5, 2, 4, 0]]  # semitones from C


def doorbell(rng: np.random.Generator, duration: float) -> Alert:
    kind = rng.choice(["ding_dong", "ding", "westminster", "electronic", "buzzer"], p=[0.4, 0.1, 0.15, 0.15, 0.2])
    if kind == "buzzer":
        segs, pos = [], 0.0
        for _ in range(int(rng.integers(1, 4))):
            length = rng.uniform(0.3, 2.5)
            segs.append((pos, pos + length))
            pos += length + rng.uniform(0.2, 1.5)
        end = min(duration, segs[-1][1])
        segs = [(a, min(b, duration)) for a, b in segs if a < duration]
        n = samples(end + 0.02)
        t = np.arange(n) / SR
        f = rng.uniform(80, 300)
        x = np.tanh(4 * harmonic_tone(np.full(n, f), 40, 0.5, rng)) + 0.2 * rng.standard_normal(n) * (
            np.sin(2 * np.pi * f * t) > 0.6)
        x = x * gate(n, segs, ramp=0.005)
        return _finish("doorbell", str(kind), x, segs, rng)
    if kind == "westminster":
        notes = [s for phrase in _WESTMINSTER[: int(rng.integers(1, 3))] for s in phrase]
        base, step = rng.uniform(350, 700), rng.uniform(0.45, 0.8)
    elif kind == "ding_dong":
        notes = [0, -int(rng.choice([3, 4, 5, 7]))] * int(rng.choice([1, 1, 1, 2]))
        base, step = rng.uniform(500, 1200), rng.uniform(0.35, 0.9)
    elif kind == "ding":
        notes = [0] * int(rng.integers(1, 3))
        base, step = rng.uniform(500, 1500), rng.uniform(0.6, 1.2)
    else:  # electronic melody doorbell
        scale = [0, 2, 4, 5, 7, 9, 11, 12]
        notes = [int(rng.choice(scale)) for _ in range(int(rng.integers(3, 9)))]
        base, step = rng.uniform(400, 1200), rng.uniform(0.15, 0.4)
    ratios = _TUBE_RATIOS if kind == "westminster" and rng.random() < 0.5 else _BAR_RATIOS
    ratios = ratios * rng.uniform(0.97, 1.03, size=len(ratios))
    tau = rng.uniform(0.3, 1.6) if kind != "electronic" else rng.uniform(0.08, 0.3)
    decays = tau / np.arange(1, len(ratios) + 1) ** rng.uniform(0.8, 1.6)
    amps = rng.uniform(0.1, 0.7, size=len(ratios))
    amps[0] = 1.0
    tail = min(3.0, 3.45 * tau)  # time to fall 30 dB: when the chime stops "sounding"
    n = samples(min(duration, step * (len(notes) - 1) + tail + 0.05))
    x = np.zeros(n, dtype=np.float32)
    segs = []
    for i, semitone in enumerate(notes):
        start = i * step
        if start >= n / SR:
            break
        f = base * 2 ** (semitone / 12)
        if kind == "electronic":  # square-ish beeper: odd harmonics
            note = struck(f, np.array([1.0, 3.0, 5.0]), decays[:3], np.array([1.0, 0.3, 0.15]), tail + 0.05, rng)
        else:
            note = struck(f, ratios, decays, amps, tail + 0.05, rng)
        place(x, note * rng.uniform(0.8, 1.0), samples(start))
        segs.append((start, start + tail))
    return _finish("doorbell", str(kind), x, segs, rng)


# --- phone ring --------------------------------------------------------------------------------------------

_CADENCES = {
    "uk": [0.4, 0.2, 0.4, 2.0],
    "us": [2.0, 4.0],
    "eu": [1.0, 4.0],
    "fr": [1.5, 3.5],
    "jp": [1.0, 2.0],
    "it": [1.0, 4.0],
    "continuous": [60.0, 0.1],
}


def phone_ring(rng: np.random.Generator, duration: float) -> Alert:
    kind = rng.choice(["bell_ringer", "trill", "dual_tone", "ringtone"], p=[0.25, 0.25, 0.15, 0.35])
    n = samples(duration)
    t = np.arange(n) / SR
    if kind == "ringtone":  # melodic loop: repeated motif until answered
        scale = [0, 2, 4, 5, 7, 9, 11, 12, 14, 16] if rng.random() < 0.6 else [0, 2, 4, 7, 9, 12, 14, 16]
        motif = [int(rng.choice(scale)) for _ in range(int(rng.integers(3, 9)))]
        if rng.random() < 0.5:
            return _mallet_ringtone(rng, duration, motif)
        base, step = rng.uniform(400, 1300), rng.uniform(0.08, 0.25)
        pause = rng.uniform(0.0, 0.6)
        freq = np.zeros(n)
        segs, pos = [], 0.0
        while pos < duration:
            for s in motif:
                a, b = samples(pos), samples(min(duration, pos + step * 0.9))
                freq[a:b] = base * 2 ** (s / 12)
                segs.append((pos, min(duration, pos + step * 0.9)))
                pos += step
                if pos >= duration:
                    break
            pos += pause
        freq[freq == 0] = base
        x = harmonic_tone(freq, int(rng.integers(1, 10)), rng.uniform(0.6, 2.0), rng,
                          odd_only=bool(rng.random() < 0.5))
        x = x * gate(n, segs, ramp=0.004)
        merged = [(segs[0][0], segs[-1][1])]
        return _finish("phone_ring", str(kind), x, merged, rng)
    cadence = _CADENCES[str(rng.choice(list(_CADENCES)))]
    segs = _pattern(cadence, duration, rng, jitter=0.08)
    if kind == "bell_ringer":
        x = _bell_ringing(rng, n, f0=rng.uniform(700, 1800), strike_rate=rng.uniform(16, 25), two_bells=True)
    elif kind == "trill":
        f1 = rng.uniform(600, 1600)
        rate = rng.uniform(10, 25)
        high = (np.floor(t * rate * 2) % 2) == 1
        freq = np.where(high, f1 * rng.uniform(1.15, 1.5), f1)
        x = harmonic_tone(freq, int(rng.integers(1, 10)), rng.uniform(0.6, 2.0), rng, odd_only=True)
    else:  # classic dual tone (e.g. 400+450 Hz) with a 16–25 Hz ring modulation
        f1 = rng.uniform(350, 500)
        x = harmonic_tone(np.full(n, f1), 3, 1.5, rng) + harmonic_tone(np.full(n, f1 * rng.uniform(1.08, 1.2)), 3, 1.5, rng)
        x = x * (0.6 + 0.4 * np.sin(2 * np.pi * rng.uniform(16, 25) * t))
    x = x * gate(n, segs, ramp=0.01)
    return _finish("phone_ring", str(kind), x, segs, rng)


_MARIMBA_RATIOS = np.array([1.0, 3.9, 9.2])  # tuned marimba bar: second mode two octaves up, third near 10×


def _mallet_ringtone(rng: np.random.Generator, duration: float, motif: list[int]) -> Alert:
    """A smartphone ringtone played on a marimba, vibraphone or music box: struck notes that ring and decay,
    sometimes over a lower accompanying voice. Beeped tones alone teach that a melody of decaying notes is
    music, and real phones ring this way more often than not."""
    ratios = _MARIMBA_RATIOS if rng.random() < 0.6 else _BAR_RATIOS
    ratios = ratios * rng.uniform(0.98, 1.02, size=len(ratios))
    tau = rng.uniform(0.08, 0.6)
    decays = tau / np.arange(1, len(ratios) + 1) ** rng.uniform(1.0, 2.0)
    amps = np.concatenate([[1.0], rng.uniform(0.05, 0.5, size=len(ratios) - 1)])
    base, step = rng.uniform(250, 1700), rng.uniform(0.1, 0.4)
    pause = rng.uniform(0.0, 1.5)
    harmony = int(rng.choice([-3, -4, -5, -7, -12])) if rng.random() < 0.4 else None
    ring = min(1.5, 3.45 * tau)  # until it has fallen 30 dB
    n = samples(duration)
    x = np.zeros(n, dtype=np.float32)
    starts, pos = [], 0.0
    while pos < duration:
        for semitone in motif:
            note = struck(base * 2 ** (semitone / 12), ratios, decays, amps, ring, rng)
            if harmony is not None:
                note += 0.4 * struck(base * 2 ** ((semitone + harmony) / 12), ratios, decays, amps, ring, rng)
            place(x, note * rng.uniform(0.8, 1.0), samples(pos))
            starts.append(pos)
            pos += step
            if pos >= duration:
                break
        pos += pause
    x = x * gate(n, [(0.0, duration)], ramp=0.004)
    # Each note sounds until it has fallen 30 dB; the mixer joins notes less than 1 s apart into one event.
    return _finish("phone_ring", "ringtone_mallet", x, [(a, a + ring) for a in starts], rng)


GENERATORS = {
    "siren": siren,
    "car_horn": car_horn,
    "smoke_alarm": smoke_alarm,
    "alarm_clock": alarm_clock,
    "doorbell": doorbell,
    "phone_ring": phone_ring,
}
assert tuple(GENERATORS) == LABELS


def synthesise(label: str, rng: np.random.Generator, duration: float) -> Alert:
    """One random instance of `label`, at most `duration` seconds long."""
    return GENERATORS[label](rng, duration)
