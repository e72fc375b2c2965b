#!/usr/bin/env python3
"""What kind of error dominates a detector's results on a corpus: every reference event and every detection of
`hearalert evaluate --per-file --json` put in exactly one class, broken down by label, alert SNR and alert kind.

Event F1 says how many events were matched; this tool says why the others were not: missed outright, heard as
another label, or heard with the right label but stamped outside the onset collar (and by how much).

Times are the host's: a detection has a label, onset, offset and detected_at (when it was announced). A detection
overlaps an event when it starts before the event ends and ends after it starts. The collar (default 0.2 s, as the
host's onset-only event F1) includes its edge: |detection onset - event onset| <= collar, plus 1 us so that a
detection exactly 0.200 s off a 3-decimal annotation counts whatever the float rounding.

Reference events (annotations.tsv), first class that applies:
  found                   a detection of its label is stamped within the collar of its onset. Events are taken
                          in onset order; each takes the nearest such detection not already used by an earlier
                          event (one detection finds at most one event, as in sed_eval)
  stamped late,           detections of its label, not used to find another event, overlap it, but none is
  stamped early           stamped within the collar. The one stamped nearest its onset decides late or early
                          (a tie goes to the earlier); an event with detections on both sides counts once, in
                          that detection's class, and is also counted as "both sides" in the stamping table
  heard as another label  only detections of other labels overlap it
  missed                  no detection overlaps it

Detections not used to find an event, first class that applies:
  alert-free file         the file has no reference event (a false alarm in an alert-free file)
  mis-stamped             it overlaps an event of its label that was not found (so that event is stamped
                          late/early, and every stamped-late/early event has at least one mis-stamped detection)
  second fragment         it overlaps only found events of its label (another detection already found them)
  other label's event     it overlaps only events of other labels
  in no event             it overlaps no event (a false alarm in a file with alerts)

Breakdowns: events and detections by label (the event's / the detection's) and by alert-SNR bucket
(corpus.json files[NAME].alert_snr_db in [lower, lower + 5) dB, as `hearalert evaluate`; "no alert SNR" when
absent); events by alert kind (the synthetic family, or "recorded" for every real recording), each event paired
with its corpus.json alert: the latest alert of its label whose start_s, clipped to 0 as tools/score_recordings.py
does, is at most 0.5 s after the event's onset (a patterned alert is annotated as several events; "no alert" when
none). For stamped-late and stamped-early events, the 10/50/90 % quantiles (numpy, linear) of the
stamp error (deciding detection's onset - event onset) and of the announcement delay (its detected_at - event
onset).

Example:
  .build/release/hearalert evaluate --corpus /tmp/c/test --model models/default.safetensors \\
      --per-file --json /tmp/test-eval.json --no-enhancement
  .venv/bin/python tools/error_anatomy.py --corpus /tmp/c/test --evaluation /tmp/test-eval.json
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from corpus_format import CorpusFormatError, Event, read_corpus
from score_recordings import (COLLAR, ONSET_MATCH, RECORDED, InputError, corpus_and_evaluation_parser, detections_of,
                              file_alerts, load_detections, overlaps, write_json)

FOUND, LATE, EARLY, OTHER_LABEL, MISSED = "found", "stamped late", "stamped early", "heard as another label", "missed"
EVENT_CLASSES = (FOUND, LATE, EARLY, OTHER_LABEL, MISSED)
ALERT_FREE, MIS_STAMPED, SECOND, OTHER_EVENT, NO_EVENT = ("alert-free file", "mis-stamped", "second fragment",
                                                          "other label's event", "in no event")
DETECTION_CLASSES = (MIS_STAMPED, SECOND, OTHER_EVENT, NO_EVENT, ALERT_FREE)
EDGE = 1e-6          # s added to the collar: its edge is inside whatever the float rounding
SNR_BUCKET_DB = 5.0  # as hearalert evaluate's by_alert_snr
QUANTILES = (10, 50, 90)


def classify_file(events: list[Event], detections: list[dict], collar: float) -> tuple[list[dict], list[str | None]]:
    """One row per event ({event, class, detection index deciding it or None, both_sides}) and, per detection,
    its class (None when it found an event)."""
    used: set[int] = set()
    rows = []
    for event in sorted(events, key=lambda e: (e.onset, e.label)):
        same = [i for i, d in enumerate(detections) if d["label"] == event.label and i not in used]
        inside = [i for i in same if abs(detections[i]["onset"] - event.onset) <= collar + EDGE]
        if inside:
            chosen = min(inside, key=lambda i: (abs(detections[i]["onset"] - event.onset), detections[i]["onset"]))
            used.add(chosen)
            rows.append({"event": event, "class": FOUND, "detection": chosen, "both_sides": False})
            continue
        over = [i for i in same if overlaps(detections[i], event.onset, event.offset)]
        if over:
            errors = [detections[i]["onset"] - event.onset for i in over]
            chosen = min(over, key=lambda i: (abs(detections[i]["onset"] - event.onset), detections[i]["onset"]))
            late = detections[chosen]["onset"] > event.onset
            rows.append({"event": event, "class": LATE if late else EARLY, "detection": chosen,
                         "both_sides": min(errors) < 0 < max(errors)})
        elif any(overlaps(d, event.onset, event.offset) for d in detections):
            rows.append({"event": event, "class": OTHER_LABEL, "detection": None, "both_sides": False})
        else:
            rows.append({"event": event, "class": MISSED, "detection": None, "both_sides": False})
    found = {id(r["event"]) for r in rows if r["class"] == FOUND}
    classes: list[str | None] = []
    for i, d in enumerate(detections):
        under = [e for e in events if overlaps(d, e.onset, e.offset)]
        own = [e for e in under if e.label == d["label"]]
        if i in used:
            classes.append(None)
        elif not events:
            classes.append(ALERT_FREE)
        elif any(id(e) not in found for e in own):
            classes.append(MIS_STAMPED)
        elif own:
            classes.append(SECOND)
        elif under:
            classes.append(OTHER_EVENT)
        else:
            classes.append(NO_EVENT)
    return rows, classes


def kind_of(event: Event, alerts: list[dict]) -> str | None:
    """corpus.json kind of the alert an event belongs to: the latest alert of its label starting at most
    ONSET_MATCH after the event's onset, start_s clipped to 0 (an alert already sounding when the clip starts is
    annotated from 0). Latest rather than nearest, because one patterned alert (a T3 smoke alarm, a ring cadence)
    is annotated as several events, and only its first starts where the alert does."""
    starts = [(max(0.0, a["start_s"]), a["kind"]) for a in alerts
              if a["label"] == event.label and max(0.0, a["start_s"]) <= event.onset + ONSET_MATCH]
    return max(starts, key=lambda s: s[0])[1] if starts else None


def snr_bucket(snr: float | None) -> str:
    """The alert-SNR bucket [lower, lower + 5) dB holding `snr`, named like the model card's rows."""
    if snr is None:
        return "no alert SNR"
    lower = math.floor(snr / SNR_BUCKET_DB) * SNR_BUCKET_DB
    return f"{lower:g}..{lower + SNR_BUCKET_DB:g} dB"


def alert_kind(kind: str | None) -> str:
    if kind is None:
        return "no alert"
    return "recorded" if kind.startswith(RECORDED) else kind


def quantiles(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {f"{q}%": round(float(v), 6) for q, v in zip(QUANTILES, np.percentile(values, QUANTILES))}


def analyse(corpus_dir: Path, detections: dict[str, list[dict]], collar: float = COLLAR) -> dict:
    """Every event's and every unused detection's class, tallied overall and per breakdown; see the docstring."""
    if not collar > 0:
        raise InputError(f"--collar {collar}: must be a positive number of seconds")
    corpus = read_corpus(corpus_dir)
    event_rows, detection_rows = [], []
    for f in corpus.files:
        dets = detections_of(corpus_dir, detections, f.filename)
        snr = corpus.file_extras(f.filename).get("alert_snr_db")
        alerts = file_alerts(corpus, f.filename)
        events = corpus.events_of(f.filename)
        rows, classes = classify_file(events, dets, collar)
        for r in rows:
            e, chosen = r["event"], r["detection"]
            row = {"filename": f.filename, "label": e.label, "onset": e.onset, "offset": e.offset,
                   "class": r["class"], "alert_snr_db": snr, "kind": kind_of(e, alerts), "both_sides": r["both_sides"]}
            if chosen is not None:
                row["stamp_error_s"] = round(dets[chosen]["onset"] - e.onset, 6)
                row["announcement_delay_s"] = round(dets[chosen]["detected_at"] - e.onset, 6)
            event_rows.append(row)
        detection_rows += [{"filename": f.filename, **d, "class": c, "alert_snr_db": snr}
                           for d, c in zip(dets, classes) if c is not None]
    return {"collar_s": collar, "events": tally(event_rows, EVENT_CLASSES, with_kind=True),
            "detections": tally(detection_rows, DETECTION_CLASSES, with_kind=False),
            "stamping": stamping(event_rows), "event_list": event_rows, "detection_list": detection_rows}


def tally(rows: list[dict], classes: tuple[str, ...], with_kind: bool) -> dict:
    def count(selected: list[dict]) -> dict:
        c = Counter(r["class"] for r in selected)
        return {"total": len(selected), **{k: c[k] for k in classes}}

    def by(key) -> dict:
        groups: dict[str, list[dict]] = {}
        for r in rows:
            groups.setdefault(key(r), []).append(r)
        return {name: count(groups[name]) for name in groups}

    snr = by(lambda r: snr_bucket(r["alert_snr_db"]))
    out = {"all": count(rows), "by_label": dict(sorted(by(lambda r: r["label"]).items())),
           "by_alert_snr": {k: snr[k] for k in sorted(snr, key=snr_order)}}
    if with_kind:
        out["by_kind"] = dict(sorted(by(lambda r: alert_kind(r["kind"])).items()))
    return out


def snr_order(name: str) -> float:
    return math.inf if name == "no alert SNR" else float(name.split("..")[0])


def stamping(event_rows: list[dict]) -> dict:
    out = {}
    for cls in (LATE, EARLY):
        rows = [r for r in event_rows if r["class"] == cls]
        out[cls] = {"events": len(rows), "both_sides": sum(r["both_sides"] for r in rows),
                    "stamp_error_s": quantiles([r["stamp_error_s"] for r in rows]),
                    "announcement_delay_s": quantiles([r["announcement_delay_s"] for r in rows])}
    return out


def format_table(title: str, part: dict, classes: tuple[str, ...], breakdowns: tuple[str, ...]) -> list[str]:
    header = f"{title:<28} {'total':>6} " + " ".join(f"{c:>{max(len(c), 6)}}" for c in classes)
    lines = [header, "-" * len(header)]

    def row(name: str, c: dict) -> str:
        return f"{name[:28]:<28} {c['total']:6d} " + " ".join(f"{c[k]:>{max(len(k), 6)}d}" for k in classes)

    lines.append(row("all", part["all"]))
    for b in breakdowns:
        lines.append(f"  {b.replace('_', ' ')}")
        lines += [row("    " + name, c) for name, c in part[b].items()]
    return lines


def format_tables(result: dict) -> str:
    collar_ms = f"{result['collar_s'] * 1000:g} ms"
    lines = [f"Reference events (onset collar {collar_ms})"]
    lines += format_table("events", result["events"], EVENT_CLASSES, ("by_label", "by_alert_snr", "by_kind"))
    lines += ["", "Detections that found no event"]
    lines += format_table("detections", result["detections"], DETECTION_CLASSES, ("by_label", "by_alert_snr"))
    lines += ["", f"Stamped outside the collar (s; quantiles {'/'.join(f'{q}%' for q in QUANTILES)})",
              f"{'':<14} {'events':>6} {'both sides':>10}  {'stamp error':<24} announcement delay"]
    for cls, s in result["stamping"].items():
        def q(v):
            return " / ".join(f"{x:+.2f}" for x in v.values()) if v else "-"
        lines.append(f"{cls:<14} {s['events']:6d} {s['both_sides']:10d}  {q(s['stamp_error_s']):<24} "
                     f"{q(s['announcement_delay_s'])}")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = corpus_and_evaluation_parser(__doc__)
    p.add_argument("--collar", type=float, default=COLLAR,
                   help=f"onset collar in seconds (default {COLLAR}, the project's convention)")
    p.add_argument("--json", type=Path, help="also write the tallies, stamping quantiles and every classified "
                                             "event and detection here as JSON")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        detections = load_detections(args.evaluation, ("label", "onset", "offset", "detected_at"))
        result = analyse(args.corpus, detections, args.collar)
        print(format_tables(result))
        if args.json:
            write_json(args.json, result)
    except (InputError, CorpusFormatError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `… | head` ends the tables quietly, as a Unix filter does
    sys.exit(main())
