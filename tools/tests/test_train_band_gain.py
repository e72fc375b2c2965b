"""tools/train_band_gain.py: the recurrent band-gain network is causal and streams, its input rows match a direct
loop computation, its loss matches hand-computed values, and a short training run on synthetic audio lowers the
loss and writes a network that band_gain_study.py scores."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

import band_gain_study as bg
import features
import noise_estimator as ne
import train_band_gain as tbg
from test_band_gain_study import small_set  # noqa: F401  (a fixture)
from test_noise_estimator import _catalogue


def _network(inputs=20, hidden=6, layers=2, seed=0) -> tbg.BandGainNet:
    torch.manual_seed(seed)
    model = tbg.BandGainNet(inputs, hidden, layers)
    with torch.no_grad():
        model.shift.uniform_(-50, 0)
        model.scale.uniform_(0.05, 0.2)
    return model.eval()


def test_a_gain_does_not_change_when_later_hops_change():
    model = _network()
    x = torch.randn(2, 40, 20) * 10 - 30
    changed = x.clone()
    changed[:, 25:] = torch.randn(2, 15, 20) * 10
    with torch.no_grad():
        before, after = model(x)[0], model(changed)[0]
    assert torch.equal(before[:, :25], after[:, :25])
    assert not torch.allclose(before[:, 25:], after[:, 25:])   # the change does reach the later hops


def test_hop_by_hop_with_the_state_carried_equals_the_whole_sequence():
    model = _network(layers=3)
    x = torch.randn(1, 30, 20) * 10 - 30
    with torch.no_grad():
        whole = model(x)[0]
        state, hops = None, []
        for t in range(30):
            gains, state = model(x[:, t:t + 1], state)
            hops.append(gains)
    torch.testing.assert_close(torch.cat(hops, dim=1), whole, rtol=0, atol=1e-6)


def test_folding_the_normalisation_into_the_first_gru_keeps_every_gain():
    model = _network()
    x = torch.randn(3, 25, 20) * 10 - 30
    with torch.no_grad():
        before = model(x)[0]
        model.fold_normalisation()
        after = model(x)[0]
    assert torch.all(model.shift == 0) and torch.all(model.scale == 1)
    torch.testing.assert_close(after, before, rtol=0, atol=1e-5)


def test_weights_and_cost_are_counted_as_alertnet_counts_them():
    model = tbg.BandGainNet(128, 48, 2)
    # GRU: 3H(I + H) weights and 2·3H biases; dense H·32 + 32.
    assert model.weight_count() == 3 * 48 * (128 + 48) + 6 * 48 + 3 * 48 * 96 + 6 * 48 + 48 * 32 + 32
    gru_flops = [2 * 3 * 48 * (128 + 48) + 6 * 48 + 14 * 48, 2 * 3 * 48 * 96 + 6 * 48 + 14 * 48]
    assert model.mflop_per_hop() == pytest.approx((sum(gru_flops) + 2 * 48 * 32 + 32 + 3 * 32) / 1e6)


def _direct_rows(samples: np.ndarray) -> dict[str, np.ndarray]:
    """The input rows by explicit loops over hops: frames cut by hand, smoothing, minimum and delta as written in
    the definition (train_band_gain's docstring)."""
    n_fft, hop = ne.N_FFT, ne.HOP
    x = np.concatenate([np.zeros(n_fft - hop), samples, np.zeros(2 * hop)])
    hops = (len(samples) + 2 * hop) // hop
    window = ne.analysis_window()
    mel = features.mel_filterbank(ne.FEATURES).astype(np.float64)
    alpha = 0.8 ** ((hop / ne.SAMPLE_RATE) / 0.010)
    power = np.empty((hops, n_fft // 2 + 1))
    for t in range(hops):
        spectrum = np.fft.rfft(x[t * hop:t * hop + n_fft] * window)
        power[t] = np.abs(spectrum) ** 2
    energy = power @ mel.T
    smoothed = np.empty_like(energy)
    minimum = np.empty_like(energy)
    for t in range(hops):
        smoothed[t] = energy[0] if t == 0 else alpha * smoothed[t - 1] + (1 - alpha) * energy[t]
        oldest_block = max(0, t // 32 - 7)
        minimum[t] = smoothed[oldest_block * 32:t + 1].min(axis=0)
    mcra = np.full_like(power, ne.SMALLEST_POWER)
    mcra[3:] = ne.mcra(power[3:])   # the first whole frame: 256 samples = 4 hops, three frames hold leading zeros
    gains = bg.decision_directed_gains(power, mcra)
    band_gain = np.empty_like(energy)
    for t in range(hops):
        for b in range(mel.shape[0]):
            band_gain[t, b] = sum(mel[b, k] * gains[t, k] ** 2 * power[t, k] for k in range(power.shape[1])) \
                / max(sum(mel[b, k] * power[t, k] for k in range(power.shape[1])), 1e-10)
    db = lambda v: 10 * np.log10(np.maximum(v, 1e-10))  # noqa: E731
    level = db(energy)
    return {"energy": level, "delta": np.r_[np.zeros((1, level.shape[1])), level[1:] - level[:-1]],
            "smoothed": db(smoothed), "minimum": db(minimum), "mcra": db(mcra @ mel.T), "mcra_gain": db(band_gain),
            "voicing": _direct_voicing(samples)[0]}


def _direct_voicing(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the voicing row [hops, 32], the pitch lag per hop) by explicit loops, as the docstring defines them: for
    each hop the last 512 samples (zeros before the stream), every lag 40..256 scored by its normalised
    autocorrelation over the pairs inside them, the best lag's frame cut by hand, the band sums over the
    filterbank's weights one by one."""
    n_fft, hop, window_length = ne.N_FFT, ne.HOP, 512
    lead = 256 + n_fft
    x = np.concatenate([np.zeros(lead), samples, np.zeros(2 * hop)])
    hops = (len(samples) + 2 * hop) // hop
    window = ne.analysis_window()
    mel = features.mel_filterbank(ne.FEATURES).astype(np.float64)
    rows, lags = np.zeros((hops, mel.shape[0])), np.zeros(hops, dtype=int)
    for t in range(hops):
        end = lead + (t + 1) * hop
        recent = x[end - window_length:end]
        best, best_score = 40, -np.inf
        for lag in range(40, 257):
            a, b = recent[lag:], recent[:window_length - lag]
            energy = np.sqrt(np.dot(a, a) * np.dot(b, b))
            score = np.dot(a, b) / energy if energy > 0 else 0.0
            if score > best_score:
                best, best_score = lag, score
        lags[t] = best
        now = np.fft.rfft(x[end - n_fft:end] * window)
        then = np.fft.rfft(x[end - best - n_fft:end - best] * window)
        for band in range(mel.shape[0]):
            cross = sum(mel[band, k] * (now[k] * np.conj(then[k])).real for k in range(len(now)))
            norm = np.sqrt(sum(mel[band, k] * abs(now[k]) ** 2 for k in range(len(now)))
                           * sum(mel[band, k] * abs(then[k]) ** 2 for k in range(len(now))))
            rows[t, band] = cross / norm if norm > 1e-10 else 0.0
    return rows, lags


def _harmonic(seconds: float, f0: float, seed: int) -> np.ndarray:
    """Twenty harmonics of f0 with random phases, 1/k amplitudes."""
    t = np.arange(int(seconds * ne.SAMPLE_RATE)) / ne.SAMPLE_RATE
    phases = np.random.default_rng(seed).uniform(0, 2 * np.pi, 20)
    return 0.05 * sum(np.sin(2 * np.pi * f0 * k * t + phases[k - 1]) / k for k in range(1, 21))


def test_the_voicing_row_is_near_one_for_a_harmonic_signal_and_low_for_noise():
    harmonic = _harmonic(0.5, 173.0, 3)   # period 92.5 samples: the best lag is two periods, 185
    noise = 0.05 * np.random.default_rng(4).standard_normal(len(harmonic))
    mel = features.mel_filterbank(ne.FEATURES).T.astype(np.float64)
    settled = slice(512 // ne.HOP, len(harmonic) // ne.HOP)   # hops whose 32 ms window is all signal
    voiced, lags = tbg.voicing(harmonic, mel), tbg.pitch_lags(harmonic)
    direct, direct_lags = _direct_voicing(harmonic)
    np.testing.assert_array_equal(lags, direct_lags)
    np.testing.assert_allclose(voiced, direct, rtol=0, atol=1e-9)
    assert np.all(lags[settled] == 185)
    # bands up to the 20th harmonic (3.46 kHz, centre below it) carry the pitch
    below = ne.band_centres(mel.T) * ne.SAMPLE_RATE / ne.N_FFT < 3300
    assert voiced[settled][:, below].min() > 0.95
    unvoiced, direct = tbg.voicing(noise, mel), _direct_voicing(noise)[0]
    np.testing.assert_allclose(unvoiced, direct, rtol=0, atol=1e-9)
    assert abs(unvoiced[settled].mean()) < 0.3
    assert np.all(tbg.voicing(np.zeros(2000), mel) == 0)   # silence: no correlation, no division by zero


def test_the_input_rows_match_a_direct_computation():
    rng = np.random.default_rng(11)
    t = np.arange(int(1.5 * ne.SAMPLE_RATE)) / ne.SAMPLE_RATE   # 1.5 s: the minimum's eight 128 ms blocks turn over
    samples = 0.01 * rng.standard_normal(len(t)) * (1 + np.sin(2 * np.pi * 0.7 * t)) \
        + 0.1 * np.sin(2 * np.pi * 300 * t) * (np.sin(2 * np.pi * 2 * t) > 0)
    direct = _direct_rows(samples)
    ours = tbg.signal_features(samples, tbg.ROWS)
    assert ours.shape == (len(samples) // ne.HOP + 2, len(tbg.ROWS) * 32)
    for index, row in enumerate(tbg.ROWS):
        np.testing.assert_allclose(ours[:, 32 * index:32 * (index + 1)], direct[row], rtol=0, atol=1e-9,
                                   err_msg=row)
    level_free = tbg.signal_features(samples, ("posterior", "above_minimum"))
    np.testing.assert_allclose(level_free, np.concatenate([direct["energy"] - direct["mcra"],
                                                           direct["energy"] - direct["minimum"]], axis=1),
                               rtol=0, atol=1e-9)
    np.testing.assert_array_equal(tbg.select(ours, ("posterior", "above_minimum")), level_free)
    # --rows picks and orders rows from inputs built with all of them
    picked = tbg.select(ours, ("mcra", "energy"))
    np.testing.assert_allclose(picked, np.concatenate([direct["mcra"], direct["energy"]], axis=1), rtol=0, atol=1e-9)


def test_the_input_rows_of_a_hop_do_not_depend_on_later_samples():
    samples = np.random.default_rng(12).standard_normal(8000)
    whole = tbg.signal_features(samples, tbg.ROWS)
    prefix = tbg.signal_features(samples[:5120], tbg.ROWS)
    np.testing.assert_array_equal(prefix[:5120 // ne.HOP], whole[:5120 // ne.HOP])


def test_the_loss_is_rnnoises_with_hand_computed_values():
    gains = torch.tensor([[0.25, 1.0, 0.25]])
    target = torch.tensor([[1.0, 0.25, 0.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    # band 0: d = √0.25 − 1 = −0.5 (too low): 10·0.0625 + 0.25 + 0.01·(−ln 0.25); band 1: d = +0.5, BCE of a gain
    # of 1 against 0.25 is 0.75·100 (PyTorch clamps log 0 at −100); band 2 is masked.
    low = 0.625 + 0.25 + 0.01 * np.log(4)
    high = 0.625 + 0.25 + 0.01 * 75
    assert tbg.rnnoise_loss(gains, target, mask).item() == pytest.approx((low + high) / 2, rel=1e-5)
    assert tbg.rnnoise_loss(gains, target, mask, under_weight=3).item() == pytest.approx((3 * low + high) / 2,
                                                                                          rel=1e-5)


def test_the_compressed_loss_matches_hand_computed_values():
    gains = torch.tensor([[0.25, 1.0, 0.5]])
    target = torch.tensor([[1.0, 0.64, 0.1]])
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    level = torch.tensor([[4.0, 1.0, 9.0]])
    # c = 0.5: band 0 weight √4 = 2, error √0.25 − √1 = −0.5 (too low); band 1 weight 1, error 1 − 0.8 = 0.2.
    assert tbg.compressed_loss(gains, target, mask, level, 0.5).item() == pytest.approx((2 * 0.25 + 0.04) / 3)
    assert tbg.compressed_loss(gains, target, mask, level, 0.5, under_weight=3).item() == pytest.approx(
        (3 * 2 * 0.25 + 0.04) / 3)
    # c = 1: the energy-weighted squared gain error, (4·0.75² + 0.36²) / 5
    assert tbg.compressed_loss(gains, target, mask, level, 1.0).item() == pytest.approx((4 * 0.5625 + 0.1296) / 5)


def test_the_snr_loss_is_minus_the_band_domain_snr_improvement():
    target = torch.tensor([[[1.0, 0.0], [0.5, 0.0]]])        # one sequence, two hops, two bands
    level = torch.tensor([[[2.0, 1.0], [4.0, 1.0]]])
    mask = torch.ones_like(target)
    gains = torch.tensor([[[0.5, 0.1], [0.5, 0.2]]])
    # input error Σ Y (1 − g*)² = 1 + 4·0.25 + 1 = 3; output error 2·0.25 + 0.01 + 0 + 0.04 = 0.55; floor 10⁻⁴·8
    expected = 10 * np.log10((0.55 + 8e-4) / (3 + 8e-4))
    assert tbg.snr_loss(gains, target, mask, level).item() == pytest.approx(expected, rel=1e-5)
    # gain too low in the first bin only (0.5 < 1): its error 2·0.25 weighted 3 times
    expected = 10 * np.log10((0.55 + 1.0 + 8e-4) / (3 + 8e-4))
    assert tbg.snr_loss(gains, target, mask, level, under_weight=3).item() == pytest.approx(expected, rel=1e-5)


def test_targets_are_one_for_speech_alone_and_half_for_speech_at_half_the_amplitude():
    x = np.random.default_rng(13).standard_normal(4000)
    goal, mask = tbg.targets(x, np.zeros_like(x))
    np.testing.assert_allclose(goal[bg.PARTIAL_FRAMES:-2], 1.0, atol=1e-12)
    goal, mask = tbg.targets(x, x)
    np.testing.assert_allclose(goal[bg.PARTIAL_FRAMES:-2], 0.5, rtol=1e-9)
    assert mask[bg.PARTIAL_FRAMES:-2].all()
    silent, mask = tbg.targets(np.zeros(4000), np.zeros(4000))
    assert not mask.any()   # no energy in the mixture: left out of the loss


def _train(root: Path, out: Path, *more: str) -> int:
    return tbg.main(["--corpus", str(root), "--out", str(out), "--mixtures", "4", "--val-mixtures", "2",
                     "--score-mixtures", "1", "--seconds", "1", "--hidden", "8", "--batch", "2",
                     "--val-sources", "0.4", "--seed", "3", *more])


# The tiny validation signals are mostly silence, too short for STOI's intermediate measure: pystoi says so and
# returns its floor; the test checks the loss and the written network, not the scores.
@pytest.mark.filterwarnings("ignore:Not enough STFT frames:RuntimeWarning")
def test_a_short_training_run_lowers_the_loss_and_writes_a_network_that_loads(tmp_path, capsys):
    _catalogue(tmp_path)
    sources = tmp_path / "ENHANCEMENT_SOURCES.tsv"
    assert _train(tmp_path, tmp_path / "net.pt", "--epochs", "12", "--patience", "12", "--lr", "0.01",
                  "--anchor", "none", "--sources", str(sources)) == 0
    out = capsys.readouterr().out
    assert "epoch 12:" in out and "band-gain network:" in out
    description = json.loads((tmp_path / "net.json").read_text())
    history = description["training"]["history"]
    assert history[0][:2] == [0, None]   # the starting weights: validation loss only
    assert history[-1][1] < 0.8 * history[1][1]   # training loss
    assert min(entry[2] for entry in history) < history[0][2]   # validation loss
    assert description["input"]["rows"] == list(tbg.DEFAULT_ROWS)
    assert description["architecture"]["inputs"] == 32 * len(tbg.DEFAULT_ROWS)
    model, rows = tbg.load(tmp_path / "net.pt")
    assert rows == tbg.DEFAULT_ROWS and torch.all(model.shift == 0)   # normalisation folded in
    names = {line.split("\t")[0] for line in sources.read_text().splitlines()[1:]}
    assert names and "devsource" not in names and "phone" not in names


def test_a_file_that_is_no_band_gain_network_is_refused_in_one_line(tmp_path):
    (tmp_path / "x.pt").write_bytes(b"not a network")
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(ValueError, match="not a band-gain network"):
        tbg.load(tmp_path / "x.pt")


def test_band_gain_study_scores_a_network_through_the_enhancers_path(small_set, tmp_path):  # noqa: F811
    model = tbg.BandGainNet(32 * len(tbg.DEFAULT_ROWS), 4, 1)
    with torch.no_grad():   # every gain 1: the output is the input
        model.out.weight.zero_()
        model.out.bias.fill_(40.0)
    tbg.save(model, tmp_path / "unit.pt", {"architecture": {"inputs": 32 * len(tbg.DEFAULT_ROWS), "hidden": 4,
                                                            "layers": 1, "bands": 32},
                                           "input": {"rows": list(tbg.DEFAULT_ROWS)}})
    assert bg.main(["score", "--corpus", str(small_set), "--band-gain-model", str(tmp_path / "unit.pt"),
                    "--out", str(tmp_path / "report.md")]) == 0
    rows = {line.split(" | ")[2]: line.split(" | ")[4:8] for line in (tmp_path / "report.md").read_text().splitlines()
            if line.startswith("| all | all |")}
    # The unit network's output equals its input to float rounding through the STFT, so a change may print as
    # a signed zero ("-0.000") where the unprocessed row prints "+0.000".
    def unsigned_zero(cells):
        return [c.replace("(-0.000)", "(+0.000)").replace("(-0.00)", "(+0.00)") for c in cells]

    assert unsigned_zero(rows["band-gain network unit"]) == unsigned_zero(rows["unprocessed"])


def _anchored(inputs=4 * 32, hidden=6, anchor_range=2.0, seed=0) -> tbg.BandGainNet:
    torch.manual_seed(seed)
    model = tbg.BandGainNet(inputs, hidden, 2, anchor=tbg.anchor_columns(tbg.DEFAULT_ROWS), anchor_range=anchor_range)
    with torch.no_grad():
        model.shift.uniform_(-20, 0)
        model.scale.uniform_(0.05, 0.2)
    return model.eval()


def _rows_with_mcra_gain(hops=30, seed=1) -> torch.Tensor:
    """Random input rows whose mcra_gain columns (the last of DEFAULT_ROWS) span −30…+3 dB."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(2, hops, 4 * 32, generator=generator) * 10
    x[..., tbg.BANDS * tbg.DEFAULT_ROWS.index("mcra_gain"):][...] = \
        torch.rand(2, hops, 32, generator=generator) * 33 - 30
    return x


def test_the_anchored_gain_is_mcras_band_amplitude_times_the_correction_clipped_at_one():
    # m = 0.25 (−6.02 dB): √m = 0.5; s = 0.75, R = 2: 0.75. m = 1 (0 dB), s = 0.9: 1.8, clipped to 1.
    # m = 0.01 (−20 dB), s = 0.1, R = 4: 0.1·0.4 = 0.04.
    mcra_db = torch.tensor([10 * np.log10(0.25), 0.0, -20.0])
    assert tbg.anchored_gains(torch.tensor([0.75, 0.9, 0.1]), mcra_db, 2.0)[:2].tolist() == pytest.approx([0.75, 1.0])
    assert tbg.anchored_gains(torch.tensor([0.1]), mcra_db[2:], 4.0).item() == pytest.approx(0.04)


@pytest.mark.parametrize("anchor_range", [2.0, 3.0])
def test_an_untrained_anchored_network_gives_exactly_mcras_band_gain(anchor_range):
    model = _anchored(anchor_range=anchor_range)
    x = _rows_with_mcra_gain()
    with torch.no_grad():
        gains = model(x)[0]
    expected = np.minimum(1.0, np.sqrt(10 ** (x[..., 96:].double().numpy() / 10)))
    np.testing.assert_allclose(gains.double().numpy(), expected, rtol=1e-6)


def test_a_trained_anchored_network_multiplies_mcras_gain_by_range_times_its_sigmoid():
    model = _anchored(anchor_range=3.0)
    x = _rows_with_mcra_gain(seed=2)
    with torch.no_grad():
        model.out.bias.uniform_(-3, 3)   # the dense layer's weights stay 0: s = σ(bias) per band
        gains = model(x)[0].double().numpy()
    s = 1 / (1 + np.exp(-model.out.bias.detach().double().numpy()))
    expected = np.minimum(1.0, 10 ** (x[..., 96:].double().numpy() / 20) * 3.0 * s)
    np.testing.assert_allclose(gains, expected, rtol=1e-6)
    assert (gains < 1).any() and (gains == 1).any()


def test_an_anchored_network_streams_and_survives_folding_saving_and_loading(tmp_path):
    model = _anchored()
    with torch.no_grad():
        for parameter in model.out.parameters():
            parameter.uniform_(-1, 1)
    x = _rows_with_mcra_gain(seed=3)
    with torch.no_grad():
        whole = model(x)[0]
        state, hops = None, []
        for t in range(x.shape[1]):
            gains, state = model(x[:, t:t + 1], state)
            hops.append(gains)
    torch.testing.assert_close(torch.cat(hops, dim=1), whole, rtol=0, atol=1e-6)
    tbg.save(model, tmp_path / "a.pt", {"architecture": {"inputs": 128, "hidden": 6, "layers": 2, "bands": 32,
                                                         "anchor": {"row": "mcra_gain", "range": 2.0}},
                                        "input": {"rows": list(tbg.DEFAULT_ROWS)}})
    loaded, rows = tbg.load(tmp_path / "a.pt")
    assert loaded.anchor == (96, 128) and loaded.anchor_range == 2.0
    with torch.no_grad():
        torch.testing.assert_close(loaded(x)[0], whole, rtol=0, atol=1e-5)


def test_an_anchor_needs_the_mcra_gain_row_and_a_range_above_one(tmp_path, capsys):
    with pytest.raises(ValueError, match="needs the mcra_gain input row"):
        tbg.anchor_columns(("delta", "posterior"))
    with pytest.raises(ValueError, match="range above 1"):
        tbg.BandGainNet(128, 4, anchor=(96, 128), anchor_range=1.0)
    for more, message in ((["--anchor", "mcra", "--rows", "delta,posterior"], "needs the mcra_gain row"),
                          (["--anchor", "mcra", "--anchor-range", "1"], "--anchor-range must be above 1")):
        with pytest.raises(SystemExit):
            tbg.parse_args(["--corpus", str(tmp_path), "--out", str(tmp_path / "x.pt"), *more])
        assert message in capsys.readouterr().err.splitlines()[-1]


def test_corrections_multiply_mcras_own_gains_per_bin_clipped_at_one_and_floored():
    rng = np.random.default_rng(14)
    samples = 0.02 * rng.standard_normal(6000) + 0.2 * np.sin(2 * np.pi * 440 * np.arange(6000) / ne.SAMPLE_RATE)
    hops = len(bg.analyse(samples))
    # every correction 1: today's path exactly
    np.testing.assert_array_equal(bg.correct_mcra_gains(samples, np.ones((hops, 32))), bg.enhance_mcra(samples))
    # corrections far above 1: every bin's gain clipped at 1, the input passes
    np.testing.assert_allclose(bg.correct_mcra_gains(samples, np.full((hops, 32), 1e6)), samples, atol=1e-12)
    # a constant correction c: each bin's gain max(c·G, Gmin), G the gain rule's
    spectra = bg.analyse(samples)
    power = spectra.real ** 2 + spectra.imag ** 2
    gains = bg.decision_directed_gains(power, bg.mcra_noise(power))
    expected = bg.synthesise(spectra * np.maximum(0.3 * gains, bg.floor_gain()), len(samples))
    np.testing.assert_allclose(bg.correct_mcra_gains(samples, np.full((hops, 32), 0.3)), expected, atol=1e-12)


@pytest.mark.filterwarnings("ignore:Not enough STFT frames:RuntimeWarning")
def test_a_short_anchored_training_run_writes_an_anchored_network(tmp_path, capsys):
    _catalogue(tmp_path)
    assert _train(tmp_path, tmp_path / "net.pt", "--epochs", "2", "--anchor", "mcra", "--anchor-range", "2.5") == 0
    out = capsys.readouterr().out
    assert "times 2.5: corrections of MCRA gains" in out
    description = json.loads((tmp_path / "net.json").read_text())
    assert description["architecture"]["anchor"]["range"] == 2.5
    model, rows = tbg.load(tmp_path / "net.pt")
    assert model.anchor == tbg.anchor_columns(rows) and model.anchor_range == 2.5


def test_band_gain_study_scores_an_untrained_anchored_network_as_todays_path(small_set, tmp_path):  # noqa: F811
    model = tbg.BandGainNet(32 * len(tbg.DEFAULT_ROWS), 4, 1, anchor=tbg.anchor_columns(tbg.DEFAULT_ROWS))
    tbg.save(model, tmp_path / "anchor.pt", {"architecture": {"inputs": 32 * len(tbg.DEFAULT_ROWS), "hidden": 4,
                                                              "layers": 1, "bands": 32,
                                                              "anchor": {"row": "mcra_gain", "range": 2.0}},
                                             "input": {"rows": list(tbg.DEFAULT_ROWS)}})
    assert bg.main(["score", "--corpus", str(small_set), "--band-gain-model", str(tmp_path / "anchor.pt"),
                    "--out", str(tmp_path / "report.md")]) == 0
    rows = {line.split(" | ")[2]: line.split(" | ")[4:8] for line in (tmp_path / "report.md").read_text().splitlines()
            if line.startswith("| all | all |")}
    assert rows["band-gain network anchor"] == rows["mcra + gain rule (numpy)"] != rows["unprocessed"]


def test_validation_scores_leave_out_silent_noise_and_split_by_input_snr(small_set):  # noqa: F811
    import soundfile as sf
    name = sorted((small_set / "clean").iterdir())[0].name
    clean, _ = sf.read(str(small_set / "clean" / name), dtype="float64")
    noisy, _ = sf.read(str(small_set / "audio" / name), dtype="float64")
    noise = noisy - clean   # the set's 0 dB condition
    model = tbg.BandGainNet(32 * len(tbg.DEFAULT_ROWS), 4, 1, anchor=tbg.anchor_columns(tbg.DEFAULT_ROWS))
    scores = tbg.enhancement_scores(model, tbg.DEFAULT_ROWS, [(clean, noise), (clean, np.zeros_like(noise)),
                                                              (clean, 0.05 * noise)], 0.7)
    assert scores["mixtures"] == 2 and scores["silent_noise"] == 1
    assert list(scores["by_input_snr"]) == ["-inf..2.5 dB", "15..inf dB"]
    for system, means in scores["all"].items():
        assert np.all(np.isfinite(list(means.values())))
        for metric, value in means.items():
            assert value == pytest.approx(np.mean([table[system][metric] for table in
                                                   scores["by_input_snr"].values()]))
    # an untrained anchored network is today's path: σ(0)·2 = 1 exactly
    assert scores["all"]["band-gain network"] == scores["all"]["mcra + gain rule"]


def test_shaping_is_rnnoises_random_second_order_filter_with_the_energy_kept():
    x = np.random.default_rng(15).standard_normal(3000)
    shaped = tbg.shape(x, np.random.default_rng(16))
    r = np.random.default_rng(16).uniform(-3 / 8, 3 / 8, 4)
    y = np.zeros_like(x)   # the difference equation, sample by sample
    for n in range(len(x)):
        y[n] = x[n] + sum(r[i] * x[n - 1 - i] - r[2 + i] * y[n - 1 - i] for i in range(2) if n - 1 - i >= 0)
    np.testing.assert_allclose(shaped, y * np.sqrt(np.sum(x ** 2) / np.sum(y ** 2)), rtol=1e-10, atol=1e-12)
    assert np.sum(shaped ** 2) == pytest.approx(np.sum(x ** 2))
    assert not np.allclose(shaped, x)
    # the most resonant filter the draws allow stays bounded (poles inside the unit circle)
    class Worst:   # poles at radius √(3/8)
        @staticmethod
        def uniform(low, high, n):
            return np.array([0.0, 0.0, -3 / 8, 3 / 8])
    impulse = tbg.shape(np.r_[1.0, np.zeros(4999)], Worst())
    assert np.all(np.isfinite(impulse)) and np.max(np.abs(impulse[-100:])) < 1e-6


@pytest.mark.filterwarnings("ignore:Not enough STFT frames:RuntimeWarning")
def test_shaping_changes_the_training_mixtures_and_leaves_the_validation_ones_alone(tmp_path):
    _catalogue(tmp_path)
    caches = {}
    for name, more in (("plain", []), ("shaped", ["--shape"])):
        caches[name] = tmp_path / f"{name}.npz"
        assert _train(tmp_path, tmp_path / f"{name}.pt", "--epochs", "1", "--score-mixtures", "0",
                      "--cache", str(caches[name]), *more) == 0
    plain, shaped = np.load(caches["plain"]), np.load(caches["shaped"])
    for key in ("val_speech", "val_noise", "x_val", "used_train", "used_val"):
        np.testing.assert_array_equal(plain[key], shaped[key], err_msg=key)
    assert not np.allclose(plain["x_train"], shaped["x_train"])
    assert str(plain["key"]) != str(shaped["key"])


def test_moving_held_out_speech_sources_to_training_keeps_at_least_three_held_out():
    from types import SimpleNamespace
    from train_noise_estimator import Mixer
    speech = [SimpleNamespace(source=f"s{index % 5}") for index in range(20)]
    mixers = [Mixer(speech[:2], [], None, (0, 1)), Mixer(speech[2:], [], None, (0, 1))]   # s2, s3, s4, s0, s1 held
    tbg.move_speech_sources(mixers, ("s2",))
    assert sorted({r.source for r in mixers[1].speech}) == ["s0", "s1", "s3", "s4"]
    assert len(mixers[0].speech) == 2 + 4 and len(mixers[1].speech) == 14
    assert all(r.source == "s2" for r in mixers[0].speech[2:])
    with pytest.raises(ValueError, match="s2 not among the held-out speech sources"):
        tbg.move_speech_sources(mixers, ("s2",))
    with pytest.raises(ValueError, match="2 speech sources would stay held out, at least 3 must"):
        tbg.move_speech_sources(mixers, ("s0", "s1"))
    assert len(mixers[1].speech) == 14   # a refused move moves nothing


def test_an_earlier_network_is_scored_beside_the_new_one_on_the_same_mixtures(small_set):  # noqa: F811
    import soundfile as sf
    name = sorted((small_set / "clean").iterdir())[0].name
    clean, _ = sf.read(str(small_set / "clean" / name), dtype="float64")
    noisy, _ = sf.read(str(small_set / "audio" / name), dtype="float64")
    torch.manual_seed(5)
    trained = tbg.BandGainNet(32 * len(tbg.DEFAULT_ROWS), 4, 1)   # not anchored: its own random gains
    untrained = tbg.BandGainNet(32 * len(tbg.DEFAULT_ROWS), 4, 1, anchor=tbg.anchor_columns(tbg.DEFAULT_ROWS))
    signals = [(clean, noisy - clean)]
    scores = tbg.enhancement_scores(trained, tbg.DEFAULT_ROWS, signals, 0.7,
                                    {"earlier": (untrained, tbg.DEFAULT_ROWS)})
    alone = tbg.enhancement_scores(trained, tbg.DEFAULT_ROWS, signals, 0.7)
    assert scores["all"]["earlier"] == scores["all"]["mcra + gain rule"]   # the untrained anchor is today's path
    assert scores["all"]["band-gain network"] == alone["all"]["band-gain network"] != scores["all"]["earlier"]


def test_a_speech_source_that_is_not_held_out_is_refused_in_one_line(tmp_path, capsys):
    _catalogue(tmp_path)
    assert _train(tmp_path, tmp_path / "net.pt", "--train-speech-sources", "talkers9") == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("--train-speech-sources: talkers9 not among the held-out speech sources")
    assert "\n" not in error and not (tmp_path / "net.pt").exists()


def test_a_speed_change_scales_every_frequency_and_the_length_by_the_factor():
    from hearalert_corpus.signals import at_speed
    rate = ne.SAMPLE_RATE
    t = np.arange(2 * rate) / rate
    tone = np.sin(2 * np.pi * 250.0 * t)
    for factor in (0.9, 1.1):
        faster = at_speed(tone, factor)
        assert len(faster) == pytest.approx(len(tone) / factor, abs=1)
        spectrum = np.abs(np.fft.rfft(faster[2000:-2000] * np.hanning(len(faster) - 4000)))
        peak = np.argmax(spectrum) * rate / (len(faster) - 4000)
        assert peak == pytest.approx(250.0 * factor, abs=1.0)


@pytest.mark.filterwarnings("ignore:Not enough STFT frames:RuntimeWarning")
def test_speed_perturbation_changes_the_training_speech_only_and_is_part_of_the_cache_key(tmp_path):
    _catalogue(tmp_path)
    caches = {}
    for name, more in (("plain", []), ("faster", ["--speed", "1.15", "1.2"])):
        caches[name] = tmp_path / f"{name}.npz"
        assert _train(tmp_path, tmp_path / f"{name}.pt", "--epochs", "1", "--score-mixtures", "0",
                      "--cache", str(caches[name]), *more) == 0
    plain, faster = np.load(caches["plain"]), np.load(caches["faster"])
    assert not np.allclose(plain["x_train"], faster["x_train"])
    assert str(plain["key"]) != str(faster["key"])
    described = json.loads((tmp_path / "faster.json").read_text())
    assert "speech speed 1.15..1.2" in described["trained_on"]


def test_a_speed_range_outside_half_to_twice_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        tbg.parse_args(["--corpus", str(tmp_path), "--out", str(tmp_path / "n.pt"), "--speed", "1.2", "1.1"])
    assert "--speed must be LOW <= HIGH within 0.5..2" in capsys.readouterr().err
