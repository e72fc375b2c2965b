#!/usr/bin/env python3
"""Score detectors on a set of real recordings (tools/make_real_set.py): false alarms per hour on real
alert-free audio first, then the real alerts found, F1 at alert SNR >= 0 dB and the announcement delay.

A weight file is run by the host itself (`hearalert evaluate --per-file --json`, the product's own path: features,
C core, tracker); the YAMNet teacher (tools/yamnet.py) by its window scores, with window-bound onsets (an event
starts at the start of the first 0.96-s window over the threshold and is announced at that window's end). Both
go through the same report (hearalert_train/real_report.py).

With --heard (a set the model was trained on, repeatable) the alerts found are split into the recordings the model
heard in training and the rest. Score a set of the train role made the way dev and test are (its alerts alone and
in a few backgrounds) when the model heard only some of its alerts (the role has grown since, or a run left some
out): a model that finds nearly every device it heard and few of the others has learned its recordings, not the
alerts.

Examples:
  .venv/bin/python tools/score_real.py --corpus corpora/real-test --model models/default.safetensors
  .venv/bin/python tools/score_real.py --corpus corpora/real-dev --teacher --teacher-threshold 0.3,0.5,0.7 \\
      --cache corpora/cache --json out/teacher-dev.json
  .venv/bin/python tools/make_real_set.py --real corpora/real --role train --out corpora/real-train-eval --seed 13 \\
      --kinds isolated,mixture --mixtures-per-alert 4
  .venv/bin/python tools/score_real.py --corpus corpora/real-train-eval --model models/default.safetensors \\
      --heard corpora/real-train-alerts64     # the 64 real alerts it was trained on (EXPERIMENTS.md)
  .venv/bin/python tools/score_real.py --corpus corpora/real-test --host-report out/test.json   # already run

Extra host flags (thresholds, tracker overrides) follow `--`: `... --model M -- --threshold 0.9`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from corpus_format import CorpusFormatError, read_corpus, refuse_unlabelled
from hearalert_corpus import LABELS
from hearalert_train.distill import teacher_scores
from hearalert_train.real_report import format_real_report, heard_sources, real_report
from hearalert_train.tracker import Detection, TrackerSettings, track

REPO = Path(__file__).resolve().parent.parent
# The teacher's events: no smoothing or minimum duration (its windows already span 0.96 s), pauses under a
# second inside one event as CORPUS.md has them.
TEACHER_TRACKER = TrackerSettings(smoothing_frames=1, off_ratio=0.5, min_duration=0.0, merge_gap=1.0)


def host_detections(report: dict) -> dict[str, list[Detection]]:
    """Per-file events of a `hearalert evaluate --per-file --json` report."""
    try:
        return {f["filename"]: [Detection(d["label"], float(d["onset"]), float(d["offset"]), float(d["detected_at"]))
                                for d in f["detections"]] for f in report["files"]}
    except (KeyError, TypeError) as error:
        raise SystemExit(f"error: the host report has no per-file detections ({error}); run hearalert evaluate "
                         f"with --per-file --json") from None


def run_host(binary: Path, corpus: Path, model: Path, extra: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        command = [str(binary), "evaluate", "--corpus", str(corpus), "--model", str(model), "--per-file",
                   "--no-enhancement", "--json", str(out), *extra]
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1].removeprefix("Error: ")
            raise SystemExit(f"error: hearalert evaluate failed (exit {done.returncode}): {last}")
        return json.loads(out.read_text())


def teacher_detections(corpus, scores: dict[str, np.ndarray], threshold: float) -> dict[str, list[Detection]]:
    """The teacher's events at one threshold: each starts where its first window over the threshold starts and
    is announced when that window ends."""
    import yamnet

    out = {}
    for f in corpus.files:
        s = scores[f.filename]
        starts = np.arange(len(s)) * yamnet.HOP_SECONDS
        ends = np.minimum(starts + yamnet.WINDOW_SAMPLES / yamnet.SAMPLE_RATE, f.duration)
        out[f.filename] = track(s, starts, ends, list(LABELS), [threshold] * len(LABELS), TEACHER_TRACKER,
                                f.duration)
    return out


def _thresholds(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        values = []
    if not values or not all(0 < v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"expected thresholds in (0, 1) separated by commas, got {text!r}")
    return values


def parse_args(argv: list[str] | None = None) -> tuple[argparse.Namespace, list[str]]:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True, type=Path, help="a set made by tools/make_real_set.py")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--model", type=Path, help="weight file to run through `hearalert evaluate`")
    what.add_argument("--host-report", type=Path, help="a `hearalert evaluate --per-file --json` report of it")
    what.add_argument("--teacher", action="store_true", help="score the YAMNet teacher (tools/yamnet.py)")
    p.add_argument("--teacher-threshold", type=_thresholds, default=[0.5],
                   help="teacher thresholds to report, comma-separated (default 0.5)")
    p.add_argument("--hearalert", type=Path, default=REPO / ".build/release/hearalert",
                   help="the host binary (default: the release build of this checkout)")
    p.add_argument("--cache", type=Path, help="folder for the teacher's cached scores")
    p.add_argument("--json", type=Path, help="write the report(s) here")
    p.add_argument("--heard", type=Path, action="append", default=[], metavar="CORPUS",
                   help="a make_real_set.py set the model was trained on (repeatable): the alerts found are also "
                        "counted apart for the recordings it holds and for the others")
    args = p.parse_args(argv)
    if extra and not args.model:
        p.error("host flags after -- need --model")
    return args, extra


def main(argv: list[str] | None = None) -> int:
    args, extra = parse_args(argv)
    try:
        corpus = refuse_unlabelled(read_corpus(args.corpus), "scored")
        heard = heard_sources([read_corpus(path) for path in args.heard]) if args.heard else None
    except CorpusFormatError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if heard is not None and not heard:
        print(f"error: --heard {', '.join(map(str, args.heard))}: no alert file naming its recording (`source`); "
              f"give the set of real alerts the model was trained on (make_real_set.py --kinds isolated or mixture)",
              file=sys.stderr)
        return 1
    reports = {}
    if args.teacher:
        scores = teacher_scores(corpus, args.cache)
        for threshold in args.teacher_threshold:
            reports[f"teacher@{threshold:g}"] = real_report(corpus, teacher_detections(corpus, scores, threshold),
                                                            list(LABELS), heard)
    else:
        if args.model and not args.hearalert.exists():
            print(f"error: {args.hearalert} not found; build it with `swift build -c release` or pass --hearalert",
                  file=sys.stderr)
            return 1
        host = json.loads(args.host_report.read_text()) if args.host_report else \
            run_host(args.hearalert, args.corpus, args.model, extra)
        name = str(args.model or args.host_report) + (" " + " ".join(extra) if extra else "")
        reports[name] = real_report(corpus, host_detections(host), list(LABELS), heard)
    for name, report in reports.items():
        print(format_real_report(f"{name} on {args.corpus}", report, list(LABELS)))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"corpus": str(args.corpus), "reports": reports}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
