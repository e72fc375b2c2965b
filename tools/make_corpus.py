#!/usr/bin/env python3
"""Generate a labelled noisy-speech corpus for HearAlert (format: shared/docs/CORPUS.md).

Each 10-second clip mixes espeak-ng speech (or --speech-dir recordings) with noise at a speech SNR of -5..20 dB,
adds 0-2 alerts (synthesised with wide variation, or --alerts-dir recordings) at an alert-to-background SNR of
-10..15 dB, sometimes a hard negative (music, whistling, chirps, clicks, TV speech), all through a random
simulated room. The same seed gives byte-identical files; each split draws from its own voices, texts, rooms
and recordings (a recording's split: the one its folder's splits.tsv lists, else a hash of its path; see
tools/README.md). Per-file SNRs and sources are in corpus.json under "files" (see tools/README.md).

Examples:
  .venv/bin/python tools/make_corpus.py --out /tmp/corpus-train --hours 2 --split train --seed 1
  .venv/bin/python tools/make_corpus.py --out /tmp/corpus --splits train=2,val=0.3,test=0.3 --seed 1
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
from multiprocessing import get_context
from pathlib import Path

import numpy as np
from tqdm import tqdm

from cli_types import number_in
from hearalert_corpus import GENERATOR_VERSION, LABELS, SAMPLE_RATE, SPLITS
from hearalert_corpus.mixing import MixSettings, Sources, make_clip
from hearalert_corpus.rooms import random_room
from hearalert_corpus.sources import RecordingsError, list_alert_recordings, list_audio
from hearalert_corpus.speech import SpeechSource, espeak_version
from hearalert_corpus.writer import format_summary, prepare, summarise, write_clip, write_tables

ROOM_STREAM = 1_000_003  # seed-sequence keys of the room and utterance banks, apart from every file index
SPEECH_STREAM = 1_000_033


@dataclasses.dataclass
class Job:
    out: Path
    split: str
    seed: int
    settings: MixSettings
    sources: Sources
    workdir: str


_JOB: Job | None = None  # per worker process, set once by the pool initializer


def _init_worker(job: Job) -> None:
    global _JOB
    _JOB = job


def _file_rng(seed: int, split: str, index: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, SPLITS.index(split), index]))


def _make_one(index: int) -> dict:
    job = _JOB
    assert job is not None
    name = f"{job.split}_{index:05d}.wav"
    clip = make_clip(_file_rng(job.seed, job.split, index), job.settings, job.sources, job.workdir)
    write_clip(job.out, name, clip)
    return {"name": name, "duration": len(clip.mixture) / SAMPLE_RATE, "events": clip.events, "info": clip.info}


def _room_from_seed(seed_seq: np.random.SeedSequence):
    return random_room(np.random.default_rng(seed_seq))


def _utterance_from_seed(args: tuple[SpeechSource, str, np.random.SeedSequence]):
    speech, workdir, seed_seq = args
    return speech.speak(np.random.default_rng(seed_seq), workdir)


def generate(out: Path, split: str, seed: int, files: int, settings: MixSettings, workers: int,
             speech_dir: str | None = None, noise_dir: str | None = None, alerts_dir: str | None = None,
             rooms: int | None = None, utterances: int | None = None, progress: bool = True) -> dict:
    """Write one split's corpus to `out`; returns its summary."""
    alert_recordings = list_alert_recordings(alerts_dir, split) if alerts_dir is not None else {}
    speech_recordings, noise_recordings = list_audio(speech_dir, split), list_audio(noise_dir, split)
    prepare(out)
    rooms = rooms if rooms is not None else int(np.clip(files // 8, 4, 80))
    room_seeds = np.random.SeedSequence([seed, SPLITS.index(split), ROOM_STREAM]).spawn(rooms)
    utterances = utterances if utterances is not None else int(np.clip(files, 40, 1000))
    speech_seeds = np.random.SeedSequence([seed, SPLITS.index(split), SPEECH_STREAM]).spawn(utterances)
    ctx = get_context("fork")
    with tempfile.TemporaryDirectory(prefix="hearalert-corpus-") as workdir:
        speech = SpeechSource.for_split(split, speech_recordings)
        sources = Sources(speech, [], noise_recordings, alert_recordings)
        job = Job(out, split, seed, settings, sources, workdir)
        with ctx.Pool(workers) as pool:
            sources.rooms = pool.map(_room_from_seed, room_seeds)
            speech.bank = pool.map(_utterance_from_seed, [(speech, workdir, s) for s in speech_seeds], chunksize=8)
        with ctx.Pool(workers, initializer=_init_worker, initargs=(job,)) as pool:
            rows = list(tqdm(pool.imap(_make_one, range(files), chunksize=2), total=files,
                             desc=f"{split} clips", unit="clip", disable=not progress))
    meta = {
        "format": "hearalert-corpus",
        "version": 1,
        "sample_rate": SAMPLE_RATE,
        "labels": list(LABELS),
        "generator": f"tools/make_corpus.py (hearalert_corpus v{GENERATOR_VERSION})",
        "seed": seed,
        "split": split,
        "clip_seconds": settings.clip_seconds,
        "settings": dataclasses.asdict(settings),
        "espeak_ng": espeak_version(),
        "speech": {"espeak_languages": speech.languages, "espeak_variants": speech.variants,
                   "utterance_bank": len(speech.bank), "recordings": len(speech.recordings)},
        "noise_recordings": len(sources.noise_recordings),
        "alert_recordings": {label: [p.name for p in paths] for label, paths in alert_recordings.items()},
        "rooms": len(sources.rooms),
        "extras": "files[NAME].alert_snr_db / speech_snr_db etc.: see tools/README.md",
    }
    write_tables(out, rows, meta)
    return summarise(rows)


def parse_splits(text: str) -> list[tuple[str, float]]:
    pairs = []
    for part in text.split(","):
        name, _, hours = part.partition("=")
        if name not in SPLITS or not hours:
            raise argparse.ArgumentTypeError(f"--splits: expected e.g. train=2,val=0.3,test=0.3, got {part!r}")
        pairs.append((name, float(hours)))
    return pairs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, type=Path, help="corpus folder (with --splits: parent of one per split)")
    p.add_argument("--split", choices=SPLITS, default="train", help="which split's sources to draw from")
    p.add_argument("--hours", type=float, default=1.0, help="total audio to generate (hours)")
    p.add_argument("--files", type=int, help="number of clips (overrides --hours)")
    p.add_argument("--splits", type=parse_splits, help="several splits at once: train=H,val=H,test=H")
    p.add_argument("--seed", type=int, default=1234, help="base seed; same seed, same bytes")
    p.add_argument("--clip-seconds", type=float, default=10.0, help="length of each clip")
    p.add_argument("--alert-free-fraction", type=float, default=0.25, help="share of clips with no alert")
    p.add_argument("--speech-dir", help="folder of real speech recordings; a file goes to the split the folder's "
                   "optional splits.tsv gives it (lines path<TAB>split, path relative to this folder), else by a "
                   "hash of its path")
    p.add_argument("--noise-dir", help="folder of real noise recordings; a file goes to the split the folder's "
                   "optional splits.tsv gives it (lines path<TAB>split, path relative to this folder), else by a "
                   "hash of its path")
    p.add_argument("--alerts-dir", help="folder with one subfolder per label of real alert recordings; a file goes "
                   "to the split the folder's optional splits.tsv gives it (lines path<TAB>split, path like "
                   "siren/a.wav), else by a hash of its path inside the label folder")
    p.add_argument("--real-alert-fraction", type=number_in(0.0, 1.0), default=0.5,
                   help="share of a label's alerts taken from its recordings in --alerts-dir, when it has any "
                        "(the rest synthesised; lower it when a label has only a few recordings)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="parallel processes")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    settings = MixSettings(clip_seconds=args.clip_seconds, alert_free_fraction=args.alert_free_fraction,
                           real_alert_fraction=args.real_alert_fraction)
    plan = [(args.out / name, name, hours) for name, hours in args.splits] if args.splits else \
        [(args.out, args.split, args.hours)]
    try:
        for out, split, hours in plan:
            files = args.files if args.files is not None else max(1, int(round(hours * 3600 / args.clip_seconds)))
            summary = generate(out, split, args.seed, files, settings, args.workers, args.speech_dir,
                               args.noise_dir, args.alerts_dir, progress=not args.no_progress)
            print(format_summary(summary, out))
    except RecordingsError as e:
        print(f"make_corpus: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
