"""Corpora made only of real recordings: alert-free excerpts, real alerts mixed into real backgrounds, and
isolated real alerts (format: shared/docs/CORPUS.md), for choosing and scoring models on real sound.

Input is one role's folder of the real-audio tree (tools/fetch_real_audio.py):

    ROLE/alert_free/<kind>/...audio     real recordings holding no alert (speech, music, ambient, ...)
    ROLE/alerts/<label>/...audio        real alert recordings, one of LABELS per folder
    ROLE/unlabelled/<group>/...audio    real recordings without trusted labels (sound effects), for distillation
                                        only: list_role never reads them, so no alert-free excerpt, background
                                        or alert set holds them; list_unlabelled does

Three kinds of files come out, told apart by their `kind` extra in corpus.json:
  free      excerpts of the alert-free recordings of each kind played one after another, so short ones share an
            excerpt and long ones fill several (no events: every detection in them is a false alarm)
  mixture   one real alert excerpt in a real background excerpt of the same role, at an alert SNR drawn evenly
            from the buckets of --snr (alert_snr_db, defined as in mixing.py: the alert's active power over the
            background's mean power)
  isolated  a whole real alert recording (up to MAX_ISOLATED_S) with a second of its background's quiet before it
            and after it, the background 30 dB under the alert: the recording as a person near the device hears it

Events are measured on the placed alert, never taken from a file name: the 20 ms frames within 25 dB of its
loudest (sources.active_segments), joined across gaps under 1 s (CORPUS.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import LABELS, SAMPLE_RATE
from .mixing import EVENT_GAP, Clip, merge_segments
from .signals import active_power, samples
from .sources import active_segments, has_audio_suffix, load_audio

ISOLATED_SNR_DB = 30.0
MAX_ISOLATED_S = 20.0
LEAD_S = 1.0            # quiet background before (and after) an isolated alert
MIN_FREE_S = 2.0        # a recording's last excerpt is kept when at least this long
LEVEL_DBFS = (-35.0, -20.0)  # RMS level a mixture or isolated file is scaled to; alert-free excerpts keep theirs


class RealSetError(Exception):
    """The real-audio folder cannot make a set; the message says why in one line."""


@dataclass(frozen=True)
class Recording:
    path: Path
    relative: str   # path relative to the role folder, the file's identity in corpus.json
    kind: str       # label for an alert, category (speech, music, ambient:rain, ...) for an alert-free one


def _audio_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and has_audio_suffix(p.name))


def list_role(role_dir: Path) -> tuple[list[Recording], list[Recording]]:
    """(alert-free recordings, alert recordings) of one role folder, sorted by path so a seed fixes the set."""
    if not role_dir.is_dir():
        raise RealSetError(f"{role_dir}: no such folder (expected ROLE/alert_free/<kind>/ and ROLE/alerts/<label>/)")
    free, alerts = [], []
    free_dir, alerts_dir = role_dir / "alert_free", role_dir / "alerts"
    if free_dir.is_dir():
        for kind_dir in sorted(d for d in free_dir.iterdir() if d.is_dir()):
            free += [Recording(p, str(p.relative_to(role_dir)), kind_dir.name) for p in _audio_files(kind_dir)]
    if alerts_dir.is_dir():
        for label_dir in sorted(d for d in alerts_dir.iterdir() if d.is_dir()):
            if label_dir.name not in LABELS:
                raise RealSetError(f"{label_dir}: '{label_dir.name}' is not one of the labels {', '.join(LABELS)}")
            alerts += [Recording(p, str(p.relative_to(role_dir)), label_dir.name) for p in _audio_files(label_dir)]
    if not free:
        raise RealSetError(f"{role_dir}: no alert-free recordings under alert_free/<kind>/")
    return free, alerts


def list_unlabelled(role_dir: Path) -> list[Recording]:
    """The unlabelled recordings of one role folder (ROLE/unlabelled/<group>/), sorted by path; kind is the group."""
    folder = role_dir / "unlabelled"
    if not folder.is_dir():
        raise RealSetError(f"{folder}: no such folder (fetch_real_audio.py writes effects[:WHAT] rows there)")
    found = [Recording(p, str(p.relative_to(role_dir)), group.name)
             for group in sorted(d for d in folder.iterdir() if d.is_dir()) for p in _audio_files(group)]
    if not found:
        raise RealSetError(f"{folder}: no recordings under unlabelled/<group>/")
    return found


def events_of(alert: np.ndarray, start: int) -> list[tuple[float, float]]:
    """Sounding spans of `alert` placed at sample `start`, in seconds, joined across gaps under EVENT_GAP."""
    offset = start / SAMPLE_RATE
    return [(round(a + offset, 3), round(b + offset, 3)) for a, b in merge_segments(active_segments(alert),
                                                                                     EVENT_GAP)]


def _scale_to_level(x: np.ndarray, rng: np.random.Generator) -> float:
    """Gain bringing `x` to a random RMS level in LEVEL_DBFS, lowered if needed so its peak stays under 0.95."""
    rms = float(np.sqrt(np.mean(np.square(x, dtype=np.float64)) + 1e-20))
    gain = 10 ** (rng.uniform(*LEVEL_DBFS) / 20) / rms
    peak = float(np.max(np.abs(x))) * gain
    return gain * (0.95 / peak if peak > 0.95 else 1.0)


def free_excerpts(recordings: list[tuple[Recording, np.ndarray]], chunk_s: float, max_s: float | None
                  ) -> list[tuple[list[dict], np.ndarray]]:
    """Excerpts of `chunk_s` seconds of recordings of one kind (alert-free, or unlabelled) played one after another,
    so short recordings (a spoken prompt, a word) fill excerpts together and long ones are cut into several; the last
    excerpt is kept when it lasts at least MIN_FREE_S. Each comes with its pieces: the source recording, the
    offset in it and the offset in the excerpt (s). At most `max_s` seconds of each recording are used."""
    n, out = samples(chunk_s), []
    pending: list[np.ndarray] = []
    pieces: list[dict] = []
    filled = 0
    for recording, x in recordings:
        x = x[:samples(max_s)] if max_s is not None else x
        used = 0
        while used < len(x):
            take = min(n - filled, len(x) - used)
            pieces.append({"source": recording.relative, "offset_s": round(used / SAMPLE_RATE, 3),
                           "at_s": round(filled / SAMPLE_RATE, 3)})
            pending.append(x[used:used + take])
            used, filled = used + take, filled + take
            if filled == n:
                out.append((pieces, np.concatenate(pending)))
                pending, pieces, filled = [], [], 0
    if filled >= samples(MIN_FREE_S):
        out.append((pieces, np.concatenate(pending)))
    return out


def _background(free: list[tuple[Recording, np.ndarray]], n: int, rng: np.random.Generator
                ) -> tuple[Recording, int, np.ndarray]:
    """`n` samples of one random alert-free recording from a random place (looped when shorter)."""
    recording, x = free[int(rng.integers(len(free)))]
    if len(x) < n:
        x = np.tile(x, n // max(1, len(x)) + 1)
    start = int(rng.integers(0, len(x) - n + 1))
    return recording, start, x[start:start + n].astype(np.float32)


def mixture(alert: np.ndarray, free: list[tuple[Recording, np.ndarray]], clip_s: float, snr_db: float,
            rng: np.random.Generator) -> tuple[Clip, dict]:
    """A real alert excerpt (at most clip_s - 2 s, placed at least 1 s in) over a real background at `snr_db`."""
    n = samples(clip_s)
    longest = n - samples(2.0)
    if len(alert) > longest:
        first = int(rng.integers(0, len(alert) - longest + 1))
        alert = alert[first:first + longest]
    earliest, latest = samples(1.0), n - len(alert) - samples(0.5)  # 1 s of background before, 0.5 s after
    start = int(rng.integers(earliest, latest + 1)) if latest > earliest else earliest
    recording, bg_start, background = _background(free, n, rng)
    placed = np.zeros(n, dtype=np.float32)
    placed[start:start + len(alert)] = alert[:n - start]
    bg_power = float(np.mean(np.square(background, dtype=np.float64)) + 1e-20)
    placed *= np.float32(np.sqrt(bg_power / active_power(placed[start:start + len(alert)])) * 10 ** (snr_db / 20))
    mix = background + placed
    gain = np.float32(_scale_to_level(mix, rng))
    events = events_of(placed[start:start + len(alert)], start)
    info = {"background": recording.relative, "background_kind": recording.kind,
            "background_offset_s": round(bg_start / SAMPLE_RATE, 3), "alert_snr_db": snr_db}
    return Clip(mix * gain, np.zeros(n, dtype=np.float32), placed * gain, [], {}), dict(info, events=events)


def isolated(alert: np.ndarray, free: list[tuple[Recording, np.ndarray]], rng: np.random.Generator
             ) -> tuple[Clip, dict]:
    """The alert recording (up to MAX_ISOLATED_S) with LEAD_S of background either side, ISOLATED_SNR_DB over it."""
    alert = alert[:samples(MAX_ISOLATED_S)]
    lead = samples(LEAD_S)
    n = len(alert) + 2 * lead
    recording, bg_start, background = _background(free, n, rng)
    placed = np.zeros(n, dtype=np.float32)
    placed[lead:lead + len(alert)] = alert
    bg_power = float(np.mean(np.square(background, dtype=np.float64)) + 1e-20)
    background *= np.float32(np.sqrt(active_power(alert) / bg_power) * 10 ** (-ISOLATED_SNR_DB / 20))
    mix = background + placed
    gain = np.float32(_scale_to_level(mix, rng))
    info = {"background": recording.relative, "background_kind": recording.kind,
            "background_offset_s": round(bg_start / SAMPLE_RATE, 3), "alert_snr_db": None,
            "isolated_snr_db": ISOLATED_SNR_DB}
    return Clip(mix * gain, np.zeros(n, dtype=np.float32), placed * gain, [], {}), dict(info,
                                                                                       events=events_of(alert, lead))


def parse_snr_range(text: str) -> list[tuple[float, float]]:
    """--snr LOW,HIGH[,STEP]: buckets [LOW, LOW+STEP), ..., up to HIGH (STEP 5 dB by default)."""
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        values = []
    if len(values) not in (2, 3) or values[0] >= values[1] or (len(values) == 3 and values[2] <= 0):
        raise ValueError(f"expected LOW,HIGH[,STEP] with LOW < HIGH and STEP > 0 (dB), got {text!r}")
    low, high, step = values[0], values[1], values[2] if len(values) == 3 else 5.0
    edges = list(np.arange(low, high, step)) + [high]
    return [(float(a), float(b)) for a, b in zip(edges[:-1], edges[1:])]
