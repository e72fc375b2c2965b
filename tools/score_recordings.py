#!/usr/bin/env python3
"""How a detector does on the real alert recordings mixed into a corpus: one row per recording, and real alerts
it has never heard against synthetic ones at the same alert SNRs.

A corpus from make_corpus.py --alerts-dir names, for every alert of every file, the recording it came from
(corpus.json files[NAME].alerts[].kind = "recorded:<package>__<file>") or its synthetic family. Event F1 mixes
them all; this tool keeps them apart, so an evaluator can see whether the model knows real sirens, horns and
ringtones or only the few recordings it was trained on (a recording is "heard" when --sources lists it in the
train split).

It scores the detections the host made: run `hearalert evaluate --per-file --json EVAL.json` on the corpus
first. For each alert, its reference event is the annotated event of its label that starts where it starts.
  found    a detection of the alert's label overlaps the event's first 3 s (or the whole event when shorter),
           with the 200-ms onset collar added at the end, so an announcement a little late still counts
  onset    a detection of its label is stamped within the 200-ms collar of the event's onset
  instead  detections of other labels overlapping the same span

Example:
  .build/release/hearalert evaluate --corpus /tmp/c/test --model models/default.safetensors \\
      --per-file --json /tmp/test-eval.json --no-enhancement
  .venv/bin/python tools/score_recordings.py --corpus /tmp/c/test --evaluation /tmp/test-eval.json
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from corpus_format import CorpusFormatError, read_corpus
from hearalert_corpus.sources import RecordingsError, recording_file_name

RECORDED = "recorded:"
COLLAR = 0.2          # s, sed_eval's onset collar, as the host's evaluation
FIRST_SECONDS = 3.0   # s of an alert in which an announcement counts as finding it
ONSET_MATCH = 0.5     # s, how far an annotated event may start from its alert's start_s (clipped to the clip)


class InputError(Exception):
    """Bad input; the message is one line naming the file."""


@dataclass
class Tally:
    alerts: int = 0
    found: int = 0
    onset: int = 0
    instead: Counter = field(default_factory=Counter)

    def as_dict(self) -> dict:
        return {"alerts": self.alerts, "found": self.found, "onset": self.onset, "instead": dict(self.instead)}


def heard_recordings(sources: Path | None) -> set[str]:
    """File names (as fetch_alert_recordings.py writes them) of the recordings listed in the train split of a
    SOURCES.tsv (models/SOURCES.tsv: source, version, path_inside, licence, used_for, split)."""
    if sources is None:
        return set()
    try:
        with open(sources, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
    except OSError as e:
        raise InputError(f"{sources}: cannot read ({e.strerror})") from e
    needed = {"source", "path_inside", "split"}
    if not rows or not needed <= set(rows[0]):
        raise InputError(f"{sources}: expected a tab-separated table with columns {', '.join(sorted(needed))}")
    return {recording_file_name(r["source"], r["path_inside"]) for r in rows if r["split"] == "train"}


def load_detections(path: Path) -> dict[str, list[dict]]:
    """filename -> detections ({label, onset, offset}) from `hearalert evaluate --per-file --json`."""
    try:
        report = json.loads(path.read_text())
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from e
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not JSON ({e.msg} at line {e.lineno})") from e
    files = report.get("files") if isinstance(report, dict) else None
    if not isinstance(files, list) or not files:
        raise InputError(f"{path}: no per-file results; run hearalert evaluate with --per-file --json")
    detections = {}
    for index, f in enumerate(files):
        try:
            detections[f["filename"]] = [{"label": str(d["label"]), "onset": float(d["onset"]),
                                          "offset": float(d["offset"])} for d in f["detections"]]
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(f"{path}: files[{index}] is not a file result with a filename and detections "
                             f"(label, onset, offset): {e!r}") from e
    return detections


def overlaps(d: dict, start: float, end: float) -> bool:
    return d["onset"] < end and d["offset"] > start


def score(corpus_dir: Path, detections: dict[str, list[dict]], heard: set[str]) -> dict:
    """Per recording and per (kind of alert, alert SNR sign) tallies; see the module docstring."""
    corpus = read_corpus(corpus_dir)
    if not any(corpus.file_extras(f.filename).get("alerts") for f in corpus.files):
        raise InputError(f"{corpus_dir}: corpus.json lists no alerts per file (files[NAME].alerts), so real "
                         "recordings cannot be told from synthetic alerts; make the corpus with make_corpus.py")
    recordings: dict[str, Tally] = {}
    groups: dict[str, Tally] = {}
    for f in corpus.files:
        extras = corpus.file_extras(f.filename)
        if f.filename not in detections:
            raise InputError(f"{corpus_dir}: {f.filename} has no detections in the evaluation; was it made on "
                             "this corpus?")
        dets = detections[f.filename]
        snr = extras.get("alert_snr_db")
        for alert in extras.get("alerts", []):
            start = max(0.0, alert["start_s"])
            candidates = [e for e in corpus.events_of(f.filename)
                          if e.label == alert["label"] and abs(e.onset - start) <= ONSET_MATCH]
            if not candidates:
                continue  # the alert starts after the clip ends, or merged into an earlier event of its label
            event = min(candidates, key=lambda e: abs(e.onset - start))
            end = min(event.offset, event.onset + FIRST_SECONDS) + COLLAR
            same = [d for d in dets if d["label"] == alert["label"]]
            found = any(overlaps(d, event.onset, end) for d in same)
            onset = any(abs(d["onset"] - event.onset) <= COLLAR for d in same)
            instead = Counter(d["label"] for d in dets
                              if d["label"] != alert["label"] and overlaps(d, event.onset, end))
            kind = alert["kind"]
            if kind.startswith(RECORDED):
                name = kind[len(RECORDED):]
                group = "real, heard" if name in heard else "real, never heard"
                tallies = [recordings.setdefault(f"{alert['label']}\t{name}", Tally())]
            else:
                group = "synthetic"
                tallies = []
            if snr is not None:
                tallies.append(groups.setdefault(f"{group}\t{'>= 0 dB' if snr >= 0 else '< 0 dB'}", Tally()))
            for t in tallies:
                t.alerts += 1
                t.found += found
                t.onset += onset
                t.instead.update(instead)
    return {"recordings": recordings, "groups": groups}


def format_tables(result: dict, heard: set[str]) -> str:
    lines = [f"{'label':<12} {'recording':<48} {'heard':>5} {'alerts':>6} {'found':>6} {'onset':>6}  instead"]
    for key, t in sorted(result["recordings"].items()):
        label, name = key.split("\t")
        instead = ", ".join(f"{k} {v}" for k, v in t.instead.most_common())
        lines.append(f"{label:<12} {name[:48]:<48} {'yes' if name in heard else 'no':>5} {t.alerts:6d} "
                     f"{t.found:6d} {t.onset:6d}  {instead}")
    lines.append("")
    lines.append(f"{'alerts':<20} {'alert SNR':<9} {'count':>6} {'found':>6} {'share':>6}")
    for key, t in sorted(result["groups"].items()):
        group, bucket = key.split("\t")
        share = f"{t.found / t.alerts:.0%}" if t.alerts else "-"
        lines.append(f"{group:<20} {bucket:<9} {t.alerts:6d} {t.found:6d} {share:>6}")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True, type=Path, help="corpus folder (made by make_corpus.py)")
    p.add_argument("--evaluation", required=True, type=Path,
                   help="hearalert evaluate --per-file --json output for that corpus")
    p.add_argument("--sources", type=Path, default=Path(__file__).resolve().parent.parent / "models" / "SOURCES.tsv",
                   help="the model's SOURCES.tsv: its train-split recordings count as heard "
                        "(default models/SOURCES.tsv, the default model's)")
    p.add_argument("--json", type=Path, help="also write the tallies here as JSON")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        heard = heard_recordings(args.sources)
        result = score(args.corpus, load_detections(args.evaluation), heard)
    except (InputError, CorpusFormatError, RecordingsError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(format_tables(result, heard))
    if args.json:
        args.json.write_text(json.dumps({part: {k.replace("\t", " | "): t.as_dict() for k, t in tallies.items()}
                                         for part, tallies in result.items()}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
