"""How far up in frequency a recording reaches: the measure that keeps telephone-band speech out of the clean
targets of the enhancer's training.

Much of the real speech in the catalogue was stored at 8 kHz (IVR prompts, spoken digits): resampled to 16 kHz it
holds nothing above 4 kHz, and a model trained to restore it as "clean" learns to cut the upper bands. The measure
does not trust a file's sample rate (every file of the real-audio tree is 16 kHz): it reads the long-term spectrum.

`bandwidth_hz` is the frequency above which a recording holds less than 10^(FLOOR_DB/10) of its energy, on the
summed power spectra of Hann-windowed 32 ms frames (hop 16 ms, the mean removed first, so neither a DC offset nor
the jump between a file's end and its start counts as high-frequency content). Measured on the real-audio tree
(16 kHz): telephone prompts and the 8 kHz digits end at 3.6–3.9 kHz, studio or game voices recorded wideband at
7.0–8.0 kHz, MP3s low-passed by their encoder at 5.7 kHz. MIN_SPEECH_BANDWIDTH_HZ = 7000 keeps speech with content
to 7 kHz, the band a 16 kHz enhancer works in.

As a script it prints, per source of one role of a real-audio tree, the speech hours and the wideband ones.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import soundfile as sf

FLOOR_DB = -50.0                    # share of the energy allowed above the bandwidth, dB
MIN_SPEECH_BANDWIDTH_HZ = 7000.0    # wideband speech: content to at least 7 kHz
FRAME_SECONDS = 0.032


def bandwidth_hz(samples: np.ndarray, rate: int, floor_db: float = FLOOR_DB) -> float:
    """The frequency (Hz) above which `samples` (mono) hold less than 10^(floor_db/10) of their energy; 0 for
    silence. Frames of the next power of two at or above 32 ms, hop half a frame, Hann window, power summed."""
    x = np.asarray(samples, dtype=np.float64)
    x = x - x.mean() if len(x) else x
    frame = 1 << int(np.ceil(np.log2(max(FRAME_SECONDS * rate, 2))))
    if len(x) < frame:
        x = np.pad(x, (0, frame - len(x)))
    hop = frame // 2
    starts = np.arange(0, len(x) - frame + 1, hop)
    frames = x[starts[:, None] + np.arange(frame)] * np.hanning(frame)
    power = (np.abs(np.fft.rfft(frames, axis=1)) ** 2).sum(axis=0)
    total = power.sum()
    if total <= 0:
        return 0.0
    above = 1.0 - np.cumsum(power) / total          # share of the energy above each bin
    first = int(np.argmax(above < 10 ** (floor_db / 10)))
    return float(first * rate / frame)


def recording_bandwidth_hz(path: Path) -> float:
    """`bandwidth_hz` of an audio file, its channels averaged, at its own rate (ValueError naming the file if it
    cannot be read)."""
    try:
        samples, rate = sf.read(str(path), dtype="float64", always_2d=True)
    except (RuntimeError, sf.LibsndfileError) as error:
        raise ValueError(f"{path}: cannot read it ({error})") from None
    return bandwidth_hz(samples.mean(axis=1), rate)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Example: .venv/bin/python tools/speech_bandwidth.py corpora/real --role train")
    p.add_argument("real", type=Path, help="real-audio tree of tools/fetch_real_audio.py (REAL/index.tsv)")
    p.add_argument("--role", default="train", choices=("train", "dev", "test"), help="default %(default)s")
    p.add_argument("--min-hz", type=float, default=MIN_SPEECH_BANDWIDTH_HZ,
                   help="bandwidth that counts as wideband (default %(default)g Hz)")
    args = p.parse_args(argv)
    from fetch_real_audio import read_index
    try:
        entries = [e for e in read_index(args.real) if e.role == args.role and e.kind.startswith("speech")]
    except ValueError as error:
        print(f"speech_bandwidth: error: {error}", file=sys.stderr)
        return 1
    table: dict[str, list[float]] = {}
    for entry in entries:
        seconds = float(entry.seconds)
        wide = recording_bandwidth_hz(args.real / entry.path) >= args.min_hz
        row = table.setdefault(entry.sources_name, [0, 0.0, 0, 0.0])
        row[0] += 1
        row[1] += seconds
        row[2] += wide
        row[3] += seconds * wide
    print(f"speech of role {args.role}, wideband = bandwidth (energy above it < {FLOOR_DB:g} dB) >= {args.min_hz:g} Hz")
    print(f"{'source':44s} {'recordings':>10s} {'hours':>7s} {'wideband':>9s} {'hours':>7s}")
    for name, (count, seconds, wide, wide_seconds) in sorted(table.items()):
        print(f"{name:44s} {count:10d} {seconds / 3600:7.3f} {wide:9d} {wide_seconds / 3600:7.3f}")
    totals = [sum(row[i] for row in table.values()) for i in range(4)]
    print(f"{'total':44s} {totals[0]:10d} {totals[1] / 3600:7.3f} {totals[2]:9d} {totals[3] / 3600:7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
