"""The learned noise estimate's research side: its numpy definition (tools/noise_estimator.py) against direct
computations, the exported file in the C core against PyTorch, and tools/train_noise_estimator.py end to end on
a tiny synthetic catalogue (a few steps: CI is CPU-only)."""

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import soxr
import torch

import alertnet_ref
import export
import features
import noise_estimator as ne
import train_noise_estimator as tne
from fetch_alert_recordings import SOURCES_COLUMNS
from test_alertnet_parity import alertnet, run_c  # noqa: F401  (alertnet is a fixture)

BUNDLED = Path(__file__).resolve().parents[2] / "models" / "noise.safetensors"


def test_smoothing_is_the_first_order_recursion_started_at_the_first_value():
    values = np.random.default_rng(1).random((50, 3))
    expected = [values[0]]
    for row in values[1:]:
        expected.append(0.9 * expected[-1] + 0.1 * row)
    np.testing.assert_allclose(ne.smooth(values, 0.9), np.array(expected), rtol=1e-12)


@pytest.mark.parametrize("block_frames,blocks", [(4, 3), (5, 1), (1, 4)])
def test_block_minimum_is_the_minimum_since_the_start_of_the_oldest_block_kept(block_frames, blocks):
    values = np.random.default_rng(2).random((37, 2))
    found = ne.block_minimum(values, block_frames, blocks)
    for t in range(len(values)):
        first = max(0, (t // block_frames - (blocks - 1)) * block_frames)
        np.testing.assert_array_equal(found[t], values[first:t + 1].min(axis=0))


def test_windows_hold_the_recent_frames_oldest_first_then_the_smoothed_power_minimum_and_mcra():
    rows = {name: np.arange(6)[:, None] * np.ones((1, 2)) + offset
            for name, offset in (("energy", 0), ("smoothed", 100), ("minimum", 200), ("mcra", 300))}
    found = ne.windows(rows, 3)
    assert found.shape == (6, 6, 2)
    np.testing.assert_array_equal(found[0, :, 0], [0, 0, 0, 100, 200, 300])   # before the first frame: copies of it
    np.testing.assert_array_equal(found[4, :, 1], [2, 3, 4, 104, 204, 304])


def test_targets_are_one_for_noise_alone_and_small_where_speech_dominates():
    rng = np.random.default_rng(3)
    noise = rng.standard_normal(8000) * 0.01
    filterbank = features.mel_filterbank(ne.FEATURES)
    spec_input = ne.default_input()
    np.testing.assert_allclose(ne.targets(np.zeros(8000), noise, spec_input, filterbank), 1.0)
    tone = 0.5 * np.sin(2 * np.pi * 1000 * np.arange(8000) / ne.SAMPLE_RATE)
    found = ne.targets(tone, noise, spec_input, filterbank)
    band = int(np.argmax(filterbank[:, 16]))   # bin 16 = 1 kHz at 256 points
    assert found[20:, band].max() < 0.01 and found[20:, 0].min() > 0.5


def test_band_values_hold_exactly_at_each_band_centre():
    filterbank = features.mel_filterbank(ne.FEATURES)
    centres = ne.band_centres(filterbank)
    assert np.all(np.diff(centres) > 0)
    fractions = np.linspace(0.1, 0.9, len(centres))
    found = ne.interpolate(fractions, centres, filterbank.shape[1])[0]
    exact = [i for i, c in enumerate(centres) if float(c).is_integer()]
    for band in exact:
        assert found[int(centres[band])] == pytest.approx(fractions[band])
    assert found[0] == fractions[0] and found[-1] == fractions[-1]


def test_folded_normalisation_in_the_c_core_matches_pytorch_on_standardised_input(alertnet, tmp_path):  # noqa: F811
    torch.manual_seed(4)
    rng = np.random.default_rng(4)
    rows, bands = 11, 32
    model = tne.network(rows, bands, hidden=16).eval()
    mean = rng.normal(-40, 10, (rows, bands))
    std = rng.uniform(5, 15, (rows, bands))
    windows = [rng.normal(-40, 15, (rows, bands)).astype(np.float32) for _ in range(4)]
    with torch.no_grad():
        expected = [model(torch.as_tensor(((w - mean) / std)[None, None], dtype=torch.float32)).numpy()[0]
                    for w in windows]
    tne.fold_normalisation(model, mean, std)
    path = tmp_path / "noise.safetensors"
    export.export_torch(path, model, ne.FEATURES, [f"band_{b:02d}" for b in range(bands)], [0.5] * bands,
                        {"frames": rows, "step": 4}, "test", "test",
                        {"task": ne.TASK, "noise_input": ne.default_input()})
    for found, reference in zip(run_c(alertnet, path, windows), expected):
        np.testing.assert_allclose(found, reference, atol=1e-4, rtol=0)


@pytest.mark.skipif(not BUNDLED.exists(), reason="no bundled models/noise.safetensors")
def test_the_bundled_file_runs_alike_in_the_c_core_and_the_numpy_reference(alertnet):  # noqa: F811
    model = alertnet_ref.load(BUNDLED)
    assert model.metadata["task"] == ne.TASK
    spec_input = ne.read_input_metadata(model)
    rng = np.random.default_rng(5)
    signal = rng.standard_normal(16000) * 0.01 + 0.05 * np.sin(2 * np.pi * 440 * np.arange(16000) / 16000)
    inputs = ne.windows(ne.band_rows(ne.periodograms(signal), spec_input, features.mel_filterbank(model.features)),
                        spec_input["recent_frames"])[::25].astype(np.float32)
    for window, found in zip(inputs, run_c(alertnet, BUNDLED, list(inputs))):
        np.testing.assert_allclose(found, alertnet_ref.forward(model, window), atol=1e-4, rtol=0)


def test_the_reference_loader_refuses_an_unknown_task(tmp_path):
    path = tmp_path / "noise.safetensors"
    model = tne.network(11, 32, hidden=4).eval()
    export.export_torch(path, model, ne.FEATURES, [f"band_{b:02d}" for b in range(32)], [0.5] * 32,
                        {"frames": 11, "step": 4}, "test", "test", {"task": ne.TASK, "noise_input": ne.default_input()})
    data = path.read_bytes()
    assert b'"task":"noise_estimation"' in data
    with pytest.raises(alertnet_ref.ModelError, match="metadata task 'noise_estimatiom' is not one of"):
        alertnet_ref.validate(*alertnet_ref.parse(data.replace(b"noise_estimation", b"noise_estimatiom")))


def _catalogue(root: Path) -> None:
    """Two wideband speech sources and two noise sources of role train, a telephone-band speech source of role
    train (stored at 8 kHz: nothing above 4 kHz), and a dev recording that must never be used."""
    rng = np.random.default_rng(6)
    t = np.arange(8000) / ne.SAMPLE_RATE
    entries = []
    for index in range(6):
        kind, source = (("speech:en", f"talkers{index % 2}") if index < 4 else ("ambient:street", f"street{index}"))
        if kind.startswith("speech"):   # voiced tone and a hiss of consonants, on and off
            audio = (np.sin(2 * np.pi * (120 + 20 * index) * t) + 0.1 * rng.standard_normal(len(t))) \
                * (np.sin(2 * np.pi * 3 * t) > 0)
        else:
            audio = rng.standard_normal(len(t))
        entries.append((f"train/{kind.replace(':', '_')}_{index}.wav", "train", kind, source, audio))
    phone = soxr.resample(rng.standard_normal(len(t) // 2), ne.SAMPLE_RATE // 2, ne.SAMPLE_RATE, quality="HQ")
    entries.append(("train/speech_phone.wav", "train", "speech:es", "phone", phone))
    entries.append(("dev/speech_dev.wav", "dev", "speech:en", "devsource", np.sin(2 * np.pi * 200 * t)))
    with open(root / "index.tsv", "w", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["path", "role", "kind", "source_type", "source", "version", "path_inside", "licence",
                         "sha256", "seconds"])
        for path, role, kind, source, audio in entries:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            sf.write(str(root / path), (0.1 * audio).astype(np.float32), ne.SAMPLE_RATE)
            source_type = "git" if source == "talkers1" else "deb"   # a repository: SOURCES.tsv says git:talkers1
            writer.writerow([path, role, kind, source_type, source, "1", f"inside/{Path(path).name}", "CC0", "-",
                             "0.5"])


def _train(root: Path, out: Path, sources: Path, *more: str) -> int:
    return tne.main(["--corpus", str(root), "--out", str(out), "--sources", str(sources), "--mixtures", "3",
                     "--val-mixtures", "1", "--seconds", "1", "--steps", "3", "--batch", "16", "--hidden", "8",
                     "--val-sources", "0.4", "--seed", "3", *more])


def test_training_writes_a_noise_estimator_and_its_sources_deterministically(tmp_path, capsys):
    _catalogue(tmp_path)
    sources = tmp_path / "ENHANCEMENT_SOURCES.tsv"
    other = "x\t1\tinside/x.wav\tCC0\tmusic\tenhancer-test\n"
    sources.write_text("\t".join(SOURCES_COLUMNS) + "\n" + other)
    assert _train(tmp_path, tmp_path / "a.safetensors", sources) == 0
    assert "step 3/3" in capsys.readouterr().out
    model = alertnet_ref.load(tmp_path / "a.safetensors")
    assert model.metadata["task"] == "noise_estimation" and model.step == 4
    assert json.loads(model.metadata["noise_input"])["recent_frames"] == 8
    lines = sources.read_text().splitlines()
    assert lines[0] == "\t".join(SOURCES_COLUMNS) and other.strip() in lines
    mine = [line.split("\t") for line in lines[1:] if line.endswith("enhancer-train")]
    assert mine and lines[1:] == sorted(lines[1:])
    assert all(row[0] != "devsource" for row in mine)   # only role train
    assert all(row[0] != "phone" for row in mine)       # only wideband speech (default --min-speech-bandwidth-hz)
    names = {row[0] for row in mine}
    assert "git:talkers1" in names and "talkers1" not in names   # sources named as models/SOURCES.tsv names them
    first = ((tmp_path / "a.safetensors").read_bytes(), sources.read_text())
    assert _train(tmp_path, tmp_path / "a.safetensors", sources) == 0
    assert ((tmp_path / "a.safetensors").read_bytes(), sources.read_text()) == first


def test_telephone_band_speech_is_drawn_only_when_the_bandwidth_filter_is_off(tmp_path, capsys):
    _catalogue(tmp_path)
    sources = tmp_path / "ENHANCEMENT_SOURCES.tsv"
    assert _train(tmp_path, tmp_path / "a.safetensors", sources, "--min-speech-bandwidth-hz", "0") == 0
    assert "speech: 5 train-role recordings with a bandwidth of at least 0 Hz" in capsys.readouterr().out
    assert "phone" in {line.split("\t")[0] for line in sources.read_text().splitlines()}
    assert _train(tmp_path, tmp_path / "a.safetensors", sources) == 0
    assert "speech: 4 train-role recordings with a bandwidth of at least 7000 Hz" in capsys.readouterr().out
    assert "phone" not in {line.split("\t")[0] for line in sources.read_text().splitlines()}
    assert _train(tmp_path, tmp_path / "a.safetensors", sources, "--min-speech-bandwidth-hz", "9000") == 2
    assert "found 0 speech (bandwidth at least 9000 Hz)" in capsys.readouterr().err


def test_a_catalogue_without_noise_is_refused_in_one_line(tmp_path, capsys):
    (tmp_path / "index.tsv").write_text("path\trole\tkind\tsource_type\tsource\tversion\tpath_inside\tlicence"
                                        "\tsha256\tseconds\n")
    assert _train(tmp_path, tmp_path / "a.safetensors", tmp_path / "s.tsv") == 2
    assert "needs train-role speech" in capsys.readouterr().err


def test_a_malformed_catalogue_line_is_named_in_one_line(tmp_path, capsys):
    _catalogue(tmp_path)
    with open(tmp_path / "index.tsv", "a") as handle:
        handle.write("train/cut.wav\ttrain\tspeech:en\n")
    assert _train(tmp_path, tmp_path / "a.safetensors", tmp_path / "s.tsv") == 2
    assert "index.tsv:10: expected 10 fields, found 3" in capsys.readouterr().err   # header, 8 rows, then it
