"""Audio bytes opened with libsndfile as the later steps open the file written from them, and its reasons for
refusing them in words a user can act on.

Every tool that checks a recording reads it from memory (the bytes whose sha256 a manifest pins), where libsndfile
knows a format by its bytes alone; from a path it also goes by the suffix, which is how every later step
(make_real_set.py reads alerts by path) opens the file written, and how an MP3 that begins with an empty ID3v2 tag
(openHAB's BigSoundBank phone ring) is recognised. And soundfile words a refusal of bytes read from memory "Error
opening <_io.BytesIO object at 0x7f...>: Format not recognised.": an address that tells the user nothing, so the
tools name the recording themselves and give only libsndfile's own words after it.
"""

from __future__ import annotations

import io
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import PurePosixPath

import soundfile as sf


@contextmanager
def opened(data: bytes, name: str) -> Iterator[sf.SoundFile]:
    """`data`, stored as the file `name`, open for reading with libsndfile: from memory, or, for bytes libsndfile
    cannot recognise there, once more through a temporary file of the same suffix. If that fails too, the error is
    the first one, which names no temporary file."""
    try:
        memory = sf.SoundFile(io.BytesIO(data))
    except sf.LibsndfileError as from_memory:
        with tempfile.NamedTemporaryFile(suffix=PurePosixPath(name).suffix) as temporary:
            temporary.write(data)
            temporary.flush()
            try:
                by_path = sf.SoundFile(temporary.name)
            except sf.LibsndfileError:
                raise from_memory from None
            with by_path:
                yield by_path
        return
    with memory:
        yield memory


def sndfile_reason(error: Exception) -> str:
    """What libsndfile said (`Format not recognised.`) for a LibsndfileError; any other error as it is."""
    if isinstance(error, sf.LibsndfileError):
        return error.error_string
    return str(error)
