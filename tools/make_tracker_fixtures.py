#!/usr/bin/env python3
"""Make the tracker's `onset_rise_ratio` fixture: a score sequence and the events the research mirror
(tools/hearalert_train/tracker.py) finds in it under several tracker settings. The host's `EventTracker` must
reproduce these events exactly (Tests/HearAlertKitTests/Detection/OnsetRiseTests.swift), so the mirror is the
independent reference for the host.

The sequence is built so that host and mirror cannot differ by rounding alone:
- every time is a multiple of 1/16 s (decisions every 1/16 s of a 1 s window), so smoothed times, durations and
  cooldown ends come out bit-identical in both, whatever order they are summed in;
- scores are multiples of 1/1024 and the script refuses a sequence in which any smoothed score lies within
  `MARGIN` of an on-, off- or rise level, so the host's float32 ring sum and the mirror's float64 cumulative sum
  (which may differ in the last bit) make the same comparisons.

Per label, the scores shape the situations the rise onset must handle: a slow rise (onset at the rise's start),
a long near-miss before a rise (onset bounded by the lookback: 1 s, or 2.5 s in one case), a blip above the rise level that falls back
(the run restarts), a short crossing that fades before the minimum duration counted from the crossing (dropped,
though it lasted long enough counted from its stamped onset), and a rise during a cooldown (onset at its end).

    .venv/bin/python tools/make_tracker_fixtures.py [--out FILE] [--seed N]   (default: the committed fixture)
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

from hearalert_train.tracker import TrackerSettings, track

STEP = 1 / 16  # s between decisions
WINDOW = 1.0  # s: decision i's window ends at WINDOW + i·STEP (stream time); its centre is half a window earlier
DURATION = 20.0  # s of decisions
QUANTUM = 1 / 1024  # scores are multiples of this
MARGIN = 1e-5  # no smoothed score may lie closer than this to a level it is compared with
SEED = 20261121  # of the small noise on the scores
LABELS = ["siren", "smoke_alarm"]
THRESHOLDS = [0.55, 0.7]
# (time s, score) corners of each label's score curve, linear in between.
CURVES = {
    "siren": [
        (0.0, 0.05), (1.5, 0.05), (2.25, 0.9), (3.5, 0.9), (3.75, 0.05),  # slow rise
        (4.5, 0.05), (4.625, 0.45), (6.5, 0.45), (6.75, 0.9), (7.5, 0.9), (7.625, 0.05),  # near-miss, then rise
        (8.5, 0.05), (8.625, 0.32), (8.875, 0.32), (9.0, 0.05), (9.5, 0.05), (10.0, 0.8), (11.0, 0.8),
        (11.125, 0.05),  # blip above the rise level, then a rise
        (12.0, 0.05), (12.5, 0.6), (12.625, 0.6), (12.75, 0.05),  # short crossing after a slow climb
        (14.0, 0.05), (14.25, 0.7), (15.5, 0.7), (15.625, 0.2), (16.0, 0.2), (16.25, 0.8), (17.0, 0.8),
        (17.125, 0.05), (20.0, 0.05),  # a pause shorter than the merge gap
    ],
    "smoke_alarm": [
        (0.0, 0.05), (2.0, 0.05), (2.125, 0.95), (3.0, 0.95), (3.125, 0.05),  # abrupt beep
        (3.5, 0.05), (4.75, 0.9), (5.5, 0.9), (5.625, 0.05),  # rise begins in the beep's cooldown, crosses after
        (7.0, 0.05), (8.0, 0.85), (9.0, 0.85), (9.125, 0.05),  # slow rise
        (11.0, 0.05), (11.25, 0.5), (13.5, 0.5), (14.0, 0.9), (15.0, 0.9), (15.125, 0.05),  # near-miss
        (20.0, 0.05),
    ],
}
COMMON = {"off_ratio": 0.5, "merge_gap": 0.5, "cooldown": 1.0}
CASES = [
    ("no_rise_ratio", {"smoothing_frames": 3, "min_duration": 0.25}),
    ("rise_ratio_0.5", {"smoothing_frames": 3, "min_duration": 0.25, "onset_rise_ratio": 0.5}),
    ("rise_ratio_0.3_unsmoothed", {"smoothing_frames": 1, "min_duration": 0.125, "onset_rise_ratio": 0.3}),
    ("rise_ratio_0.6_long_minimum", {"smoothing_frames": 2, "min_duration": 0.375, "onset_rise_ratio": 0.6}),
    ("rise_ratio_1", {"smoothing_frames": 3, "min_duration": 0.25, "onset_rise_ratio": 1.0}),
    ("rise_ratio_0.5_onset_lag", {"smoothing_frames": 3, "min_duration": 0.25, "onset_rise_ratio": 0.5,
                                  "onset_lag": 0.25}),
    ("rise_ratio_0.5_lookback_2.5", {"smoothing_frames": 3, "min_duration": 0.25, "onset_rise_ratio": 0.5,
                                     "onset_rise_lookback": 2.5}),
]


def make_scores(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scores [decisions, labels] (float32 multiples of QUANTUM), decision times (window centres), stream times."""
    count = int(DURATION / STEP)
    stream_times = WINDOW + STEP * np.arange(count)
    decision_times = stream_times - WINDOW / 2
    rng = np.random.default_rng(seed)
    columns = []
    for label in LABELS:
        corners = np.array(CURVES[label])
        curve = np.interp(decision_times, corners[:, 0], corners[:, 1]) + rng.uniform(-0.02, 0.02, count)
        columns.append(np.clip(np.round(curve / QUANTUM) * QUANTUM, 0.0, 1.0))
    return np.stack(columns, axis=1).astype(np.float32), decision_times, stream_times


def smoothed(scores: np.ndarray, frames: int) -> np.ndarray:
    """The causal moving average the trackers apply, exactly (float64 of float32 multiples of QUANTUM)."""
    padded = np.vstack([np.zeros((1, scores.shape[1])), np.cumsum(scores.astype(np.float64), axis=0)])
    index = np.arange(len(scores))
    first = np.maximum(0, index + 1 - frames)
    return (padded[index + 1] - padded[first]) / (index + 1 - first)[:, None]


def check_margins(scores: np.ndarray, settings: TrackerSettings) -> None:
    """Refuses a case in which host and mirror could compare a smoothed score differently by a last-bit rounding."""
    means = smoothed(scores, settings.smoothing_frames)
    for k, threshold in enumerate(THRESHOLDS):
        on = np.float32(threshold)
        levels = {"on": on, "off": on * np.float32(settings.off_ratio)}
        if settings.onset_rise_ratio is not None:
            levels["rise"] = on * np.float32(settings.onset_rise_ratio)
        for name, level in levels.items():
            closest = np.min(np.abs(means[:, k] - np.float64(level)))
            if closest < MARGIN:
                raise ValueError(f"{LABELS[k]}: a smoothed score is {closest:.2e} from the {name} level {level}")


def make_fixture(seed: int = SEED) -> dict:
    scores, decision_times, stream_times = make_scores(seed)
    end_time = float(stream_times[-1] + STEP)
    cases = []
    for name, tracker in CASES:
        settings = TrackerSettings(**COMMON, **tracker)
        check_margins(scores, settings)
        events = track(scores, decision_times, stream_times, LABELS, THRESHOLDS, settings, end_time)
        cases.append({"name": name, "tracker": settings.as_metadata(), "expected": [
            {"label": e.label, "onset": float(e.onset), "offset": float(e.offset), "detected_at": float(e.detected_at)}
            for e in events]})
    return {
        "made_by": "tools/make_tracker_fixtures.py (events from the research mirror, tools/hearalert_train/tracker.py)",
        "labels": LABELS, "thresholds": THRESHOLDS, "end_time": end_time,
        "scores": [[float(v) for v in row] for row in scores],
        "decision_times": [float(t) for t in decision_times], "stream_times": [float(t) for t in stream_times],
        "cases": cases,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="Tests/HearAlertKitTests/Fixtures/tracker/onset_rise_cases.json",
                        help="output file")
    parser.add_argument("--seed", type=int, default=SEED, help="seed of the noise on the scores")
    args = parser.parse_args(argv)
    fixture = make_fixture(args.seed)
    with open(args.out, "w") as out:
        json.dump(fixture, out, indent=1)
        out.write("\n")
    for case in fixture["cases"]:
        print(case["name"])
        for event in case["expected"]:
            print(f"  {event['label']:>11}  onset {event['onset']:7.4f}  offset {event['offset']:7.4f}  "
                  f"announced {event['detected_at']:7.4f}")
    print(f"wrote {args.out} ({os.path.getsize(args.out)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
