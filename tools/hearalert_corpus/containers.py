"""One recording out of a sound container: a sample of a SoundFont 2 bank (.sf2) or an entry of an OpenTTD sound
catalogue (.cat), as mono or multi-channel integer PCM with its own sample rate, and that PCM written as a WAV.

fetch_alert_recordings.py uses it for manifest rows whose path_inside is `path/in/deb.sf2#SampleName` or
`path/in/deb.cat#N`. Every read is bounds-checked: a truncated file or a header that points outside it raises
ContainerError with one line naming the file and what is wrong, never an IndexError or struct.error.

Formats (little-endian throughout):

- SoundFont 2 (SoundFont 2.04 specification, sections 4-7): a RIFF form 'sfbk' holding LIST 'INFO', LIST 'sdta'
  and LIST 'pdta'. 'sdta' holds 'smpl', every sample of the bank as 16-bit signed PCM (an optional 'sm24' with
  8 more low bits is ignored). 'pdta' holds 'shdr', 46-byte sample headers: name char[20] (NUL-padded),
  start, end, startloop, endloop, sampleRate (uint32 each), originalPitch (uint8), pitchCorrection (int8),
  sampleLink, sampleType (uint16 each); the last header is the terminal 'EOS'. start and end count 16-bit sample
  points from the beginning of 'smpl', end being the first point after the sample; sampleType bit 0x8000 marks
  a sample kept in a sound ROM, not in the file.
- OpenTTD sound catalogue (OpenTTD src/sound.cpp, OpenBankFile): a table of (offset, size) uint32 pairs from
  byte 0; the first offset is also the table's length in bytes, so entries = first offset / 8. Bit 31 of every
  offset is set in the "new" format OpenSFX writes and is not part of the offset. At each offset: one byte L,
  L bytes of name (NUL-terminated; OpenSFX puts title, author and licence there), then a RIFF WAVE file of
  `size` bytes (PCM: 8-bit unsigned or 16-bit signed, OpenTTD plays mono only). The old-format TTD catalogue's
  raw "Corrupt sound" entry is not a WAV and is refused.
"""

from __future__ import annotations

import io
import re
import struct
from dataclasses import dataclass
from pathlib import PurePosixPath

import numpy as np
import soundfile as sf

SEPARATOR = "#"
KINDS = {".sf2": "SoundFont 2 bank", ".cat": "OpenTTD sound catalogue"}
SHDR_SIZE = 46
SF_ROM_SAMPLE = 0x8000
CAT_NEW_FORMAT = 0x8000_0000


class ContainerError(Exception):
    """A container that cannot give the member asked for; the message is one line naming the file."""


@dataclass(frozen=True)
class Member:
    """One recording taken out of a container: interleaved little-endian integer PCM and how to play it."""
    name: str            # the member as the container names it (sf2 sample name, .cat entry name)
    rate: int            # samples per second per channel
    channels: int
    sample_width: int    # bytes per sample: 1 (unsigned 8-bit) or 2 (signed 16-bit)
    pcm: bytes


def split_path(path_inside: str) -> tuple[str, str | None]:
    """('path/in/deb.sf2', 'SampleName') for 'path/in/deb.sf2#SampleName'; (path, None) for a whole file."""
    container, sep, member = path_inside.partition(SEPARATOR)
    return container, (member if sep else None)


def check_reference(container: str, member: str) -> str | None:
    """Why `container#member` cannot name a member (unknown container type, empty name, .cat index not a
    number), or None when it can."""
    suffix = PurePosixPath(container).suffix.lower()
    if suffix not in KINDS:
        return f"'{SEPARATOR}' names a member only inside {', '.join(KINDS)} files, not {container!r}"
    if not member:
        return f"nothing after '{SEPARATOR}' in {container}{SEPARATOR}"
    if suffix == ".cat" and not member.isdigit():
        return f"a {KINDS[suffix]} member is an entry number (…{suffix}{SEPARATOR}35), not {member!r}"
    return None


def file_stem(container: str, member: str) -> str:
    """A file-system-safe stem for the member: 'FluidR3_GM__Telephone' for FluidR3_GM.sf2#Telephone."""
    stem = f"{PurePosixPath(container).stem}__{member}"
    return re.sub(r"[^A-Za-z0-9._-]+", "_", stem).strip("._") or "member"


def read_member(data: bytes, container: str, member: str) -> Member:
    """The member `member` of the container file `container` whose bytes are `data`."""
    problem = check_reference(container, member)
    if problem is not None:
        raise ContainerError(problem)
    name = PurePosixPath(container).name
    if PurePosixPath(container).suffix.lower() == ".sf2":
        return read_sf2_sample(_Bytes(data, name), member)
    return read_cat_entry(_Bytes(data, name), int(member))


def wav_bytes(member: Member) -> bytes:
    """The member as a PCM WAV (16-bit, or 8-bit for 8-bit members) at its own rate, read back and compared
    sample for sample, so the file holds exactly the container's PCM."""
    if member.sample_width == 1:  # WAV's 8-bit PCM is unsigned; soundfile takes it as int16 and writes PCM_U8
        samples = (np.frombuffer(member.pcm, dtype=np.uint8).astype(np.int16) - 128) << 8
        subtype = "PCM_U8"
    else:
        samples = np.frombuffer(member.pcm, dtype="<i2").astype(np.int16)
        subtype = "PCM_16"
    samples = samples.reshape(-1, member.channels)
    buf = io.BytesIO()
    sf.write(buf, samples, member.rate, format="WAV", subtype=subtype)
    written = buf.getvalue()
    back, rate = sf.read(io.BytesIO(written), dtype="int16", always_2d=True)
    if rate != member.rate or not np.array_equal(back, samples):
        raise ContainerError(f"{member.name}: the WAV written does not read back as the container's PCM")
    return written


class _Bytes:
    """A container's bytes with reads that fail with a one-line ContainerError instead of running past the end."""

    def __init__(self, data: bytes, name: str) -> None:
        self.view = memoryview(data)
        self.name = name

    def __len__(self) -> int:
        return len(self.view)

    def fail(self, message: str) -> ContainerError:
        return ContainerError(f"{self.name}: {message}")

    def take(self, offset: int, size: int, what: str, end: int | None = None) -> memoryview:
        limit = len(self.view) if end is None else end
        if offset < 0 or size < 0 or offset + size > limit:
            inner = end is not None and end < len(self.view)
            bound = f"its enclosing chunk ends at byte {limit}" if inner else f"the file has {len(self.view)} bytes"
            raise self.fail(f"{what} (bytes {offset}-{offset + size}) runs past the end ({bound}); "
                            "the file is truncated or a header is wrong")
        return self.view[offset:offset + size]

    def u32(self, offset: int, what: str, end: int | None = None) -> int:
        return struct.unpack("<I", self.take(offset, 4, what, end))[0]

    def chunks(self, start: int, end: int, where: str) -> dict[bytes, tuple[int, int]]:
        """RIFF sub-chunks between start and end: id (for LIST: b'LIST' + form type) -> (data offset, size)."""
        found: dict[bytes, tuple[int, int]] = {}
        pos = start
        while pos + 8 <= end:
            ident = bytes(self.take(pos, 4, f"chunk id in {where}", end))
            size = self.u32(pos + 4, f"size of chunk {ident!r} in {where}", end)
            body = self.take(pos + 8, size, f"chunk {_fourcc(ident)} in {where}", end)
            if ident == b"LIST":
                if size < 4:
                    raise self.fail(f"LIST chunk at byte {pos} in {where} is {size} bytes, too short for its type")
                ident += bytes(body[:4])
            found.setdefault(ident, (pos + 8, size))
            pos += 8 + size + (size & 1)  # chunks are padded to an even length
        return found


def _fourcc(ident: bytes) -> str:
    return "'" + ident.decode("latin-1") + "'"


def _text(raw: memoryview | bytes) -> str:
    return bytes(raw).split(b"\0", 1)[0].decode("latin-1").strip()


def _riff(data: _Bytes, start: int, end: int, form: bytes, what: str) -> tuple[int, int]:
    """(first sub-chunk offset, end) of the RIFF form `form` at `start`, checked to fit before `end`."""
    if bytes(data.take(start, 4, f"RIFF header of {what}", end)) != b"RIFF":
        raise data.fail(f"{what} does not start with a RIFF header")
    size = data.u32(start + 4, f"RIFF size of {what}", end)
    if bytes(data.take(start + 8, 4, f"RIFF form type of {what}", end)) != form:
        raise data.fail(f"{what} is not a RIFF {form.decode()} form")
    data.take(start + 8, size, f"RIFF body of {what} ({size} bytes)", end)
    return start + 12, start + 8 + size


def read_sf2_sample(data: _Bytes, sample: str) -> Member:
    """The sample called `sample` in a SoundFont 2 bank (its shdr name, exact match)."""
    first, end = _riff(data, 0, len(data), b"sfbk", "the SoundFont")
    top = data.chunks(first, end, "the SoundFont")
    lists = {}
    for form in (b"sdta", b"pdta"):
        if b"LIST" + form not in top:
            raise data.fail(f"no LIST {_fourcc(form)} chunk; not a SoundFont 2 bank")
        offset, size = top[b"LIST" + form]
        lists[form] = data.chunks(offset + 4, offset + size, f"LIST {_fourcc(form)}")
    if b"smpl" not in lists[b"sdta"]:
        raise data.fail("no 'smpl' chunk in LIST 'sdta' (sample data)")
    if b"shdr" not in lists[b"pdta"]:
        raise data.fail("no 'shdr' chunk in LIST 'pdta' (sample headers)")
    smpl_offset, smpl_size = lists[b"sdta"][b"smpl"]
    shdr_offset, shdr_size = lists[b"pdta"][b"shdr"]
    if shdr_size % SHDR_SIZE or shdr_size < 2 * SHDR_SIZE:
        raise data.fail(f"'shdr' chunk is {shdr_size} bytes, not a whole number (2 or more) of {SHDR_SIZE}-byte "
                        "sample headers")
    points = smpl_size // 2
    matches = []
    for i in range(shdr_size // SHDR_SIZE - 1):  # the last header is the terminal 'EOS'
        record = data.take(shdr_offset + i * SHDR_SIZE, SHDR_SIZE, f"sample header {i}")
        if _text(record[:20]) == sample:
            matches.append((i, struct.unpack("<20s5IBbHH", record)))
    if not matches:
        raise data.fail(f"no sample named {sample!r} in 'shdr' ({shdr_size // SHDR_SIZE - 1} samples)")
    if len(matches) > 1:
        raise data.fail(f"{len(matches)} samples are named {sample!r} (headers "
                        f"{', '.join(str(i) for i, _ in matches)}); the name must pick one")
    i, (_, start, stop, _loop_start, _loop_end, rate, _pitch, _correction, _link, kind) = matches[0]
    if kind & SF_ROM_SAMPLE:
        raise data.fail(f"sample {sample!r} lives in a sound ROM (sampleType {kind:#06x}), not in the file")
    if not start < stop <= points:
        raise data.fail(f"sample {sample!r} (header {i}) spans points {start}-{stop}, outside 'smpl' "
                        f"({points} 16-bit points)")
    if rate == 0:
        raise data.fail(f"sample {sample!r} (header {i}) has sample rate 0")
    pcm = bytes(data.take(smpl_offset + 2 * start, 2 * (stop - start), f"sample {sample!r} in 'smpl'"))
    return Member(name=sample, rate=rate, channels=1, sample_width=2, pcm=pcm)


def read_cat_entry(data: _Bytes, index: int) -> Member:
    """Entry `index` (from 0, in file order) of an OpenTTD sound catalogue."""
    table_bytes = data.u32(0, "entry table") & ~CAT_NEW_FORMAT
    if table_bytes == 0 or table_bytes % 8:
        raise data.fail(f"entry table of {table_bytes} bytes is not a whole number of 8-byte (offset, size) pairs")
    count = table_bytes // 8
    data.take(0, table_bytes, f"entry table of {count} entries")
    if index >= count:
        raise data.fail(f"no entry {index}: the catalogue has {count} entries (0-{count - 1})")
    offset = data.u32(8 * index, f"offset of entry {index}") & ~CAT_NEW_FORMAT
    size = data.u32(8 * index + 4, f"size of entry {index}")
    name_length = data.take(offset, 1, f"name length of entry {index} (offset {offset})")[0]
    name = _text(data.take(offset + 1, name_length, f"name of entry {index}"))
    wav_start = offset + 1 + name_length
    wav_end = wav_start + size
    data.take(wav_start, size, f"WAV of entry {index} ({size} bytes from byte {wav_start})")
    what = f"entry {index} ({name!r})"
    if bytes(data.view[wav_start:wav_start + 4]) != b"RIFF":
        raise data.fail(f"{what} holds no RIFF WAVE after its name (an old-format raw sound?)")
    first, end = _riff(data, wav_start, wav_end, b"WAVE", f"the WAV of {what}")
    chunks = data.chunks(first, end, f"the WAV of {what}")
    if b"fmt " not in chunks or b"data" not in chunks:
        raise data.fail(f"the WAV of {what} lacks a 'fmt ' or 'data' chunk")
    fmt_offset, fmt_size = chunks[b"fmt "]
    if fmt_size < 16:
        raise data.fail(f"the WAV of {what} has a {fmt_size}-byte 'fmt ' chunk, shorter than PCM's 16")
    tag, channels, rate, _byte_rate, _align, bits = struct.unpack(
        "<HHIIHH", data.take(fmt_offset, 16, f"'fmt ' of {what}"))
    if tag != 1 or bits not in (8, 16) or channels == 0 or rate == 0:
        raise data.fail(f"the WAV of {what} is format {tag}, {bits} bits, {channels} channels, {rate} Hz; "
                        "only 8- or 16-bit integer PCM is read")
    data_offset, data_size = chunks[b"data"]
    frame = channels * bits // 8
    pcm = bytes(data.take(data_offset, data_size - data_size % frame, f"'data' of {what}"))
    if not pcm:
        raise data.fail(f"the WAV of {what} holds no samples")
    return Member(name=name, rate=rate, channels=channels, sample_width=bits // 8, pcm=pcm)
