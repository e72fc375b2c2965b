"""Time-range excerpts in the alert manifest (`path#t=START,END`, W3C Media Fragments): the parser, the sample range,
the written name, the excerpt WAV, and the manifest's one-line errors through fetch_alert_recordings.py with a tiny
.deb built here. Offline. Source files and expected WAVs are written with the standard library's `wave` module and
the expected samples come from numpy slicing of the samples put in, not from the code under test."""

from __future__ import annotations

import hashlib
import io
import wave
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import fetch_alert_recordings as fetcher
from hearalert_corpus.sources import (
    RecordingsError, TimeRange, parse_time_range, recording_file_name, split_reference)
from fake_debs import build_deb

RATE = 8000
# Two channels of one second, every sample distinct, both extremes present: any shifted, swapped or rescaled
# sample shows.
LEFT = (np.arange(RATE) * 7 % 65536 - 32768).astype(np.int16)
RIGHT = (-1 - LEFT.astype(np.int32)).astype(np.int16)
STEREO = np.stack([LEFT, RIGHT], axis=1)
BYTES8 = (np.arange(RATE) * 13 % 256).astype(np.uint8)  # 8-bit WAV PCM is unsigned


def wav_file(samples: np.ndarray, rate: int) -> bytes:
    """A PCM WAV written by the standard library: int16 samples as 16-bit, uint8 as 8-bit; (frames, channels)."""
    frames = samples.reshape(len(samples), -1)
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(frames.shape[1])
        w.setsampwidth(frames.dtype.itemsize)
        w.setframerate(rate)
        w.writeframes(frames.astype(frames.dtype.newbyteorder("<")).tobytes())
    return buf.getvalue()


def read_wav(data: bytes) -> tuple[np.ndarray, int, int]:
    """(frames × channels samples, rate, bytes per sample) of a PCM WAV, read by the standard library."""
    with wave.open(io.BytesIO(data), "rb") as w:
        width, channels, rate = w.getsampwidth(), w.getnchannels(), w.getframerate()
        raw = w.readframes(w.getnframes())
    dtype = np.uint8 if width == 1 else np.dtype("<i2")
    return np.frombuffer(raw, dtype=dtype).reshape(-1, channels), rate, width


# --- the fragment -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fragment, start, end", [
    ("t=0,5", "0", "5"),
    ("t=,5", "0", "5"),                   # from the start
    ("t=2.50", "2.5", None),              # to the end
    ("t=npt:0.10,05.0", "0.1", "5"),      # the spec's optional npt: prefix; one spelling per time
    ("t=5.", "5", None),                  # npt-sec allows a bare trailing point
    ("t=0.000,10.25", "0", "10.25"),
    ("t=3,3.0001", "3", "3.0001"),
])
def test_good_time_fragments_parse_to_their_canonical_times(fragment, start, end):
    assert parse_time_range(fragment) == TimeRange(start, end)


@pytest.mark.parametrize("fragment, message", [
    ("t=", "is not a time range"),
    ("t=,", "is not a time range"),
    ("t=5,", "is not a time range"),
    ("t=.5,1", "is not a time range"),        # npt-sec needs a digit before the point
    ("t=1e2", "is not a time range"),
    ("t=+1,2", "is not a time range"),
    ("t=0:00:01,2", "is not a time range"),   # hh:mm:ss and other formats are not supported
    ("t=smpte:0,1", "is not a time range"),
    ("t= 1,2", "is not a time range"),
    ("t=1,2,3", "is not a time range"),
    ("t=1,2#t=3,4", "is not a time range"),
    ("t=1;2", "is not a time range"),
    ("t=-1,2", "cannot be negative"),
    ("t=1,-2", "cannot be negative"),
    ("t=2,1", "START (2 s) must be before END (1 s)"),
    ("t=1,1.000", "START (1 s) must be before END (1 s)"),
])
def test_bad_time_fragments_are_one_line_errors(fragment, message):
    with pytest.raises(RecordingsError) as err:
        parse_time_range(fragment)
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("fragment, rate, length, first, stop", [
    ("t=0.25,0.5", 8000, 8000, 2000, 4000),
    ("t=0.07,0.28", 44100, 44100, 3087, 12348),    # in floats 0.07 * 44100 is 3087.0000000000005: exact here
    ("t=0.0001,0.0002", 8000, 8000, 1, 2),           # 0.8 and 1.6 samples: the samples at or after each time
    ("t=0,1", 8000, 8000, 0, 8000),                  # END may be the recording's end
    ("t=0.5", 11025, 11025, 5513, 11025),            # 5512.5 -> the first sample at or after 0.5 s
    ("t=,0.5", 11025, 11025, 0, 5513),
])
def test_the_excerpt_holds_the_samples_whose_time_is_in_the_range(fragment, rate, length, first, stop):
    assert parse_time_range(fragment).frames(rate, length) == (first, stop)


@pytest.mark.parametrize("fragment, rate, length, message", [
    ("t=0,1.0001", 8000, 8000, "ends after the recording (the recording has 8000 samples at 8000 Hz, 1.0000 s)"),
    ("t=0,20", 44100, 455270, "ends after the recording"),
    ("t=1", 8000, 8000, "starts after the recording"),
    ("t=0.00001,0.00002", 8000, 8000, "holds no sample"),   # both times fall between samples 0 and 1
    ("t=0,1", 8000, 0, "cannot be cut"),
])
def test_a_range_outside_the_recording_is_refused(fragment, rate, length, message):
    with pytest.raises(RecordingsError) as err:
        parse_time_range(fragment).frames(rate, length)
    assert message in str(err.value) and "\n" not in str(err.value)


# --- the written name --------------------------------------------------------------------------------------------

def test_an_excerpt_gets_a_stable_readable_name_apart_from_its_whole_file():
    path = "usr/share/sounds/fire truck.ogg"
    assert recording_file_name("pkg", path) == "pkg__fire truck.ogg"
    assert recording_file_name("pkg", f"{path}#t=0,5") == "pkg__fire_truck__t0-5s.wav"
    assert recording_file_name("pkg", f"{path}#t=,5.0") == "pkg__fire_truck__t0-5s.wav"  # the same excerpt
    assert recording_file_name("pkg", f"{path}#t=2.50") == "pkg__fire_truck__t2.5s-end.wav"
    assert recording_file_name("pkg", f"{path}#t=0,5.25") == "pkg__fire_truck__t0-5.25s.wav"
    # Container members keep their names.
    assert recording_file_name("pkg", "a/FluidR3_GM.sf2#Telephone") == "pkg__FluidR3_GM__Telephone.wav"
    assert recording_file_name("pkg", "a/opensfx.cat#35") == "pkg__opensfx__35.wav"


@pytest.mark.parametrize("path_inside, message", [
    ("a/b.ogg#t=5,1", "START (5 s) must be before END (1 s)"),
    ("a/bank.sf2#t=0,1", "a time range cuts an audio file, not a SoundFont 2 bank"),
    ("a/opensfx.cat#35#t=0,1", "a time range of a container member is not supported"),
])
def test_the_name_of_a_malformed_reference_is_an_error(path_inside, message):
    with pytest.raises(RecordingsError) as err:
        recording_file_name("pkg", path_inside)
    assert message in str(err.value)


def test_references_split_into_file_member_and_range():
    assert split_reference("a/b.ogg") == ("a/b.ogg", None, None)
    assert split_reference("a/b.ogg#t=1,2") == ("a/b.ogg", None, TimeRange("1", "2"))
    assert split_reference("a/c.sf2#Bell #2") == ("a/c.sf2", "Bell #2", None)  # a '#' inside a sample name stays


# --- the excerpt WAV ---------------------------------------------------------------------------------------------

def test_a_16_bit_stereo_excerpt_is_exactly_the_sliced_samples():
    written = fetcher.excerpt_wav(wav_file(STEREO, RATE), "tone.wav", parse_time_range("t=0.25,0.5"))
    samples, rate, width = read_wav(written)
    assert (rate, width) == (RATE, 2)
    np.testing.assert_array_equal(samples, STEREO[2000:4000])
    assert written == wav_file(STEREO[2000:4000], RATE)  # the plain 44-byte-header WAV, so the hash is stable


def test_an_8_bit_excerpt_stays_8_bit_with_the_same_bytes():
    written = fetcher.excerpt_wav(wav_file(BYTES8, RATE), "beep.wav", parse_time_range("t=0.5"))
    assert written == wav_file(BYTES8[4000:], RATE)


def test_a_flac_excerpt_is_its_lossless_samples_and_an_ogg_excerpt_its_decoded_ones():
    flac = io.BytesIO()
    sf.write(flac, STEREO, RATE, format="FLAC", subtype="PCM_16")
    written = fetcher.excerpt_wav(flac.getvalue(), "tone.flac", parse_time_range("t=,0.125"))
    assert written == wav_file(STEREO[:1000], RATE)
    # Vorbis is lossy: the excerpt is the decoder's 16-bit output for the whole file, sliced.
    ogg = io.BytesIO()
    sf.write(ogg, (STEREO / 32768.0) * 0.5, RATE, format="OGG", subtype="VORBIS")
    decoded, _ = sf.read(io.BytesIO(ogg.getvalue()), dtype="int16", always_2d=True)
    written = fetcher.excerpt_wav(ogg.getvalue(), "tone.ogg", parse_time_range("t=0.5,0.75"))
    np.testing.assert_array_equal(read_wav(written)[0], decoded[4000:6000])


def test_an_excerpt_past_the_end_or_of_no_audio_names_the_file():
    with pytest.raises(RecordingsError) as err:
        fetcher.excerpt_wav(wav_file(STEREO, RATE), "tone.wav", parse_time_range("t=0.5,1.5"))
    assert str(err.value).startswith("tone.wav#t=0.5,1.5 ends after the recording (the recording has 8000 samples")
    with pytest.raises(RecordingsError) as err:
        fetcher.excerpt_wav(b"not audio at all", "junk.wav", parse_time_range("t=0,1"))
    assert str(err.value).startswith("junk.wav: soundfile cannot decode it")
    assert "BytesIO" not in str(err.value) and str(err.value).endswith("(Format not recognised.)")


# --- through fetch_alert_recordings.py ----------------------------------------------------------------------------

PACKAGE, VERSION = "hearalert-fake-excerpts", "1.0-1"
TONE = "usr/share/sounds/fake/two tone.wav"


@pytest.fixture()
def debs(tmp_path: Path) -> Path:
    return build_deb(tmp_path, PACKAGE, VERSION, {TONE: wav_file(STEREO, RATE)}, "a fake recording")


def manifest(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    """A manifest of (label, path_inside, sha256) rows, all in train."""
    lines = ["\t".join(fetcher.MANIFEST_COLUMNS)]
    lines += ["\t".join([label, PACKAGE, VERSION, inside, "CC0-1.0", sha, "train", "test"])
              for label, inside, sha in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def fetch(tmp_path: Path, manifest_path: Path, debs: Path, *extra: str) -> int:
    return fetcher.main(["--out", str(tmp_path / "alerts"), "--manifest", str(manifest_path), "--debs", str(debs),
                         "--offline", *extra])


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_fetch_writes_the_excerpt_beside_the_whole_file(tmp_path, debs):
    whole, part = wav_file(STEREO, RATE), wav_file(STEREO[2000:6000], RATE)
    rows = [("siren", TONE, sha(whole)), ("siren", f"{TONE}#t=0.25,0.75", sha(whole))]  # both pin the file
    sources = tmp_path / "SOURCES.tsv"
    assert fetch(tmp_path, manifest(tmp_path / "m.tsv", rows), debs, "--sources-tsv", str(sources)) == 0
    out = tmp_path / "alerts" / "siren"
    assert (out / f"{PACKAGE}__two tone.wav").read_bytes() == whole
    assert (out / f"{PACKAGE}__two_tone__t0.25-0.75s.wav").read_bytes() == part
    assert f"{TONE}#t=0.25,0.75\tCC0-1.0\talert:siren\ttrain" in sources.read_text()


def test_fetch_refuses_an_excerpt_of_a_file_whose_hash_differs(tmp_path, debs, capsys):
    # The row pins the file the excerpt is cut from, not the decoded excerpt (a decoder build may change it).
    rows = [("siren", f"{TONE}#t=0.25,0.75", sha(wav_file(STEREO[2000:6000], RATE)))]  # the excerpt's own hash
    assert fetch(tmp_path, manifest(tmp_path / "m.tsv", rows), debs) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "sha256 mismatch" in err[0] and ", file " in err[0]
    assert sha(wav_file(STEREO, RATE)) in err[0]


@pytest.mark.parametrize("inside, message", [
    (f"{TONE}#t=1,0.5", "m.tsv:3: #t=1,0.5: START (1 s) must be before END (0.5 s)"),
    (f"{TONE}#t=-0.5,1", "m.tsv:3: #t=-0.5,1: times are seconds from the start and cannot be negative"),
    (f"{TONE}#t=0.5s,1", "m.tsv:3: #t=0.5s,1 is not a time range"),
    ("usr/share/sounds/fake/bank.sf2#t=0,1", "m.tsv:3: usr/share/sounds/fake/bank.sf2#t=0,1: a time range cuts"),
    ("usr/share/x.cat#3#t=0,1", "m.tsv:3: usr/share/x.cat#3#t=0,1: a time range of a container member is not"),
    (f"{TONE}#t=,0.5", f"m.tsv:3: a second siren/{PACKAGE}__two_tone__t0-0.5s.wav"),  # the same excerpt twice
])
def test_a_bad_time_range_names_its_manifest_line(tmp_path, debs, capsys, inside, message):
    rows = [("siren", f"{TONE}#t=0,0.5", "0" * 64), ("siren", inside, "0" * 64)]
    assert fetch(tmp_path, manifest(tmp_path / "m.tsv", rows), debs) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_an_end_past_the_file_names_its_manifest_line_once_the_file_is_read(tmp_path, debs, capsys):
    rows = [("siren", f"{TONE}#t=0.5,1.25", sha(wav_file(STEREO, RATE)))]  # the right file, a range past its end
    assert fetch(tmp_path, manifest(tmp_path / "m.tsv", rows), debs) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"fetch_alert_recordings: error: {tmp_path / 'm.tsv'}:2: {PACKAGE} {VERSION}: two tone.wav"
                   "#t=0.5,1.25 ends after the recording (the recording has 8000 samples at 8000 Hz, 1.0000 s)"]


def test_a_file_without_an_audio_suffix_is_named_and_written_as_a_wav() -> None:
    assert recording_file_name("pkg", "Sounds/alarm") == "pkg__alarm.wav"
    assert recording_file_name("pkg", "Sounds/alarm.OGG") == "pkg__alarm.OGG"
    tone = (0.25 * np.sin(2 * np.pi * 500 * np.arange(8000) / 8000)).astype(np.float32)
    flac = io.BytesIO()
    sf.write(flac, tone, 8000, format="FLAC", subtype="PCM_16")
    written = fetcher.whole_file_bytes("Sounds/alarm", flac.getvalue())
    decoded, rate = sf.read(io.BytesIO(written), dtype="float32")
    assert (sf.info(io.BytesIO(written)).format, rate) == ("WAV", 8000)
    np.testing.assert_array_equal(decoded, sf.read(io.BytesIO(flac.getvalue()), dtype="float32")[0])
    # Named by its suffix: kept as stored.
    assert fetcher.whole_file_bytes("Sounds/alarm.flac", b"anything") == b"anything"
    with pytest.raises(RecordingsError, match="Sounds/alarm: soundfile cannot read it"):
        fetcher.whole_file_bytes("Sounds/alarm", b"not audio")


def test_an_excerpt_of_an_mp3_behind_an_empty_id3_tag_is_cut_as_later_steps_read_it():
    # libsndfile recognises such a file by its suffix from a path, not from memory; an excerpt of it is read the way
    # a whole file is (hearalert_corpus.memory_audio.opened), not refused as "Format not recognised".
    buf = io.BytesIO()
    t = np.arange(48000) / 48000
    sf.write(buf, (0.3 * np.sin(2 * np.pi * 773 * t)).astype(np.float32), 48000, format="MP3")
    ring = b"ID3\x03\x00\x00\x00\x00\x00\x00" + buf.getvalue()  # an ID3v2.3 header declaring no frames
    with pytest.raises(sf.LibsndfileError):
        sf.info(io.BytesIO(ring))
    wav = fetcher.excerpt_wav(ring, "ring.mp3", parse_time_range("t=0.1,0.6"))
    samples, rate = sf.read(io.BytesIO(wav))
    assert rate == 48000 and len(samples) == 24000
    assert abs(np.argmax(np.abs(np.fft.rfft(samples))) * rate / len(samples) - 773) < 3
