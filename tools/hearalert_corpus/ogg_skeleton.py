"""An Ogg file without its Skeleton track, so that libsndfile can decode the audio in it.

Ogg Skeleton (Xiph.Org, https://wiki.xiph.org/Ogg_Skeleton_4) is a metadata stream some encoders put beside the
audio: its first page's packet begins with "fishead\\0", later ones with "fisbone\\0". Wikimedia Commons' older
uploads carry one, and libsndfile refuses such a file ("File contains data in an unimplemented format"), although
the Vorbis stream beside it is ordinary. Dropping every page of the Skeleton stream leaves a valid Ogg file: pages
are kept whole (each page's checksum covers only itself) and page sequence numbers count per stream.

Ogg page layout (RFC 3533, section 6): "OggS", version (1 byte), header type (1; bit 0x02 marks a stream's first
page), granule position (8), stream serial number (4), page sequence number (4), CRC (4), segment count n (1),
segment table (n bytes, the body's lacing values), body (sum of the lacing values). Every length is checked
against the data: a truncated or corrupt file raises OggError with one line saying where.
"""

from __future__ import annotations

CAPTURE = b"OggS"
HEADER_BYTES = 27                 # the fixed part of a page header, up to and including the segment count
HEADER_TYPE = 5                   # the header-type byte's offset in a page
SERIAL = slice(14, 18)
FIRST_PAGE = 0x02                 # header-type flag: beginning of a logical stream
SKELETON_MAGIC = b"fishead\0"


class OggError(Exception):
    """An Ogg file whose pages cannot be walked; the message is one line saying where it breaks."""


def has_skeleton(data: bytes) -> bool:
    """Whether `data` is an Ogg file whose streams begin with a Skeleton track (it is then the first page's)."""
    if not data.startswith(CAPTURE) or len(data) < HEADER_BYTES:
        return False
    body_start = HEADER_BYTES + data[HEADER_BYTES - 1]
    return data[body_start:body_start + len(SKELETON_MAGIC)] == SKELETON_MAGIC


def without_skeleton(data: bytes) -> bytes:
    """`data` with every page of its Skeleton stream removed; `data` itself when it has none (has_skeleton)."""
    if not has_skeleton(data):
        return data
    kept, skeleton_serials, offset = [], set(), 0
    while offset < len(data):
        if data[offset:offset + 4] != CAPTURE:
            raise OggError(f"no Ogg page starts at byte {offset} (found {data[offset:offset + 4]!r})")
        if offset + HEADER_BYTES > len(data):
            raise OggError(f"the page at byte {offset} is cut short in its header")
        segments = data[offset + HEADER_BYTES - 1]
        body_start = offset + HEADER_BYTES + segments
        if body_start > len(data):
            raise OggError(f"the page at byte {offset} is cut short in its segment table")
        end = body_start + sum(data[offset + HEADER_BYTES:body_start])
        if end > len(data):
            raise OggError(f"the page at byte {offset} says its body ends at byte {end}, past the file's "
                           f"{len(data)} bytes")
        header = data[offset:offset + HEADER_BYTES]
        serial = header[SERIAL]
        if header[HEADER_TYPE] & FIRST_PAGE and data[body_start:body_start + len(SKELETON_MAGIC)] == SKELETON_MAGIC:
            skeleton_serials.add(serial)
        if serial not in skeleton_serials:
            kept.append(data[offset:end])
        offset = end
    if not kept:
        raise OggError("the file holds only a Skeleton track, no audio stream")
    return b"".join(kept)
