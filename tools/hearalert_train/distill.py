"""Distillation from the YAMNet teacher (tools/yamnet.py) on real audio that has no labels.

Most real recordings the project can use hold no alert, and nobody has labelled every second of them. The
teacher, trained on AudioSet's real sound, says for each 0.96-s window how much each of our six labels is there
(the max over the AudioSet classes mapped to it). The student learns those scores as soft targets on windows of
that audio, aligned to its own decision times: a student window ending at time t takes the teacher's scores
interpolated between the teacher windows ending on either side of t (a teacher window's audio spans 0.975 s).
On alert-free audio the teacher mostly says "nothing", which is what teaches the student to be quiet on real
rooms and streets.

Teacher positives: the windows where the teacher says a label is there (>= `fire`) are rare in such audio (a
few hundred in an hour of sound effects), so a share of distillation windows (`positive_fraction`) may be drawn
from them alone: the teacher's knowledge of what real alerts sound like, seen as often as its "nothing".

Hard negatives: now and then the student scores a random sample of these windows; those where it fires
(>= `fire`) and the teacher does not (< `quiet`) make a pool that a share of later distillation windows is drawn
from, so the student sees more of its own false alarms.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np
import torch

from corpus_format import Corpus
from .data import ClipFeatures, Geometry, LEVEL_CHANGE_DB, _frames


def _cache_path(corpus: Corpus, cache_dir: Path | None, kind: str) -> Path | None:
    if cache_dir is None:
        return None
    h = hashlib.sha1()
    h.update(str(corpus.root.resolve()).encode())
    h.update((corpus.root / "files.tsv").read_bytes())
    h.update((corpus.root / "corpus.json").read_bytes())
    return cache_dir / f"{kind}-{h.hexdigest()[:16]}.npz"


def teacher_scores(corpus: Corpus, cache_dir: Path | None = None, all_classes: bool = False) -> dict[str, np.ndarray]:
    """The teacher's scores for every file of `corpus` (cached per corpus): its six label scores, [windows, 6]
    float32, or with `all_classes` all 521 AudioSet scores, [windows, 521] float16 (half the memory: an hour
    of audio holds 7,500 teacher windows)."""
    import yamnet
    from hearalert_corpus.sources import load_audio

    cache = _cache_path(corpus, cache_dir, "teacher-classes" if all_classes else "teacher")
    if cache is not None and cache.exists():
        with np.load(cache) as z:
            return {name: z[name] for name in z.files}
    # Building the teacher's modules draws from torch's generator before its weights are loaded over them;
    # kept apart, a training run draws the same numbers whether or not the scores were cached.
    with torch.random.fork_rng(devices=[]):
        teacher = yamnet.Teacher.load()
    scores = {}
    threads = torch.get_num_threads()
    # One thread: on two shared cores the teacher ran 120x real time on one and 15x on two (tools/README.md).
    torch.set_num_threads(1)
    try:
        for i, f in enumerate(corpus.files):
            wave = load_audio(corpus.audio_path(f.filename))
            scores[f.filename] = (teacher.scores(wave).astype(np.float16) if all_classes
                                  else teacher.label_scores(wave).astype(np.float32))
            if (i + 1) % 500 == 0 or i + 1 == len(corpus.files):
                print(f"teacher scores: {i + 1} of {len(corpus.files)} files of {corpus.root}", file=sys.stderr,
                      flush=True)
    finally:
        torch.set_num_threads(threads)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache, **scores)
    return scores


def aligned(scores: np.ndarray, window_ends: np.ndarray) -> np.ndarray:
    """Teacher scores [W, L] at student window ends (s): linear between the teacher windows ending on either side
    of each time, held at the first and last window outside them."""
    import yamnet

    ends = np.arange(len(scores)) * yamnet.HOP_SECONDS + yamnet.WINDOW_SAMPLES / yamnet.SAMPLE_RATE
    if len(scores) == 1:
        return np.repeat(scores, len(window_ends), axis=0)
    return np.stack([np.interp(window_ends, ends, scores[:, k]) for k in range(scores.shape[1])], axis=1
                    ).astype(np.float32)


def aligned_one(scores: np.ndarray, window_end: float) -> np.ndarray:
    """`aligned` for one time and every column at once: the teacher's [W, C] scores at a student window ending
    at `window_end` (s), as float32. For the 521 AudioSet scores of a few windows per step, where building the
    whole aligned table would take gigabytes."""
    import yamnet

    position = (window_end - yamnet.WINDOW_SAMPLES / yamnet.SAMPLE_RATE) / yamnet.HOP_SECONDS
    position = min(max(position, 0.0), len(scores) - 1.0)
    low = int(np.floor(position))
    high, fraction = min(low + 1, len(scores) - 1), position - low
    return ((1.0 - fraction) * scores[low].astype(np.float32) + fraction * scores[high].astype(np.float32)
            ).astype(np.float32)


class DistillSampler:
    """Windows of unlabelled real audio with the teacher's aligned scores as targets, with a mined share of hard
    negatives (the student fires, the teacher does not)."""

    def __init__(self, clips: list[ClipFeatures], scores: list[np.ndarray], geometry: Geometry, spec: dict,
                 rng: np.random.Generator, hard_fraction: float = 0.3, fire: float = 0.5, quiet: float = 0.2,
                 positive_fraction: float = 0.0, class_scores: list[np.ndarray] | None = None):
        """`scores`: the teacher's label scores per clip; `class_scores` (optional): its 521 AudioSet scores per
        clip, for `batch_with_classes`."""
        self.clips, self.geometry, self.rng = clips, geometry, rng
        self.class_scores = class_scores
        self.hard_fraction, self.fire, self.quiet = hard_fraction, fire, quiet
        self.positive_fraction = positive_fraction
        norm = spec["normalization"]
        self.mean = np.asarray(norm["mean"], dtype=np.float32)
        self.std = np.asarray(norm["std"], dtype=np.float32)
        self.multiplier, self.base = float(spec["log_multiplier"]), float(spec["log_base"])
        self.floor = np.float32(self.multiplier * np.log(spec["log_floor"]) / np.log(self.base))
        # Every window's teacher target, by clip: [windows, labels], indexed by first frame + start_padding.
        # Clips shorter than one window hold none and are left out.
        self.targets = []
        for clip, s in zip(clips, scores):
            firsts = np.arange(-geometry.start_padding, len(clip.mixture) - geometry.frames + 1)
            ends = (firsts * geometry.hop + geometry.window_samples) / geometry.sample_rate
            self.targets.append(aligned(s, ends))
        self.usable = [i for i, t in enumerate(self.targets) if len(t)]
        if not self.usable:
            raise ValueError("no distillation clip is as long as one window")
        self.hard: list[tuple[int, int]] = []
        # (clip, first frame) of every window whose teacher target reaches `fire` for some label
        self.positives = [(i, int(first) - geometry.start_padding) for i in self.usable
                          for first in np.flatnonzero(self.targets[i].max(axis=1) >= fire)]

    def _window(self, i: int, first: int, level_db: float) -> np.ndarray:
        """Normalised features of a window, `level_db` louder: a power gain is an exact shift of log features."""
        shift = np.float32(self.multiplier * level_db / 10 / np.log10(self.base))
        x = _frames(self.clips[i].mixture, first, self.geometry.frames) + shift
        return (np.maximum(x, self.floor) - self.mean) / self.std

    def _target(self, i: int, first: int) -> np.ndarray:
        return self.targets[i][first + self.geometry.start_padding]

    def _random(self) -> tuple[int, int]:
        i = self.usable[int(self.rng.integers(len(self.usable)))]
        pad = self.geometry.start_padding
        return i, int(self.rng.integers(-pad, len(self.targets[i]) - pad))

    def _picks(self, size: int) -> list[tuple[int, int]]:
        """(clip, first frame) of `size` windows: mined hard negatives, teacher positives or any, at their shares."""
        picks = []
        for _ in range(size):
            if self.hard and self.rng.random() < self.hard_fraction:
                picks.append(self.hard[int(self.rng.integers(len(self.hard)))])
            elif self.positive_fraction and self.positives and self.rng.random() < self.positive_fraction:
                picks.append(self.positives[int(self.rng.integers(len(self.positives)))])
            else:
                picks.append(self._random())
            # the level change is drawn here, as it always was, so that a seed draws the same windows
            picks[-1] = (*picks[-1], float(self.rng.uniform(*LEVEL_CHANGE_DB)))
        return picks

    def _windows(self, picks) -> tuple[np.ndarray, np.ndarray]:
        xs = [self._window(i, first, level_db) for i, first, level_db in picks]
        ys = [self._target(i, first) for i, first, _ in picks]
        return np.stack(xs).astype(np.float32), np.stack(ys).astype(np.float32)

    def batch(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        """Windows [size, frames, bands] (normalised, a random level change) and soft targets [size, labels]."""
        return self._windows(self._picks(size))

    def batch_with_classes(self, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`batch`, plus the teacher's 521 AudioSet scores at each window's end [size, 521] (needs
        `class_scores`)."""
        if self.class_scores is None:
            raise ValueError("this sampler was given no AudioSet class scores")
        picks = self._picks(size)
        g = self.geometry
        classes = [aligned_one(self.class_scores[i], (first * g.hop + g.window_samples) / g.sample_rate)
                   for i, first, _ in picks]
        return (*self._windows(picks), np.stack(classes))

    def mine(self, model: torch.nn.Module, candidates: int = 4096, batch: int = 512) -> int:
        """Score `candidates` random windows with the student; keep those it fires on and the teacher does not as
        the hard-negative pool (replacing the last one). Returns the pool's size."""
        picks = [self._random() for _ in range(candidates)]
        windows = np.stack([self._window(i, first, 0.0) for i, first in picks]).astype(np.float32)[:, None]
        model.eval()
        with torch.no_grad():
            student = np.concatenate([model(torch.from_numpy(windows[k:k + batch])).numpy()
                                      for k in range(0, len(windows), batch)])
        teacher = np.stack([self._target(i, first) for i, first in picks])
        keep = (student.max(axis=1) >= self.fire) & (teacher.max(axis=1) < self.quiet)
        self.hard = [pick for pick, k in zip(picks, keep) if k]
        return len(self.hard)
