"""tools/speech_bandwidth.py: the bandwidth measure that keeps telephone-band speech out of the enhancer's clean
targets. Expected values come from how the signals are made (a brick-wall band edge, a pure tone, the 4 kHz Nyquist
of an 8 kHz recording), not from the measure itself."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf
import soxr

import speech_bandwidth as sb

RATE = 16000


def _noise(seconds: float, rate: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(int(seconds * rate))


def _speech_like(seconds: float, seed: int) -> np.ndarray:
    """White noise through a one-pole low-pass at 500 Hz: a falling spectrum like speech's, content up to 8 kHz."""
    x = _noise(seconds, RATE, seed)
    a = np.exp(-2 * np.pi * 500 / RATE)
    out = np.empty_like(x)
    state = 0.0
    for i, value in enumerate(x):
        state = a * state + (1 - a) * value
        out[i] = state
    return out


def test_telephone_band_speech_is_rejected_and_wideband_speech_kept():
    phone = soxr.resample(_speech_like(2.0, 1)[::2].copy(), 8000, RATE, quality="HQ")   # stored at 8 kHz
    wide = _speech_like(2.0, 1)
    assert sb.bandwidth_hz(phone, RATE) < 4000 < sb.MIN_SPEECH_BANDWIDTH_HZ
    assert sb.bandwidth_hz(wide, RATE) >= sb.MIN_SPEECH_BANDWIDTH_HZ


@pytest.mark.parametrize("edge_hz", [3000.0, 5000.0, 7500.0])
def test_a_brick_wall_band_edge_is_found_within_a_bin_or_two(edge_hz):
    spectrum = np.fft.rfft(_noise(3.0, RATE, 2))
    spectrum[np.fft.rfftfreq(3 * RATE, 1 / RATE) > edge_hz] = 0
    x = np.fft.irfft(spectrum, 3 * RATE)
    assert abs(sb.bandwidth_hz(x, RATE) - edge_hz) <= 2 * RATE / 512


def test_a_tone_cut_mid_cycle_reaches_only_its_own_frequency():
    # a whole-file spectrum would count the jump from its last sample to its first as broadband content
    t = np.arange(int(1.0037 * RATE)) / RATE
    assert sb.bandwidth_hz(np.sin(2 * np.pi * 300 * t) + 0.5, RATE) < 1000


def test_silence_has_no_bandwidth_and_a_short_file_is_measured():
    assert sb.bandwidth_hz(np.zeros(RATE), RATE) == 0.0
    assert sb.bandwidth_hz(np.zeros(0), RATE) == 0.0
    assert sb.bandwidth_hz(_noise(0.01, RATE, 3), RATE) > 7000


def test_a_file_is_measured_at_its_own_rate_and_an_unreadable_one_named(tmp_path):
    path = tmp_path / "phone.wav"
    sf.write(str(path), 0.1 * _noise(1.0, 8000, 4), 8000)
    assert 3800 <= sb.recording_bandwidth_hz(path) <= 4000
    (tmp_path / "bad.wav").write_bytes(b"not audio")
    with pytest.raises(ValueError, match="bad.wav: cannot read it"):
        sb.recording_bandwidth_hz(tmp_path / "bad.wav")


# The band 4000–7990 Hz holds 10^(share/10) of the energy, evenly: with the documented floor of −50 dB the energy
# above f is under 10⁻⁵ from f = 7990 − 3990·10^((−50 − share)/10) on (7591 Hz at −40 dB); at −60 dB already above
# 4 kHz.
@pytest.mark.parametrize("upper_share_db, expected_hz", [(-40.0, 7591.0), (-45.0, 6728.0), (-60.0, 4000.0)])
def test_faint_upper_content_counts_down_to_the_floor_and_no_further(upper_share_db, expected_hz):
    """Noise to 4 kHz plus a faint 4–8 kHz band: at −40 dB of the energy it is content (weak consonants), at
    −60 dB it is not (faint hiss over a telephone-band file)."""
    freqs = np.fft.rfftfreq(3 * RATE, 1 / RATE)
    low, high = np.fft.rfft(_noise(3.0, RATE, 5)), np.fft.rfft(_noise(3.0, RATE, 6))
    low[freqs > 4000] = 0
    high[(freqs <= 4000) | (freqs > 7990)] = 0
    low, high = np.fft.irfft(low, 3 * RATE), np.fft.irfft(high, 3 * RATE)
    x = low + high * np.sqrt(np.sum(low ** 2) / np.sum(high ** 2) * 10 ** (upper_share_db / 10))
    assert abs(sb.bandwidth_hz(x, RATE) - expected_hz) <= 2 * RATE / 512


def test_a_dc_offset_does_not_narrow_wideband_speech():
    assert sb.bandwidth_hz(_speech_like(2.0, 7) + 3.0, RATE) >= sb.MIN_SPEECH_BANDWIDTH_HZ
