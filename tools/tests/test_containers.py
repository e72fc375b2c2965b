"""Members of sound containers (SoundFont 2 samples, OpenTTD .cat entries): extraction and one-line errors on bad
files, directly and through fetch_alert_recordings.py with a tiny .deb built here. Offline; containers are built
byte by byte in this file, expected WAVs with the standard library's `wave` module (not soundfile)."""

from __future__ import annotations

import hashlib
import io
import struct
import wave
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import fetch_alert_recordings as fetcher
from hearalert_corpus import containers
from hearalert_corpus.containers import ContainerError
from fake_debs import build_deb

SF2_PATH = "usr/share/sounds/sf2/Tiny Bank.sf2"  # a space, to check the output name is made safe
CAT_PATH = "usr/share/games/fake/sounds.cat"

BELL = (np.arange(40) * 997 % 65536 - 32768).astype(np.int16)   # 40 distinct 16-bit values, both extremes near
HORN = (1000 * np.sin(np.arange(24))).astype(np.int16)
TOOT = (20000 * np.cos(np.arange(30) / 3)).astype(np.int16)
BEEP8 = np.array([0, 64, 128, 192, 255, 128], dtype=np.uint8)  # 8-bit WAV PCM is unsigned


def chunk(ident: bytes, body: bytes) -> bytes:
    return ident + struct.pack("<I", len(body)) + body + (b"\0" if len(body) % 2 else b"")


def riff(form: bytes, *chunks: bytes) -> bytes:
    return chunk(b"RIFF", form + b"".join(chunks))


def shdr_record(name: str, start: int, end: int, rate: int, kind: int = 1) -> bytes:
    return struct.pack("<20s5IBbHH", name.encode(), start, end, start, end, rate, 60, 0, 0, kind)


def sf2(headers: list[bytes] | None = None, smpl: bytes | None = None) -> bytes:
    """A SoundFont with BELL at points 0-40 (22050 Hz) and HORN at 86-110 (16000 Hz), 46 zero points after each,
    as the spec asks, then the terminal EOS header."""
    if smpl is None:
        gap = np.zeros(46, np.int16)
        smpl = np.concatenate([BELL, gap, HORN, gap]).astype("<i2").tobytes()
    if headers is None:
        headers = [shdr_record("Bell", 0, 40, 22050), shdr_record("Horn", 86, 110, 16000)]
    pdta = [chunk(tag, b"") for tag in (b"phdr", b"pbag", b"pmod", b"pgen", b"inst", b"ibag", b"imod", b"igen")]
    return riff(b"sfbk",
                chunk(b"LIST", b"INFO" + chunk(b"ifil", struct.pack("<HH", 2, 1)) + chunk(b"INAM", b"Tiny\0")),
                chunk(b"LIST", b"sdta" + chunk(b"smpl", smpl)),
                chunk(b"LIST", b"pdta" + b"".join(pdta)
                      + chunk(b"shdr", b"".join(headers) + shdr_record("EOS", 0, 0, 0))))


def wav_file(samples: np.ndarray, rate: int) -> bytes:
    """A PCM WAV written by the standard library (16-bit for int16 samples, 8-bit for uint8)."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(samples.dtype.itemsize)
        w.setframerate(rate)
        w.writeframes(samples.astype(samples.dtype.newbyteorder("<")).tobytes())
    return buf.getvalue()


def cat(entries: list[tuple[str, bytes]]) -> bytes:
    """An OpenTTD catalogue as OpenSFX writes it: (offset | 1<<31, size) pairs, then per entry a length byte, a
    NUL-terminated name and the WAV."""
    table = 8 * len(entries)
    bodies, pairs, offset = [], [], table
    for name, wav in entries:
        raw = name.encode() + b"\0"
        bodies.append(bytes([len(raw)]) + raw + wav)
        pairs.append(struct.pack("<II", offset | 0x8000_0000, len(wav)))
        offset += len(bodies[-1])
    return b"".join(pairs) + b"".join(bodies)


CAT_ENTRIES = [("Toot. License: CC0", wav_file(TOOT, 44100)), ("Beep (8-bit)", wav_file(BEEP8, 11025))]


def pcm(member: containers.Member) -> np.ndarray:
    dtype = np.uint8 if member.sample_width == 1 else np.dtype("<i2")
    return np.frombuffer(member.pcm, dtype=dtype)


# --- reading members -------------------------------------------------------------------------------------------

def test_a_soundfont_sample_comes_out_with_its_points_and_rate():
    bank = sf2()
    for name, samples, rate in (("Bell", BELL, 22050), ("Horn", HORN, 16000)):
        member = containers.read_member(bank, SF2_PATH, name)
        assert (member.rate, member.channels, member.sample_width) == (rate, 1, 2)
        np.testing.assert_array_equal(pcm(member), samples)


def test_a_catalogue_entry_comes_out_with_its_samples_and_rate():
    catalogue = cat(CAT_ENTRIES)
    toot = containers.read_member(catalogue, CAT_PATH, "0")
    assert (toot.name, toot.rate, toot.sample_width) == ("Toot. License: CC0", 44100, 2)
    np.testing.assert_array_equal(pcm(toot), TOOT)
    beep = containers.read_member(catalogue, CAT_PATH, "1")
    assert (beep.rate, beep.sample_width) == (11025, 1)
    np.testing.assert_array_equal(pcm(beep), BEEP8)


@pytest.mark.parametrize("samples, rate", [(BELL, 22050), (BEEP8, 11025)])
def test_the_written_wav_is_the_standard_one_byte_for_byte(samples, rate):
    # The manifest hashes the written WAV: it must be the plain 44-byte-header PCM WAV the standard library
    # writes, so the hash does not hang on soundfile's choices.
    raw = samples.astype(samples.dtype.newbyteorder("<")).tobytes()
    member = containers.Member("m", rate, 1, samples.dtype.itemsize, raw)
    assert containers.wav_bytes(member) == wav_file(samples, rate)


def one_line_error(data: bytes, path: str, member: str) -> str:
    with pytest.raises(ContainerError) as err:
        containers.read_member(data, path, member)
    message = str(err.value)
    assert "\n" not in message and message.startswith(Path(path).name + ": ")
    return message


def test_a_missing_sample_name_or_entry_number_is_named():
    assert "no sample named 'Telephone'" in one_line_error(sf2(), SF2_PATH, "Telephone")
    assert "no sample named 'bell'" in one_line_error(sf2(), SF2_PATH, "bell")  # names match exactly
    assert "no entry 2: the catalogue has 2 entries (0-1)" in one_line_error(cat(CAT_ENTRIES), CAT_PATH, "2")


def test_two_samples_with_the_asked_name_are_refused():
    twice = sf2(headers=[shdr_record("Bell", 0, 40, 22050), shdr_record("Bell", 86, 110, 16000)])
    assert "2 samples are named 'Bell' (headers 0, 1)" in one_line_error(twice, SF2_PATH, "Bell")


@pytest.mark.parametrize("start, end", [(0, 157), (100, 90), (40, 40), (2**32 - 1, 10)])
def test_a_sample_header_pointing_outside_smpl_is_refused(start, end):
    bank = sf2(headers=[shdr_record("Bell", start, end, 22050)])
    assert f"spans points {start}-{end}, outside 'smpl' (156 16-bit points)" in one_line_error(bank, SF2_PATH, "Bell")


def test_a_rom_sample_and_a_zero_rate_are_refused():
    assert "sound ROM" in one_line_error(sf2(headers=[shdr_record("Bell", 0, 40, 22050, 0x8001)]), SF2_PATH, "Bell")
    assert "sample rate 0" in one_line_error(sf2(headers=[shdr_record("Bell", 0, 40, 0)]), SF2_PATH, "Bell")


def test_a_truncated_soundfont_names_what_runs_past_the_end():
    bank = sf2()
    smpl_at = bank.index(b"smpl")
    message = one_line_error(bank[:smpl_at + 30], SF2_PATH, "Bell")
    assert "RIFF body of the SoundFont" in message and f"the file has {smpl_at + 30} bytes" in message
    # A chunk whose size is larger than its LIST: the RIFF size is right, the smpl header lies.
    lying = bank[:smpl_at + 4] + struct.pack("<I", 10_000) + bank[smpl_at + 8:]
    assert "chunk 'smpl' in LIST 'sdta'" in one_line_error(lying, SF2_PATH, "Bell")
    # An shdr that is not a whole number of 46-byte headers.
    shdr_at = bank.index(b"shdr")
    odd = bank[:shdr_at + 4] + struct.pack("<I", 3 * 46 - 1) + bank[shdr_at + 8:]
    assert "not a whole number (2 or more) of 46-byte" in one_line_error(odd, SF2_PATH, "Bell")


def test_a_catalogue_offset_or_size_past_the_end_is_refused():
    catalogue = bytearray(cat(CAT_ENTRIES))
    size = len(catalogue)
    past = bytearray(catalogue)
    struct.pack_into("<I", past, 8, (size + 5) | 0x8000_0000)  # entry 1 starts past the end
    assert f"name length of entry 1 (offset {size + 5})" in one_line_error(bytes(past), CAT_PATH, "1")
    big = bytearray(catalogue)
    struct.pack_into("<I", big, 12, size)  # entry 1's WAV says it is as long as the whole file
    assert f"WAV of entry 1 ({size} bytes" in one_line_error(bytes(big), CAT_PATH, "1")
    assert "runs past the end" in one_line_error(bytes(catalogue[:-3]), CAT_PATH, "1")  # data chunk cut short
    table = bytearray(catalogue)
    struct.pack_into("<I", table, 0, 0x8000_0000 | 8 * 1000)  # a table longer than the file
    assert "entry table of 1000 entries" in one_line_error(bytes(table), CAT_PATH, "0")


def test_a_catalogue_entry_that_is_not_pcm_wav_is_refused():
    float_wav = bytearray(wav_file(TOOT, 44100))
    struct.pack_into("<H", float_wav, 20, 3)  # format tag 3: IEEE float
    assert "only 8- or 16-bit integer PCM" in one_line_error(cat([("f", bytes(float_wav))]), CAT_PATH, "0")
    assert "holds no RIFF WAVE" in one_line_error(cat([("Corrupt sound", b"\x80" * 50)]), CAT_PATH, "0")


@pytest.mark.parametrize("kind", ["sf2", "cat"])
def test_every_truncation_is_a_container_error_never_a_crash(kind):
    data, path, member = (sf2(), SF2_PATH, "Horn") if kind == "sf2" else (cat(CAT_ENTRIES), CAT_PATH, "1")
    for cut in range(len(data)):
        with pytest.raises(ContainerError):
            containers.read_member(data[:cut], path, member)


def test_member_names_become_safe_file_names():
    assert containers.file_stem("usr/share/sounds/sf2/FluidR3_GM.sf2", "Telephone") == "FluidR3_GM__Telephone"
    assert containers.file_stem(SF2_PATH, "Bell/ring #2") == "Tiny_Bank__Bell_ring_2"
    assert containers.file_stem("a/opensfx.cat", "35") == "opensfx__35"


# --- through fetch_alert_recordings.py -------------------------------------------------------------------------

PACKAGE, VERSION = "hearalert-fake-containers", "1.0-1"


@pytest.fixture()
def debs(tmp_path: Path) -> Path:
    return build_deb(tmp_path, PACKAGE, VERSION, {SF2_PATH: sf2(), CAT_PATH: cat(CAT_ENTRIES)},
                     "fake sound containers")


ROWS = [  # label, path_inside, expected WAV (standard library), split
    ("phone_ring", f"{SF2_PATH}#Bell", wav_file(BELL, 22050), "train"),
    ("car_horn", f"{SF2_PATH}#Horn", wav_file(HORN, 16000), "test"),
    ("car_horn", f"{CAT_PATH}#0", wav_file(TOOT, 44100), "train"),
]


def manifest(path: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    lines = ["\t".join(fetcher.MANIFEST_COLUMNS)]
    lines += ["\t".join([label, PACKAGE, VERSION, inside, "CC0-1.0", sha, split, "test"])
              for label, inside, sha, split in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def fetch(tmp_path: Path, manifest_path: Path, debs: Path, *extra: str) -> int:
    return fetcher.main(["--out", str(tmp_path / "alerts"), "--manifest", str(manifest_path), "--debs", str(debs),
                         "--offline", *extra])


def test_fetch_writes_each_member_as_a_wav_and_lists_it(tmp_path, debs):
    rows = [(label, inside, hashlib.sha256(wav).hexdigest(), split) for label, inside, wav, split in ROWS]
    sources = tmp_path / "SOURCES.tsv"
    assert fetch(tmp_path, manifest(tmp_path / "m.tsv", rows), debs, "--sources-tsv", str(sources)) == 0
    out = tmp_path / "alerts"
    names = [f"phone_ring/{PACKAGE}__Tiny_Bank__Bell.wav", f"car_horn/{PACKAGE}__Tiny_Bank__Horn.wav",
             f"car_horn/{PACKAGE}__sounds__0.wav"]
    for name, (_, _, wav, _) in zip(names, ROWS):
        assert (out / name).read_bytes() == wav
    samples, rate = sf.read(str(out / names[0]), dtype="int16")
    assert rate == 22050 and np.array_equal(samples, BELL)
    assert sorted((out / "splits.tsv").read_text().splitlines()[1:]) == sorted(
        f"{name}\t{split}" for name, (*_, split) in zip(names, ROWS))
    assert f"{SF2_PATH}#Horn\tCC0-1.0\talert:car_horn\ttest" in sources.read_text()


def test_fetch_refuses_a_member_whose_wav_hash_differs(tmp_path, debs, capsys):
    bad = "f" * 64
    assert fetch(tmp_path, manifest(tmp_path / "m.tsv", [("phone_ring", f"{SF2_PATH}#Bell", bad, "train")]), debs) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "sha256 mismatch" in err[0] and bad in err[0]
    assert hashlib.sha256(ROWS[0][2]).hexdigest() in err[0] and "WAV written from the member" in err[0]
    assert not (tmp_path / "alerts" / "phone_ring").exists()


def test_fetch_names_the_package_and_file_of_a_missing_member(tmp_path, debs, capsys):
    rows = [("car_horn", f"{CAT_PATH}#7", "0" * 64, "train")]
    assert fetch(tmp_path, manifest(tmp_path / "m.tsv", rows), debs) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"fetch_alert_recordings: error: {tmp_path / 'm.tsv'}:2: {PACKAGE} {VERSION}: sounds.cat: "
                   "no entry 7: the catalogue has 2 entries (0-1)"]


@pytest.mark.parametrize("inside, message", [
    ("usr/share/x.zip#a", "names a member only inside .sf2, .cat files"),
    (f"{CAT_PATH}#horn", "an entry number"),
    (f"{SF2_PATH}#", "nothing after '#'"),
])
def test_a_bad_member_reference_names_its_manifest_line(tmp_path, debs, capsys, inside, message):
    assert fetch(tmp_path, manifest(tmp_path / "m.tsv", [("car_horn", inside, "0" * 64, "train")]), debs) == 1
    err = capsys.readouterr().err
    assert "m.tsv:2: " in err and message in err
