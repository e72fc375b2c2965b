"""The strict corpus reader: a valid corpus reads; every malformation is an error naming the file and line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from corpus_format import CorpusFormatError, main, read_corpus

META = {"format": "hearalert-corpus", "version": 1, "sample_rate": 16000, "labels": ["siren", "doorbell"],
        "generator": "test", "seed": 1}
FILES = "filename\tduration\na.wav\t2.000\nb.wav\t1.000\n"
ANNOTATIONS = "filename\tonset\toffset\tevent_label\na.wav\t0.500\t1.250\tsiren\n"


def _write(root: Path, meta=None, files=FILES, annotations=ANNOTATIONS, audio=True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "corpus.json").write_text(json.dumps(META if meta is None else meta))
    (root / "files.tsv").write_text(files)
    (root / "annotations.tsv").write_text(annotations)
    if audio:
        for sub in ("audio", "clean", "alerts"):
            (root / sub).mkdir(exist_ok=True)
            for name, seconds in (("a.wav", 2.0), ("b.wav", 1.0)):
                sf.write(str(root / sub / name), np.zeros(int(seconds * 16000)), 16000, subtype="PCM_16")
    return root


def test_valid_corpus_reads(tmp_path):
    corpus = read_corpus(_write(tmp_path / "c"), check_audio=True)
    assert [f.filename for f in corpus.files] == ["a.wav", "b.wav"]
    assert [f.duration for f in corpus.files] == [2.0, 1.0]
    assert len(corpus.events) == 1 and corpus.events[0].label == "siren"
    assert corpus.events_of("a.wav")[0].onset == 0.5 and corpus.events_of("b.wav") == []
    assert corpus.labels == ["siren", "doorbell"]


@pytest.mark.parametrize("files, annotations, where, words", [
    ("filename\tduration\n", "filename\tonset\toffset\n", "annotations.tsv:1", "header"),
    ("file\tduration\na.wav\t2\n", ANNOTATIONS, "files.tsv:1", "header"),
    (FILES + "c.wav\n", ANNOTATIONS, "files.tsv:4", "fields"),
    (FILES + "a.wav\t3.0\n", ANNOTATIONS, "files.tsv:4", "twice"),
    (FILES + "c.wav\tlong\n", ANNOTATIONS, "files.tsv:4", "not a number"),
    (FILES + "c.wav\t0\n", ANNOTATIONS, "files.tsv:4", "> 0"),
    (FILES + "../c.wav\t1\n", ANNOTATIONS, "files.tsv:4", "relative"),
    ("filename\tduration\n\na.wav\t2\n", ANNOTATIONS, "files.tsv:2", "blank"),
    ("filename\tduration\r\na.wav\t2\r\n", ANNOTATIONS, "files.tsv:1", "carriage return"),
    (FILES, ANNOTATIONS + "z.wav\t0.1\t0.2\tsiren\n", "annotations.tsv:3", "not listed"),
    (FILES, ANNOTATIONS + "a.wav\t0.5\t0.5\tsiren\n", "annotations.tsv:3", "not after onset"),
    (FILES, ANNOTATIONS + "a.wav\t-0.1\t0.5\tsiren\n", "annotations.tsv:3", "negative"),
    (FILES, ANNOTATIONS + "b.wav\t0.1\t1.5\tsiren\n", "annotations.tsv:3", "past the end"),
    (FILES, ANNOTATIONS + "a.wav\t0.1\t0.2\tdog_bark\n", "annotations.tsv:3", "not in corpus.json labels"),
    (FILES, ANNOTATIONS + "a.wav\t0.1\tnan\tsiren\n", "annotations.tsv:3", "not finite"),
    (FILES, ANNOTATIONS + "a.wav\t0.1\t0.2\n", "annotations.tsv:3", "fields"),
])
def test_malformed_tables_name_file_and_line(tmp_path, files, annotations, where, words):
    root = _write(tmp_path / "c", files=files, annotations=annotations, audio=False)
    with pytest.raises(CorpusFormatError) as error:
        read_corpus(root)
    assert f"{root}/{where}:" in str(error.value) and words in str(error.value)


@pytest.mark.parametrize("change, words", [
    ({"format": "other"}, "format"),
    ({"version": 2}, "version"),
    ({"sample_rate": 0}, "sample_rate"),
    ({"labels": []}, "labels"),
    ({"labels": ["siren", "siren"]}, "duplicates"),
    ({"seed": None, "generator": None}, None),
])
def test_bad_metadata_is_rejected(tmp_path, change, words):
    meta = {k: v for k, v in {**META, **change}.items() if v is not None}
    root = _write(tmp_path / "c", meta=meta, audio=False)
    with pytest.raises(CorpusFormatError) as error:
        read_corpus(root)
    assert str(root / "corpus.json") in str(error.value)
    if words:
        assert words in str(error.value)


def test_audio_checks_find_missing_and_misaligned_files(tmp_path):
    root = _write(tmp_path / "c")
    sf.write(str(root / "alerts" / "b.wav"), np.zeros(15000), 16000, subtype="PCM_16")
    read_corpus(root)  # the tables alone are fine
    with pytest.raises(CorpusFormatError, match="not sample-aligned"):
        read_corpus(root, check_audio=True)
    (root / "audio" / "a.wav").unlink()
    with pytest.raises(CorpusFormatError, match=r"files.tsv:2: .*a.wav is missing"):
        read_corpus(root, check_audio=True)


def test_command_line_reports_errors_on_stderr(tmp_path, capsys):
    good = _write(tmp_path / "good")
    assert main([str(good), "--audio"]) == 0
    assert "valid" in capsys.readouterr().out
    bad = _write(tmp_path / "bad", files=FILES + "c.wav\n", audio=False)
    assert main([str(bad)]) == 1
    assert "files.tsv:4" in capsys.readouterr().err
