"""The corpus generator: format, determinism, split separation, event rules, alert synthesis."""

from __future__ import annotations

import filecmp
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from corpus_format import read_corpus
from hearalert_corpus import LABELS, SPLITS
from hearalert_corpus.alerts import synthesise
from hearalert_corpus.mixing import MixSettings, merge_segments
from hearalert_corpus.sources import split_of
from hearalert_corpus.speech import SpeechSource
import make_corpus

SETTINGS = MixSettings(clip_seconds=4.0, alert_free_fraction=0.2)


def _generate(out: Path, seed: int, split: str = "train", files: int = 5) -> dict:
    return make_corpus.generate(out, split, seed, files, SETTINGS, workers=2, rooms=2, progress=False)


@pytest.fixture(scope="module")
def corpus_pair(tmp_path_factory):
    a = tmp_path_factory.mktemp("a")
    b = tmp_path_factory.mktemp("b")
    _generate(a, seed=7)
    _generate(b, seed=7)
    return a, b


def test_corpus_follows_the_format_with_aligned_components(corpus_pair):
    root, _ = corpus_pair
    corpus = read_corpus(root, check_audio=True)
    assert corpus.labels == list(LABELS)
    assert corpus.sample_rate == 16000
    assert len(corpus.files) == 5
    for f in corpus.files:
        assert f.duration == pytest.approx(4.0)
        mix, sr = sf.read(str(corpus.audio_path(f.filename)), dtype="int16")
        assert sr == 16000 and mix.ndim == 1
        info = sf.info(str(corpus.audio_path(f.filename)))
        assert info.subtype == "PCM_16"
        for component in ("clean", "alerts"):
            assert corpus.audio_path(f.filename, component).exists()
        alerts, _ = sf.read(str(corpus.audio_path(f.filename, "alerts")))
        extras = corpus.file_extras(f.filename)
        if corpus.events_of(f.filename):
            assert np.abs(alerts).max() > 0
            assert -10.0 <= extras["alert_snr_db"] <= 15.0
        else:
            assert not np.any(alerts) and extras["alert_snr_db"] is None
        if extras["speech_snr_db"] is not None:
            assert -5.0 <= extras["speech_snr_db"] <= 20.0


def test_same_seed_gives_identical_bytes(corpus_pair):
    a, b = corpus_pair
    names = [p.relative_to(a) for p in sorted(a.rglob("*")) if p.is_file()]
    assert len(names) == 3 + 3 * 5
    match, mismatch, errors = filecmp.cmpfiles(a, b, [str(n) for n in names], shallow=False)
    assert not mismatch and not errors


def test_other_seed_gives_other_audio(corpus_pair, tmp_path):
    a, _ = corpus_pair
    _generate(tmp_path, seed=8, files=1)
    assert (a / "audio" / "train_00000.wav").read_bytes() != (tmp_path / "audio" / "train_00000.wav").read_bytes()


def test_events_merge_gaps_shorter_than_one_second():
    segments = [(0.0, 0.5), (1.0, 1.5), (2.0, 2.5), (4.0, 4.5), (5.4, 5.6)]
    assert merge_segments(segments) == [(0.0, 2.5), (4.0, 5.6)]
    assert merge_segments([(3.0, 3.2), (0.0, 1.0), (2.0, 2.1)]) == [(0.0, 1.0), (2.0, 3.2)]


def test_splits_use_disjoint_voices():
    voices = {split: SpeechSource.for_split(split, []) for split in SPLITS}
    for s1 in SPLITS:
        for s2 in SPLITS:
            if s1 < s2:
                assert not set(voices[s1].languages) & set(voices[s2].languages)
                assert not set(voices[s1].variants) & set(voices[s2].variants)
    assert all(voices[s].languages for s in SPLITS)


def test_recordings_are_assigned_to_one_split_stably():
    names = [f"speaker{i}/utt{j}.wav" for i in range(20) for j in range(20)]
    first = [split_of(n) for n in names]
    assert first == [split_of(n) for n in names]
    share = {s: first.count(s) / len(first) for s in SPLITS}
    assert 0.7 < share["train"] < 0.9 and 0.05 < share["val"] < 0.15 and 0.05 < share["test"] < 0.15


@pytest.mark.parametrize("label", LABELS)
def test_every_label_synthesises_varied_sounding_alerts(label):
    rng = np.random.default_rng(11)
    kinds, spectra = set(), []
    for _ in range(12):
        alert = synthesise(label, rng, float(rng.uniform(1.5, 8.0)))
        x = alert.samples
        assert x.dtype == np.float32 and np.all(np.isfinite(x)) and np.max(np.abs(x)) == pytest.approx(1.0)
        assert alert.segments, "an alert must sound somewhere"
        for a, b in alert.segments:
            assert 0 <= a < b <= len(x) / 16000 + 1e-6
        kinds.add(alert.kind)
        spectrum = np.abs(np.fft.rfft(x[:16000], n=16000))
        spectra.append(spectrum / (spectrum.sum() + 1e-12))
    assert len(kinds) >= 2, f"{label}: no variety in kinds ({kinds})"
    distinct = {int(np.argmax(s)) // 50 for s in spectra}
    assert len(distinct) >= 3, f"{label}: dominant frequencies barely vary"


def test_mallet_ringtones_are_struck_notes_that_ring_down_with_marimba_or_bar_partials():
    from hearalert_corpus.alerts import _BAR_RATIOS, _MARIMBA_RATIOS, _mallet_ringtone
    for seed in range(8):
        alert = _mallet_ringtone(np.random.default_rng(seed), 3.0, [0])  # one note, repeated: one pitch
        x, sr = alert.samples.astype(np.float64), 16000
        starts = [a for a, _ in alert.segments]
        step = starts[1] - starts[0]
        assert step > 0 and all(b > a for a, b in alert.segments)
        # The first note alone, up to the second: it rings down from its attack.
        first = x[:int(min(step, alert.segments[0][1]) * sr)]
        head, tail = first[:160], first[-160:]
        assert np.sqrt(np.mean(tail ** 2)) < 0.9 * np.sqrt(np.mean(head ** 2))
        # Its partials: the strongest peak is the fundamental, and a mode of a marimba or free bar sits above it.
        spectrum = np.abs(np.fft.rfft(first * np.hanning(len(first)), n=1 << 16))
        freqs = np.fft.rfftfreq(1 << 16, 1 / sr)
        f0 = freqs[np.argmax(spectrum)]
        assert 240 <= f0 <= 1750
        modes = [r for r in (_MARIMBA_RATIOS[1], _BAR_RATIOS[1]) if r * f0 < 7000]
        around = [spectrum[(freqs > 0.97 * r * f0) & (freqs < 1.03 * r * f0)].max() for r in modes]
        floor = np.median(spectrum)
        assert max(around) > 20 * floor, f"seed {seed}: no bar mode above {f0:.0f} Hz"
