#!/usr/bin/env python3
"""What a per-band gain could give the speech enhancer, measured in the enhancer's own low-latency framing.

The speech enhancer's low-latency signal path in numpy — Mauler & Martin's low-delay windows at a 4 ms hop
(``EnhancerFraming``), weighted overlap-add as ``StreamingSTFT`` does it, MCRA (``noise_estimator.mcra``) and the
decision-directed over-subtraction gain rule (``SuppressionGainRule``) — and, in its place, per-band gains
interpolated to bins between the Mel bands' centres (``noise_estimator.interpolate``), with the enhancer's floor.
The MCRA path matches ``hearalert enhance --mode low-latency --noise-estimator mcra`` to about −90…−140 dB
(float32 against float64); with the real-noise set it gives the same table row as the host (Enhancement/README.md).

``score`` runs, over a corpus with clean/ references (shared/docs/CORPUS.md), the MCRA path, the oracle band
gains — per 4 ms frame and band, g = √(S/Y) from the separately known speech S and the mixture Y (RNNoise's
training target, Valin 2018), instantaneous or smoothed as the noise estimate's band power is: the upper bound
of a learned band gain in this framing — and any band-gain network of tools/train_band_gain.py given with
--band-gain-model, its gains through the same path (a network trained with ``--anchor mcra`` gives per-band
corrections that multiply MCRA's own per-bin gains: ``correct_mcra_gains``). Scores are score_enhancement.py's own (SNR, segmental SNR, PESQ-WB, STOI) and its table.

Example (the real-noise set of Enhancement/README.md, about 3 minutes on one core):
  nice -n 10 .venv/bin/python tools/band_gain_study.py score --corpus /tmp/enh-real
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import soundfile as sf

import features
import noise_estimator as ne
import score_enhancement as se

N_FFT, HOP = ne.N_FFT, ne.HOP
PARTIAL_FRAMES = (N_FFT + HOP - 1) // HOP - 1   # hops whose frame still holds the zeros before the stream
DEFAULT_STRENGTH = 0.7                           # EnhancerConfiguration's default


def synthesis_window() -> np.ndarray:
    """The low-delay synthesis window, right-aligned in the frame and normalised as ``StreamingSTFT`` does it:
    divided by the sum of analysis × synthesis over the frames overlapping each position (the 1/N of the inverse
    transform is numpy's)."""
    analysis = ne.analysis_window()
    product = features.window("hann", 2 * HOP).astype(np.float32).astype(np.float64)
    tail = analysis[N_FFT - 2 * HOP:]
    short = np.where(tail > 0, product / np.where(tail > 0, tail, 1), 0).astype(np.float32).astype(np.float64)
    window = np.concatenate([np.zeros(N_FFT - 2 * HOP), short])
    overlap = np.zeros(HOP)
    np.add.at(overlap, np.arange(N_FFT) % HOP, analysis * window)
    return window / overlap[np.arange(N_FFT) % HOP]


SYNTHESIS = synthesis_window()


def analyse(samples: np.ndarray) -> np.ndarray:
    """[hops, bins] spectra of every hop as the enhancer sees them: frame j holds samples up to (j + 1)·hop,
    zeros before the stream, and two hops of zeros after its end flush the delay (as ``hearalert enhance``)."""
    x = np.concatenate([np.asarray(samples, dtype=np.float64), np.zeros(2 * HOP)])
    hops = len(x) // HOP
    padded = np.concatenate([np.zeros(N_FFT - HOP), x[:hops * HOP]])
    frames = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP][:hops]
    return np.fft.rfft(frames * ne.analysis_window(), axis=-1)


def synthesise(spectra: np.ndarray, length: int) -> np.ndarray:
    """Weighted overlap-add of the (modified) spectra, ``length`` samples aligned with the input (the
    enhancer's one-hop delay taken out, as ``hearalert enhance`` does)."""
    frames = np.fft.irfft(spectra, n=N_FFT, axis=-1) * SYNTHESIS
    out = np.zeros(len(frames) * HOP + N_FFT)
    for index, frame in enumerate(frames):
        out[index * HOP:index * HOP + N_FFT] += frame
    return out[N_FFT - HOP:N_FFT - HOP + length]


def mcra_noise(power: np.ndarray) -> np.ndarray:
    """The noise estimate per hop: none (the smallest power) until the first whole frame, then MCRA."""
    noise = np.full_like(power, ne.SMALLEST_POWER)
    noise[PARTIAL_FRAMES:] = ne.mcra(power[PARTIAL_FRAMES:])
    return noise


def decision_directed_gains(power: np.ndarray, noise: np.ndarray, strength: float = DEFAULT_STRENGTH,
                            memory: float = 0.95, full_over_subtraction: float = 1.36) -> np.ndarray:
    """[hops, bins] ``SuppressionGainRule``'s gains with the low-latency mode's tuning (a = 0.95 at 10 ms, α up
    to 1.36 at full strength), without an alert."""
    a = memory ** (HOP / ne.SAMPLE_RATE / 0.010)
    alpha_max = 1 + (full_over_subtraction - 1) * strength
    floor = floor_gain(strength)
    previous = np.zeros(power.shape[1])
    gains = np.empty_like(power)
    for t, (frame, estimate) in enumerate(zip(power, noise)):
        lam = np.maximum(estimate, ne.SMALLEST_POWER)
        weight = a if t > 0 else 0.0
        xi = np.clip(weight * previous / lam + (1 - weight) * np.maximum(frame / lam - 1, 0), 10 ** -2.5, 1e10)
        alpha = np.clip(1 + (alpha_max - 1) * (20 - 10 * np.log10(xi)) / 25, 1, alpha_max)
        gains[t] = np.maximum(1 - alpha / (1 + xi), floor)
        wiener = xi / (1 + xi)
        previous = wiener * wiener * frame + wiener * lam
    return gains


def mcra_band_gain(power: np.ndarray, noise: np.ndarray, bands: np.ndarray) -> np.ndarray:
    """[hops, B] what today's path (the decision-directed gain rule on MCRA's estimate ``noise``, default strength)
    does to each band's energy: Σ_k M(b, k) G² P / Σ_k M(b, k) P, with the filterbank ``bands`` [bins, B] — the
    ``mcra_gain`` input row of tools/train_band_gain.py, and the anchor of its ``--anchor mcra`` networks."""
    gains = decision_directed_gains(power, noise)
    return (gains ** 2 * power) @ bands / np.maximum(power @ bands, ne.LOG_FLOOR)


def floor_gain(strength: float = DEFAULT_STRENGTH) -> float:
    """Gmin, the amplitude floor: −30·strength dB in power."""
    return float(np.sqrt(10 ** (-3 * strength)))


def enhance_mcra(samples: np.ndarray, strength: float = DEFAULT_STRENGTH) -> np.ndarray:
    """The low-latency enhancer with MCRA, as ``hearalert enhance`` writes it."""
    spectra = analyse(samples)
    power = spectra.real ** 2 + spectra.imag ** 2
    return synthesise(spectra * decision_directed_gains(power, mcra_noise(power), strength), len(samples))


def apply_band_gains(samples: np.ndarray, band_gains: np.ndarray, strength: float = DEFAULT_STRENGTH
                     ) -> np.ndarray:
    """The enhancer's path with per-band gains [hops, B] in place of the gain rule: interpolated to bins between
    the Mel bands' centres, floored at Gmin."""
    filterbank = features.mel_filterbank(ne.FEATURES)
    spectra = analyse(samples)
    gains = ne.interpolate(band_gains, ne.band_centres(filterbank), spectra.shape[1])
    return synthesise(spectra * np.maximum(gains, floor_gain(strength)), len(samples))


def correct_mcra_gains(samples: np.ndarray, corrections: np.ndarray, strength: float = DEFAULT_STRENGTH
                       ) -> np.ndarray:
    """The enhancer's path with MCRA's own per-bin gains G(k) (``enhance_mcra``'s) multiplied by per-band
    corrections [hops, B], interpolated to bins between the Mel bands' centres as ``apply_band_gains`` does,
    clipped at 1 and floored at Gmin: with every correction 1 it is ``enhance_mcra`` exactly."""
    filterbank = features.mel_filterbank(ne.FEATURES)
    spectra = analyse(samples)
    power = spectra.real ** 2 + spectra.imag ** 2
    gains = decision_directed_gains(power, mcra_noise(power), strength)
    gains = gains * ne.interpolate(corrections, ne.band_centres(filterbank), spectra.shape[1])
    return synthesise(spectra * np.maximum(np.minimum(gains, 1.0), floor_gain(strength)), len(samples))


def oracle_band_gains(noisy: np.ndarray, clean: np.ndarray, smoothing: float | None = None) -> np.ndarray:
    """[hops, B] √(S/Y) per band from the clean speech's and the mixture's band energies in the enhancer's
    frames (clipped to 1), optionally both smoothed first (x̄_t = a x̄_{t−1} + (1 − a) x_t)."""
    bands = features.mel_filterbank(ne.FEATURES).T.astype(np.float64)
    speech = np.abs(analyse(clean)) ** 2 @ bands
    mixture = np.abs(analyse(noisy)) ** 2 @ bands
    if smoothing is not None:
        speech, mixture = ne.smooth(speech, smoothing), ne.smooth(mixture, smoothing)
    return np.sqrt(np.clip(speech / np.maximum(mixture, ne.LOG_FLOOR), 0, 1))


def systems(strength: float) -> dict:
    """Each variant by its table name, as a function (noisy, clean) -> output."""
    smoothing = ne.smoothing_factor(ne.default_input())
    return {
        "unprocessed": lambda noisy, clean: noisy,
        "mcra + gain rule (numpy)": lambda noisy, clean: enhance_mcra(noisy, strength),
        "oracle band gain": lambda noisy, clean: apply_band_gains(noisy, oracle_band_gains(noisy, clean), strength),
        "oracle band gain, smoothed": lambda noisy, clean: apply_band_gains(
            noisy, oracle_band_gains(noisy, clean, smoothing), strength),
    }


def network_system(path: Path, strength: float) -> tuple[str, object]:
    """(table name, function) of a band-gain network written by train_band_gain.py, its gains in this path."""
    import train_band_gain   # PyTorch, only when a network is scored

    model, rows = train_band_gain.load(path)
    return f"band-gain network {path.stem}", lambda noisy, clean: train_band_gain.enhance(model, rows, noisy,
                                                                                         strength)


def score(corpus: Path, pattern: str | None, strength: float, networks: tuple[Path, ...] = ()
          ) -> tuple[list[str], dict]:
    """score_enhancement's results structure for score_enhancement.report (each output is aligned already), with
    a row for each band-gain network of ``networks``."""
    extras = json.loads((corpus / "corpus.json").read_text()).get("files", {})
    names = [line.split("\t")[0] for line in (corpus / "files.tsv").read_text().splitlines()[1:] if line]
    names = [name for name in names if pattern is None or fnmatch.fnmatchcase(name, pattern)]
    if not names:
        raise ValueError(f"{corpus / 'files.tsv'}: no file" + (f" matches {pattern!r}" if pattern else ""))
    variants = systems(strength)
    variants.update(network_system(path, strength) for path in networks)
    results: dict = defaultdict(lambda: defaultdict(list))
    lags: dict = defaultdict(list)
    for name in names:
        noisy, rate = sf.read(str(corpus / "audio" / name), dtype="float64")
        clean, clean_rate = sf.read(str(corpus / "clean" / name), dtype="float64")
        if rate != ne.SAMPLE_RATE or clean_rate != ne.SAMPLE_RATE or noisy.ndim != 1 or len(noisy) != len(clean):
            raise ValueError(f"{name}: expected mono 16 kHz audio/ and clean/ of equal length")
        kind, snr = se.condition_of(name, extras)
        for system, run in variants.items():
            output = run(noisy, clean)
            lags[system].append(se.best_lag(output, clean, 800))
            scores = se.score_pair(clean, output)
            for key in {(kind, snr), (kind, None), ("all", snr), ("all", None)}:
                results[(system, key)]["files"].append(name)
                for metric, value in scores.items():
                    results[(system, key)][metric].append(value)
    return list(variants), {"results": results, "lags": lags, "delays": {system: 0 for system in variants}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("score", help="score MCRA and the oracle band gains on a corpus with clean/")
    run.add_argument("--corpus", type=Path, required=True, help="corpus folder (audio/, clean/, files.tsv, "
                     "corpus.json), e.g. score_enhancement.py make-real-set's")
    run.add_argument("--files", help="only files whose names match this shell pattern, e.g. '*_snr05_*'")
    run.add_argument("--strength", type=float, default=DEFAULT_STRENGTH,
                     help="the enhancer's strength: over-subtraction and floor (default %(default)s)")
    run.add_argument("--band-gain-model", type=Path, action="append", default=[],
                     help="also score this network of tools/train_band_gain.py (its .pt; the .json beside it); "
                          "repeat for several; a network trained with --anchor mcra corrects MCRA's per-bin gains "
                          "(its .json says so)")
    run.add_argument("--out", type=Path, help="write the Markdown table here as well as to stdout")
    args = parser.parse_args(argv)
    if not 0 <= args.strength <= 1:
        parser.error(f"--strength must be within 0..1, got {args.strength}")
    try:
        names, scored = score(args.corpus, args.files, args.strength, tuple(args.band_gain_model))
    except (OSError, ValueError) as error:
        parser.error(str(error))
    table = se.report(names, scored, "tools/band_gain_study.py " + " ".join(argv if argv is not None else
                                                                              sys.argv[1:]))
    print(table, end="")
    if args.out:
        args.out.write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
