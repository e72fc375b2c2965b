"""The learned noise estimate of the speech enhancer, in numpy: its framing, its input rows, its training targets
and a reference run of a weight file over a whole signal.

This is the research side of ``Sources/HearAlertKit/Enhancement/LearnedNoiseEstimator.swift``; both follow the
definition below (also in ``CSources/alertnet/FORMAT.md``, "Noise estimators"), so a file trained here behaves
the same in the host.

Per enhancer hop t (frame t holds the newest ``n_fft`` samples, windowed by the enhancer's low-delay analysis
window), from the periodogram P_t(k):

1. band energies E_t(b) = Σ_k M(b, k) P_t(k), M the Mel filterbank of the file's FeatureSpec;
2. a smoothed band power S_t = α S_{t−1} + (1 − α) E_t (S_0 = E_0), α = 0.8 per 10 ms carried to the hop
   (MCRA's αs, ``RecursiveSmoothing``);
3. its minimum over the last U blocks of V frames (the current, partial block included): minimum statistics;
4. MCRA's noise estimate (``NoisePowerTracker``, run on the same periodograms) pooled into the same bands;
5. the network's input, ``[K + 3, B]`` rows in the file's log (10·log10 max(x, 1e-10)): the last K
   band-energy frames (oldest first; before the stream's first frame, copies of it), then S_t, the minimum and
   MCRA's estimate — so the network refines the classical estimate rather than replacing it;
6. the network (run every ``step`` hops, its output held in between) gives per band the noise fraction
   r(b) ∈ (0, 1) of the smoothed power;
7. each band's noise power per bin, D_t(b) = r(b) S_t(b) / Σ_k M(b, k), interpolated linearly between the
   bands' centres (the filterbank's centre of mass, in bins; constant beyond the outer centres), is the noise
   estimate λ_t(k) that the gain rule takes: a smooth spectrum, free of the speech's harmonics (a share of each
   bin's own smoothed power would carry them, and cap the SNR at their peaks at 1/r).

Targets: the same smoothing of the band energies of the noise alone (N) and of the mixture (Y), computed with the
same framing from the separately known speech and noise; r* = clip(N / Y, 10⁻³, 1).
"""

from __future__ import annotations

import json

import numpy as np
from scipy.signal import lfilter

import features

TASK = "noise_estimation"
SAMPLE_RATE = 16000
N_FFT = 256          # the low-latency mode's 16 ms frame at 16 kHz
HOP = 64             # its 4 ms hop (and delay)
LOG_FLOOR = 1e-10
SMALLEST_POWER = 1e-12   # NoisePowerTracker.smallestPower: no estimate below it

# The band layout and log the file declares (FORMAT.md): 32 Mel bands over the whole spectrum, unit-peak triangles.
FEATURES = {
    "sample_rate": SAMPLE_RATE, "n_fft": N_FFT, "win_length": N_FFT, "hop_length": HOP, "window": "sqrt_hann",
    "kind": "log_mel", "n_mels": 32, "fmin": 0.0, "fmax": SAMPLE_RATE / 2, "mel_scale": "slaney",
    "mel_norm": "none", "power": 2.0, "log_base": 10.0, "log_multiplier": 10.0, "log_floor": LOG_FLOOR,
    "normalization": None,
}


def default_input(recent_frames: int = 8, block_frames: int = 32, blocks: int = 8) -> dict:
    """The ``noise_input`` metadata: how the rows besides the recent frames are made (FORMAT.md)."""
    return {"recent_frames": recent_frames, "smoothing": 0.8, "smoothing_hop_seconds": 0.010,
            "minimum_block_frames": block_frames, "minimum_blocks": blocks}


def analysis_window(n_fft: int = N_FFT, delay: int = HOP) -> np.ndarray:
    """Mauler & Martin's low-delay analysis window (``EnhancerFraming.lowDelayWindows``), float32 as the host
    stores it: √Hann rising over n_fft − delay samples, falling over delay."""
    rising = features.window("sqrt_hann", 2 * (n_fft - delay))[: n_fft - delay]
    falling = features.window("sqrt_hann", 2 * delay)[delay:]
    return np.concatenate([rising, falling]).astype(np.float32).astype(np.float64)


def periodograms(samples: np.ndarray) -> np.ndarray:
    """[frames, n_fft/2+1] |X|² of the enhancer's frames: frame i covers samples [i·hop, i·hop + n_fft), the
    first frame the enhancer feeds its noise estimate (it skips those still holding the zeros before a stream)."""
    samples = np.asarray(samples, dtype=np.float64)
    count = 0 if len(samples) < N_FFT else 1 + (len(samples) - N_FFT) // HOP
    if count == 0:
        return np.zeros((0, N_FFT // 2 + 1))
    frames = np.lib.stride_tricks.sliding_window_view(samples, N_FFT)[::HOP][:count]
    spectrum = np.fft.rfft(frames * analysis_window(), axis=-1)
    return spectrum.real ** 2 + spectrum.imag ** 2


def smoothing_factor(spec_input: dict, hop_seconds: float = HOP / SAMPLE_RATE) -> float:
    """α carried from its reference hop to ours (``RecursiveSmoothing.factor``)."""
    return float(spec_input["smoothing"] ** (hop_seconds / spec_input["smoothing_hop_seconds"]))


def smooth(values: np.ndarray, alpha: float) -> np.ndarray:
    """x̄_t = α x̄_{t−1} + (1 − α) x_t along axis 0, started at x̄_0 = x_0."""
    if len(values) == 0:
        return values.copy()
    return lfilter([1 - alpha], [1, -alpha], values, axis=0, zi=alpha * values[:1])[0]


def block_minimum(smoothed: np.ndarray, block_frames: int, blocks: int) -> np.ndarray:
    """Per frame, the minimum of ``smoothed`` over the current block (from its first frame to this one) and the
    ``blocks − 1`` complete blocks before it."""
    count, bands = smoothed.shape
    out = np.empty_like(smoothed)
    previous: list[np.ndarray] = []
    for start in range(0, count, block_frames):
        running = np.minimum.accumulate(smoothed[start:start + block_frames], axis=0)
        earlier = np.min(previous, axis=0) if previous else np.full(bands, np.inf)
        out[start:start + block_frames] = np.minimum(running, earlier)
        previous = (previous + [running[-1]])[-(blocks - 1):] if blocks > 1 else []
    return out


def decibels(values: np.ndarray) -> np.ndarray:
    return 10 * np.log10(np.maximum(values, LOG_FLOOR))


def band_rows(power: np.ndarray, spec_input: dict, filterbank: np.ndarray) -> dict[str, np.ndarray]:
    """The per-frame quantities the input rows are made of, in dB: ``energy``, ``smoothed``, ``minimum`` and
    ``mcra`` [frames, B]."""
    bands = filterbank.T.astype(np.float64)
    energy = power @ bands
    smoothed = smooth(energy, smoothing_factor(spec_input))
    minimum = block_minimum(smoothed, spec_input["minimum_block_frames"], spec_input["minimum_blocks"])
    return {"energy": decibels(energy), "smoothed": decibels(smoothed), "minimum": decibels(minimum),
            "mcra": decibels(mcra(power) @ bands)}


def windows(rows: dict[str, np.ndarray], recent_frames: int) -> np.ndarray:
    """[frames, K + 3, B]: each frame's network input (recent frames clamped to the first one)."""
    count = len(rows["energy"])
    index = np.clip(np.arange(count)[:, None] - np.arange(recent_frames - 1, -1, -1)[None, :], 0, None)
    return np.concatenate([rows["energy"][index], rows["smoothed"][:, None], rows["minimum"][:, None],
                           rows["mcra"][:, None]], axis=1)


def targets(speech: np.ndarray, noise: np.ndarray, spec_input: dict, filterbank: np.ndarray) -> np.ndarray:
    """[frames, B] r* = clip(N / Y, 1e-3, 1) from the smoothed band energies of noise alone and the mixture."""
    alpha = smoothing_factor(spec_input)
    noise_bands = smooth(periodograms(noise) @ filterbank.T.astype(np.float64), alpha)
    mixture_bands = smooth(periodograms(speech + noise) @ filterbank.T.astype(np.float64), alpha)
    return np.clip(noise_bands / np.maximum(mixture_bands, LOG_FLOOR), 1e-3, 1.0)


def band_centres(filterbank: np.ndarray) -> np.ndarray:
    """Each band's centre of mass, in bins."""
    bins = np.arange(filterbank.shape[1], dtype=np.float64)
    weights = filterbank.astype(np.float64)
    return (weights @ bins) / weights.sum(axis=1)


def interpolate(values: np.ndarray, centres: np.ndarray, bin_count: int) -> np.ndarray:
    """[frames, bins] per-band values interpolated from band centres to bins (np.interp: constant beyond the outer
    centres)."""
    bins = np.arange(bin_count, dtype=np.float64)
    return np.stack([np.interp(bins, centres, row) for row in np.atleast_2d(values)])


def read_input_metadata(model) -> dict:
    """The ``noise_input`` JSON of a loaded ``alertnet_ref.Model``; ValueError when the file is no noise estimator."""
    task = model.metadata.get("task", "alert_detection")
    if task != TASK:
        raise ValueError(f"the model's task is {task!r}, not {TASK!r}: it is not a noise estimator")
    return json.loads(model.metadata["noise_input"])


def reference_noise(samples: np.ndarray, model, run) -> np.ndarray:
    """λ_t(k) [frames, bins] for a whole signal, with ``run(window [K+3, B]) -> r [B]`` the network (e.g.
    ``alertnet_ref.run`` on ``model``); the oracle the host's estimator is held against."""
    spec_input = read_input_metadata(model)
    filterbank = features.mel_filterbank(model.features)
    power = periodograms(samples)
    inputs = windows(band_rows(power, spec_input, filterbank), spec_input["recent_frames"])
    step = model.step
    fractions = np.empty((len(power), filterbank.shape[0]))
    for frame in range(len(power)):
        fractions[frame] = run(inputs[frame]) if frame % step == 0 else fractions[frame - 1]
    weights = filterbank.astype(np.float64)
    smoothed = smooth(power @ weights.T, smoothing_factor(spec_input))
    density = fractions * smoothed / weights.sum(axis=1)
    noise = interpolate(density, band_centres(filterbank), power.shape[1])
    return np.maximum(noise, SMALLEST_POWER)


def mcra(power: np.ndarray, hop_seconds: float = HOP / SAMPLE_RATE) -> np.ndarray:
    """[frames, bins] the MCRA noise estimate of ``NoisePowerTracker`` (Sources/HearAlertKit/Enhancement), frame
    by frame from the first frame on: the same recursions, start-up, onset guard and DC/Nyquist deciders, in
    float64 (the host's float32 may flip a threshold decision now and then)."""
    frames, bins = power.shape
    def factor(alpha):
        return alpha ** (hop_seconds / 0.010)
    time_smoothing, presence_smoothing, noise_smoothing = factor(0.8), factor(0.2), factor(0.95)
    presence_ratio, onset_ratio = 5.0, 4.6 * 1.66
    window = max(1, int(np.floor(1.0 / hop_seconds + 0.5)))
    start_up = int(np.ceil(noise_smoothing / (1 - noise_smoothing)))
    decider = np.arange(bins)
    if bins >= 3:
        decider[0], decider[-1] = 1, bins - 2
    below = np.r_[min(1, bins - 1), np.arange(bins - 1)]
    above = np.r_[np.arange(1, bins), max(bins - 2, 0)]
    out = np.empty_like(power)
    seed = np.maximum(power[0], SMALLEST_POWER)
    smoothed, minimum, running, noise = seed.copy(), seed.copy(), seed.copy(), seed.copy()
    presence = np.zeros(bins)
    out[0] = noise
    since_start, in_window = 0, 0
    for t in range(1, frames):
        p = power[t]
        since_start = min(since_start + 1, start_up)
        start_factor = since_start / (since_start + 1) if since_start < start_up else 1.0
        power_smoothing = min(time_smoothing, start_factor)
        settling = start_factor < time_smoothing
        in_window = 0 if settling else in_window + 1
        restart = in_window >= window
        if restart:
            in_window = 0
        smoothed = power_smoothing * smoothed + (1 - power_smoothing) * (0.25 * p[below] + 0.5 * p + 0.25 * p[above])
        if settling:
            minimum, running = smoothed.copy(), smoothed.copy()
        elif restart:
            minimum, running = np.minimum(running, smoothed), smoothed.copy()
        else:
            minimum, running = np.minimum(minimum, smoothed), np.minimum(running, smoothed)
        presence = presence_smoothing * presence + (1 - presence_smoothing) * (smoothed > presence_ratio * minimum)
        noise_factor = np.minimum(noise_smoothing + (1 - noise_smoothing) * presence[decider], start_factor)
        update = np.maximum(noise_factor * noise + (1 - noise_factor) * p, SMALLEST_POWER)
        keep = (not settling) & (p[decider] > onset_ratio * minimum[decider])
        noise = np.where(keep, noise, update)
        out[t] = noise
    return out
