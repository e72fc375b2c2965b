#!/usr/bin/env python3
"""Train a small causal recurrent network that gives the speech enhancer's per-band gains, on real speech in real
noise (issue 20: a learned gain inside the enhancer's low-latency signal path).

What it computes, per 4 ms enhancer hop t (the framing of tools/band_gain_study.py, which is the host's low-latency
path in numpy): from the periodogram of the hop's 16 ms low-delay frame, the 32 Mel band energies E_t(b) of the
learned noise estimate's layout (tools/noise_estimator.py, FEATURES), and from them the input rows, in dB
(10·log10 max(x, 1e-10)) but for voicing, chosen by --rows from

  energy    E_t                          the band energies;
  delta     dB(E_t) − dB(E_{t−1})        their first difference (0 at the first hop);
  smoothed  S_t = α S_{t−1} + (1 − α) E_t, α = 0.8 per 10 ms (MCRA's αs), S_0 = E_0;
  minimum   the minimum of S over the current and the 7 earlier blocks of 32 hops (about a second);
  mcra      the host's MCRA noise estimate (NoisePowerTracker, none before the first whole frame) pooled into
            the bands;
  mcra_gain what today's path (MCRA and the decision-directed gain rule, SuppressionGainRule, default strength)
            does to the band's energy, Σ_k M(b, k) G(k)² P(k) / Σ_k M(b, k) P(k);
  posterior, above_minimum   energy − mcra and energy − minimum (dB): level-free;
  voicing   a periodicity measure per band, −1…1 (not dB), RNNoise's pitch correlation without its lookahead:
            the pitch lag L of the hop is the lag in 40…256 samples (2.5…16 ms, 62…400 Hz) with the highest
            normalised autocorrelation Σ x(n)x(n−L) / √(Σ x(n)² · Σ x(n−L)²) of the last 512 input samples
            (32 ms, both sums over the pairs inside them); the row is, per band, the normalised cross-spectrum
            of the hop's frame X with the same frame L samples earlier, P (the analysis window on both),
            Σ_k M(b, k) Re X(k)P*(k) / √(Σ_k M(b, k)|X(k)|² · Σ_k M(b, k)|P(k)|²) — near 1 where the band holds
            a harmonic of a steady pitch, near 0 in noise. Past and present samples only. Cost per hop: a
            1024-point real FFT and its inverse for the autocorrelation (cumulative sums for its energies, 217
            lags compared), one more 256-point FFT of the delayed frame, and the 32 band sums: about 0.06 MFLOP,
            twice the two GRUs of 24 (a decimation by 2 for the search, as RNNoise does, would halve it) —

each a causal recursion over past and present hops that the host runs already (MCRA, the gain rule) or that the
learned noise estimate runs (the smoothed power and its minimum), or, voicing, a function of the last 32 ms of
input. The network, one step per hop: GRU (rows × 32
→ H), further GRUs (H → H), dense (H → 32), sigmoid, the gain g_t(b) ∈ (0, 1) of each band, which
``band_gain_study.apply_band_gains`` interpolates to bins between the bands' centres and floors at the enhancer's
Gmin (−21 dB at the default strength). With --anchor mcra the sigmoid's outputs s(b) are instead corrections of
today's path: R·s(b) (R = --anchor-range), interpolated to bins, multiplies MCRA's own gain G(k) in every bin,
clipped at 1 (band_gain_study.correct_mcra_gains); the loss sees its band form min(1, √m(b)·R·s(b)), m the
mcra_gain row as an energy ratio. The dense layer starts at zero weights and bias logit(1/R), so training starts
from exactly today's path, and the starting weights are kept unless an epoch beats them on validation. The host
computes the product per hop after alertnet has run the network, from the gains it computed for that row. Only ops
the alertnet C core runs: ``gru`` (nn.GRU, one layer, one direction, state carried hop to hop, zero at the
stream's start), ``dense`` per frame and ``sigmoid``. The inputs are standardised with the training set's mean
and deviation per input, and that scaling is folded into the first GRU's input weights when the file is written,
so it takes the raw rows.

Target (RNNoise, Valin 2018): g*_t(b) = √(S/Y) of the speech's and the mixture's band energies in the same frame,
clipped to 1; bands with no energy in the mixture are left out. Losses (--loss; errors where the gain is too low,
speech removed, weighted --under-weight times):
  compressed  (default, c = --compression = 1) the squared error of the output's compressed band amplitudes
              against the speech's, Σ Y^c (g^c − g*^c)² / Σ Y^c per batch, Y the band energy over its sequence's
              mean: with c = 1 the error energy of the enhanced spectrum, which the SNR counts;
  rnnoise     RNNoise's, with d = √g − √g*: 10·d⁴ + d² + 0.01·BCE(g, g*), every band alike — measured, it turns
              clear speech down (Enhancement/EXPERIMENTS.md, 2026-11-26);
  snr         minus each sequence's SNR improvement in the band domain, in dB.
The defaults are the settings chosen on the validation mixtures (EXPERIMENTS.md, 2026-11-26: the anchored
network; --anchor none gives the earlier c10).

Data (tools/train_noise_estimator.py's catalogue and Mixer, imported): train-role speech reaching
--min-speech-bandwidth-hz (default 7 kHz) strung with pauses, in train-role real noise or babble, −5…20 dB SNR,
−45…−20 dBFS; whole sources held out for validation (--train-speech-sources moves named held-out speech
sources to training, for more training talkers, keeping at least three held out). Early stopping on the
validation loss; after training the enhancement itself is scored on validation mixtures (SNRi, segSNRi,
PESQ-WB Δ, STOI Δ beside MCRA, the oracle and any --compare network), the figures to choose settings by.
tools/band_gain_study.py ``score --band-gain-model`` scores a written network on a corpus folder.

Writes OUT (a PyTorch state dict of ``BandGainNet``, normalisation folded in) and OUT with suffix .json (the
architecture, the input rows, weights, MFLOP per hop, the run's settings and validation scores); with --sources,
the recordings drawn as ``enhancer-train`` rows of that provenance table.

Example (about 8 minutes on one shared core, 4 of them building the mixtures):
  nice -n 10 .venv/bin/python tools/train_band_gain.py --corpus corpora/real --out /tmp/band-gain/net.pt \\
      --cache /tmp/band-gain/mixtures.npz
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from scipy.signal import lfilter

import band_gain_study as bg
import features
import noise_estimator as ne
import score_enhancement as se
from fetch_alert_recordings import write_role_rows
from speech_bandwidth import MIN_SPEECH_BANDWIDTH_HZ
from train_noise_estimator import SPLIT, Mixer, start_run

ROWS = ("energy", "delta", "smoothed", "minimum", "mcra", "mcra_gain", "voicing")
# Rows that are differences of two of ROWS (dB): level-free views of the band energy.
DIFFERENCES = {"posterior": ("energy", "mcra"), "above_minimum": ("energy", "minimum")}
DEFAULT_ROWS = ("delta", "posterior", "above_minimum", "mcra_gain")
BANDS = ne.FEATURES["n_mels"]
SPEC_INPUT = ne.default_input()   # the smoothing and the minimum's blocks, as the learned noise estimate's


PITCH_WINDOW = 512               # samples of input whose autocorrelation picks the voicing row's lag (32 ms)
PITCH_LAGS = (40, 256)          # the lags searched, first and last (2.5…16 ms: 400…62.5 Hz)


def pitch_lags(samples: np.ndarray) -> np.ndarray:
    """[hops] the voicing row's pitch lag per hop of ``band_gain_study.analyse`` (hop t ends at sample (t + 1)·hop;
    zeros before the stream, two hops of zeros after it): the lag in PITCH_LAGS with the highest normalised
    autocorrelation of the last PITCH_WINDOW samples (the first such lag where several tie, the smallest where
    the window is silent)."""
    x = np.concatenate([np.asarray(samples, dtype=np.float64), np.zeros(2 * ne.HOP)])
    hops = len(x) // ne.HOP
    padded = np.concatenate([np.zeros(PITCH_WINDOW - ne.HOP), x[:hops * ne.HOP]])
    windows = np.lib.stride_tricks.sliding_window_view(padded, PITCH_WINDOW)[::ne.HOP][:hops]
    spectrum = np.fft.rfft(windows, n=2 * PITCH_WINDOW, axis=-1)
    product = np.fft.irfft(spectrum.real ** 2 + spectrum.imag ** 2, n=2 * PITCH_WINDOW, axis=-1)
    cumulative = np.concatenate([np.zeros((hops, 1)), np.cumsum(windows ** 2, axis=-1)], axis=-1)
    lags = np.arange(PITCH_LAGS[0], PITCH_LAGS[1] + 1)
    later = cumulative[:, -1:] - cumulative[:, lags]                 # Σ x(n)², n = L … W−1
    earlier = cumulative[:, PITCH_WINDOW - lags]                     # Σ x(n−L)², the same pairs
    energy = np.sqrt(later * earlier)
    normalised = np.where(energy > 0, product[:, lags] / np.where(energy > 0, energy, 1), 0.0)
    return lags[np.argmax(normalised, axis=-1)]


def voicing(samples: np.ndarray, bands: np.ndarray) -> np.ndarray:
    """[hops, B] the voicing row: per hop and band of the filterbank ``bands`` [bins, B], the normalised
    cross-spectrum of the hop's analysis frame with the frame ``pitch_lags`` samples earlier (RNNoise's pitch
    correlation, from past and present samples only), 0 where either is silent in the band."""
    lags = pitch_lags(samples)
    x = np.concatenate([np.asarray(samples, dtype=np.float64), np.zeros(2 * ne.HOP)])
    hops = len(lags)
    before = PITCH_LAGS[1] + ne.N_FFT - ne.HOP
    padded = np.concatenate([np.zeros(before), x[:hops * ne.HOP]])
    ends = before + ne.HOP * np.arange(1, hops + 1)
    window = ne.analysis_window()
    frame = np.fft.rfft(padded[(ends - ne.N_FFT)[:, None] + np.arange(ne.N_FFT)] * window, axis=-1)
    delayed = np.fft.rfft(padded[(ends - lags - ne.N_FFT)[:, None] + np.arange(ne.N_FFT)] * window, axis=-1)
    cross = (frame.real * delayed.real + frame.imag * delayed.imag) @ bands
    norm = np.sqrt((np.abs(frame) ** 2 @ bands) * (np.abs(delayed) ** 2 @ bands))
    return np.where(norm > ne.LOG_FLOOR, cross / np.where(norm > ne.LOG_FLOOR, norm, 1), 0.0)


def band_features(power: np.ndarray, rows: tuple[str, ...] = DEFAULT_ROWS, samples: np.ndarray | None = None
                  ) -> np.ndarray:
    """[hops, len(rows)·B] the network's input per hop, from the enhancer's periodograms [hops, bins] (every hop
    of ``band_gain_study.analyse``, the partial first frames included) and, for the voicing row, the ``samples``
    they were analysed from; rows in the order given."""
    if "voicing" in rows and samples is None:
        raise ValueError("the voicing row needs the samples, not only their periodograms")
    bands = features.mel_filterbank(ne.FEATURES).T.astype(np.float64)
    energy = power @ bands
    level = ne.decibels(energy)
    smoothed = ne.smooth(energy, ne.smoothing_factor(SPEC_INPUT))
    noise = functools.cache(lambda: bg.mcra_noise(power))   # MCRA, the costly part, run once
    made = {
        "energy": lambda: level,
        "delta": lambda: np.diff(level, axis=0, prepend=level[:1]),
        "smoothed": lambda: ne.decibels(smoothed),
        "minimum": lambda: ne.decibels(ne.block_minimum(smoothed, SPEC_INPUT["minimum_block_frames"],
                                                        SPEC_INPUT["minimum_blocks"])),
        "mcra": lambda: ne.decibels(noise() @ bands),
        "mcra_gain": lambda: ne.decibels(bg.mcra_band_gain(power, noise(), bands)),
        "voicing": lambda: voicing(samples, bands),
    }
    made.update({row: (lambda a=a, b=b: made[a]() - made[b]()) for row, (a, b) in DIFFERENCES.items()})
    return np.concatenate([made[row]() for row in rows], axis=1)


def signal_features(samples: np.ndarray, rows: tuple[str, ...] = DEFAULT_ROWS) -> np.ndarray:
    """``band_features`` of a signal, hop by hop as the enhancer analyses it."""
    spectra = bg.analyse(samples)
    return band_features(spectra.real ** 2 + spectra.imag ** 2, rows, samples)


def targets(speech: np.ndarray, noise: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """([hops, B] g* = √(S/Y) clipped to 1, [hops, B] 1 where the mixture's band holds energy, else 0)."""
    bands = features.mel_filterbank(ne.FEATURES).T.astype(np.float64)
    mixture = np.abs(bg.analyse(speech + noise)) ** 2 @ bands
    return bg.oracle_band_gains(speech + noise, speech), (mixture > ne.LOG_FLOOR).astype(np.float64)


class BandGainNet(nn.Module):
    """GRU (inputs → hidden), ``layers − 1`` more GRUs (hidden → hidden), dense (hidden → bands), sigmoid; per step
    of a [batch, hops, inputs] sequence, with the inputs standardised by ``shift`` and ``scale`` (zero and one
    once ``fold_normalisation`` has moved them into the first GRU).

    With ``anchor`` = (first, end), the raw input columns of the ``mcra_gain`` row (MCRA's band gain m in dB), the
    sigmoid's output s is a correction of MCRA's own band amplitude gain: the gain is min(1, √m · R·s), R =
    ``anchor_range`` (> 1; ``enhance`` applies R·s to MCRA's per-bin gains). The dense layer starts at zero weights
    and bias logit(1/R), so an untrained network gives exactly √m; the correction spans 0…R times it."""

    def __init__(self, inputs: int, hidden: int, layers: int = 2, bands: int = BANDS,
                 anchor: tuple[int, int] | None = None, anchor_range: float = 2.0):
        super().__init__()
        self.grus = nn.ModuleList(nn.GRU(inputs if index == 0 else hidden, hidden, batch_first=True)
                                  for index in range(layers))
        self.out = nn.Linear(hidden, bands)
        self.register_buffer("shift", torch.zeros(inputs))
        self.register_buffer("scale", torch.ones(inputs))
        if anchor is not None and (anchor[1] - anchor[0] != bands or not 0 <= anchor[0] < anchor[1] <= inputs
                                   or anchor_range <= 1):
            raise ValueError(f"an anchor needs {bands} input columns and a range above 1, got columns {anchor} of "
                             f"{inputs} and range {anchor_range:g}")
        self.anchor, self.anchor_range = anchor, anchor_range
        if anchor is not None:   # the identity: s = 1/R everywhere, so the gain starts as MCRA's √m
            with torch.no_grad():
                self.out.weight.zero_()
                self.out.bias.fill_(-np.log(anchor_range - 1))

    def outputs(self, x: torch.Tensor, state: list[torch.Tensor] | None = None
                ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """(the sigmoid's outputs [batch, hops, bands], each GRU's last hidden state): what alertnet computes."""
        h = (x - self.shift) * self.scale
        states = []
        for index, gru in enumerate(self.grus):
            h, last = gru(h, None if state is None else state[index])
            states.append(last)
        return torch.sigmoid(self.out(h)), states

    def forward(self, x: torch.Tensor, state: list[torch.Tensor] | None = None
                ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """(band gains [batch, hops, bands], each GRU's last hidden state): feeding the states back continues a
        stream. Anchored, the band-domain form the loss sees, ``anchored_gains``."""
        gains, states = self.outputs(x, state)
        if self.anchor is not None:
            gains = anchored_gains(gains, x[..., self.anchor[0]:self.anchor[1]], self.anchor_range)
        return gains, states

    def fold_normalisation(self) -> None:
        """Make the first GRU take raw rows: W_ih' = W_ih·diag(scale), b_ih' = b_ih − W_ih' shift (its input enters
        every gate only through W_ih x + b_ih)."""
        first = self.grus[0]
        with torch.no_grad():
            first.weight_ih_l0.mul_(self.scale)
            first.bias_ih_l0.sub_(first.weight_ih_l0 @ self.shift)
            self.shift.zero_()
            self.scale.fill_(1.0)

    def sequential(self) -> nn.Sequential:
        """The layers in the order they run, as ``export.export_torch`` walks a recurrent network (after
        ``fold_normalisation``; PyTorch cannot run this Sequential itself, a GRU returns a tuple)."""
        return nn.Sequential(*self.grus, self.out, nn.Sigmoid())

    def weight_count(self) -> int:
        return sum(parameter.numel() for parameter in self.parameters())

    def mflop_per_hop(self) -> float:
        """alertnet's count (FORMAT.md, "Reported costs"): 2 per weight, 1 per bias, 14 per GRU unit, 3 per sigmoid
        output."""
        flops = 0
        for gru in self.grus:
            flops += 2 * (gru.weight_ih_l0.numel() + gru.weight_hh_l0.numel()) + 2 * 3 * gru.hidden_size \
                + 14 * gru.hidden_size
        flops += 2 * self.out.weight.numel() + self.out.bias.numel() + 3 * self.out.out_features
        return flops / 1e6


def anchored_gains(correction: torch.Tensor, mcra_gain_db: torch.Tensor, anchor_range: float) -> torch.Tensor:
    """The band gains of an anchored network from its sigmoid outputs s ∈ (0, 1) and MCRA's band gain row m (dB,
    an energy ratio): min(1, √m · R·s), MCRA's band amplitude gain corrected — the band-domain form of what
    ``enhance`` applies per bin, min(1, G(k)·C(k)) with C the corrections R·s interpolated to bins, which is what
    the loss can see with band targets."""
    return torch.clamp(10 ** (mcra_gain_db / 20) * anchor_range * correction, max=1.0)


def rnnoise_loss(gains: torch.Tensor, target: torch.Tensor, mask: torch.Tensor, under_weight: float = 1.0
                 ) -> torch.Tensor:
    """RNNoise's loss (training/rnn_train.py ``mycost``) over the masked bands: 10·d⁴ + d² + 0.01·BCE with
    d = √g − √g*; where d < 0 (gain too low: speech taken away) weighted ``under_weight``."""
    d = gains.clamp_min(1e-8).sqrt() - target.sqrt()
    per_band = 10 * d ** 4 + d ** 2 + 0.01 * F.binary_cross_entropy(gains, target, reduction="none")
    weight = mask * torch.where(d < 0, under_weight, 1.0)
    return (weight * per_band).sum() / mask.sum().clamp_min(1.0)


def compressed_loss(gains: torch.Tensor, target: torch.Tensor, mask: torch.Tensor, level: torch.Tensor,
                    compression: float, under_weight: float = 1.0) -> torch.Tensor:
    """Signal approximation on compressed band amplitudes: with A the mixture's band amplitude (``level`` = its
    band energy over the sequence's mean, A² up to a constant), the error of the output against the speech,
    ((g·A)^c − (g*·A)^c)² = level^c·(g^c − g*^c)², averaged with the weights level^c over the masked bands; where
    the gain is too low weighted ``under_weight``. c = 1 is the squared error of the enhanced spectrum, which the
    SNR counts; smaller c weighs quiet bands up, as loudness does."""
    weight = mask * level ** compression
    error = gains.clamp_min(1e-8) ** compression - target ** compression
    return (weight * torch.where(error < 0, under_weight, 1.0) * error ** 2).sum() / weight.sum().clamp_min(1e-12)


def snr_loss(gains: torch.Tensor, target: torch.Tensor, mask: torch.Tensor, level: torch.Tensor,
             under_weight: float = 1.0) -> torch.Tensor:
    """Minus the SNR improvement of each sequence in the band domain, in dB, averaged over the batch: with the
    mixture's band energy Y (``level``, relative), 10·log10(Σ Y (g − g*)² / Σ Y (1 − g*)²), the error energy of the
    output over that of the input (g = 1), both floored at 10⁻⁴ of the sequence's energy (−40 dB). Each sequence
    counts alike in dB, as in the SNRi the enhancer is scored by; where the gain is too low the error is weighted
    ``under_weight``."""
    weight = mask * level
    error = gains - target
    output = (weight * torch.where(error < 0, under_weight, 1.0) * error ** 2).sum(dim=(1, 2))
    floor = 1e-4 * weight.sum(dim=(1, 2))
    return torch.mean(10 * torch.log10((output + floor) / ((weight * (1 - target) ** 2).sum(dim=(1, 2)) + floor)))


def enhance(model: BandGainNet, rows: tuple[str, ...], samples: np.ndarray, strength: float) -> np.ndarray:
    """A whole signal through the enhancer's path with the network run from a zero state at its start: its
    outputs as the band gains (``band_gain_study.apply_band_gains``), or, anchored, R times them as corrections
    of MCRA's per-bin gains (``band_gain_study.correct_mcra_gains``: per bin min(1, G·C), with every correction 1
    exactly today's path) — what the host computes per hop after alertnet has run the network, from the gains it
    computes for the mcra_gain input row anyway."""
    with torch.no_grad():
        x = torch.as_tensor(signal_features(samples, rows), dtype=torch.float32)[None]
        outputs = model.outputs(x)[0][0].double().numpy()
    if model.anchor is None:
        return bg.apply_band_gains(samples, outputs, strength)
    return bg.correct_mcra_gains(samples, model.anchor_range * outputs, strength)


def save(model: BandGainNet, path: Path, description: dict) -> None:
    """The state dict (normalisation folded) at ``path``, the architecture and ``description`` beside it (.json)."""
    folded = copy.deepcopy(model)
    folded.fold_normalisation()
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(folded.state_dict(), path)
    path.with_suffix(".json").write_text(json.dumps(description, indent=1) + "\n")


def load(path: Path) -> tuple[BandGainNet, tuple[str, ...]]:
    """(the network, its input rows) from ``save``'s two files."""
    try:
        description = json.loads(path.with_suffix(".json").read_text())
        architecture = description["architecture"]
        rows = tuple(description["input"]["rows"])
        anchor = architecture.get("anchor")   # absent in files written before the option
        model = BandGainNet(architecture["inputs"], architecture["hidden"], architecture["layers"],
                            architecture["bands"], anchor and anchor_columns(rows, anchor["row"]),
                            anchor["range"] if anchor else 2.0)
        model.load_state_dict(torch.load(path, weights_only=True))
    except (OSError, KeyError, TypeError, ValueError, json.JSONDecodeError, RuntimeError) as error:
        raise ValueError(f"{path}: not a band-gain network written by train_band_gain.py ({error})") from None
    model.eval()
    return model, rows


SHAPE_SPREAD = 3 / 8   # RNNoise's random spectral shaping: each filter coefficient drawn from ±3/8


def shape(signal: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``signal`` through a random second-order filter (1 + r1 z⁻¹ + r2 z⁻²) / (1 + r3 z⁻¹ + r4 z⁻²), each r uniform
    in ±3/8 (RNNoise's augmentation, Valin 2018: a talker or microphone the data did not have), rescaled to the
    signal's own energy so the mixture keeps its drawn SNR and level. The poles of 1 + r3 z⁻¹ + r4 z⁻² lie inside
    the unit circle for every |r3|, |r4| ≤ 3/8, so the filter is stable."""
    r = rng.uniform(-SHAPE_SPREAD, SHAPE_SPREAD, 4)
    shaped = lfilter([1.0, r[0], r[1]], [1.0, r[2], r[3]], signal)
    return shaped * np.sqrt(np.sum(signal ** 2) / max(np.sum(shaped ** 2), 1e-30))


def build(mixer: Mixer, count: int, seconds: float, rows: tuple[str, ...],
          shaping: np.random.Generator | None = None):
    """(inputs [count, hops, F], targets and masks [count, hops, B], float32; the signals (speech, noise)); with
    ``shaping``, speech and noise each through its own random ``shape`` filter drawn from it (a generator of its
    own, so the mixtures drawn, the validation ones after them included, are the same with or without)."""
    inputs, goals, masks, signals = [], [], [], []
    for _ in range(count):
        speech, noise = mixer.mixture(seconds)
        if shaping is not None:
            speech, noise = shape(speech, shaping), shape(noise, shaping)
        inputs.append(signal_features(speech + noise, rows).astype(np.float32))
        goal, mask = targets(speech, noise)
        goals.append(goal.astype(np.float32))
        masks.append(mask.astype(np.float32))
        signals.append((speech, noise))
    return np.stack(inputs), np.stack(goals), np.stack(masks), signals


def fit(model: BandGainNet, train: tuple, val: tuple, loss, *, epochs: int, batch: int, lr: float, patience: int,
        seed: int, crop: int | None = None, input_noise: float = 0.0, minutes: float = float("inf"), log=print
        ) -> list[tuple[int, float, float]]:
    """Adam on stretches of ``crop`` hops of the training sequences (each epoch cuts every sequence anew, from a
    random offset, and shuffles the stretches; the GRUs start from zero at each) or on whole sequences, validated
    on whole sequences, the best epoch's weights by validation loss kept, the learning rate halved after each
    epoch without a better one; stops after ``patience`` such epochs in a row, or after the epoch that ends past
    ``minutes``. ``train`` and ``val`` are (inputs, targets, masks, relative band energies), ``loss(gains,
    targets, masks, energies)``; ``input_noise``: the deviation of Gaussian noise added to the standardised
    training inputs (a regulariser). Returns (epoch, training loss, validation loss) per epoch, epoch 0 being the
    starting weights (no training loss), which are kept if no epoch does better."""
    train = tuple(torch.as_tensor(a) for a in train)
    val = tuple(torch.as_tensor(a) for a in val)
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    generator = torch.Generator().manual_seed(seed)

    def validation_loss() -> float:
        model.eval()
        with torch.no_grad():
            value = loss(model(val[0])[0], *val[1:]).item()
        model.train()
        return value

    # The starting weights count as epoch 0: an anchored network that training cannot improve on validation
    # stays MCRA's band gain.
    best, best_state, waited = validation_loss(), copy.deepcopy(model.state_dict()), 0
    history: list[tuple[int, float | None, float]] = [(0, None, best)]
    log(f"epoch 0 (the starting weights): validation loss {best:.5f}")
    started = time.monotonic()
    count, hops = train[0].shape[:2]
    for epoch in range(1, epochs + 1):
        length = hops if crop is None else min(crop, hops)
        offset = int(torch.randint(hops - length * (hops // length) + 1, (1,), generator=generator))
        pieces = torch.cartesian_prod(torch.arange(count), torch.arange(offset, hops - length + 1, length))
        pieces = pieces[torch.randperm(len(pieces), generator=generator)]
        losses = []
        for start in range(0, len(pieces), batch):
            chosen = pieces[start:start + batch]
            stretch = chosen[:, 1:] + torch.arange(length)
            x, *goals = (a[chosen[:, :1], stretch] for a in train)
            if input_noise > 0:
                x = x + input_noise * torch.randn(x.shape, generator=generator) / model.scale
            value = loss(model(x)[0], *goals)
            optimiser.zero_grad()
            value.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            losses.append(value.item())
        val_loss = validation_loss()
        history.append((epoch, float(np.mean(losses)), val_loss))
        better = val_loss < best
        if better:
            best, best_state, waited = val_loss, copy.deepcopy(model.state_dict()), 0
        else:
            waited += 1
            for group in optimiser.param_groups:
                group["lr"] /= 2
        log(f"epoch {epoch}: training loss {history[-1][1]:.5f}, validation loss {val_loss:.5f}"
            f"{' (best)' if better else ''} ({time.monotonic() - started:.0f} s)")
        if waited >= patience:
            log(f"stopped: no better validation loss for {patience} epochs")
            break
        if time.monotonic() - started > 60 * minutes:
            log(f"stopped: past {minutes:g} minutes")
            break
    model.load_state_dict(best_state)
    return history


SNR_BINS = ((-np.inf, 2.5), (2.5, 7.5), (7.5, 15.0), (15.0, np.inf))   # input SNR (dB) of the validation table


def enhancement_scores(model: BandGainNet, rows: tuple[str, ...], signals: list, strength: float,
                       others: dict[str, tuple[BandGainNet, tuple[str, ...]]] | None = None) -> dict:
    """Mean SNRi, segSNRi, PESQ-WB Δ and STOI Δ over ``signals`` [(speech, noise)] for MCRA's path, the network
    (``enhance``), each of ``others`` ({name: (network, its rows)}, earlier networks scored beside it) and the
    oracle gains, each through band_gain_study's path (score_enhancement's metrics):
    {"mixtures": scored, "silent_noise": left out, "all": {system: means}, "by_input_snr": {"LOW..HIGH dB":
    {"mixtures": n, system: means}}}. A mixture whose noise is silent (a silent stretch of a noise recording) has no
    SNR to improve and is left out."""
    systems = {
        "mcra + gain rule": lambda noisy, clean: bg.enhance_mcra(noisy, strength),
        "band-gain network": lambda noisy, clean: enhance(model, rows, noisy, strength),
        **{name: (lambda noisy, clean, other=other: enhance(*other, noisy, strength))
           for name, other in (others or {}).items()},
        "oracle band gain": lambda noisy, clean: bg.apply_band_gains(noisy, bg.oracle_band_gains(noisy, clean),
                                                                     strength),
    }
    metrics = ("snr", "segsnr", "pesq", "stoi")
    scored = [(speech, noise) for speech, noise in signals if np.any(noise)]
    deltas, inputs = {name: [] for name in systems}, []
    for speech, noise in scored:
        noisy = speech + noise
        base = se.score_pair(speech, noisy)
        inputs.append(base["snr"])
        for name, run in systems.items():
            output = se.score_pair(speech, run(noisy, speech))
            deltas[name].append([output[m] - base[m] for m in metrics])

    def means(chosen: np.ndarray) -> dict:
        return {name: dict(zip(("snri_db", "segsnri_db", "pesq_delta", "stoi_delta"),
                               np.mean(np.asarray(values)[chosen], axis=0).tolist()))
                for name, values in deltas.items()}

    inputs = np.asarray(inputs)
    bins = {}
    for low, high in SNR_BINS:
        chosen = (inputs >= low) & (inputs < high)
        if chosen.any():
            bins[f"{low:g}..{high:g} dB"] = {"mixtures": int(chosen.sum()), **means(chosen)}
    return {"mixtures": len(scored), "silent_noise": len(signals) - len(scored),
            "all": means(np.ones(len(scored), dtype=bool)) if scored else {}, "by_input_snr": bins}


def parse_sources(text: str) -> tuple[str, ...]:
    sources = tuple(sorted({source for source in text.split(",") if source}))
    if not sources:
        raise argparse.ArgumentTypeError(f"expected source names separated by commas, got {text!r}")
    return sources


MIN_HELD_OUT_SPEECH_SOURCES = 3   # talker sources that stay out of training, whatever --train-speech-sources moves


def move_speech_sources(mixers: list[Mixer], sources: tuple[str, ...]) -> None:
    """Move the speech recordings of ``sources`` from the validation mixer to the training one (ValueError in one
    line if one is not held out, or if fewer than MIN_HELD_OUT_SPEECH_SOURCES would stay held out)."""
    held = {recording.source for recording in mixers[1].speech}
    unknown = sorted(set(sources) - held)
    if unknown:
        raise ValueError(f"--train-speech-sources: {', '.join(unknown)} not among the held-out speech sources "
                         f"({', '.join(sorted(held))})")
    if len(held) - len(sources) < MIN_HELD_OUT_SPEECH_SOURCES:
        raise ValueError(f"--train-speech-sources: {len(held) - len(sources)} speech sources would stay held out, "
                         f"at least {MIN_HELD_OUT_SPEECH_SOURCES} must")
    moved = [recording for recording in mixers[1].speech if recording.source in sources]
    mixers[0].speech = mixers[0].speech + moved
    mixers[1].speech = [recording for recording in mixers[1].speech if recording.source not in sources]
    print(f"speech sources moved to training: {', '.join(sources)} ({len(moved)} recordings); now "
          f"{len(mixers[0].speech)} train / {len(mixers[1].speech)} validation speech recordings", flush=True)


def parse_rows(text: str) -> tuple[str, ...]:
    rows = tuple(row for row in text.split(",") if row)
    unknown = [row for row in rows if row not in ROWS + tuple(DIFFERENCES)]
    if unknown or not rows or len(set(rows)) != len(rows):
        raise argparse.ArgumentTypeError(f"expected distinct rows from {', '.join(ROWS + tuple(DIFFERENCES))}, "
                                         f"got {text!r}")
    return rows


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", type=Path, required=True,
                   help="real-audio folder with index.tsv (path, role, kind, source, ...); only role train is read")
    p.add_argument("--out", type=Path, required=True,
                   help="state dict to write (e.g. net.pt); its description goes beside it as net.json")
    p.add_argument("--sources", type=Path,
                   help=f"provenance table (models/SOURCES.tsv columns) whose {SPLIT} rows are replaced by the "
                        "recordings drawn, other rows kept; not written unless given")
    p.add_argument("--seed", type=int, default=1, help="random seed: mixtures, weights, batches (default 1)")
    p.add_argument("--mixtures", type=int, default=800, help="training mixtures (default 800)")
    p.add_argument("--val-mixtures", type=int, default=80, help="validation mixtures (default 80)")
    p.add_argument("--score-mixtures", type=int, default=40,
                   help="validation mixtures whose enhancement is scored after training (default 40; 0: none)")
    p.add_argument("--seconds", type=float, default=4.0, help="length of each mixture (default 4 s)")
    p.add_argument("--snr", type=float, nargs=2, default=(-5.0, 20.0), metavar=("LOW", "HIGH"),
                   help="global speech-to-noise ratio range in dB (default -5 20)")
    p.add_argument("--min-speech-bandwidth-hz", type=float, default=MIN_SPEECH_BANDWIDTH_HZ,
                   help="leave out speech with less content above this frequency (tools/speech_bandwidth.py); "
                        "default %(default)g Hz, 0 takes every speech recording")
    p.add_argument("--val-sources", type=float, default=0.15,
                   help="share of sources held out for validation, at least one (default 0.15)")
    p.add_argument("--train-speech-sources", type=parse_sources, default=(),
                   help="comma-separated speech sources (index.tsv's source column) that --val-sources holds out "
                        "and that go to training instead, for more training talkers; at least "
                        f"{MIN_HELD_OUT_SPEECH_SOURCES} speech sources must stay held out; the noise split is kept "
                        "(default: none moved)")
    p.add_argument("--compare", type=Path, action="append", default=[],
                   help="also score this earlier network of this tool (its .pt; the .json beside it) on the same "
                        "validation mixtures, beside the new one; repeat for several")
    p.add_argument("--rows", type=parse_rows, default=DEFAULT_ROWS,
                   help=f"input rows per band, comma-separated, from {', '.join(ROWS + tuple(DIFFERENCES))} "
                        f"(default {','.join(DEFAULT_ROWS)}; each is described above); voicing is causal "
                        "periodicity per band, RNNoise's pitch correlation without lookahead: the normalised "
                        "cross-spectrum of the hop's frame with its copy one pitch lag earlier, the lag picked by "
                        "the autocorrelation of the last 32 ms over 2.5..16 ms, about 0.06 MFLOP per hop")
    p.add_argument("--anchor", choices=("none", "mcra"), default="mcra",
                   help="none: the sigmoid's outputs are the band gains; mcra: R times them (R = --anchor-range) "
                        "multiplies MCRA's own gains, per bin, clipped at 1 (trained on the band form min(1, "
                        "√m·R·s), m the mcra_gain row, which --rows must hold), starting from exactly today's path; "
                        "default %(default)s")
    p.add_argument("--anchor-range", type=float, default=2.0,
                   help="R of --anchor mcra, above 1: the correction spans 0..R times MCRA's gains "
                        "(default %(default)g)")
    p.add_argument("--hidden", type=int, default=24, help="units of each GRU (default 24)")
    p.add_argument("--layers", type=int, default=2, help="stacked GRUs (default 2)")
    p.add_argument("--epochs", type=int, default=30, help="most passes over the training mixtures (default 30)")
    p.add_argument("--patience", type=int, default=5,
                   help="stop after this many epochs in a row without a better validation loss (default 5)")
    p.add_argument("--minutes", type=float, default=float("inf"),
                   help="stop after the epoch that ends past this many minutes of training (default: no limit)")
    p.add_argument("--batch", type=int, default=32, help="sequences per batch (default 32)")
    p.add_argument("--crop", type=int, default=250,
                   help="hops of each training sequence per step, a random stretch of its mixture (default 250, "
                        "1 s; 0: the whole mixture)")
    p.add_argument("--lr", type=float, default=1e-3,
                   help="Adam learning rate, halved after each epoch without a better validation loss (default 1e-3)")
    p.add_argument("--loss", choices=("rnnoise", "compressed", "snr"), default="compressed",
                   help="rnnoise: RNNoise's loss on √g; compressed: squared error of compressed band amplitudes "
                        "of the output against the speech's (--compression); snr: minus each sequence's SNR "
                        "improvement in dB in the band domain; default %(default)s")
    p.add_argument("--compression", type=float, default=1.0,
                   help="exponent c of --loss compressed, in (0, 1]: 1 weighs bands by their energy as the SNR "
                        "does (default %(default)s)")
    p.add_argument("--shape", action="store_true",
                   help="pass each training mixture's speech and noise through their own random second-order "
                        "filter, RNNoise's spectral shaping (coefficients within ±3/8, energy kept); the "
                        "validation mixtures stay as recorded")
    p.add_argument("--speed", type=float, nargs=2, metavar=("LOW", "HIGH"),
                   help="speed perturbation: play each training utterance (talker and babble) at a speed drawn "
                        "from LOW..HIGH, e.g. 0.9 1.1, which moves pitch and formants together (Ko et al. 2015: a "
                        "stand-in for more talkers; measured here: no gain, Enhancement/EXPERIMENTS.md "
                        "2026-11-28); the validation mixtures stay as recorded (default: off)")
    p.add_argument("--input-noise", type=float, default=0.0,
                   help="deviation of Gaussian noise added to the standardised training inputs (default 0)")
    p.add_argument("--under-weight", type=float, default=3.0,
                   help="weight of errors where the gain is below the target (speech removed) against those above "
                        "(noise left); default %(default)g")
    p.add_argument("--strength", type=float, default=bg.DEFAULT_STRENGTH,
                   help="the enhancer's strength for the validation scores: its floor (default %(default)s)")
    p.add_argument("--cache", type=Path,
                   help="keep the built mixtures in this .npz and reuse them while the data options are the same")
    p.add_argument("--threads", type=int, default=1, help="PyTorch threads (default 1: the machine is shared)")
    args = p.parse_args(argv)
    if not -30 <= args.snr[0] < args.snr[1] <= 60:
        p.error(f"--snr must be LOW < HIGH within -30..60 dB, got {args.snr}")
    if args.crop < 0:
        p.error(f"--crop must be 0 or more, got {args.crop}")
    for name in ("mixtures", "val_mixtures", "hidden", "layers", "epochs", "patience", "batch", "threads"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if not 0 <= args.score_mixtures <= args.val_mixtures:
        p.error(f"--score-mixtures must be within 0..--val-mixtures ({args.val_mixtures}), got {args.score_mixtures}")
    if args.input_noise < 0:
        p.error(f"--input-noise must be 0 or more, got {args.input_noise}")
    if not 0 < args.compression <= 1:
        p.error(f"--compression must be within (0, 1], got {args.compression}")
    if args.min_speech_bandwidth_hz < 0 or args.under_weight <= 0 or args.lr <= 0 or args.minutes <= 0:
        p.error("--min-speech-bandwidth-hz must be 0 or more, --under-weight, --lr and --minutes above 0")
    if not 0 < args.val_sources < 1 or args.seconds < 0.5:
        p.error("--val-sources must be in (0, 1) and --seconds at least 0.5")
    if not 0 <= args.strength <= 1:
        p.error(f"--strength must be within 0..1, got {args.strength}")
    if args.speed is not None and not 0.5 <= args.speed[0] <= args.speed[1] <= 2:
        p.error(f"--speed must be LOW <= HIGH within 0.5..2, got {args.speed[0]:g} {args.speed[1]:g}")
    if args.anchor_range <= 1:
        p.error(f"--anchor-range must be above 1, got {args.anchor_range:g}")
    if args.anchor == "mcra" and "mcra_gain" not in args.rows:
        p.error(f"--anchor mcra needs the mcra_gain row in --rows, got {','.join(args.rows)}")
    return args


def mixtures(args: argparse.Namespace, mixers: list[Mixer]):
    """Training and validation data with the --rows inputs, built with every row (so --cache serves any --rows) or
    read from --cache (the recordings each side used restored too)."""
    key = json.dumps([args.seed, args.mixtures, args.val_mixtures, args.seconds, list(args.snr), args.val_sources,
                      str(args.corpus.resolve()), args.min_speech_bandwidth_hz, ROWS]
                     + ([list(args.train_speech_sources)] if args.train_speech_sources else [])
                     + (["shape"] if args.shape else [])
                     + ([["speed", *args.speed]] if args.speed else []))
    cached = np.load(args.cache) if args.cache and args.cache.exists() else None
    if cached is not None and str(cached["key"]) == key:
        for mixer, used in zip(mixers, (cached["used_train"], cached["used_val"])):
            by_path = {str(r.path): r for r in mixer.speech + mixer.noise}
            mixer.used = {by_path[path] for path in used}
        signals = list(zip(cached["val_speech"], cached["val_noise"]))
        return (prepare(*(cached[f"{name}_train"] for name in "xym"), args.rows),
                prepare(*(cached[f"{name}_val"] for name in "xym"), args.rows), signals, True)
    *train, _ = build(mixers[0], args.mixtures, args.seconds, ROWS,
                      np.random.default_rng([args.seed, 1]) if args.shape else None)
    *val, signals = build(mixers[1], args.val_mixtures, args.seconds, ROWS)
    if args.cache:
        args.cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(args.cache, key=key, x_train=train[0], y_train=train[1], m_train=train[2], x_val=val[0],
                 y_val=val[1], m_val=val[2], val_speech=np.stack([s for s, _ in signals]),
                 val_noise=np.stack([n for _, n in signals]),
                 used_train=sorted(str(r.path) for r in mixers[0].used),
                 used_val=sorted(str(r.path) for r in mixers[1].used))
    return prepare(*train, args.rows), prepare(*val, args.rows), signals, False


def prepare(inputs: np.ndarray, goals: np.ndarray, masks: np.ndarray, rows: tuple[str, ...]) -> tuple:
    """(inputs of ``rows``, targets, masks, band energies over their sequence's mean) from data built with every
    row of ROWS."""
    energy = 10 ** (inputs[..., :BANDS].astype(np.float64) / 10)   # ROWS[0]: the band energies in dB
    relative = energy / np.maximum(energy.mean(axis=(1, 2), keepdims=True), ne.LOG_FLOOR)
    return select(inputs, rows), goals, masks, relative.astype(np.float32)


def select(inputs: np.ndarray, rows: tuple[str, ...]) -> np.ndarray:
    """The inputs of ``rows``, in their order, from inputs built with every row of ROWS."""
    def row(name: str) -> np.ndarray:
        if name in DIFFERENCES:
            first, second = DIFFERENCES[name]
            return row(first) - row(second)
        return inputs[..., BANDS * ROWS.index(name):BANDS * (ROWS.index(name) + 1)]
    return np.ascontiguousarray(np.concatenate([row(name) for name in rows], axis=-1))


def anchor_columns(rows: tuple[str, ...], row: str = "mcra_gain") -> tuple[int, int]:
    """(first, end) input columns of ``row`` among the input rows ``rows`` (ValueError if it is not one)."""
    if row not in rows:
        raise ValueError(f"an anchored network needs the {row} input row, rows are {','.join(rows)}")
    return BANDS * rows.index(row), BANDS * (rows.index(row) + 1)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    mixers = start_run(args)
    if mixers is None:
        return 2
    try:
        if args.train_speech_sources:
            move_speech_sources(mixers, args.train_speech_sources)
        mixers[0].speed = tuple(args.speed) if args.speed else None
        others = {f"{path.stem} (--compare)": load(path) for path in args.compare}
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    train, val, signals, from_cache = mixtures(args, mixers)
    print(f"{'read' if from_cache else 'built'} {train[0].shape[0]} training and {val[0].shape[0]} validation "
          f"mixtures of {train[0].shape[1]} hops ({time.monotonic() - started:.0f} s)", flush=True)

    inputs = train[0].shape[2]
    anchor = anchor_columns(args.rows) if args.anchor == "mcra" else None
    model = BandGainNet(inputs, args.hidden, args.layers, anchor=anchor, anchor_range=args.anchor_range)
    flat = train[0].reshape(-1, inputs)
    model.shift.copy_(torch.as_tensor(flat.mean(axis=0, dtype=np.float64), dtype=torch.float32))
    model.scale.copy_(torch.as_tensor(1 / np.maximum(flat.std(axis=0, dtype=np.float64), 1e-3), dtype=torch.float32))
    print(f"network: {args.layers} GRU of {args.hidden}, dense {args.hidden} -> {BANDS}, sigmoid"
          f"{f', times {args.anchor_range:g}: corrections of MCRA gains' if anchor else ''}; "
          f"{model.weight_count()} weights, {model.mflop_per_hop():.4f} MFLOP per hop", flush=True)
    if args.loss == "rnnoise":
        def loss(gains, goals, masks, energies):
            return rnnoise_loss(gains, goals, masks, args.under_weight)
    elif args.loss == "compressed":
        def loss(gains, goals, masks, energies):
            return compressed_loss(gains, goals, masks, energies, args.compression, args.under_weight)
    else:
        def loss(gains, goals, masks, energies):
            return snr_loss(gains, goals, masks, energies, args.under_weight)
    history = fit(model, train, val, loss, epochs=args.epochs, batch=args.batch, lr=args.lr, patience=args.patience,
                  seed=args.seed, crop=args.crop or None, input_noise=args.input_noise, minutes=args.minutes,
                  log=lambda line: print(line, flush=True))
    model.eval()
    scores = enhancement_scores(model, args.rows, signals[:args.score_mixtures], args.strength, others) \
        if args.score_mixtures else {}
    if scores:
        silent = f", {scores['silent_noise']} with silent noise left out" if scores["silent_noise"] else ""
        print(f"validation enhancement, {scores['mixtures']} mixtures of held-out sources{silent} "
              "(SNRi dB / segSNRi dB / PESQ-WB Δ / STOI Δ):")
        for label, table in [("all", scores["all"])] + [(f"input SNR {label}, {table['mixtures']} mixtures", table)
                                                        for label, table in scores["by_input_snr"].items()]:
            print(f" {label}:")
            for name, values in table.items():
                if name != "mixtures":
                    print(f"  {name}: {values['snri_db']:+.2f} / {values['segsnri_db']:+.2f} / "
                          f"{values['pesq_delta']:+.3f} / {values['stoi_delta']:+.4f}", flush=True)
    best = min(history, key=lambda entry: entry[2])
    description = {
        "what": "per-band gains of the speech enhancer's low-latency path (tools/train_band_gain.py)",
        "architecture": {"inputs": inputs, "hidden": args.hidden, "layers": args.layers, "bands": BANDS,
                         "layers_in_order": [f"gru {inputs if i == 0 else args.hidden} -> {args.hidden}"
                                             for i in range(args.layers)] + [f"dense {args.hidden} -> {BANDS}",
                                                                             "sigmoid"],
                         "anchor": {"row": "mcra_gain", "range": args.anchor_range,
                                    "host": "per bin k: gain = max(Gmin, min(1, G(k) * C(k))), G MCRA's gain "
                                            "rule, C range * sigmoid outputs interpolated to bins between the "
                                            "bands' centres (band_gain_study.correct_mcra_gains)"}
                         if anchor else None,
                         "weights": model.weight_count(), "mflop_per_hop": round(model.mflop_per_hop(), 5)},
        "input": {"rows": list(args.rows), "features": ne.FEATURES, "noise_input": SPEC_INPUT,
                  "hop_seconds": ne.HOP / ne.SAMPLE_RATE, "order": "rows after one another, 32 bands each, in dB (voicing: a correlation, -1..1); "
                  "normalisation folded into the first GRU"},
        "trained_on": f"{args.mixtures} mixtures of {args.seconds:g} s, train-role speech (bandwidth at least "
                      f"{args.min_speech_bandwidth_hz:g} Hz) and noise of {args.corpus.name}, SNR {args.snr[0]:g}.."
                      f"{args.snr[1]:g} dB, seed {args.seed}{', spectral shaping' if args.shape else ''}"
                      + (f", speech speed {args.speed[0]:g}..{args.speed[1]:g}" if args.speed else "")
                      + (f", held-out speech sources moved to training: {', '.join(args.train_speech_sources)}"
                         if args.train_speech_sources else ""),
        "training": {"epochs_run": len(history) - 1, "best_epoch": best[0], "best_validation_loss": best[2],
                     "lr": args.lr, "batch": args.batch, "crop": args.crop, "loss": args.loss,
                     "compression": args.compression if args.loss == "compressed" else None,
                     "under_weight": args.under_weight, "input_noise": args.input_noise,
                     "history": [list(entry) for entry in history]},
        "validation_enhancement": scores,
    }
    try:
        save(model, args.out, description)
        if args.sources:
            used = {(r.sources_name, r.version, r.path_inside, r.licence, r.kind, SPLIT)
                    for r in mixers[0].used | mixers[1].used}
            write_role_rows(args.sources, SPLIT, sorted(used))
    except (OSError, ValueError) as error:
        print(f"cannot write the results: {error}", file=sys.stderr)
        return 1
    print(f"wrote {args.out} and {args.out.with_suffix('.json')} (best epoch {best[0]}, validation loss "
          f"{best[2]:.5f}; {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
