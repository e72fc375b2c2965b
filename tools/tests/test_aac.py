"""hearalert_corpus.aac: AAC files (raw ADTS and MPEG-4) encoded here by FFmpeg's own AAC encoder, decoded to WAV;
the tones' frequencies and levels are checked with numpy's FFT against the signal that was encoded."""

from __future__ import annotations

import io

import av
import numpy as np
import pytest
import soundfile as sf

from hearalert_corpus.aac import AACError, is_aac, wav_from_aac

RATE = 22050
SECONDS = 1.5
PRIMING = 1024 / RATE  # the encoder's priming samples, kept by a stream without an edit list


def encoded(channels: np.ndarray, rate: int, container: str) -> bytes:
    """`channels` [channels, samples] as AAC in `container` ('adts' for .aac, 'ipod' for .m4a)."""
    layout = "stereo" if len(channels) == 2 else "mono"
    buf = io.BytesIO()
    with av.open(buf, mode="w", format=container) as out:
        stream = out.add_stream("aac", rate=rate, layout=layout)
        frame = av.AudioFrame.from_ndarray(channels.astype(np.float32), format="fltp", layout=layout)
        frame.rate = rate
        for packet in [*stream.encode(frame), *stream.encode(None)]:
            out.mux(packet)
    return buf.getvalue()


def tone(freq: float, amplitude: float) -> np.ndarray:
    return amplitude * np.sin(2 * np.pi * freq * np.arange(int(SECONDS * RATE)) / RATE)


def peak_hz(x: np.ndarray, rate: int) -> float:
    return float(np.argmax(np.abs(np.fft.rfft(x))) * rate / len(x))


def rms_db(x: np.ndarray) -> float:
    return float(10 * np.log10(np.mean(x ** 2)))


@pytest.mark.parametrize("container", ["adts", "ipod"])
def test_each_channel_decodes_to_its_own_tone_at_its_level(container):
    left, right = tone(440, 0.3), tone(1250, 0.2)
    wav = wav_from_aac(encoded(np.stack([left, right]), RATE, container), "tones.aac")
    info = sf.info(io.BytesIO(wav))
    assert (info.format, info.subtype, info.samplerate, info.channels) == ("WAV", "PCM_16", RATE, 2)
    assert SECONDS <= info.duration <= SECONDS + PRIMING + 2048 / RATE
    decoded, _ = sf.read(io.BytesIO(wav), dtype="float64")
    middle = decoded[2048:-2048]  # away from the priming and the last frame's padding
    for channel, (source, freq) in enumerate([(left, 440), (right, 1250)]):
        assert abs(peak_hz(decoded[:, channel], RATE) - freq) < 2
        assert abs(rms_db(middle[:, channel]) - rms_db(source)) < 0.3


def test_a_mono_file_stays_mono():
    wav = wav_from_aac(encoded(tone(700, 0.5)[None, :], 16000, "adts"), "mono.aac")
    info = sf.info(io.BytesIO(wav))
    assert (info.channels, info.samplerate) == (1, 16000)


def test_what_ffmpeg_cannot_decode_is_one_line_naming_the_file():
    with pytest.raises(AACError) as e:
        wav_from_aac(b"not an AAC stream" * 50, "broken.aac")
    assert str(e.value).startswith("broken.aac: ") and "\n" not in str(e.value)


def test_only_aac_suffixes_are_taken_for_aac():
    assert is_aac("a/b/horn.aac") and is_aac("x/RING.M4A")
    assert not is_aac("horn.wav") and not is_aac("horn.aac.wav") and not is_aac("aac")
