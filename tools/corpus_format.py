#!/usr/bin/env python3
"""Strict reader and validator of the HearAlert labelled-corpus format (shared/docs/CORPUS.md).

Every problem raises `CorpusFormatError` naming the file (and line, for the TSV tables); nothing is silently
skipped. Used by training, the evaluator and the enhancement scorer.

  .venv/bin/python tools/corpus_format.py CORPUS [--audio]     # validate, print a summary, exit 1 on error

    from corpus_format import read_corpus
    corpus = read_corpus("/tmp/corpus", check_audio=True)
    for f in corpus.files: print(f.filename, f.duration, corpus.events_of(f.filename))
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

FORMAT_NAME = "hearalert-corpus"
FORMAT_VERSION = 1
FILES_HEADER = ["filename", "duration"]
ANNOTATIONS_HEADER = ["filename", "onset", "offset", "event_label"]
DURATION_TOLERANCE = 0.01  # seconds: files.tsv durations are written with 3 decimals; audio may add rounding
# corpus.json extra (CORPUS.md allows free-form extras): true for a set of real audio without trusted labels (sound
# effects that may hold alert-like sounds), made for distillation only. Its files have no events, yet they are not
# alert-free, so it must never train, validate, test or count false alarms.
UNLABELLED_KEY = "unlabelled"


class CorpusFormatError(ValueError):
    """A corpus that does not follow CORPUS.md; the message starts with `path[:line]:`."""


@dataclass(frozen=True)
class AudioFile:
    filename: str
    duration: float


@dataclass(frozen=True)
class Event:
    filename: str
    onset: float
    offset: float
    label: str


@dataclass
class Corpus:
    root: Path
    meta: dict
    files: list[AudioFile]
    events: list[Event]
    _by_file: dict[str, list[Event]] = field(default_factory=dict, repr=False)

    @property
    def labels(self) -> list[str]:
        return list(self.meta["labels"])

    @property
    def sample_rate(self) -> int:
        return int(self.meta["sample_rate"])

    def events_of(self, filename: str) -> list[Event]:
        if not self._by_file:
            for e in self.events:
                self._by_file.setdefault(e.filename, []).append(e)
        return self._by_file.get(filename, [])

    def audio_path(self, filename: str, component: str = "audio") -> Path:
        """Path of `filename` under audio/, clean/ or alerts/."""
        if component not in ("audio", "clean", "alerts"):
            raise ValueError(f"unknown component {component!r}")
        return self.root / component / filename

    @property
    def unlabelled(self) -> bool:
        """True for a distillation-only set (corpus.json "unlabelled": true): no file's labels can be trusted."""
        return self.meta.get(UNLABELLED_KEY) is True

    def file_extras(self, filename: str) -> dict:
        """The generator's per-file extras (corpus.json "files"), or {} for corpora without them."""
        files = self.meta.get("files")
        return files.get(filename, {}) if isinstance(files, dict) else {}


def _fail(path: Path, line: int | None, message: str) -> None:
    where = f"{path}:{line}" if line is not None else str(path)
    raise CorpusFormatError(f"{where}: {message}")


def _read_tsv(path: Path, header: list[str]) -> list[tuple[int, list[str]]]:
    if not path.is_file():
        _fail(path, None, "missing")
    try:
        text = path.read_bytes().decode("utf-8")  # bytes: universal newlines would hide a CRLF
    except UnicodeDecodeError as e:
        _fail(path, None, f"not UTF-8 ({e})")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline
    if not lines:
        _fail(path, 1, f"empty; expected the header {chr(9).join(header)!r}")
    rows = []
    for number, line in enumerate(lines, start=1):
        if line.endswith("\r"):
            _fail(path, number, "carriage return (CRLF line ending); use LF")
        fields = line.split("\t")
        if number == 1:
            if fields != header:
                _fail(path, 1, f"header is {line!r}, expected {chr(9).join(header)!r}")
            continue
        if line.strip() == "":
            _fail(path, number, "blank line")
        if len(fields) != len(header):
            _fail(path, number, f"{len(fields)} tab-separated fields, expected {len(header)} ({', '.join(header)})")
        rows.append((number, fields))
    return rows


def _number(path: Path, line: int, name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        _fail(path, line, f"{name} {text!r} is not a number")
    if not math.isfinite(value):
        _fail(path, line, f"{name} {text!r} is not finite")
    return value


def _check_filename(path: Path, line: int, name: str) -> None:
    p = PurePosixPath(name)
    if not name or name != name.strip() or p.is_absolute() or ".." in p.parts or "\\" in name:
        _fail(path, line, f"filename {name!r} must be a plain path relative to audio/")


def _read_meta(root: Path) -> dict:
    path = root / "corpus.json"
    if not path.is_file():
        _fail(path, None, "missing")
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        _fail(path, None, f"not valid JSON ({e})")
    if not isinstance(meta, dict):
        _fail(path, None, "must be a JSON object")
    if meta.get("format") != FORMAT_NAME:
        _fail(path, None, f"format is {meta.get('format')!r}, expected {FORMAT_NAME!r}")
    if meta.get("version") != FORMAT_VERSION:
        _fail(path, None, f"version is {meta.get('version')!r}, expected {FORMAT_VERSION}")
    rate = meta.get("sample_rate")
    if not isinstance(rate, int) or isinstance(rate, bool) or rate <= 0:
        _fail(path, None, f"sample_rate {rate!r} must be a positive integer")
    labels = meta.get("labels")
    if not isinstance(labels, list) or not labels or not all(isinstance(x, str) and x.strip() == x and x
                                                             for x in labels):
        _fail(path, None, "labels must be a non-empty array of non-empty strings")
    if len(set(labels)) != len(labels):
        _fail(path, None, "labels contain duplicates")
    for key in ("generator", "seed"):
        if key not in meta:
            _fail(path, None, f"missing key {key!r}")
    return meta


def _check_audio(root: Path, files: list[AudioFile], rate: int) -> None:
    import soundfile as sf  # only needed when audio is checked

    files_tsv = root / "files.tsv"
    for line, f in enumerate(files, start=2):
        main = root / "audio" / f.filename
        if not main.is_file():
            _fail(files_tsv, line, f"{main} is missing")
        try:
            info = sf.info(str(main))
        except RuntimeError as e:
            _fail(main, None, f"unreadable audio ({e})")
        actual = info.frames / info.samplerate
        if abs(actual - f.duration) > DURATION_TOLERANCE:
            _fail(files_tsv, line, f"duration {f.duration} but {main} lasts {actual:.3f} s")
        for component in ("clean", "alerts"):
            other = root / component / f.filename
            if not other.exists():
                continue
            try:
                oinfo = sf.info(str(other))
            except RuntimeError as e:
                _fail(other, None, f"unreadable audio ({e})")
            if oinfo.samplerate != info.samplerate or oinfo.frames != info.frames:
                _fail(other, None, f"not sample-aligned with {main}: {oinfo.frames} frames at {oinfo.samplerate} Hz "
                                   f"vs {info.frames} at {info.samplerate} Hz")


def refuse_unlabelled(corpus: Corpus, use: str) -> Corpus:
    """`corpus`, unless it is an unlabelled set (UNLABELLED_KEY), which no tool may score, tune on, train on with
    labels or count false alarms on: its event-free files hold alert-like sounds. `use` names what it was given
    for, e.g. "--val"; the error says to pass it to train.py --distill, the one place that takes it."""
    if corpus.unlabelled:
        raise CorpusFormatError(f"{corpus.root}: an unlabelled set (corpus.json \"{UNLABELLED_KEY}\": true) has no "
                                f"trusted events and is not alert-free, so it cannot be {use}; it is for train.py "
                                f"--distill only")
    return corpus


def read_corpus(root: str | Path, check_audio: bool = False) -> Corpus:
    """Read and validate a corpus. With `check_audio`, also open every audio/, clean/ and alerts/ file and
    check durations and sample alignment (slower: touches every file header)."""
    root = Path(root)
    if not root.is_dir():
        raise CorpusFormatError(f"{root}: not a folder")
    meta = _read_meta(root)
    files_path, ann_path = root / "files.tsv", root / "annotations.tsv"
    files: list[AudioFile] = []
    durations: dict[str, float] = {}
    for line, (name, dur_text) in _read_tsv(files_path, FILES_HEADER):
        _check_filename(files_path, line, name)
        if name in durations:
            _fail(files_path, line, f"{name} listed twice")
        duration = _number(files_path, line, "duration", dur_text)
        if duration <= 0:
            _fail(files_path, line, f"duration {dur_text} must be > 0")
        durations[name] = duration
        files.append(AudioFile(name, duration))
    labels = set(meta["labels"])
    events: list[Event] = []
    for line, (name, on_text, off_text, label) in _read_tsv(ann_path, ANNOTATIONS_HEADER):
        if name not in durations:
            _fail(ann_path, line, f"{name!r} is not listed in files.tsv")
        onset = _number(ann_path, line, "onset", on_text)
        offset = _number(ann_path, line, "offset", off_text)
        if onset < 0:
            _fail(ann_path, line, f"onset {on_text} is negative")
        if offset <= onset:
            _fail(ann_path, line, f"offset {off_text} is not after onset {on_text}")
        if offset > durations[name] + DURATION_TOLERANCE:
            _fail(ann_path, line, f"offset {off_text} is past the end of {name} ({durations[name]} s)")
        if label not in labels:
            _fail(ann_path, line, f"label {label!r} is not in corpus.json labels")
        events.append(Event(name, onset, offset, label))
    if check_audio:
        _check_audio(root, files, meta["sample_rate"])
    return Corpus(root, meta, files, events)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Validate a HearAlert corpus (shared/docs/CORPUS.md).")
    p.add_argument("corpus", type=Path, help="corpus folder")
    p.add_argument("--audio", action="store_true", help="also check every audio file's presence and length")
    args = p.parse_args(argv)
    try:
        corpus = read_corpus(args.corpus, check_audio=args.audio)
    except CorpusFormatError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    hours = sum(f.duration for f in corpus.files) / 3600
    print(f"{args.corpus}: valid; {len(corpus.files)} files, {hours:.2f} h, {len(corpus.events)} events, "
          f"labels {', '.join(corpus.labels)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
