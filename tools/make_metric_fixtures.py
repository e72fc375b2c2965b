#!/usr/bin/env python3
"""Write the expected detection metrics for HearAlert's evaluator tests, computed by sed_eval.

The Swift evaluator (Sources/HearAlertKit/Evaluation) must agree with sed_eval 0.2.1, the package the sound-event
detection literature reports with, to 1e-6. This script is the independent side of that test: it builds
reference and estimate event lists (hand-written edge cases and seeded random ones), scores them with sed_eval's
EventBasedMetrics (onset+offset and onset-only) and SegmentBasedMetrics (1 s), and writes everything as JSON.

Two quantities sed_eval does not compute are derived here with sed_eval's own matching pieces or plain Python:
  - onset latency: sed_eval's graph (same label, onset within the collar) matched by sed_eval.util.bipartite_match,
    then detected_at - reference onset, summarised with numpy.percentile (median, 90th);
  - announcement delay: for every reference event that an estimate of the same label overlaps in time (strictly:
    estimate onset < event offset and estimate offset > event onset), the earliest such estimate's detected_at
    minus the event's onset, 0 if negative; summarised as the onset latency;
  - false alarms per hour: in files without reference events, every estimate; over all files, estimates that
    overlap no reference event widened by the collar, per hour of time outside those widened events.

Estimates whose label is outside the vocabulary count in the overall scores only. sed_eval's segment-based
metric raises on them, so its overall figures come from an instance whose label list is extended by those labels,
and its class-wise figures from an instance over the vocabulary with those estimates left out (class-wise counts
of one label do not depend on the others).

Usage: .venv/bin/python tools/make_metric_fixtures.py [--seed 20261121] [--random-cases 40]
           [--out Tests/HearAlertKitTests/Fixtures/metrics/sed_eval_cases.json]
"""

import argparse
import json
import math
import os
import random
import sys
import warnings

warnings.filterwarnings("ignore", category=UserWarning)  # dcase_util imports pkg_resources
warnings.filterwarnings("ignore", category=RuntimeWarning)  # numpy.nanmean of all-NaN: sed_eval's own NaN

import numpy
import sed_eval

VOCABULARY = ["siren", "car_horn", "smoke_alarm", "alarm_clock", "doorbell", "phone_ring"]
COLLAR = 0.2
OFFSET_FRACTION = 0.5
SEGMENT_LENGTH = 1.0


def number(value):
    """JSON has no NaN: undefined scores become null, as in the Swift report."""
    value = float(value)
    return value if math.isfinite(value) else None


def event_dicts(filename, events):
    return [{"filename": filename, "event_label": e[0], "onset": e[1], "offset": e[2]} for e in events]


def scores(metric, labels):
    """sed_eval's results, reduced to the fields the Swift ScoreTable reports."""
    results = metric.results()
    overall = results["overall"]
    out = {
        "overall": {
            "f_measure": number(overall["f_measure"]["f_measure"]),
            "precision": number(overall["f_measure"]["precision"]),
            "recall": number(overall["f_measure"]["recall"]),
            "error_rate": number(overall["error_rate"]["error_rate"]),
            "substitution_rate": number(overall["error_rate"]["substitution_rate"]),
            "deletion_rate": number(overall["error_rate"]["deletion_rate"]),
            "insertion_rate": number(overall["error_rate"]["insertion_rate"]),
        },
        "macro": {
            "f_measure": number(results["class_wise_average"]["f_measure"]["f_measure"]),
            "precision": number(results["class_wise_average"]["f_measure"]["precision"]),
            "recall": number(results["class_wise_average"]["f_measure"]["recall"]),
            "error_rate": number(results["class_wise_average"]["error_rate"]["error_rate"]),
            "deletion_rate": number(results["class_wise_average"]["error_rate"]["deletion_rate"]),
            "insertion_rate": number(results["class_wise_average"]["error_rate"]["insertion_rate"]),
        },
        "class_wise": {},
    }
    for label in labels:
        entry = results["class_wise"][label]
        out["class_wise"][label] = {
            "reference": int(entry["count"]["Nref"]),
            "system": int(entry["count"]["Nsys"]),
            "f_measure": number(entry["f_measure"]["f_measure"]),
            "precision": number(entry["f_measure"]["precision"]),
            "recall": number(entry["f_measure"]["recall"]),
            "error_rate": number(entry["error_rate"]["error_rate"]),
            "deletion_rate": number(entry["error_rate"]["deletion_rate"]),
            "insertion_rate": number(entry["error_rate"]["insertion_rate"]),
        }
    return out


def counts(reference, system, true_positives, substitutions, deletions, insertions):
    """sed_eval's overall counts under the names the Swift DetectionCounts uses."""
    return {"reference": int(reference), "system": int(system), "true_positives": int(true_positives),
            "substitutions": int(substitutions), "deletions": int(deletions), "insertions": int(insertions)}


def event_based(case, evaluate_offset):
    metric = sed_eval.sound_event.EventBasedMetrics(
        event_label_list=case["labels"], t_collar=COLLAR, percentage_of_length=OFFSET_FRACTION,
        evaluate_onset=True, evaluate_offset=evaluate_offset)
    for f in case["files"]:
        metric.evaluate(event_dicts(f["filename"], f["reference"]), event_dicts(f["filename"], f["estimate"]))
    out = scores(metric, case["labels"])
    o = metric.overall
    out["overall"]["counts"] = counts(o["Nref"], o["Nsys"], o["Ntp"], o["Nsubs"], o["Nfn"], o["Nfp"])
    return out


def segment_based(case):
    labels = case["labels"]
    extra = sorted({e[0] for f in case["files"] for e in f["estimate"]} - set(labels))
    extended = sed_eval.sound_event.SegmentBasedMetrics(event_label_list=labels + extra,
                                                        time_resolution=SEGMENT_LENGTH)
    vocabulary = sed_eval.sound_event.SegmentBasedMetrics(event_label_list=labels, time_resolution=SEGMENT_LENGTH)
    for f in case["files"]:
        reference = event_dicts(f["filename"], f["reference"])
        extended.evaluate(reference, event_dicts(f["filename"], f["estimate"]),
                          evaluated_length_seconds=f["duration"])
        known = [e for e in f["estimate"] if e[0] in labels]
        vocabulary.evaluate(reference, event_dicts(f["filename"], known), evaluated_length_seconds=f["duration"])
    out = scores(vocabulary, labels)
    out["overall"] = scores(extended, labels + extra)["overall"]
    o = extended.overall
    out["overall"]["counts"] = counts(o["Nref"], o["Nsys"], o["Ntp"], o["S"], o["D"], o["I"])
    return out


def summary(values):
    """Count, median and 90th percentile of delays in seconds (numpy.percentile, linear); null when none."""
    if not values:
        return {"count": 0, "median": None, "p90": None}
    return {"count": len(values), "median": float(numpy.percentile(values, 50)),
            "p90": float(numpy.percentile(values, 90))}


def latency(case):
    """Onset latency of the same-label, onset-within-collar pairs sed_eval's optimal matching picks."""
    validate_onset = sed_eval.sound_event.EventBasedMetrics.validate_onset
    delays = {label: [] for label in case["labels"]}
    everything = []
    for f in case["files"]:
        reference = event_dicts(f["filename"], f["reference"])
        estimate = event_dicts(f["filename"], f["estimate"])
        graph = {}
        for j, ref in enumerate(reference):
            for i, est in enumerate(estimate):
                if ref["event_label"] == est["event_label"] and validate_onset(ref, est, t_collar=COLLAR):
                    graph.setdefault(i, []).append(j)
        for j, i in sorted(sed_eval.util.bipartite_match(graph).items()):
            delay = f["estimate"][i][3] - f["reference"][j][1]
            everything.append(delay)
            delays.setdefault(f["reference"][j][0], []).append(delay)
    return {"overall": summary(everything), "class_wise": {label: summary(delays[label]) for label in case["labels"]}}


def announcement_delay(case):
    """The user's wait for every reference event a same-label estimate overlaps, however that estimate's onset
    was stamped: earliest announcement among the overlapping estimates minus the event's onset, at least 0."""
    everything = []
    per_label = {label: [] for label in case["labels"]}
    for f in case["files"]:
        for ref_label, ref_onset, ref_offset in f["reference"]:
            earliest = None
            for est_label, est_onset, est_offset, detected_at in f["estimate"]:
                if est_label != ref_label:
                    continue
                if not (est_onset < ref_offset and est_offset > ref_onset):
                    continue
                if earliest is None or detected_at < earliest:
                    earliest = detected_at
            if earliest is None:
                continue
            wait = earliest - ref_onset
            if wait < 0:
                wait = 0.0
            everything.append(wait)
            per_label.setdefault(ref_label, []).append(wait)
    return {"overall": summary(everything),
            "class_wise": {label: summary(per_label[label]) for label in case["labels"]}}


def widened_union_length(events, duration):
    spans = sorted((max(0.0, e[1] - COLLAR), min(duration, e[2] + COLLAR)) for e in events)
    total, start, end = 0.0, None, None
    for a, b in spans:
        if start is None or a > end:
            if start is not None:
                total += end - start
            start, end = a, b
        else:
            end = max(end, b)
    if start is not None:
        total += end - start
    return total


def false_alarms(case):
    free_files_count = free_files_seconds = 0
    free_time_count = free_time_seconds = 0
    for f in case["files"]:
        if not f["reference"]:
            free_files_count += len(f["estimate"])
            free_files_seconds += f["duration"]
        free_time_seconds += f["duration"] - widened_union_length(f["reference"], f["duration"])
        for est in f["estimate"]:
            if not any(est[1] < ref[2] + COLLAR and est[2] > ref[1] - COLLAR for ref in f["reference"]):
                free_time_count += 1

    def per_hour(count, seconds):
        return count / (seconds / 3600.0) if seconds > 0 else None

    return {
        "alert_free_files": {"count": free_files_count, "seconds": free_files_seconds,
                             "per_hour": per_hour(free_files_count, free_files_seconds)},
        "alert_free_time": {"count": free_time_count, "seconds": free_time_seconds,
                            "per_hour": per_hour(free_time_count, free_time_seconds)},
    }


def expected(case):
    return {
        "event_based": event_based(case, evaluate_offset=True),
        "event_based_onset_only": event_based(case, evaluate_offset=False),
        "segment_based": segment_based(case),
        "latency": latency(case),
        "announcement_delay": announcement_delay(case),
        "false_alarms": false_alarms(case),
    }


def one_file(name, duration, reference, estimate):
    """Estimates given as (label, onset, offset) get detected_at = offset of the first 0.3 s after onset."""
    estimate = [e if len(e) == 4 else (e[0], e[1], e[2], min(e[2], e[1] + 0.3)) for e in estimate]
    return {"filename": name, "duration": duration, "reference": [list(e) for e in reference],
            "estimate": [list(e) for e in estimate]}


def hand_written_cases():
    v = VOCABULARY
    return [
        {"name": "no_events", "labels": v, "files": [one_file("a.wav", 10.0, [], [])]},
        {"name": "only_false_alarms", "labels": v,
         "files": [one_file("a.wav", 10.0, [], [("siren", 1.0, 3.0), ("doorbell", 7.5, 8.0)])]},
        {"name": "only_missed", "labels": v,
         "files": [one_file("a.wav", 10.0, [("siren", 1.0, 3.0), ("phone_ring", 4.0, 9.0)], [])]},
        {"name": "perfect", "labels": v,
         "files": [one_file("a.wav", 12.0, [("siren", 1.0, 3.0), ("car_horn", 5.0, 5.5)],
                            [("siren", 1.0, 3.0, 1.4), ("car_horn", 5.0, 5.5, 5.25)])]},
        {"name": "collar_edges", "labels": v,
         "files": [one_file("a.wav", 20.0,
                            [("siren", 1.0, 2.0), ("siren", 5.0, 9.0), ("doorbell", 12.0, 12.4)],
                            [("siren", 1.2, 2.2), ("siren", 5.2000001, 11.0), ("doorbell", 11.8, 12.6)])]},
        {"name": "overlapping_events", "labels": v,
         "files": [one_file("a.wav", 15.0,
                            [("siren", 1.0, 8.0), ("car_horn", 2.0, 2.6), ("siren", 3.0, 4.0),
                             ("smoke_alarm", 2.1, 6.0)],
                            [("siren", 1.1, 7.0), ("siren", 3.05, 4.1), ("car_horn", 2.1, 2.5),
                             ("alarm_clock", 2.0, 6.1), ("smoke_alarm", 2.05, 6.0)])]},
        {"name": "file_edges", "labels": v,
         "files": [one_file("a.wav", 6.5,
                            [("phone_ring", 0.0, 1.5), ("siren", 4.0, 6.5)],
                            [("phone_ring", 0.0, 1.4, 0.5), ("siren", 4.1, 7.2, 4.6), ("doorbell", 6.3, 8.0)])]},
        {"name": "unknown_labels_in_estimate", "labels": v,
         "files": [one_file("a.wav", 10.0,
                            [("siren", 1.0, 3.0), ("doorbell", 6.0, 6.5)],
                            [("dog_bark", 1.0, 3.0), ("glass_break", 8.0, 8.4), ("doorbell", 6.1, 6.6)])]},
        {"name": "substitution_depends_on_matching", "labels": v,
         "files": [one_file("a.wav", 10.0,
                            [("siren", 1.0, 2.0), ("siren", 1.1, 2.1), ("car_horn", 1.05, 2.05)],
                            [("siren", 1.1, 2.1), ("car_horn", 1.2, 2.2), ("siren", 1.0, 2.0)])]},
        {"name": "matching_choice_decides_substitution", "labels": v,
         "files": [one_file("a.wav", 10.0,
                            [("siren", 1.0, 2.0), ("siren", 1.15, 2.15)],
                            [("siren", 1.1, 2.1), ("car_horn", 0.85, 1.85)])]},
        {"name": "augmenting_path_needed", "labels": v,
         "files": [one_file("a.wav", 10.0,
                            [("siren", 1.0, 2.0), ("siren", 1.3, 2.3)],
                            [("siren", 1.15, 2.15), ("siren", 1.0, 2.0)])]},
        {"name": "several_files", "labels": v,
         "files": [
             one_file("a.wav", 30.0, [("siren", 2.0, 12.0)], [("siren", 2.3, 11.0, 2.9)]),
             one_file("b.wav", 8.0, [], [("car_horn", 3.0, 3.4)]),
             one_file("c.wav", 12.25, [("doorbell", 1.0, 2.5), ("doorbell", 5.0, 6.5)],
                      [("doorbell", 1.1, 2.4, 1.6), ("phone_ring", 5.0, 6.4)]),
             one_file("d.wav", 4.0, [], []),
         ]},
        {"name": "smaller_vocabulary", "labels": ["siren", "knock"],
         "files": [one_file("a.wav", 9.0, [("knock", 1.0, 1.5), ("siren", 3.0, 6.0)],
                            [("knock", 1.05, 1.45), ("car_horn", 3.0, 6.0), ("siren", 7.0, 8.0)])]},
        # announcement delay: a late stamp outside the collar, detections touching an event only at its edges,
        # one detection spanning two events (the second already reported when it begins), a detection of
        # another label, and one announced before the event's onset
        {"name": "announcement_delay_rules", "labels": v,
         "files": [one_file("a.wav", 20.0,
                            [("siren", 1.0, 5.0), ("car_horn", 6.0, 7.0), ("alarm_clock", 8.0, 10.0),
                             ("alarm_clock", 11.5, 13.0), ("doorbell", 14.0, 15.0), ("smoke_alarm", 16.0, 18.0)],
                            [("siren", 1.9, 5.0, 3.2), ("car_horn", 5.0, 6.0, 5.5), ("car_horn", 7.0, 8.0, 7.2),
                             ("alarm_clock", 8.0, 13.0, 8.4), ("alarm_clock", 11.6, 13.0, 12.0),
                             ("phone_ring", 14.0, 15.0, 14.3), ("smoke_alarm", 15.9, 18.0, 15.95)])]},
    ]


def random_case(rng, index):
    """A few files of dense, partly overlapping events; estimates jittered, dropped, relabelled or invented."""
    labels = VOCABULARY if rng.random() < 0.8 else rng.sample(VOCABULARY, 3)
    files = []
    for n in range(rng.randint(1, 5)):
        duration = round(rng.uniform(3.0, 40.0), rng.choice([0, 2, 3]))
        reference = []
        for _ in range(rng.choice([0, 0, 1, 2, 4, 8])):
            onset = round(rng.uniform(0.0, duration - 0.2), 3)
            offset = round(min(duration, onset + rng.uniform(0.1, 6.0)), 3)
            if offset > onset:
                reference.append((rng.choice(labels), onset, offset))
        estimate = []
        for label, onset, offset in reference:
            if rng.random() < 0.15:
                continue
            if rng.random() < 0.15:
                label = rng.choice(labels + ["dog_bark"])
            est_onset = max(0.0, onset + rng.gauss(0.0, 0.2))
            est_offset = max(est_onset + 0.05, offset + rng.gauss(0.0, 0.5))
            estimate.append((label, est_onset, est_offset, est_onset + abs(rng.gauss(0.3, 0.2))))
        for _ in range(rng.choice([0, 0, 1, 3])):
            onset = rng.uniform(0.0, duration)
            offset = onset + rng.uniform(0.05, 3.0)
            estimate.append((rng.choice(labels + ["glass_break"]), onset, offset, onset + rng.uniform(0.0, 0.6)))
        rng.shuffle(estimate)
        files.append(one_file(f"r{index:03d}_{n}.wav", duration, reference, estimate))
    return {"name": f"random_{index:03d}", "labels": labels, "files": files}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=20261121, help="seed of the random cases (default 20261121)")
    parser.add_argument("--random-cases", type=int, default=40, help="how many random cases (default 40)")
    parser.add_argument("--out", default="Tests/HearAlertKitTests/Fixtures/metrics/sed_eval_cases.json",
                        help="where to write the fixture")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    cases = hand_written_cases() + [random_case(rng, i) for i in range(args.random_cases)]
    for case in cases:
        case["expected"] = expected(case)
    document = {
        "generator": "tools/make_metric_fixtures.py",
        "sed_eval_version": sed_eval.__version__,
        "seed": args.seed,
        "collar": COLLAR,
        "offset_fraction_of_length": OFFSET_FRACTION,
        "segment_length": SEGMENT_LENGTH,
        "cases": cases,
    }
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as handle:
        json.dump(document, handle, indent=1, allow_nan=False)
        handle.write("\n")
    print(f"wrote {len(cases)} cases ({sum(len(c['files']) for c in cases)} files) to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
