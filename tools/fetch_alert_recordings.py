#!/usr/bin/env python3
"""Fetch the real alert recordings listed in a manifest out of pinned Debian packages, into an --alerts-dir.

The manifest (default tools/alert_recordings.tsv) names, for each recording, its label, the Debian package and
exact version that ships it, the path inside the .deb, the licence that covers that file (from the package's
debian/copyright), the sha256 of the file as extracted and the corpus split (train/val/test) it belongs to.
A path_inside may also name one recording inside a container file, `path/in/deb.sf2#SampleName` (a SoundFont 2
sample) or `path/in/deb.cat#N` (entry N, from 0, of an OpenTTD sound catalogue): the tool writes that member's PCM
as a WAV at its own sample rate, and the row's sha256 is of that written WAV (hearalert_corpus/containers.py).
A path_inside may also name an excerpt of an audio file with a W3C Media Fragments time range, `path#t=START,END`
(seconds, decimals allowed; `#t=START` runs to the end, `#t=,END` starts at 0): the samples whose time lies in
[START, END), decoded and written as a WAV at the file's own rate and channels (16-bit, 8-bit for 8-bit files). The
row's sha256 is of the whole file as extracted, not of the excerpt: a lossy file's decoded samples differ by a
least significant bit between decoder builds, while the file and the range pin the excerpt. A time range of a
container member is refused.
For each package this tool runs `apt-get download PKG=VERSION` (nothing is installed, no root needed) or reuses
a .deb already in --debs, extracts only the listed files with `dpkg-deb --fsys-tarfile`, checks every sha256 and
writes

    OUT/<label>/<package>__<basename>        (original format; soundfile reads .wav/.ogg/.oga)
    OUT/<label>/<package>__<container stem>__<member>.wav     (a member of a container, 16-bit or 8-bit PCM)
    OUT/<label>/<package>__<stem>__t<START>-<END>s.wav        (an excerpt, path#t=START,END; 16-bit or 8-bit PCM)
    OUT/splits.tsv                           (path<TAB>split: each recording's split from the manifest)

which is the folder layout `make_corpus.py --alerts-dir OUT` expects. With --sources-tsv it also writes the
provenance table models/SOURCES.tsv wants: one row per recording with its split from the manifest, checked
against the split make_corpus will use (hearalert_corpus.sources.list_alert_recordings on OUT).

Examples:
  .venv/bin/python tools/fetch_alert_recordings.py --out /tmp/real_alerts --debs ~/debs --sources-tsv /tmp/S.tsv
  .venv/bin/python tools/fetch_alert_recordings.py --out /tmp/real_alerts --debs ~/debs --offline   # no network
  .venv/bin/python tools/make_corpus.py --out /tmp/corpus --splits train=2 --alerts-dir /tmp/real_alerts

Any missing package, missing file or member, unreadable container, bad time range or hash mismatch stops the run
with a one-line error and exit status 1.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import numpy as np
import soundfile as sf

from hearalert_corpus import LABELS, SPLITS
from hearalert_corpus import containers
from hearalert_corpus.pinned import FetchError, download, extract, index_debs
from hearalert_corpus.memory_audio import opened, sndfile_reason
from hearalert_corpus.sources import (
    SPLIT_LIST, SPLIT_LIST_HEADER, RecordingsError, TimeRange, has_audio_suffix, list_alert_recordings,
    recording_file_name, split_reference)

DEFAULT_MANIFEST = Path(__file__).resolve().parent / "alert_recordings.tsv"
MANIFEST_COLUMNS = ("label", "package", "version", "path_inside", "licence", "sha256", "split", "note")
SOURCES_COLUMNS = ("source", "version", "path_inside", "licence", "used_for", "split")


@dataclass(frozen=True)
class Recording:
    """One manifest row: a file inside a pinned package, with its label, licence and expected hash."""
    label: str
    package: str
    version: str
    path_inside: str
    licence: str
    sha256: str
    split: str
    note: str
    line: str = ""  # where the manifest lists it, MANIFEST:LINE, for errors found only once the file is read

    @property
    def container_path(self) -> str:
        """The file inside the .deb: path_inside without any '#member' or '#t=' time range."""
        return split_reference(self.path_inside)[0]

    @property
    def member(self) -> str | None:
        """The recording inside that file (sf2 sample name, .cat entry number), or None for the whole file."""
        return split_reference(self.path_inside)[1]

    @property
    def excerpt(self) -> TimeRange | None:
        """The part of that file to keep (`#t=START,END`), or None for all of it."""
        return split_reference(self.path_inside)[2]

    @property
    def file_name(self) -> str:
        """Name under OUT/<label>/: the package keeps names unique and the provenance visible."""
        return recording_file_name(self.package, self.path_inside)

    @property
    def alerts_path(self) -> str:
        """Path relative to OUT, as OUT/splits.tsv lists it."""
        return f"{self.label}/{self.file_name}"

    @property
    def where(self) -> str:
        return f"{self.package} {self.version}: {self.path_inside}"


def read_manifest(path: Path) -> list[Recording]:
    """The manifest's rows, checked: exact header, known labels, 64-hex hashes, splits, no duplicate output names."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise FetchError(f"cannot read manifest {path}: {e.strerror}") from e
    rows = list(csv.reader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))
    if rows and tuple(rows[0]) == tuple(c for c in MANIFEST_COLUMNS if c != "split"):
        raise FetchError(f"{path}: no split column; add one after sha256 with each recording's split "
                         f"({', '.join(SPLITS)})")
    if not rows or tuple(rows[0]) != MANIFEST_COLUMNS:
        raise FetchError(f"{path}: header must be the tab-separated columns {' '.join(MANIFEST_COLUMNS)}")
    recordings, names = [], set()
    for line, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != len(MANIFEST_COLUMNS):
            raise FetchError(f"{path}:{line}: expected {len(MANIFEST_COLUMNS)} tab-separated fields, got {len(row)}")
        rec = Recording(*(field.strip() for field in row), line=f"{path}:{line}")
        if rec.label not in LABELS:
            raise FetchError(f"{path}:{line}: unknown label {rec.label!r} (labels: {', '.join(LABELS)})")
        if len(rec.sha256) != 64 or any(c not in "0123456789abcdef" for c in rec.sha256):
            raise FetchError(f"{path}:{line}: sha256 must be 64 lower-case hex digits")
        if rec.split not in SPLITS:
            raise FetchError(f"{path}:{line}: split {rec.split!r} is not one of {', '.join(SPLITS)}")
        if not rec.package or not rec.version or not rec.path_inside or not rec.licence:
            raise FetchError(f"{path}:{line}: package, version, path_inside and licence must not be empty")
        try:
            _, member, _ = split_reference(rec.path_inside)
        except RecordingsError as e:
            raise FetchError(f"{path}:{line}: {e}") from e
        if member is not None:
            problem = containers.check_reference(rec.container_path, member)
            if problem is not None:
                raise FetchError(f"{path}:{line}: {problem}")
        key = (rec.label, rec.file_name)
        if key in names:
            raise FetchError(f"{path}:{line}: a second {rec.label}/{rec.file_name}")
        names.add(key)
        recordings.append(rec)
    if not recordings:
        raise FetchError(f"{path}: no recordings listed")
    return recordings


def excerpt_wav(data: bytes, name: str, excerpt: TimeRange) -> bytes:
    """The samples of the audio file `data` (called `name`) that lie in `excerpt`, as a PCM WAV at the file's own
    rate and channel count: 8-bit if the file is 8-bit PCM (exactly its samples), else 16-bit (decoded by
    soundfile, so a lossy file's excerpt is its decoder's 16-bit output). Errors are a RecordingsError naming
    `name`."""
    try:
        with opened(data, name) as f:
            subtype, rate = f.subtype, f.samplerate
            samples = f.read(dtype="int16", always_2d=True)
    except RuntimeError as e:  # soundfile's LibsndfileError
        raise RecordingsError(f"{name}: soundfile cannot decode it ({sndfile_reason(e)})") from e
    try:
        first, stop = excerpt.frames(rate, len(samples))
    except RecordingsError as e:
        raise RecordingsError(f"{name}{e}") from e  # 'firetruck.ogg#t=0,20 ends after the recording (…)'
    piece = samples[first:stop]
    if subtype in ("PCM_U8", "PCM_S8"):  # soundfile gives 8-bit sample v as v << 8; WAV's 8-bit PCM is unsigned
        member = containers.Member(name, rate, piece.shape[1], 1, ((piece >> 8) + 128).astype(np.uint8).tobytes())
    else:
        member = containers.Member(name, rate, piece.shape[1], 2, piece.astype("<i2").tobytes())
    try:
        return containers.wav_bytes(member)
    except containers.ContainerError as e:  # its message names the member, `name`
        raise RecordingsError(str(e)) from e


WHOLE_RECORDING = TimeRange("0", None)


def whole_file_bytes(path_inside: str, data: bytes) -> bytes:
    """The bytes a whole stored file is written as under its `recording_file_name`: the file itself, unless it was
    stored without an audio suffix (a sample library's bare `alarm`). Every reader lists recordings by suffix, so
    such a file would be fetched and then silently left out of every set; its name gets `.wav`, and its bytes
    become a WAV: its own when it is one, else the whole recording as `excerpt_wav` writes an excerpt. A file
    soundfile cannot read is a RecordingsError."""
    if has_audio_suffix(path_inside):
        return data
    name = PurePosixPath(path_inside).name
    try:
        with opened(data, name) as f:
            if f.format == "WAV":
                return data
    except RuntimeError as e:  # soundfile's LibsndfileError
        raise RecordingsError(f"{path_inside}: soundfile cannot read it ({sndfile_reason(e)})") from e
    return excerpt_wav(data, name, WHOLE_RECORDING)


def recording_bytes(rec: Recording, data: bytes) -> bytes:
    """The bytes to write for `rec`: the extracted file itself, its member's PCM or its excerpt written as a WAV.
    A member or range the file does not hold is an error naming the manifest line that asked for it."""
    try:
        if rec.excerpt is not None:
            return excerpt_wav(data, Path(rec.container_path).name, rec.excerpt)
        if rec.member is not None:
            return containers.wav_bytes(containers.read_member(data, rec.container_path, rec.member))
        return whole_file_bytes(rec.path_inside, data)
    except (RecordingsError, containers.ContainerError) as e:
        raise FetchError(f"{rec.line}: {rec.package} {rec.version}: {e}") from e


def write_recording(rec: Recording, extracted: bytes, out: Path) -> Path:
    """Check the hash (of the extracted file for a whole file or an excerpt, of the written WAV for a container
    member), write OUT/<label>/<name>, check soundfile can read it (make_corpus will)."""
    def check(pinned: bytes, kind: str) -> None:
        digest = hashlib.sha256(pinned).hexdigest()
        if digest != rec.sha256:
            raise FetchError(f"sha256 mismatch for {rec.where}: manifest {rec.sha256}, {kind} {digest}")

    if rec.member is None:  # checked before an excerpt is decoded from it
        check(extracted, "file")
        data = recording_bytes(rec, extracted)
    else:
        data = recording_bytes(rec, extracted)
        check(data, "WAV written from the member")
    target = out / rec.label / rec.file_name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    try:
        sf.info(str(target))
    except RuntimeError as e:
        raise FetchError(f"{target}: soundfile cannot read it ({sndfile_reason(e)}); "
                         "convert it to FLAC and pin that") from e
    return target


def write_split_list(out: Path, recordings: list[Recording]) -> Path:
    """OUT/splits.tsv: each recording's split from the manifest, so make_corpus puts it there (not by hash)."""
    path = out / SPLIT_LIST
    out.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write("\t".join(SPLIT_LIST_HEADER) + "\n")
        for rec in sorted(recordings, key=lambda r: r.alerts_path):
            f.write(f"{rec.alerts_path}\t{rec.split}\n")
    return path


def corpus_splits(out: Path) -> dict[Path, str]:
    """The split make_corpus --alerts-dir OUT puts each audio file of OUT in (its split list, else the hash)."""
    return {p: split for split in SPLITS for paths in list_alert_recordings(out, split).values() for p in paths}


def check_splits(out: Path, recordings: list[Recording]) -> list[Path]:
    """Fail unless make_corpus will use each recording in its manifest split; the files it lists that we did not
    write (they keep the hash and make_corpus uses them too)."""
    found = corpus_splits(out)
    for rec in recordings:
        split = found.get(out / rec.label / rec.file_name)
        if split != rec.split:
            raise FetchError(f"{rec.alerts_path}: make_corpus would put it in {split}, the manifest says {rec.split}")
    ours = {out / r.label / r.file_name for r in recordings}
    return sorted(p for p in found if p not in ours)


def write_role_rows(path: Path, role: str, rows: list[tuple[str, ...]]) -> int:
    """Replaces the rows of `role` (the split column) in a SOURCES.tsv-style table, keeping every other row; the
    table is written sorted. Returns the number of rows kept from other roles."""
    kept: list[tuple[str, ...]] = []
    if path.exists():
        lines = path.read_text(encoding="utf-8").splitlines()
        if not lines or tuple(lines[0].split("\t")) != SOURCES_COLUMNS:
            raise ValueError(f"{path}:1: expected the header {' '.join(SOURCES_COLUMNS)}")
        for number, line in enumerate(lines[1:], start=2):
            fields = tuple(line.split("\t"))
            if len(fields) != len(SOURCES_COLUMNS):
                raise ValueError(f"{path}:{number}: expected {len(SOURCES_COLUMNS)} fields, found {len(fields)}")
            if fields[-1] != role:
                kept.append(fields)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write("\t".join(SOURCES_COLUMNS) + "\n")
        for fields in sorted(set(kept) | set(rows)):
            f.write("\t".join(fields) + "\n")
    return len(kept)


def write_sources(path: Path, recordings: list[Recording]) -> None:
    """models/SOURCES.tsv rows: source, version, path_inside, licence, used_for=alert:<label>, split."""
    rows = sorted((r.package, r.version, r.path_inside, r.licence, f"alert:{r.label}", r.split) for r in recordings)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write("\t".join(SOURCES_COLUMNS) + "\n")
        for row in rows:
            f.write("\t".join(row) + "\n")


def seconds(path: Path) -> float:
    info = sf.info(str(path))
    return info.frames / info.samplerate


def fetch(out: Path, manifest: Path, debs: Path | None, offline: bool, sources_tsv: Path | None) -> int:
    recordings = read_manifest(manifest)
    packages = sorted({(r.package, r.version) for r in recordings})
    if offline and debs is None:
        raise FetchError("--offline needs --debs DIR holding the manifest's .deb files")
    with tempfile.TemporaryDirectory(prefix="hearalert-debs-") as tmp:
        folder = debs if debs is not None else Path(tmp)
        if not offline and not folder.exists():  # a first run: the downloads go there for the next one
            folder.mkdir(parents=True)
        if not folder.is_dir():
            raise FetchError(f"--debs {folder}: not a folder")
        known = index_debs(folder)
        written: dict[Recording, Path] = {}
        for i, (package, version) in enumerate(packages, start=1):
            deb = known.get((package, version))
            if deb is None:
                if offline:
                    raise FetchError(f"no {package}_{version} .deb in {folder} (and --offline forbids downloading)")
                print(f"[{i}/{len(packages)}] {package} {version}: apt-get download …", flush=True)
                deb = download(package, version, folder)
            else:
                print(f"[{i}/{len(packages)}] {package} {version}: using {deb}", flush=True)
            mine = [r for r in recordings if (r.package, r.version) == (package, version)]
            data = extract(deb, sorted({r.container_path for r in mine}))
            for rec in mine:
                written[rec] = write_recording(rec, data[rec.container_path], out)
                print(f"    {rec.label}/{rec.file_name}  sha256 ok", flush=True)
    split_list = write_split_list(out, recordings)
    stray_files = check_splits(out, recordings)
    print(f"\n{len(recordings)} recordings in {out} (splits in {split_list}):")
    for label in LABELS:
        mine = [r for r in recordings if r.label == label]
        counts = ", ".join(f"{s} {sum(r.split == s for r in mine)}" for s in SPLITS)
        total = sum(seconds(written[r]) for r in mine)
        print(f"  {label:12s} {len(mine):2d} files, {total:5.1f} s  ({counts})")
    for stray in stray_files:
        print(f"note: {stray} is not in the manifest; make_corpus --alerts-dir will use it too (split by hash)")
    if sources_tsv is not None:
        write_sources(sources_tsv, recordings)
        print(f"wrote {sources_tsv} ({len(recordings)} rows)")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, type=Path,
                   help="alerts folder to fill (one subfolder per label); pass it to make_corpus --alerts-dir")
    p.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST,
                   help="TSV of recordings: label, package, version, path_inside, licence, sha256, split, note; "
                        "path_inside may be FILE.sf2#SampleName or FILE.cat#N for one member of a container, "
                        "or FILE#t=START,END (seconds) for an excerpt of an audio file (default: %(default)s)")
    p.add_argument("--debs", type=Path,
                   help="folder of .deb files to reuse; packages missing there are downloaded into it "
                        "(default: download into a temporary folder)")
    p.add_argument("--offline", action="store_true",
                   help="never run apt-get: every package must already be in --debs")
    p.add_argument("--sources-tsv", type=Path,
                   help="also write the provenance rows (source, version, path_inside, licence, used_for, split) "
                        "for models/SOURCES.tsv here")
    args = p.parse_args(argv)
    try:
        return fetch(args.out, args.manifest, args.debs, args.offline, args.sources_tsv)
    except (FetchError, RecordingsError) as e:
        print(f"fetch_alert_recordings: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
