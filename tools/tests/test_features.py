"""tools/features.py against librosa (an independent reference) and against `hearalert features` (the host).

Tolerance, as in the Swift parity tests (Tests/HearAlertKitTests/DSP/FeatureParityTests.swift), in natural-log
units of the feature's underlying value v (power, magnitude or Mel band):
    |ln v_a - ln v_b| <= 1e-3 + 4 * p * 2**-24 * (v_max / v)**(1/p)
1e-3 is the target (0.0043 dB). The second term is float32 rounding (the host's FFT, and the float32 window both
the host and this module use) relative to the frame's strongest value v_max; it only matters for values more
than ~80 dB below their frame's peak, i.e. near log_floor in pure tones.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import librosa
import numpy as np
import pytest
import scipy.signal
import soundfile

import features

TOOLS = Path(__file__).resolve().parents[1]
ROOT = TOOLS.parent

CLIPS = ROOT / "Tests" / "HearAlertKitTests" / "Fixtures" / "features"
HOST_OUTPUTS = Path(__file__).resolve().parent / "fixtures"


def natural_log(values, spec):
    """Undo normalisation and the log: natural log of the underlying value, float64."""
    values = np.asarray(values, dtype=np.float64)
    if spec["normalization"] is not None:
        values = values * spec["normalization"]["std"].astype(np.float64) + spec["normalization"]["mean"]
    return values * np.log(spec["log_base"]) / spec["log_multiplier"]


def assert_features_close(actual, expected, spec):
    assert actual.shape == expected.shape
    assert actual.dtype == np.float32 and np.all(np.isfinite(actual))
    got, want = natural_log(actual, spec), natural_log(expected, spec)
    peak = want.max(axis=1, keepdims=True)
    rounding = 4 * spec["power"] * 2.0 ** -24 * np.exp((peak - want) / spec["power"])
    error = np.abs(got - want)
    excess = error - (1e-3 + rounding)
    worst = np.unravel_index(np.argmax(excess), excess.shape)
    assert excess.max() <= 0, f"error {error[worst]:.3g} at frame/bin {worst}, allowance {1e-3 + rounding[worst]:.3g}"
    well_conditioned = rounding < 1e-4
    assert error[well_conditioned].mean() < 2e-5


def librosa_features(samples, spec):
    window = spec["window"]
    if window == "sqrt_hann":
        window = np.sqrt(scipy.signal.get_window("hann", spec["win_length"], fftbins=True))
    stft = librosa.stft(np.asarray(samples, dtype=np.float64), n_fft=spec["n_fft"], hop_length=spec["hop_length"],
                        win_length=spec["win_length"], window=window, center=False)
    values = np.abs(stft) ** spec["power"]
    if spec["kind"] == "log_mel":
        bank = librosa.filters.mel(sr=spec["sample_rate"], n_fft=spec["n_fft"], n_mels=spec["n_mels"],
                                   fmin=spec["fmin"], fmax=spec["fmax"], htk=spec["mel_scale"] == "htk",
                                   norm="slaney" if spec["mel_norm"] == "slaney" else None)
        values = bank.astype(np.float64) @ values
    logs = spec["log_multiplier"] * np.log(np.maximum(values, spec["log_floor"])) / np.log(spec["log_base"])
    logs = logs.T
    if spec["normalization"] is not None:
        logs = (logs - spec["normalization"]["mean"]) / spec["normalization"]["std"]
    return logs.astype(np.float32)


def spec_variants():
    """Specs beyond the committed fixtures, including hop > n_fft and odd sizes."""
    default = features.default_spec()
    return {
        "default": default,
        "hop160_win400": {**default, "win_length": 400, "hop_length": 160},
        "logpower_hamming": {**default, "kind": "log_power", "window": "hamming", "log_base": np.e,
                             "log_multiplier": 1.0},
        "htk_22k_power1": {**default, "sample_rate": 22050, "n_fft": 1024, "win_length": 882, "hop_length": 441,
                           "mel_scale": "htk", "mel_norm": "none", "power": 1.0, "n_mels": 80, "fmin": 20.0,
                           "fmax": 11025.0, "window": "sqrt_hann"},
        "hop_beyond_frame": {**default, "n_fft": 256, "win_length": 200, "hop_length": 300, "n_mels": 32},
    }


def test_default_spec_is_the_default_models():
    spec = features.default_spec()
    assert spec == {
        "sample_rate": 16000, "n_fft": 512, "win_length": 512, "hop_length": 256, "window": "hann",
        "kind": "log_mel", "n_mels": 64, "fmin": 50.0, "fmax": 8000.0, "mel_scale": "slaney",
        "mel_norm": "slaney", "power": 2.0, "log_base": 10.0, "log_multiplier": 10.0, "log_floor": 1e-10,
        "normalization": None,
    }
    spec["n_fft"] = 1
    assert features.default_spec()["n_fft"] == 512, "default_spec must return a copy"


@pytest.mark.parametrize("name", ["default", "logpower", "htk_norm"])
def test_committed_specs_load(name):
    spec = features.load_spec(CLIPS / f"spec_{name}.json")
    assert spec["kind"] in ("log_mel", "log_power")


@pytest.mark.parametrize("key, value, message", [
    ("n_mel", 64, 'unknown key "n_mel"'),
    ("n_fft", "512", '"n_fft" must be an integer'),
    ("n_fft", 512.5, '"n_fft" must be an integer'),
    ("n_fft", 512.0, '"n_fft" must be an integer'),
    ("sample_rate", 16000.0, '"sample_rate" must be an integer'),
    ("n_mels", True, '"n_mels" must be an integer'),
    ("fmin", None, '"fmin" must be a number'),
    ("power", True, '"power" must be a number'),
    ("window", "blackman", '"window" "blackman" is not one of hann, sqrt_hann, hamming'),
    ("normalization", {"mean": [], "sd": []}, 'unknown key "normalization.sd"'),
    ("normalization", {"mean": []}, 'missing key "normalization.std"'),
    ("normalization", [1, 2], '"normalization" must be null or'),
    ("sample_rate", 0, '"sample_rate" must be 1...1000000 Hz'),
    ("n_fft", 511, '"n_fft" must be an even number'),
    ("win_length", 513, '"win_length" must be 1...n_fft'),
    ("hop_length", 0, '"hop_length" must be at least 1'),
    ("n_mels", 0, '"n_mels" must be 1...4096'),
    ("fmin", -1, '"fmin" must be a finite frequency'),
    ("fmax", 8001, '"fmax" must be above fmin'),
    ("power", 0, '"power" must be a finite number > 0'),
    ("log_base", 1, '"log_base" must be finite, > 0 and not 1'),
    ("log_multiplier", 0, '"log_multiplier" must be finite and not 0'),
    ("log_floor", 0, '"log_floor" must be a finite number > 0'),
    ("normalization", {"mean": [0], "std": [1]}, "mean must have 64 values"),
    ("normalization", {"mean": [0] * 64, "std": [1] * 63 + [0]}, "std must be finite numbers > 0"),
])
def test_refuses_what_swift_refuses(key, value, message):
    spec = features.default_spec()
    spec[key] = value
    with pytest.raises(features.FeatureSpecError, match=message.replace("(", r"\(").replace(".", r"\.")):
        features.load_spec(spec)


@pytest.mark.parametrize("key", ["sample_rate", "n_fft", "win_length", "hop_length", "n_mels"])
@pytest.mark.parametrize("spelling", ["{}.0", "{}e0", "true"])
def test_integer_keys_must_be_json_integers_in_a_file(tmp_path, key, spelling):
    """As the Swift host (FeatureSpecValidationTests) and the C core: 512.0, 5e2 and true are no JSON integers, so a
    spec file writing a count that way is refused, naming the key; 512 is fine."""
    path = tmp_path / "spec.json"
    text = json.dumps(features.default_spec())
    path.write_text(text)
    assert features.load_spec(path)[key] == features.default_spec()[key]
    literal = f'"{key}": {features.default_spec()[key]}'
    assert literal in text
    path.write_text(text.replace(literal, f'"{key}": ' + spelling.format(features.default_spec()[key])))
    with pytest.raises(features.FeatureSpecError, match=re.escape(f'{path}: feature spec: "{key}" must be an integer')):
        features.load_spec(path)


def test_integer_spelling_is_a_type_error_in_key_order():
    """Types are checked key by key before any range, as in Swift: n_mels 64.0 is named although hop_length 0 is
    out of range, and sample_rate "16000" (an earlier key) before it."""
    spec = {**features.default_spec(), "n_mels": 64.0, "hop_length": 0}
    with pytest.raises(features.FeatureSpecError, match='"n_mels" must be an integer'):
        features.load_spec(spec)
    with pytest.raises(features.FeatureSpecError, match='"sample_rate" must be an integer'):
        features.load_spec({**spec, "sample_rate": "16000"})


def test_missing_keys_are_errors_except_normalization():
    spec = features.default_spec()
    del spec["hop_length"]
    with pytest.raises(features.FeatureSpecError, match='missing key "hop_length"'):
        features.load_spec(spec)
    spec = features.default_spec()
    del spec["normalization"]
    assert features.load_spec(spec)["normalization"] is None


def test_mel_parameters_do_not_matter_for_log_power():
    features.load_spec({**features.default_spec(), "kind": "log_power", "n_mels": 0, "fmax": 1e9})


def test_file_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**features.default_spec(), "hop": 160}))
    with pytest.raises(features.FeatureSpecError, match=f'{bad}: feature spec: unknown key "hop"'):
        features.load_spec(bad)
    with pytest.raises(features.FeatureSpecError, match="cannot read"):
        features.load_spec(tmp_path / "missing.json")
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    with pytest.raises(features.FeatureSpecError, match="not valid JSON"):
        features.load_spec(garbage)


@pytest.mark.parametrize("name, spec", [(n, s) for n, s in spec_variants().items() if s["kind"] == "log_mel"])
def test_filterbank_matches_librosa(name, spec):
    ours = features.mel_filterbank(spec)
    reference = librosa.filters.mel(sr=spec["sample_rate"], n_fft=spec["n_fft"], n_mels=spec["n_mels"],
                                    fmin=spec["fmin"], fmax=spec["fmax"], htk=spec["mel_scale"] == "htk",
                                    norm="slaney" if spec["mel_norm"] == "slaney" else None)
    assert ours.dtype == np.float32 and ours.shape == reference.shape
    np.testing.assert_allclose(ours, reference, rtol=0, atol=2e-7 * reference.max())


def make_signals():
    rng = np.random.default_rng(11)
    t = np.arange(24000) / 16000
    return {
        "white": 0.2 * rng.standard_normal(24000),
        "tone": 0.5 * np.sin(2 * np.pi * 997.0 * t),
        "sweep": 0.4 * scipy.signal.chirp(t, f0=60.0, t1=t[-1], f1=7000.0, method="logarithmic"),
        "silence_then_noise": np.concatenate([np.zeros(8000), 0.05 * rng.standard_normal(16000)]),
    }




@pytest.mark.parametrize("name, spec", list(spec_variants().items()))
@pytest.mark.parametrize("signal", ["white", "tone", "sweep", "silence_then_noise"])
def test_compute_matches_librosa(name, spec, signal):
    samples = make_signals()[signal]
    spec = features.load_spec(spec)
    ours = features.compute(samples, spec)
    assert ours.shape[0] == features.frame_count(len(samples), spec)
    assert_features_close(ours, librosa_features(samples, spec), spec)


def test_silence_gives_the_floor_not_minus_infinity():
    spec = features.default_spec()
    result = features.compute(np.zeros(4000), spec)
    np.testing.assert_array_equal(result, np.float32(-100.0))


def test_short_input_gives_no_frames():
    spec = features.default_spec()
    assert features.compute(np.zeros(511), spec).shape == (0, 64)
    assert features.frame_count(512, spec) == 1 and features.frame_count(767, spec) == 1
    assert features.frame_count(768, spec) == 2


def test_chunking_and_batches_do_not_change_results():
    spec = features.load_spec({**features.default_spec(), "hop_length": 160})
    rng = np.random.default_rng(3)
    clips = 0.1 * rng.standard_normal((3, 9000))
    whole = [features.compute(clip, spec) for clip in clips]
    np.testing.assert_array_equal(features.compute(clips[0], spec, chunk_frames=7), whole[0])
    batch = features.compute_batch(clips, spec)
    assert batch.shape == (3, whole[0].shape[0], 64) and batch.dtype == np.float32
    for index in range(3):
        np.testing.assert_array_equal(batch[index], whole[index])


HOST_CASES = [
    ("speech", "default"), ("speech", "htk_norm"), ("speech", "logpower"),
    ("sweep", "default"), ("sweep", "htk_norm"), ("pink", "default"), ("pink", "htk_norm"),
]


@pytest.mark.parametrize("clip, spec_name", HOST_CASES)
def test_compute_matches_hearalert(clip, spec_name):
    """Outputs of `hearalert features` (tools/tests/fixtures/make_hearalert_fixtures.sh) on the parity clips."""
    spec = features.load_spec(CLIPS / f"spec_{spec_name}.json")
    samples, rate = soundfile.read(CLIPS / f"{clip}.wav", dtype="float64")
    assert rate == spec["sample_rate"]
    host = np.load(HOST_OUTPUTS / f"{clip}.{spec_name}.hearalert.npy")
    assert_features_close(host, features.compute(samples, spec), spec)


def test_hearalert_without_spec_uses_the_default():
    samples, _ = soundfile.read(CLIPS / "tone440.wav", dtype="float64")
    host = np.load(HOST_OUTPUTS / "tone440.nospec.hearalert.npy")
    spec = features.default_spec()
    assert_features_close(host, features.compute(samples, spec), features.load_spec(spec))


def hearalert_binary():
    for configuration in ("debug", "release"):
        path = ROOT / ".build" / configuration / "hearalert"
        if path.exists():
            return path
    pytest.skip("hearalert is not built (tools/test.sh builds it before running pytest)")


def test_hearalert_cli_resamples_and_downmixes(tmp_path):
    """End to end: a 44.1 kHz stereo FLAC through `hearalert features` matches features.py on the 16 kHz mono
    original, to resampler tolerance (as in AudioFormatConsistencyTests: bands centred below 7 kHz, within
    40 dB of their frame's peak, in frames within 40 dB of the loudest)."""
    samples, rate = soundfile.read(CLIPS / "speech.wav", dtype="float64")
    upsampled = librosa.resample(samples, orig_sr=rate, target_sr=44100, res_type="soxr_vhq")
    stereo = np.stack([upsampled, upsampled], axis=1)
    source = tmp_path / "speech44.flac"
    soundfile.write(source, stereo, 44100, subtype="PCM_24")
    output = tmp_path / "out.npy"
    done = subprocess.run([hearalert_binary(), "features", source, "-o", output], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    host = np.load(output)
    reference = features.compute(samples, features.default_spec())
    assert host.shape == reference.shape and host.dtype == np.float32
    bank = features.mel_filterbank(features.default_spec())
    centres = (bank * np.fft.rfftfreq(512, 1 / 16000)).sum(axis=1) / bank.sum(axis=1)
    peak = reference.max(axis=1, keepdims=True)
    mask = (centres[None, :] < 7000) & (reference >= peak - 40) & (peak >= reference.max() - 40)
    difference = np.abs(host - reference)[mask]
    assert difference.mean() < 0.01 and difference.max() < 0.2, (difference.mean(), difference.max())


@pytest.mark.parametrize("arguments, message", [
    (["missing.wav"], "missing.wav: no such file"),
    (["{clips}/speech.wav", "--spec", "{clips}/manifest.json"], 'unknown keys'),
])
def test_hearalert_cli_errors_are_one_line(tmp_path, arguments, message):
    arguments = [a.format(clips=CLIPS) for a in arguments]
    done = subprocess.run([hearalert_binary(), "features", *arguments, "-o", tmp_path / "x.npy"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert not (tmp_path / "x.npy").exists()


def test_numpy_scalars_are_numbers_but_booleans_are_not():
    spec = {**features.default_spec(), "n_fft": np.int64(512), "fmin": np.float32(50.0)}
    loaded = features.load_spec(spec)
    assert loaded["n_fft"] == 512 and type(loaded["n_fft"]) is int and type(loaded["fmin"]) is float
    for value in (np.bool_(True), np.float64(512.0)):
        with pytest.raises(features.FeatureSpecError, match='"n_fft" must be an integer'):
            features.load_spec({**features.default_spec(), "n_fft": value})


@pytest.mark.parametrize("arguments, message", [
    (["/nonexistent/clip.wav"], "/nonexistent/clip.wav: cannot read audio: "),
    ([str(CLIPS / "pink.wav"), "-o", "/nonexistent/out.npy"], "/nonexistent/out.npy: cannot write: "),
])
def test_script_errors_are_one_line(arguments, message):
    result = subprocess.run([sys.executable, str(TOOLS / "features.py"), *arguments], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1, result.stderr
