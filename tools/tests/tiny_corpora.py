"""Tiny generated corpora for end-to-end training tests: seconds to make, real make_corpus output."""

from __future__ import annotations

from pathlib import Path

import make_corpus
from hearalert_corpus.mixing import MixSettings


def make_tiny_corpora(root: Path, train_files: int, workers: int) -> None:
    """ROOT/train (`train_files` 4-s clips), ROOT/val (3) and ROOT/free (2 alert-free clips, validation voices)."""
    settings = MixSettings(clip_seconds=4.0, alert_free_fraction=0.2)
    make_corpus.generate(root / "train", "train", 5, train_files, settings, workers=workers, rooms=2, progress=False)
    make_corpus.generate(root / "val", "val", 5, 3, settings, workers=workers, rooms=2, progress=False)
    make_corpus.generate(root / "free", "val", 7, 2, MixSettings(clip_seconds=4.0, alert_free_fraction=1.0),
                         workers=workers, rooms=2, progress=False)
