"""The operating curve of a detector file on a real set (tools/make_real_set.py): its false alarms on the set's
alert-free audio and the real alerts it finds at each of a row of thresholds, every label at the same threshold (or
at a floor given for it), with one tracker for every file compared.

A tuned file's figures say where its tuner landed, not what its network can do: three networks whose tuned counts
on one development set were 71, 61 and 59 alerts found each found 78-88 at 12-14 false alarms on the next one
(models/EXPERIMENTS.md, 2026-11-29). Along one curve, with one tracker (`--tracker-from`), networks are compared
and not tuners. The detections come from the Python tracker mirror (hearalert_train/tracker.py) run on the
network's scores, which `retune.py --scores-cache` keeps and this tool reads or writes in the same file.

    .venv/bin/python tools/operating_curve.py --model models/default.safetensors --corpus corpora/real-dev \\
        --scores-cache dev-scores.npz --floor siren=0.98
    .venv/bin/python tools/operating_curve.py --model candidate.safetensors --corpus corpora/real-dev \\
        --tracker-from models/default.safetensors
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import alertnet_ref
import hearalert_corpus
from cli_types import number_in
from corpus_format import Corpus, CorpusFormatError, read_corpus, refuse_unlabelled
from hearalert_train.evaluation import ClipPrediction, detect
from hearalert_train.real_report import real_report
from hearalert_train.tracker import TrackerSettings
from retune import scores_of

DEFAULT_THRESHOLDS = (0.8, 0.85, 0.9, 0.93, 0.95, 0.96, 0.97, 0.98, 0.99, 0.995)


def _thresholds(text: str) -> list[float]:
    parse = number_in(0.0, 1.0)
    values = sorted({parse(part) for part in text.split(",") if part.strip()})
    if not values:
        raise argparse.ArgumentTypeError(f"expected thresholds like 0.9,0.95,0.98, got {text!r}")
    return values


def _floor(text: str) -> tuple[str, float]:
    label, _, value = text.partition("=")
    if label not in hearalert_corpus.LABELS:
        raise argparse.ArgumentTypeError(f"{label!r} is not a label ({', '.join(hearalert_corpus.LABELS)})")
    return label, number_in(0.0, 1.0)(value)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, type=Path, help="the detector weight file whose network is scored")
    p.add_argument("--corpus", required=True, type=Path, help="a real set (make_real_set.py) to draw the curve on")
    p.add_argument("--scores-cache", type=Path, metavar="NPZ",
                   help="the network's scores of --corpus, read if this file holds them (retune.py's cache), "
                        "else computed and kept there")
    p.add_argument("--tracker-from", type=Path, metavar="FILE",
                   help="take the tracker settings from this weight file instead of --model's: the same tracker for "
                        "every network compared (default: --model's own)")
    p.add_argument("--thresholds", type=_thresholds, default=list(DEFAULT_THRESHOLDS),
                   help="comma-separated thresholds, one point of the curve each (default "
                        f"{','.join(f'{t:g}' for t in DEFAULT_THRESHOLDS)})")
    p.add_argument("--floor", type=_floor, action="append", default=[], metavar="LABEL=T",
                   help="a label's threshold never below T (e.g. siren=0.98, where music raises false sirens); "
                        "repeatable")
    p.add_argument("--json", type=Path, help="also write the curve here")
    return p.parse_args(argv)


def curve(corpus: Corpus, predictions: list[ClipPrediction], labels: list[str], thresholds: list[float],
          settings: TrackerSettings, floors: dict[str, float]) -> list[dict]:
    """One point per threshold: each label's threshold (the row's, or its floor), the false alarms, the isolated
    and mixed alerts found, F1 at >= 0 dB and the median announcement delay, as real_report counts them."""
    points = []
    for t in thresholds:
        per_label = [max(t, floors.get(label, 0.0)) for label in labels]
        report = real_report(corpus, detect(predictions, labels, per_label, settings), labels)
        f1 = report.get("f1_at_0db_and_above", {}).get("macro")
        points.append({"threshold": t, "thresholds": per_label,
                       "false_alarms": report["false_alarms"]["count"],
                       "false_alarms_per_hour": report["false_alarms"]["per_hour"],
                       "isolated_found": report["isolated"]["found"], "isolated": report["isolated"]["events"],
                       "mixed_found": report["mixtures_found"]["found"], "mixed": report["mixtures_found"]["events"],
                       "f1_at_0db_and_above": f1, "announcement_median_s": report["announcement_delay"]["median_s"]})
    return points


def format_curve(points: list[dict]) -> str:
    lines = ["threshold  false alarms (/h)  isolated  mixed  found  F1>=0dB  announced (median)"]
    for p in points:
        f1 = "-" if p["f1_at_0db_and_above"] is None else f"{p['f1_at_0db_and_above']:.3f}"
        delay = "-" if p["announcement_median_s"] is None else f"{p['announcement_median_s']:.3f} s"
        lines.append(f"{p['threshold']:<9g}  {p['false_alarms']:>4} ({p['false_alarms_per_hour']:>5.2f})      "
                     f"{p['isolated_found']:>3}/{p['isolated']:<4} {p['mixed_found']:>3}/{p['mixed']:<4} "
                     f"{p['isolated_found'] + p['mixed_found']:>4}   {f1:>6}  {delay}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        model = alertnet_ref.load(args.model)
        tracker_file = alertnet_ref.load(args.tracker_from) if args.tracker_from else model
    except (OSError, alertnet_ref.ModelError) as error:
        raise SystemExit(f"Error: {error}") from None
    if model.labels != list(hearalert_corpus.LABELS):
        raise SystemExit(f"Error: {args.model} has labels {model.labels}; the corpora score "
                         f"{list(hearalert_corpus.LABELS)}")
    try:
        corpus = refuse_unlabelled(read_corpus(args.corpus), "--corpus")
    except CorpusFormatError as error:
        raise SystemExit(f"Error: {error}") from None
    settings = TrackerSettings(**json.loads(tracker_file.metadata.get("tracker", "{}")))
    predictions = scores_of(model, [corpus], args.scores_cache)[0]
    floors = dict(args.floor)
    print(f"{args.model} on {args.corpus}; tracker of {args.tracker_from or args.model}: {settings.as_metadata()}"
          + (f"; floors {floors}" if floors else ""), flush=True)
    points = curve(corpus, predictions, model.labels, args.thresholds, settings, floors)
    print(format_curve(points))
    if args.json:
        args.json.write_text(json.dumps({"model": str(args.model), "corpus": str(args.corpus),
                                         "tracker": settings.as_metadata(), "floors": floors, "points": points},
                                        indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
