#!/usr/bin/env python3
"""Write the demo clip shipped with the default model: speech in a noisy room, a smoke alarm, then a passing
siren; 16 kHz mono 16-bit WAV plus its annotations in the corpus's DCASE form (filename, onset, offset, label).

Voices, rooms and alerts come from the test split's sources, so the default model never trained on them.

  .venv/bin/python tools/make_demo.py --out-dir models            # models/demo.wav, models/demo.tsv
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf
from scipy.signal import fftconvolve

from hearalert_corpus import SAMPLE_RATE
from hearalert_corpus.alerts import synthesise
from hearalert_corpus.mixing import merge_segments
from hearalert_corpus.noise import background
from hearalert_corpus.rooms import random_room
from hearalert_corpus.signals import active_power, rms, samples
from hearalert_corpus.speech import SpeechSource, speech_track

DURATION = 16.0
# (label, kind, start s, length s, alert-to-background SNR dB)
SCRIPT = [("smoke_alarm", "t3_piezo", 2.0, 5.0, 6.0), ("siren", "wail", 9.0, 6.0, 3.0)]


def make(seed: int) -> tuple[np.ndarray, list[tuple[float, float, str]]]:
    rng = np.random.default_rng(seed)
    n = samples(DURATION)
    room = random_room(rng)
    with tempfile.TemporaryDirectory() as workdir:
        speech_source = SpeechSource.for_split("test", [])
        speech, _ = speech_track(rng, n, speech_source, workdir, density=0.8)
        noise, _ = background(rng, n, speech_source, workdir, [])
    speech = fftconvolve(speech, room.rirs[0])[:n]
    noise = noise / rms(noise) * np.sqrt(active_power(speech)) / 10 ** (10.0 / 20)  # speech SNR 10 dB
    bg = speech + noise
    mix = bg.copy()
    events = []
    for label, kind, start, length, snr in SCRIPT:
        alert = synthesise(label, rng, length)
        while alert.kind != kind:  # draw until the pattern the demo is meant to show
            alert = synthesise(label, rng, length)
        x = np.zeros(n, dtype=np.float32)
        a = samples(start)
        x[a:a + len(alert.samples)] = alert.samples[: n - a]
        x = fftconvolve(x, room.rirs[1 if label == "smoke_alarm" else 2])[:n]
        mix += x * np.sqrt(np.mean(bg ** 2) / active_power(x)) * 10 ** (snr / 20)
        events += [(round(start + s, 3), round(start + e, 3), label)
                   for s, e in merge_segments(alert.segments)]
    mix = mix / np.max(np.abs(mix)) * 0.5
    return mix.astype(np.float32), sorted(events)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out-dir", type=Path, default=Path("models"), help="where demo.wav and demo.tsv go")
    p.add_argument("--seed", type=int, default=2026, help="random seed")
    args = p.parse_args(argv)
    mix, events = make(args.seed)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    wav, tsv = args.out_dir / "demo.wav", args.out_dir / "demo.tsv"
    sf.write(str(wav), mix, SAMPLE_RATE, subtype="PCM_16")
    with open(tsv, "w", encoding="utf-8", newline="\n") as f:
        f.write("filename\tonset\toffset\tevent_label\n")
        for onset, offset, label in events:
            f.write(f"demo.wav\t{onset:.3f}\t{offset:.3f}\t{label}\n")
    print(f"wrote {wav} ({len(mix) / SAMPLE_RATE:.1f} s) and {tsv} ({len(events)} events)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
