"""Tests for tools/score_enhancement.py: its metrics agree with numpy transcriptions of the definitions (the same
golden values as Tests/HearAlertKitTests/Enhancement/EnhancementMetricsTests.swift), alignment finds known lags,
the evaluation set is a valid corpus at the promised SNRs, and a whole scoring run works end to end."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import score_enhancement as se

TOOLS = Path(__file__).resolve().parents[1]


def golden_signals() -> tuple[np.ndarray, np.ndarray]:
    n = np.arange(2000)
    s = (np.sin(2 * np.pi * 0.01 * n) * np.where(n % 700 < 350, 1.0, 0.01)).astype(np.float32)
    s[1200:1700] = 0
    e = (s + np.float32(0.1) * np.cos(2 * np.pi * 0.037 * n + 0.3).astype(np.float32)).astype(np.float32)
    return s, e


def test_snr_matches_the_swift_golden_value():
    s, e = golden_signals()
    assert se.snr_db(s, e) == pytest.approx(15.74074688531315, abs=1e-9)


def test_segmental_snr_matches_the_swift_golden_value():
    s, e = golden_signals()
    assert se.segmental_snr_db(s, e) == pytest.approx(11.401591461358475, abs=1e-9)


def test_segmental_snr_clamps_silence_and_perfection():
    s, _ = golden_signals()
    assert se.segmental_snr_db(np.zeros(1000), np.ones(1000)) == -10.0
    assert se.segmental_snr_db(s[:480], s[:480]) == 35.0
    with pytest.raises(ValueError):
        se.segmental_snr_db(s[:100], s[:100])


def test_alert_energy_retained_matches_the_swift_golden_value():
    n = np.arange(2000)
    a = (0.5 * np.sin(2 * np.pi * 0.05 * n)).astype(np.float32)
    y = (0.7 * a.astype(np.float64) + 0.2 * np.cos(2 * np.pi * 0.011 * n)).astype(np.float32)
    assert se.alert_energy_retained_db(a, y) == pytest.approx(-3.098039203718865, abs=1e-9)
    assert se.alert_energy_retained_db(a, -a) is None
    assert se.alert_energy_retained_db(np.zeros(10), np.ones(10)) is None


@pytest.mark.parametrize("lag", [0, 37, -120, 160])
def test_align_undoes_a_known_delay(lag):
    rng = np.random.default_rng(3)
    reference = rng.standard_normal(8000)
    delayed = np.roll(reference, lag)
    shifted, found = se.align(delayed, reference)
    assert found == lag
    inside = slice(200, 7800)
    assert np.allclose(shifted[inside], reference[inside])


@pytest.fixture(scope="module")
def small_set(tmp_path_factory) -> Path:
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed")
    out = tmp_path_factory.mktemp("enhancement-set")
    se.make_set(out, seed=5, files_per_condition=1, seconds=3.0, snrs=[0.0, 10.0], noises=["pink", "babble"])
    return out


def test_make_set_writes_a_corpus_at_the_promised_snrs(small_set):
    meta = json.loads((small_set / "corpus.json").read_text())
    assert meta["format"] == "hearalert-corpus" and meta["version"] == 1 and meta["sample_rate"] == 16000
    rows = (small_set / "files.tsv").read_text().splitlines()
    assert rows[0] == "filename\tduration" and len(rows) == 5
    assert (small_set / "annotations.tsv").read_text() == "filename\tonset\toffset\tevent_label\n"
    for row in rows[1:]:
        name, duration = row.split("\t")
        noisy, rate = sf.read(str(small_set / "audio" / name))
        clean, _ = sf.read(str(small_set / "clean" / name))
        assert rate == 16000 and len(noisy) == len(clean) == round(float(duration) * 16000)
        # The unprocessed input's SNR is the nominal one, and the lead-in holds no speech.
        assert se.snr_db(clean, noisy) == pytest.approx(meta["files"][name]["speech_snr_db"], abs=0.01)
        assert np.all(clean[:int(se.LEAD_IN_SECONDS * 16000)] == 0)


def test_speex_suppresses_stationary_noise():
    try:
        speex = se.SpeexPreprocessor()
    except OSError:
        pytest.skip("libspeexdsp is not installed")
    rng = np.random.default_rng(9)
    noise = 0.05 * rng.standard_normal(3 * 16000)
    out = speex(noise)
    assert len(out) == len(noise)
    tail = slice(16000, None)  # after it has learnt the noise
    assert np.mean(out[tail] ** 2) < 0.25 * np.mean(noise[tail] ** 2)


def test_scoring_runs_end_to_end_and_reports_each_condition(small_set, tmp_path):
    hearalert = TOOLS.parent / ".build" / "debug" / "hearalert"
    args = ["score", "--corpus", str(small_set), "--out", str(tmp_path / "report.md"), "--no-speex"]
    if hearalert.exists():
        args += ["--hearalert", str(hearalert), "--modes", "low-latency"]
    if shutil.which("sox") is None:
        args += ["--sox-amount", "-1"]
    assert se.main(args) == 0
    table = (tmp_path / "report.md").read_text()
    for condition in ("| stationary | 0 dB | unprocessed |", "| babble | 10 dB | unprocessed |", "| all | all |"):
        assert condition in table
    # The unprocessed rows carry exactly the nominal input SNR and no change.
    assert "| stationary | 0 dB | unprocessed | 1 | 0.00 (+0.00) |" in table
    if hearalert.exists():
        assert "ours low-latency" in table


def test_noise_reduction_counts_only_noise_cells_inside_the_alerts():
    rng = np.random.default_rng(5)
    noise = rng.standard_normal(16000)
    target = np.zeros(16000)
    target[:8000] = 100 * np.sin(2 * np.pi * 1000 * np.arange(8000) / 16000)   # a loud tone in the first half
    noisy = noise + target
    inside = np.zeros(16000, dtype=bool)
    inside[4000:12000] = True
    # Halving the noise is 6.02 dB in every noise cell; the tone's cells are left out (counted, they would pull
    # the figure to about 0 dB, the tone being kept whole), up to its window leakage ≥ 10 dB below the noise.
    halved = 0.5 * noise + target
    assert se.noise_reduction_in_noise_cells_db(noisy, target, halved, inside) == pytest.approx(6.0206, abs=0.02)
    assert se.noise_reduction_in_noise_cells_db(noisy, target, noisy, inside) == pytest.approx(0, abs=1e-9)
    assert se.noise_reduction_in_noise_cells_db(noisy, target, halved, np.zeros(16000, dtype=bool)) is None


def test_alert_scoring_keeps_a_flagged_tone(tmp_path):
    hearalert = TOOLS.parent / ".build" / "debug" / "hearalert"
    if not hearalert.exists():
        pytest.skip("build hearalert first (swift build)")
    rate, n = 16000, 6 * 16000
    rng = np.random.default_rng(4)
    alert = np.zeros(n)
    alert[2 * rate:5 * rate] = 0.1 * np.sin(2 * np.pi * 1000 * np.arange(3 * rate) / rate)
    for sub in ("audio", "alerts"):
        (tmp_path / sub).mkdir()
    sf.write(str(tmp_path / "audio" / "tone.wav"), (alert + 0.05 * rng.standard_normal(n)).astype(np.float32),
             rate, subtype="FLOAT")
    sf.write(str(tmp_path / "alerts" / "tone.wav"), alert.astype(np.float32), rate, subtype="FLOAT")
    (tmp_path / "annotations.tsv").write_text("filename\tonset\toffset\tevent_label\ntone.wav\t2.000\t5.000\tsmoke_alarm\n")
    out = tmp_path / "alerts.md"
    assert se.main(["alerts", "--corpus", str(tmp_path), "--hearalert", str(hearalert), "--no-speex",
                    "--out", str(out)]) == 0
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in out.read_text().splitlines()
            if line.startswith("| ours")}
    flagged = float(rows["ours low-latency, alert flag from annotations"][1])
    plain = float(rows["ours low-latency, no alert flag"][1])
    assert flagged >= -1.0 and plain < flagged


def test_command_line_help_runs():
    result = subprocess.run([sys.executable, str(TOOLS / "score_enhancement.py"), "--help"],
                            capture_output=True, text=True)
    assert result.returncode == 0 and "make-set" in result.stdout


def test_scoring_a_subset_keeps_only_matching_files(small_set, tmp_path):
    out = tmp_path / "subset.md"
    assert se.main(["score", "--corpus", str(small_set), "--files", "pink_*", "--no-speex", "--sox-amount", "-1",
                    "--out", str(out)]) == 0
    table = out.read_text()
    assert "| stationary | 0 dB | unprocessed | 1 |" in table and "| all | all | unprocessed | 2 |" in table
    assert "babble" not in table
    with pytest.raises(SystemExit):
        se.main(["score", "--corpus", str(small_set), "--files", "nothing_*", "--no-speex", "--sox-amount", "-1"])


def test_the_learned_noise_estimate_is_scored_only_where_it_serves(monkeypatch, tmp_path):
    import argparse

    variants = se.ours_variants(["low-latency", "higher-quality"], ["mcra", "learned"])
    assert variants == [("ours low-latency", "low-latency", "mcra"),
                        ("ours low-latency learned", "low-latency", "learned"),
                        ("ours higher-quality", "higher-quality", "mcra")]
    commands = []
    monkeypatch.setattr(se.subprocess, "run", lambda command, **_: commands.append(command))
    se.run_ours("hearalert", "low-latency", None, tmp_path / "a.wav", tmp_path / "b.wav", "learned",
                ["--alert-intervals", "x.tsv"])
    assert commands[0][-4:] == ["--noise-estimator", "learned", "--alert-intervals", "x.tsv"]
    with pytest.raises(argparse.ArgumentTypeError):
        se.estimator_list("mcra,wiener")
