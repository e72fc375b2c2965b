"""tools/score_recordings.py: per-recording tallies of the host's detections, counted by hand here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import score_recordings
from hearalert_corpus import LABELS


def write_corpus(root: Path, files: dict) -> Path:
    """files: name -> (alert SNR, [(label, kind, start_s, annotated onset, offset)])."""
    root.mkdir()
    (root / "files.tsv").write_text("filename\tduration\n" + "".join(f"{n}\t10.0\n" for n in files))
    rows = [f"{n}\t{on}\t{off}\t{label}\n" for n, (_, alerts) in files.items() for label, _, _, on, off in alerts
            if on is not None]
    (root / "annotations.tsv").write_text("filename\tonset\toffset\tevent_label\n" + "".join(rows))
    meta = {"format": "hearalert-corpus", "version": 1, "sample_rate": 16000, "labels": LABELS,
            "generator": "test", "seed": 1,
            "files": {n: {"alert_snr_db": snr, "alerts": [{"label": label, "kind": kind, "start_s": start}
                                                          for label, kind, start, _, _ in alerts]}
                      for n, (snr, alerts) in files.items()}}
    (root / "corpus.json").write_text(json.dumps(meta))
    return root


def write_evaluation(path: Path, detections: dict) -> Path:
    path.write_text(json.dumps({"files": [
        {"filename": n, "detections": [{"label": label, "onset": on, "offset": off, "detected_at": on + 0.3}
                                       for label, on, off in dets]} for n, dets in detections.items()]}))
    return path


def write_sources(path: Path) -> Path:
    path.write_text("source\tversion\tpath_inside\tlicence\tused_for\tsplit\n"
                    "pkg\t1\tusr/share/horn.wav\tCC0-1.0\talert:car_horn\ttrain\n"
                    "pkg\t1\tusr/share/ring.ogg\tCC0-1.0\talert:phone_ring\ttest\n"
                    "pkg\t1\tusr/share/sf2/Bank.sf2#Old Bell\tMIT\talert:phone_ring\ttrain\n")
    return path


@pytest.fixture
def case(tmp_path):
    corpus = write_corpus(tmp_path / "c", {
        # A heard horn at +5 dB found with its onset; an unheard ring at +5 dB found only 1 s late; a synthetic
        # siren at +5 dB missed while a phone ring fired over it.
        "a.wav": (5.0, [("car_horn", "recorded:pkg__horn.wav", 1.0, 1.0, 1.5),
                        ("phone_ring", "recorded:pkg__ring.ogg", 4.0, 4.0, 8.0),
                        ("siren", "wail", 0.0, 0.0, 2.0)]),
        # The same ring at -5 dB: the only phone_ring detection starts 3.3 s in, past its first 3 s and the
        # collar (not found), and a doorbell fires over it; a synthetic siren already sounding when the clip
        # starts (start_s -2, annotated from 0) found with its onset.
        "b.wav": (-5.0, [("phone_ring", "recorded:pkg__ring.ogg", 2.0, 2.0, 9.0),
                         ("siren", "hi-lo", -2.0, 0.0, 3.0)]),
        # An alert whose start lies past the clip's end has no annotated event: not counted anywhere.
        "c.wav": (0.0, [("phone_ring", "recorded:pkg__ring.ogg", 12.0, None, None)]),
    })
    evaluation = write_evaluation(tmp_path / "eval.json", {
        "a.wav": [("car_horn", 1.1, 1.6), ("phone_ring", 5.0, 8.0), ("phone_ring", 1.9, 2.5)],
        "b.wav": [("phone_ring", 5.3, 9.0), ("doorbell", 3.5, 4.0), ("siren", 0.15, 1.9)],
        "c.wav": [],
    })
    return corpus, evaluation, write_sources(tmp_path / "SOURCES.tsv")


def test_every_alert_is_tallied_by_recording_and_by_kind_and_snr(case):
    corpus, evaluation, sources = case
    heard = score_recordings.heard_recordings(sources)
    assert heard == {"pkg__horn.wav", "pkg__Bank__Old_Bell.wav"}  # a container member: named as fetched
    result = score_recordings.score(corpus, score_recordings.load_detections(evaluation), heard)
    recordings = {k: t.as_dict() for k, t in result["recordings"].items()}
    assert recordings == {
        "car_horn\tpkg__horn.wav": {"alerts": 1, "found": 1, "onset": 1, "instead": {}},
        # a.wav: found (5.0-8.0 overlaps 4.0-7.2), onset 1 s late; the early ring at 1.9 s lies before it.
        # b.wav: 5.3 s starts after 2.0 + 3 + 0.2 = 5.2 s, so not found; the doorbell overlaps.
        "phone_ring\tpkg__ring.ogg": {"alerts": 2, "found": 1, "onset": 0, "instead": {"doorbell": 1}},
    }
    groups = {k: t.as_dict() for k, t in result["groups"].items()}
    assert groups == {
        "real, heard\t>= 0 dB": {"alerts": 1, "found": 1, "onset": 1, "instead": {}},
        "real, never heard\t>= 0 dB": {"alerts": 1, "found": 1, "onset": 0, "instead": {}},
        "real, never heard\t< 0 dB": {"alerts": 1, "found": 0, "onset": 0, "instead": {"doorbell": 1}},
        # a.wav's siren (0-2 s, counted to 2.2 s) missed, the horn and the early ring over it; b.wav's found
        # from 0.15 s (the doorbell at 3.5 s lies past 3.2 s).
        "synthetic\t>= 0 dB": {"alerts": 1, "found": 0, "onset": 0, "instead": {"car_horn": 1, "phone_ring": 1}},
        "synthetic\t< 0 dB": {"alerts": 1, "found": 1, "onset": 1, "instead": {}},
    }


def test_the_command_prints_both_tables_and_writes_json(case, tmp_path, capsys):
    corpus, evaluation, sources = case
    out = tmp_path / "tallies.json"
    assert score_recordings.main(["--corpus", str(corpus), "--evaluation", str(evaluation), "--sources",
                                  str(sources), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "pkg__horn.wav" in text and "real, never heard" in text and "100%" in text
    saved = json.loads(out.read_text())
    assert saved["recordings"]["phone_ring | pkg__ring.ogg"]["found"] == 1


@pytest.mark.parametrize("content, words", [
    ("{not json", "not JSON"),
    ('{"model": "m"}', "no per-file results"),
    ('{"files": [{"filename": "a.wav"}]}', "files[0] is not a file result"),
    ('{"files": [{"filename": "a.wav", "detections": [{"label": "siren", "onset": "x", "offset": 1}]}]}',
     "files[0] is not a file result"),
])
def test_an_evaluation_without_per_file_results_is_a_one_line_error(case, tmp_path, capsys, content, words):
    corpus, _, sources = case
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    assert score_recordings.main(["--corpus", str(corpus), "--evaluation", str(bad), "--sources", str(sources)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and words in err and str(bad) in err and err.count("\n") == 1


def test_an_evaluation_of_another_corpus_is_refused(case, tmp_path, capsys):
    corpus, _, sources = case
    other = write_evaluation(tmp_path / "other.json", {"z.wav": []})
    assert score_recordings.main(["--corpus", str(corpus), "--evaluation", str(other), "--sources", str(sources)]) == 1
    assert "has no detections in the evaluation" in capsys.readouterr().err


def test_a_sources_table_without_its_columns_is_refused(case, tmp_path, capsys):
    corpus, evaluation, _ = case
    bad = tmp_path / "S.tsv"
    bad.write_text("package\tfile\nx\ty\n")
    assert score_recordings.main(["--corpus", str(corpus), "--evaluation", str(evaluation), "--sources", str(bad)]) == 1
    assert "columns path_inside, source, split" in capsys.readouterr().err


def test_a_corpus_without_per_alert_extras_is_refused(case, tmp_path, capsys):
    corpus, evaluation, sources = case
    meta = json.loads((corpus / "corpus.json").read_text())
    del meta["files"]
    (corpus / "corpus.json").write_text(json.dumps(meta))
    args = ["--corpus", str(corpus), "--evaluation", str(evaluation), "--sources", str(sources)]
    assert score_recordings.main(args) == 1
    assert "lists no alerts per file" in capsys.readouterr().err


def test_a_sources_row_with_a_malformed_excerpt_is_a_one_line_error(case, tmp_path, capsys):
    corpus, evaluation, _ = case
    bad = tmp_path / "S.tsv"
    bad.write_text("source\tversion\tpath_inside\tlicence\tused_for\tsplit\n"
                   "pkg\t1\tusr/share/horn.wav#t=5,1\tCC0-1.0\talert:car_horn\ttrain\n")
    assert score_recordings.main(["--corpus", str(corpus), "--evaluation", str(evaluation), "--sources", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_a_corpus_alert_without_a_start_is_a_one_line_error(case, capsys):
    corpus, evaluation, sources = case
    meta = json.loads((corpus / "corpus.json").read_text())
    del meta["files"]["a.wav"]["alerts"][0]["start_s"]
    (corpus / "corpus.json").write_text(json.dumps(meta))
    assert score_recordings.main(["--corpus", str(corpus), "--evaluation", str(evaluation), "--sources",
                                  str(sources)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "files['a.wav'].alerts[0] needs" in err and err.count("\n") == 1


def test_a_json_path_that_cannot_be_written_is_a_one_line_error(case, tmp_path, capsys):
    corpus, evaluation, sources = case
    target = tmp_path / "missing" / "t.json"
    assert score_recordings.main(["--corpus", str(corpus), "--evaluation", str(evaluation), "--sources",
                                  str(sources), "--json", str(target)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: --json ") and "cannot write it" in err and err.count("\n") == 1
