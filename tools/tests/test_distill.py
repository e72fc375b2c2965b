"""Distillation from the teacher: target alignment, the sampler's windows and targets, hard-negative mining, and
a few training steps with --distill on tiny real-like audio (the teacher run for real)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch

import train
import yamnet
from corpus_format import read_corpus
from hearalert_train.data import ClipFeatures, Geometry
from hearalert_train.distill import DistillSampler, aligned, aligned_one, teacher_scores
from tiny_corpora import make_tiny_corpora

SPEC = dict(train.model_spec(), normalization={"mean": [0.0] * 64, "std": [1.0] * 64})
GEOMETRY = Geometry.of(SPEC, frames=48, step=6)


def test_teacher_scores_are_interpolated_at_the_student_window_ends() -> None:
    # Teacher windows (15600 samples every 7680) end at 0.975, 1.455, 1.935 s; label 0 scores 0, 1, 0.5 there and
    # label 1 scores 1, 1, 1.
    scores = np.array([[0.0, 1.0], [1.0, 1.0], [0.5, 1.0]], dtype=np.float32)
    out = aligned(scores, np.array([0.5, 0.975, 1.215, 1.455, 1.695, 5.0]))
    np.testing.assert_allclose(out[:, 0], [0.0, 0.0, 0.5, 1.0, 0.75, 0.5], atol=1e-6)
    np.testing.assert_allclose(out[:, 1], 1.0)


def _clip(frames: int) -> ClipFeatures:
    """Features whose every band holds 1000 x the frame index: a window's first frame can be read back."""
    x = np.repeat((1000.0 * np.arange(frames, dtype=np.float32))[:, None], 64, axis=1)
    return ClipFeatures("c.wav", x, x, None, [], None)


def test_each_window_gets_the_teacher_score_at_its_own_end() -> None:
    clip = _clip(400)
    scores = np.linspace(0, 1, 12, dtype=np.float32)[:, None].repeat(6, axis=1)  # rising teacher scores
    sampler = DistillSampler([clip], [scores], GEOMETRY, SPEC, np.random.default_rng(1))
    windows, targets = sampler.batch(64)
    assert windows.shape == (64, 48, 64) and targets.shape == (64, 6)
    ends = np.arange(len(scores)) * 0.48 + 0.975
    for window, target in zip(windows, targets):
        first = int(round(window[0, 0] / 1000))  # the level change moves features by at most 15 dB
        end = (first * GEOMETRY.hop + GEOMETRY.window_samples) / GEOMETRY.sample_rate
        assert target[0] == pytest.approx(np.interp(end, ends, scores[:, 0]), abs=1e-5)


def test_one_time_alignment_matches_numpy_interpolation_on_every_column() -> None:
    scores = np.random.default_rng(3).random((9, 521)).astype(np.float16)
    ends = np.arange(9) * 0.48 + 0.975
    for t in [0.2, 0.975, 1.1, 2.4, 4.815, 4.9, 30.0]:
        expected = [np.interp(t, ends, scores[:, k].astype(np.float64)) for k in range(521)]
        np.testing.assert_allclose(aligned_one(scores, t), expected, atol=1e-6)


def test_class_targets_are_the_teacher_scores_at_each_window_end_and_leave_the_draws_alone() -> None:
    clip = _clip(400)
    labels = np.linspace(0, 1, 12, dtype=np.float32)[:, None].repeat(6, axis=1)
    classes = np.random.default_rng(5).random((12, 521)).astype(np.float16)
    sampler = DistillSampler([clip], [labels], GEOMETRY, SPEC, np.random.default_rng(1), class_scores=[classes])
    windows, targets, class_targets = sampler.batch_with_classes(32)
    assert class_targets.shape == (32, 521) and class_targets.dtype == np.float32
    ends = np.arange(12) * 0.48 + 0.975
    for window, target in zip(windows, class_targets):
        first = int(round(window[0, 0] / 1000))
        end = (first * GEOMETRY.hop + GEOMETRY.window_samples) / GEOMETRY.sample_rate
        np.testing.assert_allclose(target[[0, 7, 520]], [np.interp(end, ends, classes[:, k].astype(np.float64))
                                                         for k in (0, 7, 520)], atol=1e-6)
    # The same seed draws the same windows and label targets with or without the class targets.
    plain = DistillSampler([clip], [labels], GEOMETRY, SPEC, np.random.default_rng(1)).batch(32)
    np.testing.assert_array_equal(plain[0], windows)
    np.testing.assert_array_equal(plain[1], targets)
    with pytest.raises(ValueError, match="no AudioSet class scores"):
        DistillSampler([clip], [labels], GEOMETRY, SPEC, np.random.default_rng(1)).batch_with_classes(4)


class _FiresLate(torch.nn.Module):
    """A stand-in student: fires on windows starting after frame 200, on every label."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        first = x[:, 0, 0, 0] / 1000
        return (first > 200).float()[:, None].repeat(1, 6)


def test_mining_keeps_windows_the_student_fires_on_and_the_teacher_does_not() -> None:
    clip = _clip(600)
    teacher = np.zeros((20, 6), dtype=np.float32)
    teacher[12:] = 0.9  # the teacher hears something from about 6 s on
    sampler = DistillSampler([clip], [teacher], GEOMETRY, SPEC, np.random.default_rng(2), hard_fraction=1.0)
    pool = sampler.mine(_FiresLate(), candidates=2000)
    assert pool > 50
    firsts = np.array([first for _, first in sampler.hard])
    ends = (firsts * GEOMETRY.hop + GEOMETRY.window_samples) / GEOMETRY.sample_rate
    assert firsts.min() > 200
    assert np.interp(ends, np.arange(20) * 0.48 + 0.975, teacher[:, 0]).max() < 0.2
    windows, _ = sampler.batch(32)  # hard_fraction 1: every window comes from the pool
    assert all(int(round(w[0, 0] / 1000)) in set(firsts) for w in windows)


def test_teacher_positive_windows_are_drawn_at_their_share() -> None:
    clip = _clip(600)
    teacher = np.zeros((20, 6), dtype=np.float32)
    teacher[15, 2] = 0.9  # one teacher window hears a smoke alarm
    ends = np.arange(20) * 0.48 + 0.975
    sampler = DistillSampler([clip], [teacher], GEOMETRY, SPEC, np.random.default_rng(4), positive_fraction=0.5)
    assert sampler.positives  # the student windows ending near that teacher window
    for _, first in sampler.positives:
        end = (first * GEOMETRY.hop + GEOMETRY.window_samples) / GEOMETRY.sample_rate
        assert np.interp(end, ends, teacher[:, 2]) >= 0.5
    _, targets = sampler.batch(400)
    # Half the windows from the pool (target >= 0.5), the other half drawn alike, of which few reach 0.5.
    assert 0.45 < (targets[:, 2] >= 0.5).mean() < 0.6
    _, plain = DistillSampler([clip], [teacher], GEOMETRY, SPEC, np.random.default_rng(4)).batch(400)
    assert (plain[:, 2] >= 0.5).mean() < 0.1


def test_a_few_distillation_steps_on_tiny_audio(tmp_path: Path) -> None:
    make_tiny_corpora(tmp_path, train_files=4, workers=1)
    out = tmp_path / "model.safetensors"
    args = train.parse_args(["--train", str(tmp_path / "train"), "--val", str(tmp_path / "val"), "--out", str(out),
                             "--distill", str(tmp_path / "free"), "--distill-fraction", "0.5", "--steps", "4",
                             "--eval-every", "2", "--batch", "8", "--no-tune", "--select-fa-weight", "0.01",
                             "--cache", str(tmp_path / "cache"), "--report", str(tmp_path / "report.json")])
    _, _, reports = train.train(args)
    assert reports["distill"] == [str(tmp_path / "free")] and reports["select_fa_weight"] == 0.01
    assert out.exists() and json.loads((tmp_path / "report.json").read_text())["distill_fraction"] == 0.5
    # The teacher's scores were cached, and are what the teacher says of that audio.
    free = read_corpus(tmp_path / "free")
    cached = teacher_scores(free, tmp_path / "cache")
    assert len(list((tmp_path / "cache").glob("teacher-*.npz"))) == 1
    name = free.files[0].filename
    wave, rate = sf.read(str(free.audio_path(name)), dtype="float32")
    assert rate == 16000
    np.testing.assert_allclose(cached[name], yamnet.Teacher.load().label_scores(wave), atol=1e-5)


def test_the_teachers_521_scores_train_a_second_head_that_is_not_exported(tmp_path: Path) -> None:
    make_tiny_corpora(tmp_path, train_files=4, workers=1)

    def trained(weight: str, name: str):
        args = train.parse_args(["--train", str(tmp_path / "train"), "--val", str(tmp_path / "val"),
                                 "--out", str(tmp_path / f"{name}.safetensors"), "--distill", str(tmp_path / "free"),
                                 "--distill-fraction", "0.5", "--steps", "3", "--eval-every", "3", "--batch", "8",
                                 "--no-tune", "--cache", str(tmp_path / "cache"), "--teacher-classes-weight", weight])
        model, _, reports = train.train(args)
        return model, reports

    with_classes, reports = trained("1.0", "classes")
    # A weight too small to matter takes the same path (the same head drawn, the same batches) but leaves the
    # shared weights where the label loss alone would take them.
    plain, _ = trained("1e-12", "plain")
    assert reports["teacher_classes_weight"] == 1.0
    # Only the six label outputs are exported.
    assert with_classes(torch.zeros(1, 1, 48, 64)).shape == (1, 6)  # --frames 48 by default
    # The second head's loss moved the shared weights.
    first_conv = next(zip(with_classes.parameters(), plain.parameters()))
    assert (first_conv[0] - first_conv[1]).abs().max() > 1e-4
    # The cached class scores are the teacher's, in half precision.
    free = read_corpus(tmp_path / "free")
    cached = teacher_scores(free, tmp_path / "cache", all_classes=True)
    assert len(list((tmp_path / "cache").glob("teacher-classes-*.npz"))) == 1
    name = free.files[0].filename
    wave, _ = sf.read(str(free.audio_path(name)), dtype="float32")
    assert cached[name].dtype == np.float16 and cached[name].shape[1] == 521
    np.testing.assert_allclose(cached[name], yamnet.Teacher.load().scores(wave), atol=1e-3)


def test_teacher_classes_need_distillation_audio() -> None:
    with pytest.raises(SystemExit):
        train.parse_args(["--train", "t", "--val", "v", "--out", "o", "--teacher-classes-weight", "1"])


def test_scoring_with_the_teacher_leaves_torchs_generator_alone(tmp_path: Path) -> None:
    make_tiny_corpora(tmp_path, train_files=2, workers=1)
    free = read_corpus(tmp_path / "free")
    yamnet._cached_teacher.cache_clear()  # built afresh, as in a new process with a cold cache
    torch.manual_seed(7)
    teacher_scores(free, tmp_path / "cache")
    after_cold = torch.rand(3)
    torch.manual_seed(7)
    teacher_scores(free, tmp_path / "cache")  # from the cache: the teacher is not built
    np.testing.assert_array_equal(after_cold.numpy(), torch.rand(3).numpy())
