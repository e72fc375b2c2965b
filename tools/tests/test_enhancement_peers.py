"""Tests for tools/enhancement_peers.py: delays are measured and taken out (a known delayed copy comes back exactly),
each peer runs on espeak-ng speech and, once its measured delay is out, lines up with its input, and a
missing wheel is one plain line that says how to install it or skip it."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import soundfile as sf

import enhancement_peers as ep
import score_enhancement as se
from hearalert_corpus.speech import synthesise

RATE = 16000


def voiced(seconds: float = 3.0, seed: int = 2) -> np.ndarray:
    """A test signal for the delay arithmetic: a 140 Hz harmonic complex with a drifting pitch, syllable-rate
    bursts (4 Hz) and a little breath noise, at about −26 dBFS."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * RATE)) / RATE
    f0 = 140 * (1 + 0.08 * np.sin(2 * np.pi * 0.7 * t))
    phase = 2 * np.pi * np.cumsum(f0) / RATE
    x = sum(np.sin(k * phase) / k for k in range(1, 25) if k * 140 < 7000)
    envelope = np.clip(np.sin(2 * np.pi * 4 * t), 0, None) ** 0.5
    x = x * envelope + 0.02 * rng.standard_normal(len(t)) * envelope
    return 0.05 * x / np.sqrt(np.mean(x ** 2))


@pytest.mark.parametrize("delay", [0, 37, 160, 480])
def test_a_known_delay_is_measured_and_taken_out(delay):
    x = voiced()
    delayed = lambda s: np.concatenate([np.zeros(delay), s])[:len(s)]  # noqa: E731
    assert ep.measure_delay(delayed, x) == delay
    recovered = ep.compensate(delayed(x), delay)
    assert len(recovered) == len(x)
    assert np.array_equal(recovered[:len(x) - delay], x[:len(x) - delay])
    assert np.all(recovered[len(x) - delay:] == 0)


def test_compensate_pads_and_cuts_to_the_asked_length():
    x = np.arange(1.0, 11.0)
    assert ep.compensate(x, 3, 5).tolist() == [4, 5, 6, 7, 8]
    assert ep.compensate(x, -2, 6).tolist() == [0, 0, 1, 2, 3, 4]
    assert ep.compensate(x[:4], 0, 6).tolist() == [1, 2, 3, 4, 0, 0]


@pytest.fixture(scope="module")
def speech(tmp_path_factory) -> np.ndarray:
    """Two Harvard sentences by espeak-ng at about −26 dBFS: speech every suppressor passes almost whole (the
    neural ones take a synthetic harmonic complex for noise)."""
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed")
    x = synthesise(" ".join(se.SENTENCES[:2]), "en-us", 160, 50, str(tmp_path_factory.mktemp("espeak")))
    x = x.astype(np.float64)
    return 0.05 * x / np.sqrt(np.mean(x ** 2))


@pytest.mark.parametrize("peer", sorted(ep.PEERS))
def test_each_peer_lines_up_with_its_input_once_its_delay_is_out(peer, speech):
    try:
        process = ep.PEERS[peer]()
    except ep.PeerUnavailable as error:
        pytest.skip(str(error))
    x = speech
    y = process(x)
    assert len(y) == len(x) and np.all(np.isfinite(y))
    delay = ep.measure_delay(process, x)
    assert 0 <= delay <= 60 * RATE // 1000      # each peer's framing and look-ahead: at most 60 ms
    aligned = ep.compensate(y, delay)
    assert ep.best_lag(aligned, x) == 0
    inside = slice(RATE // 2, len(x) - RATE // 10)   # after the suppressors have settled, before the cut tail
    assert np.corrcoef(aligned[inside], x[inside])[0, 1] > 0.95


@pytest.mark.parametrize("peer, flag", [("rnnoise", "--no-rnnoise"), ("deepfilternet3", "--no-deepfilternet")])
def test_a_missing_wheel_is_one_line_naming_the_fix(monkeypatch, peer, flag):
    monkeypatch.setattr(ep, "package_dir", lambda package: None)
    with pytest.raises(ep.PeerUnavailable) as caught:
        ep.PEERS[peer]()
    message = str(caught.value)
    assert "\n" not in message and "not found" in message
    assert "tools/setup.sh --python" in message and flag in message


def test_the_score_command_reports_a_missing_wheel_in_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(ep, "package_dir", lambda package: None)
    (tmp_path / "audio").mkdir()
    (tmp_path / "clean").mkdir()
    for sub in ("audio", "clean"):
        sf.write(str(tmp_path / sub / "a.wav"), voiced(1.0), RATE, subtype="FLOAT")
    (tmp_path / "files.tsv").write_text("filename\tduration\na.wav\t1.000\n")
    (tmp_path / "corpus.json").write_text("{}")
    with pytest.raises(SystemExit) as caught:
        se.main(["score", "--corpus", str(tmp_path), "--no-speex", "--no-deepfilternet", "--sox-amount", "-1"])
    assert caught.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "RNNoise" in error and "--no-rnnoise" in error
