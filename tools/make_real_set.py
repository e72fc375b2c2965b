#!/usr/bin/env python3
"""Make a corpus (shared/docs/CORPUS.md) from real recordings only, to choose and score detectors on real sound.

Reads one role of the real-audio tree that tools/fetch_real_audio.py writes (REAL/ROLE/alert_free/<kind>/ and
REAL/ROLE/alerts/<label>/) and writes three kinds of files, each named by its kind:

  free_NNNNN.wav   --chunk-seconds excerpts of the alert-free recordings of each kind played one after another
                   (all of each, or its first --max-free-seconds; short ones share an excerpt, long ones fill
                   several): every detection in them is a false alarm
  mix_NNNNN.wav    a real alert in a real background of the same role, --mixtures-per-alert times per alert
                   recording, alert SNRs spread evenly over the buckets of --snr (default -5..15 dB in 5-dB steps)
  iso_NNNNN.wav    each alert recording whole (up to 20 s), 30 dB over a quiet real background, a second of it
                   either side: how the alert sounds near the device

With --speed LOW,HIGH each mixture plays its alert at a speed drawn log-uniformly from that range (resampled
with soxr, so pitch and cadence change together, as on another device of the same kind; `alert_speed` in
corpus.json): a training set's few real alerts then stand for more devices. Isolated files keep the recording
as it is.

With --kinds effects (only with --role train, and alone) it writes instead

  fx_NNNNN.wav     --chunk-seconds excerpts of the unlabelled recordings (REAL/train/unlabelled/<group>/: sound
                   effects from fetch_real_audio.py's effects[:WHAT] rows), made the way free_ files are. They may
                   hold alert-like sounds no one labelled, so the set has no events yet is not alert-free: corpus.json
                   says "unlabelled": true, and train.py takes it only as --distill (the student learns the teacher's
                   scores on it), refusing it as --train, --val, --test or --fa-corpus

With --alert-components every file also gets alerts/NAME.wav (the alert component, sample-aligned; silence for
alert-free excerpts, since readers take the folder whole), so `train.py` can remix the alerts: use it for a
training set; sets that are only scored do without. Events are measured on the alert signal (frames within 25 dB of its
loudest, gaps under 1 s joined), never read from a file name. corpus.json's `files` extras give each file's
`kind`, its source recording(s) (`pieces` of an alert-free excerpt; `source` and `background` of an alert file)
and, for mixtures, `alert_snr_db`. Roles come from the tree, so a set made from
`dev` holds no source of `test` or `train`.

Examples:
  .venv/bin/python tools/make_real_set.py --real corpora/real --role dev --out corpora/real-dev --seed 11
  .venv/bin/python tools/make_real_set.py --real corpora/real --role test --out corpora/real-test --seed 12
  .venv/bin/python tools/make_real_set.py --real corpora/real --role test --out corpora/real-test-fresh --seed 14 \\
      --free-sources naev-data,LCAV/pyroomacoustics     # only the alert-free audio of sources added since
  .venv/bin/python tools/make_real_set.py --real corpora/real --role train --out corpora/real-train --seed 13 \\
      --mixtures-per-alert 40 --max-free-seconds 600 --alert-components
  .venv/bin/python tools/make_real_set.py --real corpora/real --role train --out corpora/real-train-varied \\
      --seed 13 --kinds mixture,isolated --mixtures-per-alert 20 --speed 0.8,1.25 --alert-components
  .venv/bin/python tools/make_real_set.py --real corpora/real --role train --kinds effects \\
      --out corpora/real-train-fx --seed 13

Same inputs and seed give the same files; each alert's files depend on the seed and that alert alone, so adding
an alert to a role leaves the other alerts' files as they were. An existing --out is refused unless --force.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from cli_types import number_in
from corpus_format import UNLABELLED_KEY
from hearalert_corpus import LABELS, SAMPLE_RATE
from hearalert_corpus.real_sets import (RealSetError, Recording, free_excerpts, isolated, list_role,
                                        list_unlabelled, mixture, parse_snr_range)
from hearalert_corpus.pinned import source_slug
from hearalert_corpus.signals import at_speed
from hearalert_corpus.sources import load_audio
from hearalert_corpus.writer import format_summary, summarise, write_tables

GENERATOR = "tools/make_real_set.py"


def _snr(text: str) -> list[tuple[float, float]]:
    try:
        return parse_snr_range(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


KINDS = ("free", "mixture", "isolated")
EFFECTS = "effects"  # the unlabelled kind: made alone, from role train only


def _kinds(text: str) -> tuple[str, ...]:
    kinds = tuple(dict.fromkeys(k.strip() for k in text.split(",")))
    unknown = [k for k in kinds if k not in KINDS + (EFFECTS,)]
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(f"kinds are {', '.join(KINDS + (EFFECTS,))}; got {text!r}")
    if EFFECTS in kinds and len(kinds) > 1:
        raise argparse.ArgumentTypeError(f"{EFFECTS} makes an unlabelled set and goes alone, not with "
                                         f"{', '.join(k for k in kinds if k != EFFECTS)}")
    return kinds


SPEED_LIMITS = (0.5, 2.0)  # beyond an octave either way an alert is another sound, not another device


def _speed(text: str) -> tuple[float, float]:
    try:
        low, high = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LOW,HIGH (speed factors, e.g. 0.8,1.25), "
                                         f"got {text!r}") from None
    if not SPEED_LIMITS[0] <= low <= high <= SPEED_LIMITS[1]:
        raise argparse.ArgumentTypeError(f"expected {SPEED_LIMITS[0]} <= LOW <= HIGH <= {SPEED_LIMITS[1]}, "
                                         f"got {text!r}")
    return low, high


def _sources(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(v.strip() for v in text.split(",") if v.strip()))
    if not names:
        raise argparse.ArgumentTypeError(f"expected source names separated by commas, got {text!r}")
    return names


def of_source(recording: Recording, source: str) -> bool:
    """Whether a fetched recording came from `source`: fetch_real_audio.py names its file SOURCE__PATH, with
    OWNER/NAME written OWNER+NAME."""
    return recording.path.name.startswith(source_slug(source) + "__")


def only_sources(recordings: list[Recording], sources: tuple[str, ...], role: str) -> list[Recording]:
    """The recordings of `sources`; a named source without alert-free audio in the role is an error."""
    kept = [r for r in recordings if any(of_source(r, s) for s in sources)]
    missing = [s for s in sources if not any(of_source(r, s) for r in kept)]
    if missing:
        raise RealSetError(f"--free-sources: no alert-free recording of {', '.join(missing)} in role '{role}'")
    return kept


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--real", required=True, type=Path, help="the real-audio tree (tools/fetch_real_audio.py --out)")
    p.add_argument("--role", required=True, help="which role folder to draw from: train, dev or test")
    p.add_argument("--out", required=True, type=Path, help="corpus folder to write")
    p.add_argument("--seed", type=int, default=1, help="random seed (backgrounds, placement, SNRs, levels)")
    p.add_argument("--chunk-seconds", type=number_in(2.0), default=10.0,
                   help="length of the alert-free excerpts and of the mixtures (default 10 s)")
    p.add_argument("--max-free-seconds", type=number_in(1.0),
                   help="use at most this many seconds of each alert-free recording (default: all of it)")
    p.add_argument("--mixtures-per-alert", type=int, default=4,
                   help="mixtures made from each alert recording (default 4: one per 5-dB bucket of -5..15 dB)")
    p.add_argument("--snr", type=_snr, default=parse_snr_range("-5,15"),
                   help="alert SNR range of the mixtures, LOW,HIGH[,STEP] in dB (default -5,15 in 5-dB buckets)")
    p.add_argument("--speed", type=_speed, metavar="LOW,HIGH",
                   help="play each mixture's alert at a speed drawn log-uniformly from LOW..HIGH (pitch and "
                        "cadence together, e.g. 0.8,1.25: about 4 semitones either way), so a training set's few "
                        "real alerts stand for more devices; isolated files keep the recording's own (default: "
                        "every alert as recorded)")
    p.add_argument("--kinds", type=_kinds, default=KINDS,
                   help="which kinds of file to make, comma-separated: free, mixture, isolated (default all; e.g. "
                        "free alone for audio to distil on, mixture,isolated for labelled training alerts); or "
                        "effects alone, with --role train: the unlabelled sound effects, a distillation-only set")
    p.add_argument("--alert-components", action="store_true",
                   help="also write alerts/NAME.wav, the alert alone, for every file (for training sets)")
    p.add_argument("--free-sources", type=_sources, metavar="SOURCE,...",
                   help="draw the alert-free excerpts and the mixtures' backgrounds only from these sources (the "
                        "`source` column of tools/real_audio.tsv: a package, or OWNER/NAME of a git source); the "
                        "alerts still come from the whole role. For a fresh reading of a role whose other audio has "
                        "been scored before: name the sources added since")
    p.add_argument("--force", action="store_true", help="replace an existing --out folder")
    args = p.parse_args(argv)
    if args.mixtures_per_alert < 0:
        p.error(f"--mixtures-per-alert must be 0 or more, got {args.mixtures_per_alert}")
    if EFFECTS in args.kinds and args.role != "train":
        p.error(f"--kinds {EFFECTS} needs --role train: unlabelled recordings are fetched for training only")
    if EFFECTS in args.kinds and args.alert_components:
        p.error(f"--kinds {EFFECTS} makes no alerts to write: leave out --alert-components")
    return args


def _write(out: Path, name: str, mix: np.ndarray, alert: np.ndarray | None) -> None:
    """audio/NAME and, when `alert` is given, alerts/NAME: 16-bit WAVs."""
    for sub, x in (("audio", mix), ("alerts", alert)):
        if x is not None:
            sf.write(str(out / sub / name), np.clip(x, -1.0, 1.0), SAMPLE_RATE, subtype="PCM_16", format="WAV")


def _replace_out(args: argparse.Namespace) -> None:
    if args.out.exists():
        if not args.force:
            raise RealSetError(f"{args.out} exists; pass --force to replace it")
        shutil.rmtree(args.out)


def _read_all(recordings: list, what: str, t0: float) -> list:
    """(recording, audio) for each recording, with a progress line every 10 s."""
    out = []
    shown = t0
    for i, recording in enumerate(recordings):
        out.append((recording, load_audio(recording.path)))
        if time.time() - shown >= 10 or i + 1 == len(recordings):
            shown = time.time()
            print(f"read {i + 1} of {len(recordings)} {what} recordings ({shown - t0:.0f} s)", file=sys.stderr,
                  flush=True)
    return out


def _meta(args: argparse.Namespace, real_sources: dict) -> dict:
    return {"format": "hearalert-corpus", "version": 1, "sample_rate": SAMPLE_RATE, "labels": list(LABELS),
            "generator": GENERATOR, "seed": args.seed, "split": args.role, "real_root": str(args.real),
            "real_sources": real_sources}


def make_unlabelled(args: argparse.Namespace) -> dict:
    """--kinds effects: excerpts of the role's unlabelled recordings, group by group, in a set marked unlabelled."""
    recordings = list_unlabelled(args.real / args.role)
    _replace_out(args)
    t0 = time.time()
    loaded = _read_all(recordings, "unlabelled", t0)
    (args.out / "audio").mkdir(parents=True, exist_ok=True)
    rows = []
    for group in sorted({recording.kind for recording, _ in loaded}):
        of_group = [(recording, x) for recording, x in loaded if recording.kind == group]
        for pieces, excerpt in free_excerpts(of_group, args.chunk_seconds, args.max_free_seconds):
            name = f"fx_{len(rows):05d}.wav"
            _write(args.out, name, excerpt, None)
            rows.append({"name": name, "duration": len(excerpt) / SAMPLE_RATE, "events": [],
                         "info": {"kind": EFFECTS, "source_kind": group, "pieces": pieces, "alert_snr_db": None}})
    write_tables(args.out, rows, dict(_meta(args, {"unlabelled_recordings": len(recordings)}),
                                      **{UNLABELLED_KEY: True}))
    summary = summarise(rows)
    print(f"wrote {summary['files']} unlabelled files ({summary['hours']:.2f} h) to {args.out} from "
          f"{len(recordings)} recordings of role '{args.role}' in {time.time() - t0:.0f} s: for train.py --distill "
          "only")
    return summary


def alert_draws(seed: int, relative: str) -> np.random.Generator:
    """The random draws (SNRs, speeds, backgrounds, levels) of one alert's files: from the set's seed and the alert's
    own path, so that adding or removing an alert leaves every other alert's files as they were. Drawn from one
    stream for the whole set, they were all redrawn whenever the role gained an alert, and such a redraw alone moved
    the shipped model's isolated test alerts found from 30 of 58 to 26 of 59 (models/EXPERIMENTS.md, 2026-11-29)."""
    key = int.from_bytes(hashlib.sha256(relative.encode("utf-8")).digest()[:8], "little")
    return np.random.default_rng([seed, key])


def make(args: argparse.Namespace) -> dict:
    if EFFECTS in args.kinds:
        return make_unlabelled(args)
    free_recordings, alert_recordings = list_role(args.real / args.role)
    if args.free_sources:
        free_recordings = only_sources(free_recordings, args.free_sources, args.role)
    _replace_out(args)
    t0 = time.time()
    free = _read_all(free_recordings, "alert-free", t0)
    for sub in ("audio", "alerts") if args.alert_components else ("audio",):
        (args.out / sub).mkdir(parents=True, exist_ok=True)
    rows = []

    def add(name: str, mix: np.ndarray, alert: np.ndarray | None, info: dict, label: str | None) -> None:
        if args.alert_components:
            _write(args.out, name, mix, np.zeros_like(mix) if alert is None else alert)
        else:
            _write(args.out, name, mix, None)
        events = [(a, b, label) for a, b in info.pop("events", [])]
        rows.append({"name": name, "duration": len(mix) / SAMPLE_RATE, "events": events, "info": info})

    for kind in sorted({recording.kind for recording, _ in free}) if "free" in args.kinds else ():
        of_kind = [(recording, x) for recording, x in free if recording.kind == kind]
        for pieces, excerpt in free_excerpts(of_kind, args.chunk_seconds, args.max_free_seconds):
            add(f"free_{len(rows):05d}.wav", excerpt, None,
                {"kind": "free", "source_kind": kind, "pieces": pieces, "alert_snr_db": None}, None)
    for recording in alert_recordings:
        alert = load_audio(recording.path)
        peak = float(np.max(np.abs(alert))) if len(alert) else 0.0
        if peak == 0.0:
            raise RealSetError(f"{recording.path}: the recording is silent")
        alert = alert / peak
        rng = alert_draws(args.seed, recording.relative)
        for k in range(args.mixtures_per_alert if "mixture" in args.kinds else 0):
            snr = round(float(rng.uniform(*args.snr[k % len(args.snr)])), 2)
            extra = {}
            played = alert
            if args.speed:
                speed = round(float(np.exp(rng.uniform(*np.log(args.speed)))), 4)
                played, extra = at_speed(alert, speed), {"alert_speed": speed}
            clip, info = mixture(played, free, args.chunk_seconds, snr, rng)
            add(f"mix_{len(rows):05d}.wav", clip.mixture, clip.alerts,
                dict(info, kind="mixture", source=recording.relative, **extra), recording.kind)
        if "isolated" in args.kinds:
            clip, info = isolated(alert, free, rng)
            add(f"iso_{len(rows):05d}.wav", clip.mixture, clip.alerts,
                dict(info, kind="isolated", source=recording.relative), recording.kind)
    sources = {"alert_free_recordings": len(free_recordings), "alert_recordings": len(alert_recordings)}
    if args.free_sources:
        sources["alert_free_sources"] = list(args.free_sources)
    write_tables(args.out, rows, _meta(args, sources))
    summary = summarise(rows)
    print(format_summary(summary, args.out))
    print(f"from {len(free_recordings)} alert-free and {len(alert_recordings)} alert recordings of role "
          f"'{args.role}' in {time.time() - t0:.0f} s")
    return summary


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        make(args)
    except RealSetError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
