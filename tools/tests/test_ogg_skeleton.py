"""ogg_skeleton: an Ogg Vorbis file with a Skeleton track, as Wikimedia Commons' older uploads carry, is refused by
libsndfile; without the track it decodes to the same samples as the file never given one. The Skeleton pages are
built here from the Ogg and Skeleton specifications (RFC 3533; Ogg Skeleton 3.0), with their own checksums."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest
import soundfile as sf

from hearalert_corpus.ogg_skeleton import OggError, has_skeleton, without_skeleton

SKELETON_SERIAL = 0x5EED


def ogg_crc(page: bytes) -> int:
    """Ogg's CRC-32 (RFC 3533 section 6: polynomial 0x04C11DB7, initial 0, no reflection, no final xor)."""
    crc = 0
    for byte in page:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x8000_0000 else crc << 1
            crc &= 0xFFFF_FFFF
    return crc


def ogg_page(body: bytes, serial: int, sequence: int, header_type: int) -> bytes:
    """One page holding one whole packet shorter than 255 bytes (a single lacing value)."""
    assert len(body) < 255
    header = struct.pack("<4sBBqIIIB", b"OggS", 0, header_type, 0, serial, sequence, 0, 1) + bytes([len(body)])
    crc = ogg_crc(header + body)
    return header[:22] + struct.pack("<I", crc) + header[26:] + body


def vorbis_ogg(seconds: float = 1.0, rate: int = 16000) -> tuple[bytes, np.ndarray]:
    t = np.arange(int(seconds * rate)) / rate
    buf = io.BytesIO()
    sf.write(buf, (0.3 * np.sin(2 * np.pi * 900 * t)).astype(np.float32), rate, format="OGG", subtype="VORBIS")
    data = buf.getvalue()
    return data, sf.read(io.BytesIO(data), dtype="float32")[0]


def with_skeleton(ogg: bytes) -> bytes:
    """`ogg` (one Vorbis stream) with a Skeleton 3.0 track laid out as encoders write it: the fishead page first,
    the Vorbis stream's first page, a fisbone page describing it, the Skeleton's end-of-stream page, the rest."""
    vorbis_serial = struct.unpack_from("<I", ogg, 14)[0]
    fishead = b"fishead\0" + struct.pack("<HHqqqq", 3, 0, 0, 1000, 0, 1000) + bytes(20)
    fisbone = (b"fisbone\0" + struct.pack("<IIIqqqIB3x", 44, vorbis_serial, 3, 16000, 1, 0, 2, 0)
               + b"Content-Type: audio/vorbis\r\n")
    second_page = ogg.index(b"OggS", 4)
    return (ogg_page(fishead, SKELETON_SERIAL, 0, 0x02) + ogg[:second_page]
            + ogg_page(fisbone, SKELETON_SERIAL, 1, 0) + ogg_page(b"", SKELETON_SERIAL, 2, 0x04)
            + ogg[second_page:])


def test_libsndfile_refuses_a_skeleton_track_and_reads_the_file_without_it():
    plain, samples = vorbis_ogg()
    skeletal = with_skeleton(plain)
    assert has_skeleton(skeletal) and not has_skeleton(plain)
    with pytest.raises((RuntimeError, sf.LibsndfileError)):
        sf.info(io.BytesIO(skeletal))
    stripped = without_skeleton(skeletal)
    assert stripped == plain
    decoded, rate = sf.read(io.BytesIO(stripped), dtype="float32")
    assert rate == 16000 and np.array_equal(decoded, samples)


def test_a_file_without_a_skeleton_is_returned_as_it_is():
    plain, _ = vorbis_ogg()
    assert without_skeleton(plain) is plain
    wav = io.BytesIO()
    sf.write(wav, np.zeros(160, dtype=np.float32), 16000, format="WAV")
    assert without_skeleton(wav.getvalue()) == wav.getvalue()


@pytest.mark.parametrize("cut, where", [(10, "cut short in its header"), (27, "cut short in its segment table"),
                                        (29, "past the file"), (3, "no Ogg page starts")])
def test_a_damaged_file_is_one_line_saying_where(cut, where):
    skeletal = with_skeleton(vorbis_ogg()[0])
    second_page = skeletal.index(b"OggS", 4)
    damaged = skeletal[:second_page + cut] if where != "no Ogg page starts" else \
        skeletal[:second_page] + b"junk" + skeletal[second_page:]
    with pytest.raises(OggError, match=where) as raised:
        without_skeleton(damaged)
    assert "\n" not in str(raised.value)


def test_a_file_holding_only_a_skeleton_is_refused():
    only = with_skeleton(vorbis_ogg()[0])
    pages = only[:only.index(b"OggS", 4)]
    with pytest.raises(OggError, match="only a Skeleton"):
        without_skeleton(pages)
