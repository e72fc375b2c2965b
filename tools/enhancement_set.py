"""The on-disk form shared by the enhancer's evaluation sets (score_enhancement.py make-set, synthetic, and
make-real-set, tools/enhancement_real_set.py): one file mixed at a global input SNR, and the corpus tables
(shared/docs/CORPUS.md layout: audio/, clean/, files.tsv, annotations.tsv, corpus.json)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import soundfile as sf

from hearalert_corpus import LABELS, SAMPLE_RATE

SPEECH_LEVEL_DBFS = -26.0


def write_mixture(out: Path, name: str, clean: np.ndarray, noise: np.ndarray, snr_db: float) -> None:
    """Writes audio/NAME (clean + noise) and clean/NAME as 32-bit float: the speech at −26 dBFS RMS over the file,
    the noise scaled so that 10·log10(Σ clean² / Σ noise²) is `snr_db`, both lowered together if the mixture would
    peak over 0.99."""
    clean = clean * 10 ** (SPEECH_LEVEL_DBFS / 20) / np.sqrt(np.mean(clean ** 2))
    noise = noise * np.sqrt(np.sum(clean ** 2) / np.sum(noise ** 2)) * 10 ** (-snr_db / 20)
    mixture = clean + noise
    peak = max(np.max(np.abs(mixture)), 1e-9)
    if peak > 0.99:
        clean, mixture = clean * 0.99 / peak, mixture * 0.99 / peak
    for sub in ("audio", "clean"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    sf.write(str(out / "audio" / name), mixture.astype(np.float32), SAMPLE_RATE, subtype="FLOAT")
    sf.write(str(out / "clean" / name), clean.astype(np.float32), SAMPLE_RATE, subtype="FLOAT")


def write_tables(out: Path, durations: list[tuple[str, float]], generator: str, seed: int, extras: dict) -> None:
    """files.tsv (every file), an empty annotations.tsv (no alerts) and corpus.json with `extras` (among them
    "files": the per-file conditions)."""
    with open(out / "files.tsv", "w", encoding="utf-8", newline="\n") as f:
        f.write("filename\tduration\n")
        for name, duration in durations:
            f.write(f"{name}\t{duration:.3f}\n")
    with open(out / "annotations.tsv", "w", encoding="utf-8", newline="\n") as f:
        f.write("filename\tonset\toffset\tevent_label\n")
    meta = {"format": "hearalert-corpus", "version": 1, "sample_rate": SAMPLE_RATE, "labels": list(LABELS),
            "generator": generator, "seed": seed, **extras}
    with open(out / "corpus.json", "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
