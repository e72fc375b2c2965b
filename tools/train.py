#!/usr/bin/env python3
"""Train the HearAlert alert detector on a corpus (shared/docs/CORPUS.md) and export an alertnet weight file.

Features come from tools/features.py with the exact FeatureSpec written into the model (the one definition the
Swift host uses too), plus per-band normalisation learned from the training mixtures. The network is the default
alertnet CNN (tools/export.py: default_architecture) over a window of --frames feature frames with a multi-label
sigmoid output; a decision is made every --step frames.

Timing. The host announces an event when the window that confirms it ends; the evaluator matches onsets within
200 ms and measures latency as announcement time minus true onset. The network is trained to fire early: a label
is present when its events cover the last --region seconds of the window (soft, by coverage), whatever the
window's length, so a long context (--frames) helps tell alerts apart without delaying them. The host stamps
each decision at `window end - onset_lag` (tracker key; tuned here around --onset-lag) and, with
`onset_rise_ratio`, an event's onset where its score began to rise; at a stream's start the first window is
filled with --start-padding copies of the first frame (context key start_padding), so the first decision comes
after (frames - start_padding) frames rather than a whole window; training sees such windows too.

Training: class-balanced windows, optionally a share of hard-negative windows (--hard-negatives: backgrounds
holding music, whistling, chirps, clicks or TV speech, alert left out), augmentation in the Mel power domain
(alert SNR, a second alert, another clip's background, level, band shift, frequency masking) and random
spectral tilt, early stopping on validation event F1 (sed_eval, 200 ms collar, through a Python mirror of the
host's event tracker); then the threshold and tracker settings are tuned on validation (false alarms on the
alert-free audio within --fa-budget first, when given; then median latency within 0.3 s; then macro onset F1 minus
--fa-weight per false alarm per hour) and stored in the file. A per-class report ends the run.

Distillation (--distill CORPUS, repeatable): real recordings without labels, mostly alert-free, where the student
learns the YAMNet teacher's six label scores (tools/yamnet.py) as soft targets, aligned to its own window ends; a
--distill-fraction of every batch comes from them, and a share of those from windows the student fired on while
the teacher did not (mined at every validation run). --select-fa-weight makes early stopping count false alarms on
validation's alert-free files, so a real development set chooses the checkpoint that is quiet on real sound;
--select-fa-target scores each checkpoint at the threshold a false-alarm budget puts it at instead. A set
marked unlabelled in corpus.json (make_real_set.py --kinds effects: sound effects, alert-like or not, that no one
labelled) is taken as --distill only: as --train, --val, --test or --fa-corpus its event-free files would count as
alert-free, so those refuse it.

Example:
  .venv/bin/python tools/train.py --train /tmp/corpus/train --val /tmp/corpus/val --test /tmp/corpus/test \\
      --out models/default.safetensors --report /tmp/report.json
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from threadpoolctl import threadpool_limits

import alertnet_ref
import export
from cli_types import number_in, rise_ratios
import features as feature_lib
from corpus_format import Corpus, CorpusFormatError, read_corpus, refuse_unlabelled
import hearalert_corpus
from hearalert_train.averaging import weight_average
from hearalert_train.data import Geometry, WindowSampler, load_features
from hearalert_train.distill import DistillSampler, teacher_scores
from hearalert_train.evaluation import (confident_budget, detect, event_f1, false_alarm_report,
                                        false_alarms_per_hour, choose_settings, format_report, full_report,
                                        operating_point, predict)
from hearalert_train.tracker import TrackerSettings
from hearalert_train import warm_start

LABELS = list(hearalert_corpus.LABELS)  # the detector's outputs, in their one definition's order


def model_spec() -> dict:
    """The default model's FeatureSpec before normalisation: 32 ms Hann frames every 16 ms, 64 log-Mel bands."""
    spec = feature_lib.default_spec()
    spec.update({"sample_rate": 16000, "n_fft": 512, "win_length": 512, "hop_length": 256, "window": "hann",
                 "kind": "log_mel", "n_mels": 64, "fmin": 50.0, "fmax": 8000.0, "mel_scale": "slaney",
                 "mel_norm": "slaney", "power": 2.0, "log_base": 10.0, "log_multiplier": 10.0, "log_floor": 1e-10,
                 "normalization": None})
    return spec


def normalisation(clips) -> dict:
    """Per-band mean and standard deviation of the training mixtures' features."""
    allf = np.concatenate([c.mixture for c in clips]).astype(np.float64)
    std = np.maximum(allf.std(axis=0), 1e-3)
    return {"mean": [round(float(v), 5) for v in allf.mean(axis=0)], "std": [round(float(v), 5) for v in std]}


def spectral_tilt(x: torch.Tensor, std: torch.Tensor, rng: np.random.Generator, p: float = 0.5) -> torch.Tensor:
    """Random microphone/room colouring in the feature domain: a dB tilt plus a smooth bump across the bands,
    divided by each band's normalisation std (the features are normalised log-Mel dB)."""
    b, _, _, f = x.shape
    pos = torch.linspace(-1, 1, f)
    tilt = torch.from_numpy(rng.uniform(-6, 6, size=(b, 1)).astype(np.float32)) * pos
    centre = torch.from_numpy(rng.uniform(-1, 1, size=(b, 1)).astype(np.float32))
    width = torch.from_numpy(rng.uniform(0.1, 0.5, size=(b, 1)).astype(np.float32))
    gain = torch.from_numpy(rng.uniform(-6, 6, size=(b, 1)).astype(np.float32))
    db = tilt + gain * torch.exp(-0.5 * ((pos - centre) / width) ** 2)
    apply = torch.from_numpy((rng.random(b) < p).astype(np.float32))[:, None]
    return x + (apply * db / std)[:, None, None, :]


def build_model(frames: int, bins: int, n_labels: int,
                channels: list[int] = (16, 32, 64, 128)) -> torch.nn.Sequential:
    """The default alertnet CNN (tools/export.py: default_architecture) with a time-aware head.

    The default head averages over time and frequency, so the network cannot tell an alert that has just begun
    (end of the window) from one that has just stopped (start of the window): both fill the same share of the
    window. Averaging over frequency only and keeping the last feature map's time positions (3 for 48 frames)
    lets it learn *where* the alert is, which is what firing a fixed delay after an onset needs. The cost is
    a 384x6 instead of 128x6 dense layer; the ops (avgpool2d, flatten, dense) are all in FORMAT.md.
    """
    convs = list(export.default_architecture(n_labels, channels))[:-4]  # drop global pool, dense, sigmoid
    with torch.no_grad():
        _, channels, height, width = torch.nn.Sequential(*convs)(torch.zeros(1, 1, frames, bins)).shape
    return torch.nn.Sequential(*convs, torch.nn.AvgPool2d((1, width)), torch.nn.Flatten(), torch.nn.Dropout(0.2),
                               torch.nn.Linear(channels * height, n_labels), torch.nn.Sigmoid())


def evaluate_default(model, corpus, spec, geometry, onset_lag: float | None,
                     fa_weight: float = 0.0, fa_budget: float | None = None) -> tuple[float, list, float]:
    """Validation macro onset F1 of the network as it stands, minus `fa_weight` per false alarm per hour on
    validation's alert-free files; the predictions it was computed from; and that false-alarm rate. With
    `fa_budget`, the figure at the operating point instead (evaluation.operating_point) and the rate there."""
    preds = predict(model, corpus, spec, geometry)
    if fa_budget is not None:
        figure, _, fa = operating_point(corpus, preds, LABELS, fa_budget, onset_lag)
        return figure, preds, fa
    # Raw decisions, lightly merged: early stopping compares checkpoints, not tracker settings (tuned afterwards).
    untuned = TrackerSettings(smoothing_frames=1, min_duration=0.0, merge_gap=0.5, onset_lag=onset_lag)
    dets = detect(preds, LABELS, [0.5] * len(LABELS), untuned)
    fa = false_alarms_per_hour(corpus, dets)[0]
    penalty = fa_weight * fa if fa_weight and not np.isnan(fa) else 0.0
    return event_f1(corpus, dets, LABELS)["macro_f1_present"] - penalty, preds, fa


def _init_source(args: argparse.Namespace, raw_spec: dict) -> alertnet_ref.Model:
    """The --init weight file, checked against the network and features this run trains."""
    try:
        source = alertnet_ref.load(args.init)
        if source.frames != args.frames:
            raise warm_start.WarmStartError(f"it has {source.frames} frames per window, --frames is {args.frames}")
        warm_start.check_features(source.features, raw_spec)
    except (OSError, alertnet_ref.ModelError, warm_start.WarmStartError) as error:
        raise SystemExit(f"error: --init {args.init}: {error}") from None
    return source


def is_real(corpus: Corpus) -> bool:
    """A set of real recordings (make_real_set.py writes how many it drew on), not a synthetic corpus."""
    return "real_sources" in corpus.meta


def first_clips(corpus: Corpus, count: int) -> Corpus:
    """The first `count` files of `corpus` (all of them if it holds fewer) with their events. The generator draws
    every file independently from its seed, split and index, so the first files are a fair sample."""
    files = corpus.files[:count]
    names = {f.filename for f in files}
    return Corpus(corpus.root, corpus.meta, files, [e for e in corpus.events if e.filename in names])


def _channels(text: str) -> list[int]:
    """--channels: four positive integers, e.g. 16,24,48,128."""
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        values = []
    if len(values) != 4 or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected four positive integers like 16,24,48,128, got {text!r}")
    return values


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--train", required=True, type=Path, action="append",
                   help="training corpus folder; repeat to train on several corpora (e.g. synthetic and real)")
    p.add_argument("--val", required=True, type=Path, help="validation corpus (early stopping, tuning)")
    p.add_argument("--test", type=Path, help="test corpus: reported at the end, never used for choices")
    p.add_argument("--out", required=True, type=Path, help="weight file to write (alertnet safetensors)")
    p.add_argument("--report", type=Path, help="write the final val/test reports here as JSON")
    p.add_argument("--seed", type=int, default=1, help="random seed (weights, sampling, augmentation)")
    p.add_argument("--frames", type=int, default=48, help="context: feature frames per window")
    p.add_argument("--step", type=int, default=6, help="decision step in frames")
    p.add_argument("--start-padding", type=int, default=0,
                   help="at a stream's start, fill this many frames of the first window with copies of the first "
                        "frame, so the first decision comes sooner (context key start_padding; < --frames)")
    p.add_argument("--channels", type=_channels, default=[16, 32, 64, 128],
                   help="output channels of the four convolution blocks")
    p.add_argument("--region", type=float, default=0.5,
                   help="targets: a label is on when its events cover the window's last REGION seconds")
    p.add_argument("--onset-lag", type=float,
                   help="stamp decisions at window end minus this (s) instead of the centre while early-stopping; "
                        "tuning then also tries lags around it (host tracker key onset_lag)")
    p.add_argument("--rise-ratios", type=rise_ratios, default=(None, 0.3, 0.2, 0.1),
                   help="onset_rise_ratio values tuning tries (host tracker key: stamp an onset where the score "
                        "first rose to this fraction of the threshold; none: at the crossing)")
    p.add_argument("--per-label-thresholds", action="store_true",
                   help="after the shared threshold, move each label's threshold against the same objective "
                        "(false-alarm budget included); wants a validation split with several events of every label")
    p.add_argument("--fa-weight", type=number_in(0.0), default=0.001,
                   help="tuning: macro F1 given up per false alarm per hour on alert-free validation audio "
                        "(default 0.001: ten false alarms an hour cost one point of F1; 0 tunes for F1 alone)")
    p.add_argument("--fa-budget", type=number_in(0.0), metavar="PER_HOUR",
                   help="tuning: keep false alarms on the alert-free audio (validation's, plus --fa-corpus) at or "
                        "under this many per hour before anything else, the latency target included; a setting "
                        "over it is chosen only when none keeps to it (default: no budget, only --fa-weight)")
    p.add_argument("--fa-corpus", type=Path,
                   help="an alert-free corpus (make_corpus.py --split val --alert-free-fraction 1.0) whose false "
                        "alarms tuning counts with validation's alert-free files: validation alone holds about "
                        "0.35 h of them, so each false alarm moves its rate by 3 per hour")
    p.add_argument("--hard-negatives", type=number_in(0.0, 1.0, high_open=True), default=0.0,
                   help="share of training windows taken from backgrounds holding a hard negative (music, whistling, "
                        "chirps, clicks, TV speech; corpus extras 'negative'), alert left out (default 0)")
    p.add_argument("--real-positive-fraction", type=number_in(0.0, 1.0), default=0.0,
                   help="share of a label's positive windows drawn from the real recordings' events (--train sets "
                        "made by make_real_set.py), where the training corpora hold any of that label: a few dozen "
                        "real alerts beside thousands of synthetic ones are otherwise a few per cent of them "
                        "(default 0: every event alike)")
    p.add_argument("--alert-colour-db", type=number_in(0.0, 20.0), default=0.0,
                   help="colour half of the remixed alerts with a smooth random frequency response (straight lines "
                        "in dB through five points across the bands, each within +-this many dB): the few dozen "
                        "real devices the network hears, as other loudspeakers and casings would play them "
                        "(default 0: off, and the random draws are those of a run without it; measured at 6 dB: "
                        "no gain, tools/README.md)")
    p.add_argument("--onset-weight", type=number_in(0.0), default=0.0,
                   help="extra loss weight on a label in windows ending in the first 0.5 s of one of its events "
                        "(weight 1 + W there): teaches the network to be sure sooner, so a higher threshold "
                        "(fewer false alarms) still announces onsets within the latency target (default 0: off)")
    p.add_argument("--weight-average", type=number_in(0.0, 1.0, high_open=True), default=0.0, metavar="DECAY",
                   help="score, keep and export an exponential moving average of the weights (and BatchNorm "
                        "statistics) with this decay per step instead of the last weights, e.g. 0.9998 averages "
                        "over about the last 5,000 steps. The training itself is unchanged (default 0: off)")
    p.add_argument("--distill", type=Path, action="append", default=[],
                   help="a corpus of real recordings without trusted labels (mostly alert-free) whose windows the "
                        "student learns the YAMNet teacher's scores on; repeatable. Needs tools/yamnet.py's wheel. "
                        "The only place for an unlabelled set (make_real_set.py --kinds effects: sound effects that "
                        "may sound like alerts), which every other corpus option refuses")
    p.add_argument("--distill-fraction", type=number_in(0.0, 1.0, high_open=True), default=0.3,
                   help="share of each batch drawn from the --distill audio (default 0.3)")
    p.add_argument("--hard-distill-fraction", type=number_in(0.0, 1.0), default=0.3,
                   help="share of those drawn from mined hard negatives: windows the student fired on (>= 0.5) "
                        "and the teacher did not (< 0.2), re-mined at every validation run (default 0.3)")
    p.add_argument("--teacher-positive-fraction", type=number_in(0.0, 1.0), default=0.0,
                   help="share of the other distillation windows drawn from those where the teacher scores a label "
                        ">= 0.5: the few alert-like moments of unlabelled real sound, seen more often than their "
                        "share of it (default 0: windows drawn alike)")
    p.add_argument("--teacher-classes-weight", type=number_in(0.0), default=0.0,
                   help="loss weight of a second head that learns all 521 of the teacher's AudioSet scores on the "
                        "distillation windows, from the features the label head reads; only the label head is "
                        "exported. Six label scores say little of what the rest of real sound is (speech, engines, "
                        "beeps, bells, birds); the 521 say it all, and shape the features the labels are read "
                        "from (default 0: off)")
    p.add_argument("--select-fa-weight", type=number_in(0.0), default=0.0,
                   help="early stopping: macro F1 given up per false alarm per hour on validation's alert-free "
                        "files at threshold 0.5 (default 0: F1 alone). With a real development set as --val, "
                        "0.002 makes 100 false alarms an hour cost 0.2 F1")
    p.add_argument("--select-fa-target", type=number_in(0.0), metavar="PER_HOUR",
                   help="early stopping at the operating point: macro onset F1 at the best shared threshold whose "
                        "false alarms on validation's alert-free files keep PER_HOUR with 95 %% confidence (as "
                        "retune.py --fa-target), the recipe's tracker. Tuned real-world thresholds sit at "
                        "0.97-0.99, far from the 0.5 --select-fa-weight scores at. Replaces --select-fa-weight")
    p.add_argument("--batch", type=int, default=96, help="windows per training step")
    p.add_argument("--steps", type=int, default=4000, help="maximum training steps")
    p.add_argument("--minutes", type=float, default=12.0, help="stop training after this wall time")
    p.add_argument("--eval-every", type=int, default=300, help="steps between validation runs")
    p.add_argument("--patience", type=int, default=4, help="validation runs without improvement before stopping")
    p.add_argument("--lr", type=float, default=3e-3, help="peak learning rate (AdamW, one-cycle)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch CPU threads (default 1). Alone on a 2-core machine 2 threads train 1.6x faster; beside "
                        "other busy jobs they spin-wait and ran 8x slower. Results depend on the count: keep it to "
                        "reproduce a model")
    p.add_argument("--workers", type=int, default=2, help="processes computing the training features")
    p.add_argument("--cache", type=Path, help="folder for cached training features (reused by later runs)")
    p.add_argument("--fit-sample", type=int, default=0, metavar="N",
                   help="also report the kept network, with the file's settings, on the first N clips of the "
                        "(first) training corpus, un-augmented: beside validation's scores it tells a network "
                        "that under-fits (low on both) from one that over-fits (high here only). Costs one more "
                        "prediction run: about 30 s for 540 clips with the default network (default 0: off)")
    p.add_argument("--init", type=Path, metavar="WEIGHTS",
                   help="start from this weight file's network and feature normalisation instead of random weights "
                        "(fine-tuning; same --frames and --channels; hearalert_train/warm_start.py). Pair it with a "
                        "lower --lr, e.g. 5e-4")
    p.add_argument("--no-tune", action="store_true",
                   help="keep thresholds 0.5 and default tracker settings, with --onset-lag as the stamp lag (for a "
                        "file whose thresholds retune.py chooses afterwards)")
    p.add_argument("--model-name", default="hearalert-default", help="model_name metadata")
    args = p.parse_args(argv)
    if args.teacher_positive_fraction and not args.distill:
        p.error("--teacher-positive-fraction draws distillation windows: it needs --distill")
    if args.teacher_classes_weight and not args.distill:
        p.error("--teacher-classes-weight is learned on distillation windows: it needs --distill")
    if args.select_fa_target is not None and args.select_fa_weight:
        p.error("--select-fa-target and --select-fa-weight are two early-stopping figures: give one")
    if args.fit_sample < 0:
        p.error(f"--fit-sample must be 0 (off) or a number of training clips, got {args.fit_sample}")
    if not 0 <= args.start_padding < args.frames:
        p.error(f"--start-padding must be in [0, --frames) = [0, {args.frames}), got {args.start_padding}")
    return args


def train(args: argparse.Namespace) -> tuple[torch.nn.Sequential, dict, dict]:
    """Train, tune, export and report; returns the trained module (eval mode), its FeatureSpec and the reports.

    numpy's OpenBLAS (the features' Mel filterbank products) runs single-threaded throughout. Its idle threads
    spin after every call, and on two cores they starved the other feature worker and torch's OpenMP threads. With
    one BLAS thread the default model's recipe extracted its training features in 89 s instead of 158 s and
    trained in 1,133 s instead of 1,420 s, and wrote the same file byte for byte (models/EXPERIMENTS.md,
    2026-11-22, "Faster reproduction").
    Training steps do not use numpy's BLAS, so the limit does not touch the weights."""
    with threadpool_limits(limits=1, user_api="blas"):
        return _train(args)


def _train(args: argparse.Namespace) -> tuple[torch.nn.Sequential, dict, dict]:
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    t0 = time.time()

    try:  # every corpus read before any work, so a wrong path is one line, not a traceback after feature extraction
        train_corpora, val_corpus = [read_corpus(path) for path in args.train], read_corpus(args.val)
        test_corpus = read_corpus(args.test) if args.test else None
        fa_corpus = read_corpus(args.fa_corpus) if args.fa_corpus else None
        distill_corpora = [read_corpus(path) for path in args.distill]
        for option, corpus in [("--train", c) for c in train_corpora] + [
                ("--val", val_corpus), ("--test", test_corpus), ("--fa-corpus", fa_corpus)]:
            if corpus is not None:
                refuse_unlabelled(corpus, option)
    except CorpusFormatError as error:
        raise SystemExit(f"error: {error}") from None
    if fa_corpus and all(fa_corpus.events_of(f.filename) for f in fa_corpus.files):
        raise SystemExit(f"error: {fa_corpus.root}: --fa-corpus holds no alert-free file")
    if args.fa_budget is not None and not args.no_tune and not fa_corpus and \
            all(val_corpus.events_of(f.filename) for f in val_corpus.files):
        raise SystemExit(f"error: {val_corpus.root}: --fa-budget needs alert-free audio to count false alarms on, "
                         f"and the validation split holds no alert-free file; pass --fa-corpus")
    select_budget = None
    if args.select_fa_target is not None:
        val_free_hours = false_alarms_per_hour(val_corpus, {})[2]
        try:
            select_budget = confident_budget(args.select_fa_target, val_free_hours)
        except ValueError as error:
            raise SystemExit(f"error: --select-fa-target: {error}") from None
        print(f"early stopping at the operating point: {select_budget:.3f} false alarms/h on {val_free_hours:.2f} h "
              f"of validation's alert-free audio keeps {args.select_fa_target:g}/h with 95 % confidence", flush=True)
    for c in (*train_corpora, val_corpus) + ((test_corpus,) if test_corpus else ()):
        missing = [label for label in LABELS if label not in c.labels]
        if missing:
            raise SystemExit(f"error: {c.root}: corpus labels lack {', '.join(missing)}")

    if args.real_positive_fraction and not any(is_real(corpus) for corpus in train_corpora):
        raise SystemExit("error: --real-positive-fraction draws from real sets among --train (make_real_set.py "
                         "--kinds mixture,isolated), and none of the --train corpora is one")
    raw_spec = model_spec()
    source = _init_source(args, raw_spec) if args.init else None  # checked before the features are computed
    clips, real_clips = [], set()  # real_clips: indices of the clips of real sets, for --real-positive-fraction
    for corpus in train_corpora:
        corpus_clips = load_features(corpus, LABELS, raw_spec, workers=args.workers, cache_dir=args.cache)
        if is_real(corpus):
            real_clips.update(range(len(clips), len(clips) + len(corpus_clips)))
        clips += corpus_clips
    distill_clips = [clip for corpus in distill_corpora
                     for clip in load_features(corpus, LABELS, raw_spec, workers=args.workers, cache_dir=args.cache)]
    # The distillation audio is real sound the network will hear: it shapes the normalisation too. A network
    # fine-tuned from a file keeps the normalisation its weights were learned against.
    spec = dict(raw_spec, normalization=source.features["normalization"] if source
                else normalisation(clips + distill_clips))
    feature_lib.load_spec(spec)  # validate before spending time on training
    std = torch.tensor(spec["normalization"]["std"], dtype=torch.float32)
    geometry = Geometry.of(spec, args.frames, args.step, args.start_padding)
    sampler = WindowSampler(clips, geometry, spec, len(LABELS), args.region, rng,
                            hard_negative_fraction=args.hard_negatives, real_clips=frozenset(real_clips),
                            real_positive_fraction=args.real_positive_fraction,
                            alert_colour_db=args.alert_colour_db)
    print(f"features of {len(clips)} training clips ready ({time.time() - t0:.0f} s)", flush=True)
    distill = None
    if distill_corpora:
        def per_clip(all_classes: bool) -> list[np.ndarray]:
            by_corpus = [teacher_scores(corpus, args.cache, all_classes) for corpus in distill_corpora]
            return [by_name[f.filename] for by_name, corpus in zip(by_corpus, distill_corpora) for f in corpus.files]

        distill = DistillSampler(distill_clips, per_clip(False), geometry, spec, rng,
                                 hard_fraction=args.hard_distill_fraction,
                                 positive_fraction=args.teacher_positive_fraction,
                                 class_scores=per_clip(True) if args.teacher_classes_weight else None)
        hours = sum(f.duration for corpus in distill_corpora for f in corpus.files) / 3600
        print(f"distillation audio: {len(distill_clips)} clips, {hours:.2f} h, {len(distill.positives)} windows the "
              f"teacher scores >= {distill.fire} for a label; teacher scores ready ({time.time() - t0:.0f} s)",
              flush=True)

    model = build_model(args.frames, spec["n_mels"], len(LABELS), args.channels)
    if source:
        calibration = torch.from_numpy(sampler.batch(4 * args.batch)[0])[:, None]
        difference = warm_start.load_into(model, source, calibration)
        print(f"started from {args.init} (copy matches the file within {difference:.1e})", flush=True)
    logits = model[:-1]  # same modules without the final sigmoid: BCE-with-logits is the stable form
    n_params = sum(p.numel() for p in model.parameters())
    average = weight_average(model, args.weight_average) if args.weight_average else None
    scored = average.module if average else model  # the network validated, kept and exported
    trained = list(model.parameters())
    classes_head = None  # --teacher-classes-weight: AudioSet scores from the label head's input; not exported
    if args.teacher_classes_weight:
        import yamnet

        classes_head = torch.nn.Linear(model[-2].in_features, yamnet.CLASSES)
        trained += list(classes_head.parameters())
    opt = torch.optim.AdamW(trained, lr=args.lr, weight_decay=1e-2)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.steps, pct_start=0.1)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    weighted_loss_fn = torch.nn.BCEWithLogitsLoss(reduction="none")
    best = (-np.inf, None, 0)  # the objective goes below 0 when false alarms are counted
    last_scored = (None, None)  # (step, validation predictions) of the latest validation run
    stale, step, running = 0, 0, 0.0
    deadline = t0 + args.minutes * 60
    print(f"model: {n_params} parameters; window {args.frames} frames "
          f"({geometry.window_samples / geometry.sample_rate:.3f} s), step {args.step}", flush=True)
    while step < args.steps and time.time() < deadline:
        model.train()
        n_distill = int(round(args.batch * args.distill_fraction)) if distill else 0
        windows, targets, near = sampler.batch(args.batch - n_distill)
        classes = None
        if n_distill:  # the teacher's soft targets; never near an onset the corpus knows of
            if classes_head:
                more, soft, classes = distill.batch_with_classes(n_distill)
            else:
                more, soft = distill.batch(n_distill)
            windows, targets = np.concatenate([windows, more]), np.concatenate([targets, soft])
            near = np.concatenate([near, np.zeros_like(soft)])
        feats = torch.from_numpy(windows)[:, None]
        feats = spectral_tilt(feats, std, rng)
        if classes is not None:  # the label head's input once, read by both heads
            hidden = model[:-2](feats)
            out = model[-2](hidden)
        else:
            out = logits(feats)
        if args.onset_weight:
            weights = 1.0 + args.onset_weight * torch.from_numpy(near)
            loss = (weighted_loss_fn(out, torch.from_numpy(targets)) * weights).mean()
        else:  # the plain loss, bit for bit: earlier recipes reproduce exactly
            loss = loss_fn(out, torch.from_numpy(targets))
        if classes is not None:
            loss = loss + args.teacher_classes_weight * loss_fn(classes_head(hidden[-n_distill:]),
                                                                torch.from_numpy(classes))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if average:
            average.update_parameters(model)
        step += 1
        running = 0.98 * running + 0.02 * loss.item() if step > 1 else loss.item()
        if step % args.eval_every == 0 or step == args.steps:
            f1, preds, fa = evaluate_default(scored, val_corpus, spec, geometry, args.onset_lag,
                                             args.select_fa_weight, select_budget)
            last_scored = (step, preds)
            improved = f1 > best[0]
            if improved:
                best, stale = (f1, copy.deepcopy(scored.state_dict()), step), 0
            else:
                stale += 1
            mined = f", {distill.mine(scored)} hard negatives mined" if distill else ""
            what = ("F1 at the operating point" if select_budget is not None else
                    "F1 minus false alarms" if args.select_fa_weight else "macro onset F1")
            where = "at the operating point" if select_budget is not None else "at 0.5"
            print(f"step {step}: loss {running:.4f}, val {what} {f1:.3f}{' *' if improved else ''} "
                  f"(false alarms {where}: {fa:.1f}/h{mined}; {time.time() - t0:.0f} s)", flush=True)
            if stale >= args.patience:
                print("early stop: validation F1 stopped improving", flush=True)
                break
    if best[1] is None or (step % args.eval_every != 0 and step != args.steps):
        f1, preds, _ = evaluate_default(scored, val_corpus, spec, geometry, args.onset_lag, args.select_fa_weight,
                                        select_budget)
        last_scored = (step, preds)
        if f1 > best[0]:
            best = (f1, copy.deepcopy(scored.state_dict()), step)
    model.load_state_dict(best[1])
    model.eval()
    print(f"best validation macro onset F1 {best[0]:.3f} at step {best[2]}", flush=True)

    # The kept network is usually the last one scored: its validation predictions are already at hand.
    val_preds = last_scored[1] if last_scored[0] == best[2] else predict(model, val_corpus, spec, geometry)
    fa_audio = (fa_corpus, predict(model, fa_corpus, spec, geometry)) if fa_corpus else None
    if args.no_tune:
        # The stamp lag early stopping used stays in the file: retune.py, which makes the choice later, tries lags
        # around the file's own.
        thresholds, settings = [0.5] * len(LABELS), TrackerSettings(onset_lag=args.onset_lag)
    else:
        thresholds, settings, tuned = choose_settings(
            val_corpus, val_preds, LABELS, onset_lag=args.onset_lag, rise_ratios=args.rise_ratios,
            per_label=args.per_label_thresholds, fa_weight=args.fa_weight, fa_budget=args.fa_budget,
            fa_audio=fa_audio)
        print(f"tuned on val: thresholds {thresholds}, tracker {settings.as_metadata()}, {tuned}", flush=True)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    trained_on = ("; ".join(f"{c.meta.get('generator')} seed {c.meta.get('seed')} split {c.meta.get('split')} "
                            f"({len(c.files)} files)" for c in train_corpora) +
                  "".join(f"; distilled on {c.root.name} ({len(c.files)} files)" for c in distill_corpora) +
                  (f"; the teacher's 521 AudioSet scores a second target there (weight {args.teacher_classes_weight})"
                   if args.teacher_classes_weight else "") +
                  (f"; fine-tuned from {args.init.name}" if args.init else "") +
                  f"; val {val_corpus.root.name}; train.py seed {args.seed}, "
                  f"step {best[2]}" + (f", weights averaged (decay {args.weight_average})" if average else ""))
    context = {"frames": args.frames, "step": args.step}
    if args.start_padding:
        context["start_padding"] = args.start_padding
    export.export_torch(
        args.out, model, spec, LABELS, [float(t) for t in thresholds], context,
        args.model_name, trained_on,
        extra_metadata={
            "tracker": settings.as_metadata(),
            "description": (f"HearAlert default alert detector: log-Mel CNN, multi-label sigmoid. Trained to fire "
                            f"when an alert covers the last {args.region} s of its {args.frames}-frame window; "
                            f"decisions are stamped at the window end minus the tracker's onset_lag. "
                            f"See models/MODEL_CARD.md."),
            "license": "MIT",
        })
    size = args.out.stat().st_size
    print(f"wrote {args.out} ({size} bytes)", flush=True)

    reports = {"params": n_params, "best_step": best[2], "thresholds": thresholds,
               "tracker": settings.as_metadata(), "frames": args.frames, "step": args.step, "region": args.region,
               "hard_negatives": args.hard_negatives, "onset_weight": args.onset_weight,
               "weight_average": args.weight_average, "fa_budget": args.fa_budget,
               "distill": [str(path) for path in args.distill], "distill_fraction": args.distill_fraction,
               "teacher_classes_weight": args.teacher_classes_weight,
               "real_positive_fraction": args.real_positive_fraction,
               "teacher_positive_fraction": args.teacher_positive_fraction,
               "alert_colour_db": args.alert_colour_db,
               "select_fa_weight": args.select_fa_weight, "select_fa_target": args.select_fa_target,
               "init": str(args.init) if args.init else None,
               "lr": args.lr,
               "train_seconds": round(time.time() - t0, 1)}
    scored = [("val", val_corpus.root, val_corpus, val_preds)]  # report key, heading, corpus, predictions
    if test_corpus:
        scored.append(("test", test_corpus.root, test_corpus, predict(model, test_corpus, spec, geometry)))
    if args.fit_sample:
        sample = first_clips(train_corpora[0], args.fit_sample)
        scored.append(("train_sample", f"the first {len(sample.files)} clips of {sample.root}, un-augmented", sample,
                       predict(model, sample, spec, geometry)))
    for name, heading, corpus, preds in scored:
        reports[name] = full_report(corpus, preds, LABELS, thresholds, settings)
        print(f"== {name}: {heading}\n{format_report(reports[name], LABELS)}", flush=True)
    if fa_audio:
        reports["fa_corpus"] = dict(false_alarm_report(*fa_audio, LABELS, thresholds, settings),
                                    corpus=str(fa_corpus.root))
        fa = reports["fa_corpus"]
        print(f"== alert-free corpus {fa_corpus.root}: {fa['count']} false alarms in {fa['alert_free_hours']} h = "
              f"{fa['per_hour']} per hour; by label {fa['by_label']}", flush=True)
    if args.report:
        args.report.write_text(json.dumps(reports, indent=1) + "\n")
        print(f"wrote {args.report}")
    return model, spec, reports


def main(argv: list[str] | None = None) -> int:
    train(parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
