#!/usr/bin/env python3
"""Choose a weight file's thresholds and tracker settings again, on a development corpus, without retraining.

A detector's thresholds are a choice made after training, on a development set: how many false alarms an hour
the user lives with, against how many alerts are found. When a better development set exists (more real alerts,
every label, more real alert-free audio), that choice should be made again on it, and the network itself need
not change. This tool rebuilds the network from the file (hearalert_train/from_weights.py, checked against the
numpy reference tools/alertnet_ref.py), scores every file of --val at the host's decision step, runs the same
choice as train.py's end (hearalert_train/evaluation.choose_settings: a shared threshold x onset lag x rise
ratio, then smoothing x merge gap x off ratio x rise lookback, then, with --per-label-thresholds, each label's
own threshold against the same objective), and writes a copy of the file with only `thresholds` and `tracker`
changed and a line added to `trained_on`; weights, graph, features, labels and every other key keep their values.

The objective is train.py's: macro onset F1 on --val, under --fa-budget false alarms per hour on --val's
alert-free files (plus --fa-corpus's), with the median-latency target, minus --fa-weight per false alarm per hour.
The tuner spends whatever budget it is given, and a rate measured on a few hours is uncertain (20 false alarms
in 11 h: 1.8/h, yet anything from 1.1 to 2.8/h is consistent with it), so --fa-target T sets the budget with a
margin instead: the largest rate whose one-sided 95 % Poisson upper limit on the alert-free hours at hand stays
at or under T. --raise-only keeps per-label thresholds at or above the shared one: a dozen development alerts of a
label cannot show that a lower threshold is safe on audio the set lacks. With --scores-cache the network's scores
are kept in a file and reused by the next retune of the same weights on the same corpora, which then only chooses
(another budget, another rule) instead of scoring again.

Examples:
  .venv/bin/python tools/retune.py --model models/default.safetensors --val corpora/real-dev \\
      --fa-target 2 --per-label-thresholds --out /tmp/retuned.safetensors
  .venv/bin/python tools/score_real.py --corpus corpora/real-test --model /tmp/retuned.safetensors
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

import alertnet_ref
import export
import hearalert_corpus
from cli_types import number_in, rise_ratios
from corpus_format import Corpus, CorpusFormatError, read_corpus, refuse_unlabelled
from hearalert_train.data import Geometry
from hearalert_train.evaluation import (ClipPrediction, choose_settings, confident_budget, false_alarms_per_hour,
                                       format_report, full_report, predict)
from hearalert_train.from_weights import torch_module
from hearalert_train.tracker import TrackerSettings

RISE_DEFAULT = "none,0.3,0.2,0.1"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, type=Path, help="the weight file to retune (left as it is)")
    p.add_argument("--val", required=True, type=Path, help="development corpus the choice is made on")
    p.add_argument("--out", required=True, type=Path, help="where to write the retuned copy")
    p.add_argument("--fa-corpus", type=Path, help="more alert-free audio whose false alarms count against the budget")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--fa-budget", type=number_in(0.0), metavar="PER_HOUR",
                        help="keep false alarms per hour on the alert-free audio at or under this (default: no "
                             "budget)")
    budget.add_argument("--fa-target", type=number_in(0.0), metavar="PER_HOUR",
                        help="the budget that keeps this rate with 95 %% confidence on the alert-free hours at hand "
                             "(the largest rate whose one-sided Poisson upper limit stays under it: 2/h on 11.1 h "
                             "gives 1.26/h)")
    p.add_argument("--fa-weight", type=number_in(0.0), default=0.001,
                   help="macro F1 given up per false alarm per hour (default 0.001)")
    p.add_argument("--per-label-thresholds", action="store_true",
                   help="after the shared threshold, move each label's own threshold against the same objective")
    p.add_argument("--raise-only", action="store_true",
                   help="with --per-label-thresholds, a label's threshold may rise above the shared one but not fall "
                        "below it (a dozen development alerts of a label cannot show that a lower threshold is safe "
                        "on audio the set lacks)")
    p.add_argument("--rise-ratios", type=rise_ratios, default=rise_ratios(RISE_DEFAULT),
                   help=f"onset_rise_ratio values to try (default {RISE_DEFAULT})")
    p.add_argument("--report", type=Path, help="write the development report of the retuned file here (JSON)")
    p.add_argument("--scores-cache", type=Path, metavar="NPZ",
                   help="keep the network's scores of --val (and --fa-corpus) in this file and reuse them when the "
                        "weights, features and corpora are the same: scoring is most of a retune's time (half an "
                        "hour for 11 h of audio on 2 cores), and trying another budget or rule needs none of it again")
    args = p.parse_args(argv)
    if args.raise_only and not args.per_label_thresholds:
        p.error("--raise-only applies to --per-label-thresholds; give both")
    if args.out.resolve() == args.model.resolve():
        p.error("--out must differ from --model: the original stays as it is")
    return args


def scores_key(model, corpora) -> str:
    """What the scores depend on: the weights and graph, the features and context, and each corpus's files."""
    digest = hashlib.sha256()
    for name in sorted(model.tensors):
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(model.tensors[name]).tobytes())
    for name in ("graph", "features", "context"):
        digest.update(str(model.metadata.get(name)).encode())
    for corpus in corpora:
        digest.update(str(corpus.root.resolve()).encode())
        for f in corpus.files:
            path = corpus.audio_path(f.filename)
            digest.update(f"{f.filename}:{path.stat().st_size}:{path.stat().st_mtime_ns}".encode())
    return digest.hexdigest()


def save_scores(path: Path, key: str, scored: list[list[ClipPrediction]]) -> None:
    arrays = {"key": np.array(key)}
    for c, predictions in enumerate(scored):
        arrays[f"names{c}"] = np.array([p.name for p in predictions])
        arrays[f"durations{c}"] = np.array([p.duration for p in predictions])
        arrays[f"sizes{c}"] = np.array([len(p.scores) for p in predictions])
        for field in ("scores", "centres", "ends"):
            arrays[f"{field}{c}"] = np.concatenate([getattr(p, field) for p in predictions])
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        np.savez(f, **arrays)
    print(f"kept the scores in {path}", flush=True)


def load_scores(path: Path, key: str) -> list[list[ClipPrediction]] | None:
    """The scores kept in `path` if they were made for `key`; None (said in a line) otherwise."""
    if not path.is_file():
        return None
    try:
        return _read_scores(path, key)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as error:
        print(f"{path}: not a readable scores file ({error}); scoring again", flush=True)
        return None


def _read_scores(path: Path, key: str) -> list[list[ClipPrediction]] | None:
    with np.load(path) as data:
        if str(data["key"]) != key:
            print(f"{path}: kept for other weights or files; scoring again", flush=True)
            return None
        scored, c = [], 0
        while f"names{c}" in data:
            # Each data[...] decompresses the whole array again: read each once, then slice it per clip (the
            # slices share its buffer; reading per clip kept one whole copy alive per clip, tens of GB on dev5).
            names, durations, sizes = data[f"names{c}"], data[f"durations{c}"], data[f"sizes{c}"]
            fields = [data[f"{field}{c}"] for field in ("scores", "centres", "ends")]
            bounds = np.concatenate([[0], np.cumsum(sizes)])
            scored.append([ClipPrediction(str(name), float(duration), *(array[a:b] for array in fields))
                           for name, duration, a, b in zip(names, durations, bounds[:-1], bounds[1:])])
            c += 1
    return scored


def scores_of(model, corpora: list[Corpus], cache: Path | None) -> list[list[ClipPrediction]]:
    """The network's scores of every file of `corpora`: from `cache` when it holds them for these weights and files,
    else computed (minutes for a real set) and kept there."""
    key = scores_key(model, corpora)
    scored = load_scores(cache, key) if cache else None
    if scored is not None:
        print(f"scores of {', '.join(str(c.root) for c in corpora)} from {cache}", flush=True)
        return scored
    spec = json.loads(model.metadata["features"])
    geometry = Geometry.of(spec, model.frames, model.step, model.start_padding)
    network = torch_module(model)
    t0 = time.time()
    print(f"scoring {sum(len(c.files) for c in corpora)} files of {', '.join(str(c.root) for c in corpora)}",
          flush=True)
    scored = [predict(network, c, spec, geometry) for c in corpora]
    print(f"scored in {time.time() - t0:.0f} s", flush=True)
    if cache:
        save_scores(cache, key, scored)
    return scored


def retune(args: argparse.Namespace) -> dict:
    try:
        model = alertnet_ref.load(args.model)
    except (OSError, alertnet_ref.ModelError) as error:
        raise SystemExit(f"Error: {args.model}: {error}") from None
    labels = model.labels
    if labels != list(hearalert_corpus.LABELS):
        raise SystemExit(f"Error: {args.model} has labels {labels}; the corpora score {list(hearalert_corpus.LABELS)}")
    try:
        val = refuse_unlabelled(read_corpus(args.val), "--val")
        fa_corpus = refuse_unlabelled(read_corpus(args.fa_corpus), "--fa-corpus") if args.fa_corpus else None
    except CorpusFormatError as error:
        raise SystemExit(f"Error: {error}") from None
    if args.fa_target is not None:
        hours = sum(false_alarms_per_hour(c, {})[2] for c in (val, fa_corpus) if c is not None)
        try:
            args.fa_budget = confident_budget(args.fa_target, hours)
        except ValueError as error:
            raise SystemExit(f"Error: --fa-target: {error}") from None
        print(f"budget {args.fa_budget:.3f} false alarms/h: {args.fa_target:g}/h kept with 95 % confidence on "
              f"{hours:.2f} h of alert-free audio", flush=True)
    before = TrackerSettings(**json.loads(model.metadata.get("tracker", "{}")))
    corpora = [c for c in (val, fa_corpus) if c is not None]
    scored = scores_of(model, corpora, args.scores_cache)
    predictions = scored[0]
    fa_audio = (fa_corpus, scored[1]) if fa_corpus else None
    print("choosing settings", flush=True)
    thresholds, settings, summary = choose_settings(
        val, predictions, labels, onset_lag=before.onset_lag, rise_ratios=args.rise_ratios,
        per_label=args.per_label_thresholds, fa_weight=args.fa_weight, fa_budget=args.fa_budget, fa_audio=fa_audio,
        raise_only=args.raise_only)
    print(f"thresholds {model.thresholds} -> {thresholds}\ntracker {before.as_metadata()} -> "
          f"{settings.as_metadata()}\n{summary}", flush=True)

    metadata = dict(model.metadata)
    context = {"frames": model.frames, "step": model.step}
    if model.start_padding:
        context["start_padding"] = model.start_padding
    extra = {k: v for k, v in metadata.items() if k not in
             {"format", "format_version", "model_name", "trained_on", "features", "context", "labels", "thresholds",
              "graph", "tracker"}}
    extra["tracker"] = settings.as_metadata()
    budget = f" under {args.fa_budget:g} false alarms/h" if args.fa_budget is not None else ""
    trained_on = (metadata.get("trained_on", "") + f"; thresholds and tracker retuned on {val.root.name} "
                  f"({len(val.files)} files){budget} by retune.py")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    export.export(args.out, model.tensors, model.graph, json.loads(model.metadata["features"]), labels,
                  [float(t) for t in thresholds], context, metadata.get("model_name", ""), trained_on,
                  extra_metadata=extra)
    print(f"wrote {args.out}", flush=True)

    report = full_report(val, predictions, labels, thresholds, settings)
    print(format_report(report, labels), flush=True)
    if args.report:
        args.report.write_text(json.dumps({"thresholds": thresholds, "tracker": settings.as_metadata(),
                                           "objective_summary": summary, "val": report}, indent=1) + "\n")
    return report


def main(argv: list[str] | None = None) -> int:
    retune(parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
