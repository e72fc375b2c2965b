"""Writing a corpus in the format of shared/docs/CORPUS.md, and summarising it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import soundfile as sf

from . import LABELS, SAMPLE_RATE
from .mixing import Clip

SNR_BUCKETS = [(-10, -5), (-5, 0), (0, 5), (5, 10), (10, 15)]


def prepare(out: Path) -> None:
    for sub in ("audio", "clean", "alerts"):
        (out / sub).mkdir(parents=True, exist_ok=True)


def write_clip(out: Path, name: str, clip: Clip) -> None:
    """The three sample-aligned 16-bit WAVs of one clip: mixture, clean speech, alert component."""
    for sub, x in (("audio", clip.mixture), ("clean", clip.clean), ("alerts", clip.alerts)):
        sf.write(str(out / sub / name), np.clip(x, -1.0, 1.0), SAMPLE_RATE, subtype="PCM_16", format="WAV")


def write_tables(out: Path, rows: list[dict], meta: dict) -> None:
    """files.tsv, annotations.tsv and corpus.json; `rows` hold name, duration, events and info per clip."""
    with open(out / "files.tsv", "w", encoding="utf-8", newline="\n") as f:
        f.write("filename\tduration\n")
        for r in rows:
            f.write(f"{r['name']}\t{r['duration']:.3f}\n")
    with open(out / "annotations.tsv", "w", encoding="utf-8", newline="\n") as f:
        f.write("filename\tonset\toffset\tevent_label\n")
        for r in rows:
            for onset, offset, label in r["events"]:
                f.write(f"{r['name']}\t{onset:.3f}\t{offset:.3f}\t{label}\n")
    meta = dict(meta)
    meta["files"] = {r["name"]: r["info"] for r in rows}
    meta["summary"] = summarise(rows)
    with open(out / "corpus.json", "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1, sort_keys=False)
        f.write("\n")


def summarise(rows: list[dict]) -> dict:
    events = Counter(label for r in rows for _, _, label in r["events"])
    snrs = [r["info"]["alert_snr_db"] for r in rows if r["info"]["alert_snr_db"] is not None]
    hist = {f"{a}..{b}": sum(1 for s in snrs if a <= s < b or (b == SNR_BUCKETS[-1][1] and s == b))
            for a, b in SNR_BUCKETS}
    return {
        "files": len(rows),
        "hours": round(sum(r["duration"] for r in rows) / 3600, 4),
        "alert_free_files": sum(1 for r in rows if not r["events"]),
        "events_per_label": {label: events.get(label, 0) for label in LABELS},
        "alert_snr_histogram_db": hist,
    }


def format_summary(summary: dict, out: Path) -> str:
    lines = [f"wrote {summary['files']} files ({summary['hours']:.2f} h, {summary['alert_free_files']} alert-free) "
             f"to {out}", "events per label:"]
    lines += [f"  {label:<12} {count}" for label, count in summary["events_per_label"].items()]
    lines.append("alert-to-background SNR (files per bucket, dB):")
    top = max(summary["alert_snr_histogram_db"].values()) or 1
    for bucket, count in summary["alert_snr_histogram_db"].items():
        lines.append(f"  {bucket:>8} {count:5d} {'#' * int(round(40 * count / top))}")
    return "\n".join(lines)
