"""tools/band_gain_study.py: the numpy transcription of the enhancer's low-latency path (framing against exact
reconstruction, the gain rule against hand-computed values, the whole path against the hearalert binary where one
is built) and its scoring end to end."""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import band_gain_study as bg
import score_enhancement as se

TOOLS = Path(__file__).resolve().parents[1]


def test_unmodified_spectra_reconstruct_the_input_exactly_and_aligned():
    x = np.random.default_rng(3).standard_normal(5000)
    np.testing.assert_allclose(bg.synthesise(bg.analyse(x), len(x)), x, atol=1e-12)


def test_unit_band_gains_pass_the_input_and_the_floor_bounds_zero_gains():
    x = np.random.default_rng(4).standard_normal(4000)
    hops = len(bg.analyse(x))
    np.testing.assert_allclose(bg.apply_band_gains(x, np.ones((hops, 32))), x, atol=1e-12)
    floored = bg.apply_band_gains(x, np.zeros((hops, 32)), strength=0.7)
    np.testing.assert_allclose(floored, x * 10 ** (-21 / 20), atol=1e-12)


def test_the_oracle_of_clean_speech_alone_is_unit_gain():
    x = np.random.default_rng(5).standard_normal(4000)
    gains = bg.oracle_band_gains(x, x)
    assert gains.shape == (len(bg.analyse(x)), 32)
    np.testing.assert_allclose(gains[bg.PARTIAL_FRAMES:-2], 1.0, atol=1e-12)


def test_the_oracle_is_the_square_root_of_the_speech_share():
    # Speech at half the mixture's amplitude has a quarter of its power in every band: √(1/4) = 1/2.
    x = np.random.default_rng(7).standard_normal(4000)
    np.testing.assert_allclose(bg.oracle_band_gains(2 * x, x)[bg.PARTIAL_FRAMES:-2], 0.5, rtol=1e-9)


def test_the_gain_rule_matches_hand_computed_values():
    power = np.array([[101.0, 1.0, 1e-20]])
    noise = np.array([[1.0, 1.0, 1.0]])
    gains = bg.decision_directed_gains(power, noise, strength=0.7)
    # First frame: ξ = max(γ − 1, ξmin). γ = 101: ξ = 100 (20 dB), α = 1, the Wiener gain 100/101. γ = 1 and
    # γ ≈ 0: ξ = 10^−2.5, α = its maximum 1 + 0.36·0.7, and 1 − α/(1 + ξ) < 0 gives the floor, −21 dB.
    np.testing.assert_allclose(gains[0], [100 / 101, 10 ** (-21 / 20), 10 ** (-21 / 20)], rtol=1e-12)
    assert np.all(bg.decision_directed_gains(np.abs(power) + 1, noise, strength=0.0) == 1.0)


@pytest.mark.parametrize("build", ["debug", "release"])
def test_the_mcra_path_matches_hearalert_enhance(build, tmp_path):
    hearalert = TOOLS.parent / ".build" / build / "hearalert"
    if not hearalert.exists():
        pytest.skip(f"no {build} build of hearalert")
    rng = np.random.default_rng(6)
    t = np.arange(3 * 16000) / 16000
    x = 0.05 * rng.standard_normal(len(t)) + 0.2 * np.sin(2 * np.pi * 440 * t) * (np.sin(2 * np.pi * t) > 0)
    sf.write(str(tmp_path / "in.wav"), x.astype(np.float32), 16000, subtype="FLOAT")
    subprocess.run([str(hearalert), "enhance", str(tmp_path / "in.wav"), str(tmp_path / "out.wav"), "--mode",
                    "low-latency", "--noise-estimator", "mcra"], check=True, capture_output=True)
    host = sf.read(str(tmp_path / "out.wav"), dtype="float64")[0]
    ours = bg.enhance_mcra(x.astype(np.float32).astype(np.float64))
    assert 10 * np.log10(np.sum((host - ours) ** 2) / np.sum(host ** 2)) < -60


@pytest.fixture(scope="module")
def small_set(tmp_path_factory) -> Path:
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed")
    out = tmp_path_factory.mktemp("band-gain-set")
    se.make_set(out, seed=5, files_per_condition=1, seconds=3.0, snrs=[0.0], noises=["pink", "babble"])
    return out


def test_scoring_reports_the_oracle_above_the_input(small_set, tmp_path):
    assert bg.main(["score", "--corpus", str(small_set), "--out", str(tmp_path / "report.md")]) == 0
    rows = {line.split(" | ")[2]: line for line in (tmp_path / "report.md").read_text().splitlines()
            if line.startswith("| all | all |")}
    assert set(rows) == {"unprocessed", "mcra + gain rule (numpy)", "oracle band gain", "oracle band gain, smoothed"}
    improvement = float(rows["oracle band gain"].split(" | ")[4].split("(")[1].rstrip(")"))
    assert improvement > 3   # dB of SNR over the input: the oracle removes noise


def test_scoring_refuses_a_pattern_that_matches_nothing(small_set):
    with pytest.raises(SystemExit):
        bg.main(["score", "--corpus", str(small_set), "--files", "nothing*"])
