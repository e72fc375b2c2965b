"""Researcher-provided recordings (speech, noise, real alerts): listing, split assignment, loading.

A recording's split is, by default, a stable hash of its path relative to the folder listed, so the same
recording always lands in the same split (80 % train, 10 % val, 10 % test) whatever the seed: no source overlap
between splits. A handful of recordings can all hash into one split, so a folder may carry a split list,
`splits.tsv` at its root (header `path<TAB>split`, paths relative to that root): a listed file goes to its listed
split, an unlisted one keeps the hash. For --alerts-dir the root is the alerts folder (paths like
`siren/a.wav`) while the hash stays on the path inside the label folder (`a.wav`), as it always was.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path, PurePosixPath

import numpy as np
import soundfile as sf
import soxr

from . import LABELS, SAMPLE_RATE, SPLITS, containers

AUDIO_SUFFIXES = {".wav", ".flac", ".ogg", ".oga", ".aiff", ".aif", ".au", ".mp3"}
SPLIT_LIST = "splits.tsv"
SPLIT_LIST_HEADER = ("path", "split")
TIME_FRAGMENT = "t="  # W3C Media Fragments URI 1.0, section 4.2.1: the temporal dimension
_SECONDS = r"\d+(?:\.\d*)?"  # the spec's npt-sec: digits, optionally a '.' and more digits (no sign, no exponent)
_TEMPORAL = re.compile(rf"t=(?:npt:)?(?:(?P<start>{_SECONDS})(?:,(?P<end>{_SECONDS}))?|,(?P<end_only>{_SECONDS}))")


class RecordingsError(Exception):
    """A recordings folder or its splits.tsv is unusable; the message is the one line the user sees."""


def split_of(relative_path: str, buckets: tuple[int, int, int] = (8, 1, 1)) -> str:
    """The split a recording belongs to, from a hash of its relative path."""
    h = int(hashlib.sha1(relative_path.encode("utf-8")).hexdigest(), 16) % sum(buckets)
    edge = 0
    for split, size in zip(SPLITS, buckets):
        edge += size
        if h < edge:
            return split
    raise AssertionError("unreachable")


def read_split_list(root: str | Path, within: tuple[str, ...] | None = None) -> dict[str, str]:
    """The curator's split for each file listed in ROOT/splits.tsv (path relative to ROOT -> split).

    Empty when the folder has no splits.tsv. Strict, so a typo cannot silently fall back to the hash: every line
    must be `path<TAB>split` with a plain relative path to an existing audio file (inside one of the `within`
    subfolders when given), a split in train/val/test, and no path twice.
    """
    root = Path(root)
    list_file = root / SPLIT_LIST
    if not list_file.is_file():
        return {}
    try:
        lines = list_file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise RecordingsError(f"{list_file}: cannot read it ({e})") from e

    def fail(line: int, message: str) -> RecordingsError:
        return RecordingsError(f"{list_file}:{line}: {message}")

    if not lines or tuple(lines[0].split("\t")) != SPLIT_LIST_HEADER:
        raise fail(1, "the first line must be the header path<TAB>split")
    listed: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for number, text in enumerate(lines[1:], start=2):
        if not text.strip():
            continue
        fields = text.split("\t")
        if len(fields) != 2 or not fields[0]:
            raise fail(number, f"expected path<TAB>split, got {text!r}")
        path, split = fields
        if PurePosixPath(path).is_absolute() or path != PurePosixPath(path).as_posix() or \
                any(part in (".", "..") for part in path.split("/")):
            raise fail(number, f"{path!r} must be a plain path relative to {root}, like a/b.wav "
                               "(no leading /, no . or .. parts, no //)")
        if split not in SPLITS:
            raise fail(number, f"split {split!r} is not one of {', '.join(SPLITS)}")
        if path in listed:
            raise fail(number, f"{path} is listed twice (first on line {first_line[path]})")
        if not (root / path).is_file():
            raise fail(number, f"{path}: no such file in {root}")
        if not has_audio_suffix(path):
            raise fail(number, f"{path} is not an audio file ({', '.join(sorted(AUDIO_SUFFIXES))})")
        parts = PurePosixPath(path).parts
        if within is not None and (len(parts) < 2 or parts[0] not in within):
            raise fail(number, f"{path} is not inside a label folder (one of {', '.join(within)})")
        listed[path] = split
        first_line[path] = number
    return listed


def list_audio(folder: str | Path | None, split: str, root: str | Path | None = None) -> list[Path]:
    """Audio files under `folder` (recursively) that belong to `split`, sorted for determinism.

    The split list read is ROOT/splits.tsv (ROOT defaults to `folder`, and must contain it); a file it does not
    list goes by split_of(its path relative to `folder`).
    """
    if folder is None:
        return []
    folder = Path(folder)
    if not folder.is_dir():
        raise RecordingsError(f"{folder}: not a folder")
    root = folder if root is None else Path(root)
    listed = read_split_list(root)
    files = sorted(p for p in folder.rglob("*") if p.is_file() and has_audio_suffix(p.name))
    return [p for p in files
            if listed.get(p.relative_to(root).as_posix(), split_of(p.relative_to(folder).as_posix())) == split]


@dataclass(frozen=True)
class TimeRange:
    """An excerpt of a recording, `#t=START,END` in a manifest path: the samples whose time lies in [START, END)
    seconds from the file's first sample. START and END keep the digits written (canonical: no leading zeros
    before the point, no trailing zeros after it), so the excerpt and its name never hang on float rounding."""
    start: str
    end: str | None  # None: to the end of the recording (`#t=START`)

    @property
    def fragment(self) -> str:
        """The range as a manifest writes it, canonically: 't=0,5', 't=2.5'."""
        return f"{TIME_FRAGMENT}{self.start}" + ("" if self.end is None else f",{self.end}")

    @property
    def label(self) -> str:
        """The excerpt in a file name: 't0-5s' for t=0,5, 't2.5s-end' for t=2.5."""
        return f"t{self.start}s-end" if self.end is None else f"t{self.start}-{self.end}s"

    def frames(self, rate: int, length: int) -> tuple[int, int]:
        """[first, stop) sample indices of the excerpt in a recording of `length` samples at `rate` Hz: sample n
        (at n / rate seconds) is in when START <= n / rate < END. A range starting or ending after the recording,
        or holding no sample, is a RecordingsError."""
        def fail(problem: str) -> RecordingsError:
            return RecordingsError(f"#{self.fragment} {problem} (the recording has {length} samples at {rate} Hz"
                                   + (f", {length / rate:.4f} s)" if rate > 0 else ")"))

        if rate <= 0 or length <= 0:
            raise fail("cannot be cut")
        first = math.ceil(Fraction(self.start) * rate)
        if first >= length:
            raise fail("starts after the recording")
        stop = length
        if self.end is not None:
            if Fraction(self.end) * rate > length:
                raise fail("ends after the recording")
            stop = math.ceil(Fraction(self.end) * rate)
        if not 0 <= first < stop <= length:
            raise fail("holds no sample")
        return first, stop


def _canonical_seconds(text: str) -> str:
    """'05.50' -> '5.5', '3.' -> '3', '0.0' -> '0': one spelling per time, for names and duplicate checks."""
    whole, _, fraction = text.partition(".")
    whole, fraction = whole.lstrip("0") or "0", fraction.rstrip("0")
    return f"{whole}.{fraction}" if fraction else whole


def parse_time_range(fragment: str) -> TimeRange:
    """The TimeRange of a Media Fragments temporal fragment (what follows '#'): `t=START,END`, `t=START` (to
    the end) or `t=,END` (from 0), in seconds with optional decimals and an optional `npt:` prefix. Anything
    else (other time formats, signs, exponents, spaces, START >= END) is a one-line RecordingsError."""
    match = _TEMPORAL.fullmatch(fragment)
    if match is None:
        if "-" in fragment:
            raise RecordingsError(f"#{fragment}: times are seconds from the start and cannot be negative")
        raise RecordingsError(f"#{fragment} is not a time range: write #t=START,END, #t=START or #t=,END in "
                              "seconds (e.g. #t=0,5.1)")
    start = _canonical_seconds(match["start"] or "0")
    end_text = match["end"] or match["end_only"]
    end = None if end_text is None else _canonical_seconds(end_text)
    if end is not None and Fraction(start) >= Fraction(end):
        raise RecordingsError(f"#{fragment}: START ({start} s) must be before END ({end} s)")
    return TimeRange(start, end)


def split_reference(path_inside: str) -> tuple[str, str | None, TimeRange | None]:
    """(file in the package, container member, time range) named by a manifest path: `path`,
    `path.sf2#Sample` / `path.cat#N` (a member) or `path#t=START,END` (an excerpt of an audio file). A fragment
    starting with `t=` is always a time range; a time range of a container member (`path.cat#35#t=0,1`) is
    refused with a RecordingsError, as is a time range of a container file itself."""
    path, member = containers.split_path(path_inside)
    if member is None:
        return path, None, None
    if member.startswith(TIME_FRAGMENT):
        kind = containers.KINDS.get(PurePosixPath(path).suffix.lower())
        if kind is not None:
            raise RecordingsError(f"{path_inside}: a time range cuts an audio file, not a {kind}; name one of its "
                                  f"members (…{containers.SEPARATOR}member)")
        return path, None, parse_time_range(member)
    if f"{containers.SEPARATOR}{TIME_FRAGMENT}" in member:
        raise RecordingsError(f"{path_inside}: a time range of a container member is not supported; cut a whole "
                              "audio file (path#t=START,END)")
    return path, member, None


def recording_file_name(package: str, path_inside: str) -> str:
    """The name a real recording gets under ALERTS_DIR/<label>/ (fetch_alert_recordings.py), which make_corpus
    records as its alerts' kind, `recorded:<name>`: the package keeps names unique and the provenance visible.
    `<package>__<basename>` for a whole file (`.wav` added to a basename without an audio suffix, whose bytes
    fetch_alert_recordings.whole_file_bytes makes a WAV), `<package>__<container stem>__<member>.wav` for a member of a
    container (`path.sf2#Sample`, `path.cat#N`), `<package>__<file stem>__t<START>-<END>s.wav` for an excerpt
    (`path#t=START,END`; `…__t<START>s-end.wav` for `#t=START`). A malformed reference is a RecordingsError."""
    path, member, excerpt = split_reference(path_inside)
    if member is not None:
        return f"{package}__{containers.file_stem(path, member)}.wav"
    if excerpt is not None:
        return f"{package}__{containers.file_stem(path, excerpt.label)}.wav"
    name = PurePosixPath(path_inside).name
    return f"{package}__{name}" if has_audio_suffix(name) else f"{package}__{name}.wav"


def has_audio_suffix(path: str) -> bool:
    """Whether `path` ends in one of AUDIO_SUFFIXES: what every listing of recordings takes for audio."""
    return PurePosixPath(path).suffix.lower() in AUDIO_SUFFIXES


def list_alert_recordings(alerts_dir: str | Path, split: str) -> dict[str, list[Path]]:
    """Per label, the recordings of `split` in ALERTS_DIR/<label>/ (none for a label without a folder).

    ALERTS_DIR/splits.tsv lists paths relative to ALERTS_DIR (e.g. siren/a.wav); each must be in a label folder.
    """
    alerts_dir = Path(alerts_dir)
    if not alerts_dir.is_dir():
        raise RecordingsError(f"{alerts_dir}: not a folder")
    read_split_list(alerts_dir, within=LABELS)
    return {label: list_audio(alerts_dir / label, split, root=alerts_dir) if (alerts_dir / label).is_dir() else []
            for label in LABELS}


def load_audio(path: Path) -> np.ndarray:
    """A recording as float32 mono at SAMPLE_RATE (downmixed, resampled with soxr)."""
    data, rate = sf.read(str(path), dtype="float32", always_2d=True)
    mono = data.mean(axis=1)
    if rate != SAMPLE_RATE:
        mono = soxr.resample(mono, rate, SAMPLE_RATE, quality="HQ")
    return np.ascontiguousarray(mono, dtype=np.float32)


def random_excerpt(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """`n` samples from a random place in `x`, looping a short recording to fill."""
    if len(x) == 0:
        return np.zeros(n, dtype=np.float32)
    if len(x) < n:
        x = np.tile(x, n // len(x) + 1)
    start = int(rng.integers(0, len(x) - n + 1))
    return x[start:start + n].copy()


def active_segments(x: np.ndarray, threshold_db: float = -25.0, frame: float = 0.02) -> list[tuple[float, float]]:
    """Where a recording is sounding: 20 ms frames within `threshold_db` of its loudest frame."""
    hop = int(frame * SAMPLE_RATE)
    n_frames = len(x) // hop
    if n_frames == 0:
        return []
    energy = np.square(x[: n_frames * hop].astype(np.float64)).reshape(n_frames, hop).mean(axis=1)
    on = energy > energy.max() * 10 ** (threshold_db / 10)
    segs, start = [], None
    for i, flag in enumerate(on):
        if flag and start is None:
            start = i
        if not flag and start is not None:
            segs.append((start * frame, i * frame))
            start = None
    if start is not None:
        segs.append((start * frame, n_frames * frame))
    return segs
