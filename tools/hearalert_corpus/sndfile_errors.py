"""libsndfile's reason for refusing audio bytes, without the Python object soundfile read them from.

Every tool that checks a recording reads it from memory (the bytes whose sha256 a manifest pins), and soundfile
words such an error "Error opening <_io.BytesIO object at 0x7f...>: Format not recognised.": an address that tells
the user nothing. The tools name the recording themselves and give only libsndfile's own words after it.
"""

from __future__ import annotations

import soundfile as sf


def sndfile_reason(error: Exception) -> str:
    """What libsndfile said (`Format not recognised.`) for a LibsndfileError; any other error as it is."""
    if isinstance(error, sf.LibsndfileError):
        return error.error_string
    return str(error)
