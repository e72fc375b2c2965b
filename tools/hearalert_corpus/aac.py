"""AAC recordings (raw ADTS `.aac`, MPEG-4 `.m4a`) as PCM WAV: libsndfile, which every other reader of audio here
goes through (soundfile), does not decode AAC, and some public sound collections ship nothing else.

fetch_real_audio.py pins such a file by the sha256 of its stored bytes, then decodes it once, here, with FFmpeg's
AAC decoder through PyAV (the `av` wheel, pinned in tools/requirements.txt, carries its own FFmpeg), and writes
the 16-bit WAV that every later step reads. A raw ADTS stream has no edit list, so its decoded length includes the
encoder's priming samples (1,024 for FFmpeg's encoder, 2,112 for Apple's): a few tens of milliseconds of
near-silence at the start, which the pinned duration in the manifest includes too.
"""

from __future__ import annotations

import io
from pathlib import PurePosixPath

from .containers import ContainerError, Member, wav_bytes

SUFFIXES = (".aac", ".m4a")


class AACError(Exception):
    """An AAC file that cannot be decoded; the message is one line naming the file."""


def is_aac(path: str) -> bool:
    """Whether `path` names an AAC recording by its suffix (what fetch_real_audio decodes here)."""
    return PurePosixPath(path).suffix.lower() in SUFFIXES


def wav_from_aac(data: bytes, name: str) -> bytes:
    """The first audio stream of the AAC file `data` (called `name` in errors), decoded, as a 16-bit PCM WAV at
    its own rate and channel count (FFmpeg's own conversion from the decoder's float samples, clipped, no dither)."""
    import av   # only fetches of AAC recordings need FFmpeg

    try:
        with av.open(io.BytesIO(data), mode="r") as container:
            if not container.streams.audio:
                raise AACError(f"{name}: no audio stream")
            stream = container.streams.audio[0]
            rate, channels = stream.codec_context.sample_rate, stream.codec_context.channels
            to_pcm = av.AudioResampler(format="s16", layout=stream.codec_context.layout, rate=rate)
            chunks = [out.to_ndarray().tobytes() for frame in [*container.decode(stream), None]
                      for out in to_pcm.resample(frame)]
    except av.FFmpegError as e:
        raise AACError(f"{name}: FFmpeg cannot decode it ({e})") from e
    pcm = b"".join(chunks)
    if not pcm or not rate or not channels:
        raise AACError(f"{name}: no decoded audio")
    try:
        return wav_bytes(Member(name, rate, channels, 2, pcm))
    except ContainerError as e:
        raise AACError(str(e)) from e
