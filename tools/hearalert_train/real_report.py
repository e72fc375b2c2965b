"""The figures a real-recording set (tools/make_real_set.py) is judged by, from any detector's events.

A user trusts a detector that is quiet when nothing happens, so the report leads with false alarms per hour on the
set's alert-free excerpts (and which alert each was taken for); then how many real alerts were found: the isolated
recordings (found = a detection of the right label overlaps the event, whatever its onset), event F1 on the mixtures
at alert SNR >= 0 dB (sed_eval, 200 ms onset collar) and by SNR bucket, and the announcement delay (when the user
was told minus the true onset) over every alert found. Given the alert recordings a detector was trained on
(`heard_sources` of its training sets), the alerts found are also split into those recordings and the rest: a
detector that finds the devices it heard and few others has learned recordings, not alerts. Where the set's files
name their sources (make_real_set.py's `source_kind` and `pieces`), the false alarms are also counted by kind of
audio (speech, music, ambient, broadcast) and by source recording, so a rate can be traced to the audio that raised
it. The same function scores the student (events from `hearalert evaluate --per-file --json`) and the teacher
(events from its window scores), so the two are compared on one footing.
"""

from __future__ import annotations

import numpy as np

from corpus_format import Corpus
from .evaluation import SNR_BUCKETS, announcement_delays, event_f1, false_alarms_per_hour, latency_summary
from .tracker import Detection

FOUND_SNR_DB = 0.0  # mixtures at or above this alert SNR make the headline F1 (issue target: >= 0 dB)
WORST_SOURCES = 10  # source recordings named in the report, most false alarms first


def files_of_kind(corpus: Corpus, kind: str) -> list[str]:
    return [f.filename for f in corpus.files if corpus.file_extras(f.filename).get("kind") == kind]


def _found(corpus: Corpus, detections: dict[str, list[Detection]], names: list[str], labels: list[str]) -> dict:
    """Share of the events in `names` that a detection of their label overlaps, overall and per label."""
    total, hit = {label: 0 for label in labels}, {label: 0 for label in labels}
    for name in names:
        for e in corpus.events_of(name):
            total[e.label] += 1
            hit[e.label] += any(d.label == e.label and d.onset < e.offset and d.offset > e.onset
                                for d in detections.get(name, []))
    count = sum(total.values())
    return {"events": count, "found": sum(hit.values()),
            "share": round(sum(hit.values()) / count, 3) if count else None,
            "per_label": {label: [hit[label], total[label]] for label in labels if total[label]}}


def _source_at(extras: dict, seconds: float) -> str | None:
    """The source recording playing at `seconds` of an alert-free excerpt: its last piece starting at or before
    then (pieces follow one another, make_real_set.py), or None when the file does not say."""
    pieces = [p for p in extras.get("pieces") or [] if p.get("at_s", 0.0) <= seconds]
    return max(pieces, key=lambda p: p.get("at_s", 0.0))["source"] if pieces else None


def false_alarms_by_source(corpus: Corpus, detections: dict[str, list[Detection]], free: list[str],
                           labels: list[str]) -> dict:
    """False alarms by kind of alert-free audio (hours, count, per hour) and the source recordings that raised
    the most (count and what they were taken for); {} for a set whose files do not name their sources."""
    kinds: dict[str, dict] = {}
    sources: dict[str, dict[str, int]] = {}
    durations = {f.filename: f.duration for f in corpus.files}
    for name in free:
        extras = corpus.file_extras(name)
        kind = extras.get("source_kind")
        if kind is None:
            return {}
        entry = kinds.setdefault(kind, {"hours": 0.0, "count": 0})
        entry["hours"] += durations[name] / 3600.0
        for d in detections.get(name, []):
            entry["count"] += 1
            source = _source_at(extras, d.onset) or name
            sources.setdefault(source, dict.fromkeys(labels, 0))[d.label] += 1
    by_kind = {kind: {"hours": round(v["hours"], 3), "count": v["count"],
                      "per_hour": round(v["count"] / v["hours"], 2) if v["hours"] else None}
               for kind, v in sorted(kinds.items())}
    worst = sorted(sources.items(), key=lambda item: (-sum(item[1].values()), item[0]))[:WORST_SOURCES]
    return {"by_kind": by_kind,
            "worst_sources": [{"source": source, "count": sum(counts.values()),
                               "by_label": {k: v for k, v in counts.items() if v}} for source, counts in worst]}


def heard_sources(corpora: list[Corpus]) -> set[str]:
    """The alert recordings (make_real_set.py's `source`, relative to the role folder) that the alert files of
    these sets play: what a detector trained on them has heard."""
    return {source for corpus in corpora for f in corpus.files
            if corpus.events_of(f.filename) and (source := corpus.file_extras(f.filename).get("source"))}


def _heard_split(corpus: Corpus, detections: dict[str, list[Detection]], labels: list[str],
                 heard: set[str]) -> dict:
    """Alerts found among the recordings in `heard` and among the others, isolated and mixed apart."""
    split = {}
    for group, wanted in (("heard", True), ("not_heard", False)):
        names = {kind: [n for n in files_of_kind(corpus, kind)
                        if (corpus.file_extras(n).get("source") in heard) == wanted]
                 for kind in ("isolated", "mixture")}
        recordings = {corpus.file_extras(n).get("source") for kind in names for n in names[kind]}
        split[group] = {"recordings": len(recordings),
                        "isolated": _found(corpus, detections, names["isolated"], labels),
                        "mixtures_found": _found(corpus, detections, names["mixture"], labels)}
    return split


def real_report(corpus: Corpus, detections: dict[str, list[Detection]], labels: list[str],
                heard: set[str] | None = None) -> dict:
    """False alarms, alerts found, F1 at >= 0 dB, by SNR bucket and announcement delay of one detector on a set;
    with `heard` (heard_sources of its training sets), the alerts found split by whether it heard the recording."""
    free = files_of_kind(corpus, "free") or [f.filename for f in corpus.files if not corpus.events_of(f.filename)]
    rate, count, hours = false_alarms_per_hour(corpus, {name: detections.get(name, []) for name in free})
    by_label = {label: sum(d.label == label for name in free for d in detections.get(name, [])) for label in labels}
    mixtures = files_of_kind(corpus, "mixture")
    snr = {name: corpus.file_extras(name).get("alert_snr_db") for name in mixtures}
    loud = [name for name in mixtures if snr[name] is not None and snr[name] >= FOUND_SNR_DB]
    report = {"false_alarms": {"per_hour": round(rate, 2), "count": count, "hours": round(hours, 3),
                               "by_label": by_label,
                               **false_alarms_by_source(corpus, detections, free, labels)},
              "isolated": _found(corpus, detections, files_of_kind(corpus, "isolated"), labels),
              "mixtures_found": _found(corpus, detections, mixtures, labels)}
    if loud:
        f1 = event_f1(corpus, detections, labels, files=loud)
        report["f1_at_0db_and_above"] = {"files": len(loud), "macro": round(f1["macro_f1_present"], 3),
                                         "per_label": {k: (None if np.isnan(v) else round(v, 3))
                                                       for k, v in f1["class_f1"].items()}}
    buckets = {}
    for lo, hi in SNR_BUCKETS:
        names = [n for n in mixtures if snr[n] is not None and (lo <= snr[n] < hi or (hi == SNR_BUCKETS[-1][1]
                                                                                      and snr[n] == hi))]
        if names:
            buckets[f"{lo:g}..{hi:g}"] = {"files": len(names),
                                         "macro_f1": round(event_f1(corpus, detections, labels,
                                                                    files=names)["macro_f1_present"], 3)}
    report["f1_by_alert_snr_db"] = buckets
    delays = announcement_delays(corpus, detections)
    report["announcement_delay"] = {**latency_summary([v for vs in delays.values() for v in vs]),
                                    "by_label": {label: latency_summary(delays[label])
                                                 for label in labels if delays.get(label)}}
    if heard is not None:
        report["heard_split"] = _heard_split(corpus, detections, labels, heard)
    return report


def _hits(found: dict, label: str) -> str:
    """"found/events" of one label in a `_found` count (0/0 where the label has no event)."""
    return "{}/{}".format(*found["per_label"].get(label, [0, 0]))


def format_real_report(name: str, report: dict, labels: list[str]) -> str:
    fa, iso, mix = report["false_alarms"], report["isolated"], report["mixtures_found"]
    lines = [f"== {name}",
             f"false alarms on {fa['hours']} h of real alert-free audio: {fa['count']} = {fa['per_hour']} per hour "
             f"(taken for: {', '.join(f'{k} {v}' for k, v in fa['by_label'].items() if v) or 'none'})",
             *(["  by kind of audio: " + ", ".join(f"{k} {v['count']} in {v['hours']} h ({v['per_hour']}/h)"
                                                 for k, v in fa["by_kind"].items())] if fa.get("by_kind") else []),
             *(["  most from: " + "; ".join(f"{w['source'].rsplit('/', 1)[-1]} {w['count']} ("
                                           + ", ".join(f"{k} {v}" for k, v in w["by_label"].items()) + ")"
                                           for w in fa["worst_sources"])] if fa.get("worst_sources") else []),
             f"isolated real alerts found: {iso['found']} of {iso['events']} ({iso['share']})",
             f"mixture alerts found (overlap): {mix['found']} of {mix['events']} ({mix['share']})"]
    f1 = report.get("f1_at_0db_and_above")
    if f1:
        lines.append(f"event F1 (200 ms onset collar) at alert SNR >= 0 dB, {f1['files']} mixtures: macro {f1['macro']}"
                     " | " + ", ".join(f"{k} {'-' if v is None else v}" for k, v in f1["per_label"].items()))
    lines.append("macro F1 by alert SNR (dB): " + ", ".join(f"{b}: {v['macro_f1']} ({v['files']})"
                                                           for b, v in report["f1_by_alert_snr_db"].items()))
    lines.append("found per label (isolated, mixtures): " + ", ".join(
        f"{k} {_hits(iso, k)}, {_hits(mix, k)}" for k in labels if k in iso["per_label"] or k in mix["per_label"]))
    d = report["announcement_delay"]
    lines.append(f"announcement delay: median {d['median_s']} s, p90 {d['p90_s']} s over {d['count']} alerts"
                 + ("; median by label: " + ", ".join(f"{k} {v['median_s']} s ({v['count']})"
                                                      for k, v in d["by_label"].items()) if d.get("by_label") else ""))
    for group, split in report.get("heard_split", {}).items():
        a, b = split["isolated"], split["mixtures_found"]
        lines.append(f"alerts {'heard in training' if group == 'heard' else 'never heard'} "
                     f"({split['recordings']} recordings): isolated {a['found']} of {a['events']}, "
                     f"mixtures {b['found']} of {b['events']} | " +
                     ", ".join(f"{k} {_hits(a, k)}, {_hits(b, k)}" for k in labels
                               if k in a["per_label"] or k in b["per_label"]))
    return "\n".join(lines)
