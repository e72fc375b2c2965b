"""Speech: espeak-ng voices (many languages, variants, rates, pitches) and researcher-provided recordings.

Voices are split by language and by variant (index modulo 10: 0–7 train, 8 val, 9 test), so the validation and
test splits hear languages and voice variants the model never heard in training. Texts are pseudo-sentences
drawn from the clip's own seed.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

from . import SAMPLE_RATE
from .sources import load_audio, random_excerpt

_WORDS = (
    "the a of and to in is you that it he was for on are as with his they at be this have from or one had by "
    "word but not what all were we when your can said there use an each which she do how their if will up other "
    "about out many then them these so some her would make like him into time has look two more write go see "
    "number no way could people my than first water been call who oil its now find long down day did get come "
    "made may part over new sound take only little work know place year live me back give most very after thing "
    "our just name good sentence man think say great where help through much before line right too mean old any "
    "same tell boy follow came want show also around form three small set put end does another well large must "
    "big even such because turn here why ask went men read need land different home us move try kind hand picture"
).split()
_ONSETS = ["", "b", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "st", "tr", "ch",
           "sh", "kl", "pl", "gr"]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ou", "ee", "oo", "ia"]
_CODAS = ["", "", "n", "m", "s", "t", "r", "l", "k", "nd", "st"]


def _espeak_list(kind: str | None = None) -> list[tuple[str, str]]:
    args = ["espeak-ng", "--voices" if kind is None else f"--voices={kind}"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout.splitlines()[1:]
    rows = []
    for line in out:
        parts = line.split()
        if len(parts) >= 5:
            rows.append((parts[1], parts[4]))  # language code, file
    return rows


def espeak_version() -> str:
    out = subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True, check=True).stdout
    return out.strip()


def _speaks(voice: str) -> bool:
    """Some listed voices fail to load (e.g. a language tag espeak-ng lists but cannot select by name)."""
    return subprocess.run(["espeak-ng", "-v", voice, "-q", "a"], capture_output=True).returncode == 0


def _by_split(items: list[str], split: str) -> list[str]:
    chosen = []
    for i, item in enumerate(sorted(set(items))):
        bucket = i % 10
        owner = "train" if bucket < 8 else ("val" if bucket == 8 else "test")
        if owner == split:
            chosen.append(item)
    return chosen


@dataclass
class SpeechSource:
    """Where one split's speech comes from: its espeak-ng languages and variants, a bank of utterances spoken
    with them (synthesised once per split, so clips and babble draw from it cheaply), and its recordings."""

    split: str
    languages: list[str]
    variants: list[str]
    recordings: list[Path] = field(default_factory=list)
    bank: list[tuple[np.ndarray, str]] = field(default_factory=list)

    @classmethod
    def for_split(cls, split: str, recordings: list[Path]) -> "SpeechSource":
        languages = [lang for lang, _ in _espeak_list()]
        variants = [Path(f).name for _, f in _espeak_list("variant")]
        usable = [lang for lang in _by_split(languages, split) if _speaks(lang)]
        return cls(split, usable, _by_split(variants, split), recordings)

    def speak(self, rng: np.random.Generator, workdir: str) -> tuple[np.ndarray, str]:
        """A new espeak-ng utterance: random voice of this split, rate, pitch and pseudo-sentence."""
        voice = str(rng.choice(self.languages))
        if self.variants and rng.random() < 0.8:
            voice += "+" + str(rng.choice(self.variants))
        rate, pitch = int(rng.integers(110, 230)), int(rng.integers(5, 95))
        x = synthesise(pseudo_sentence(rng), voice, rate, pitch, workdir)[: MAX_UTTERANCE * SAMPLE_RATE]
        return x, f"espeak:{voice}:s{rate}:p{pitch}"

    def utterance(self, rng: np.random.Generator, workdir: str) -> tuple[np.ndarray, str]:
        """One utterance (float32 at SAMPLE_RATE) and a short description of its voice: from the recordings
        (70 % when there are any), else from the bank, else freshly spoken."""
        if self.recordings and rng.random() < 0.7:
            path = self.recordings[int(rng.integers(len(self.recordings)))]
            x = load_audio(path)
            return random_excerpt(x, min(len(x), int(rng.uniform(2, 8) * SAMPLE_RATE)), rng), path.name
        if self.bank:
            return self.bank[int(rng.integers(len(self.bank)))]
        return self.speak(rng, workdir)


MAX_UTTERANCE = 8  # seconds; some voices spell unknown words letter by letter and run on


def pseudo_sentence(rng: np.random.Generator) -> str:
    words = []
    for _ in range(int(rng.integers(4, 16))):
        if rng.random() < 0.6:
            words.append(str(rng.choice(_WORDS)))
        else:
            words.append("".join(str(rng.choice(_ONSETS)) + str(rng.choice(_VOWELS)) + str(rng.choice(_CODAS))
                                 for _ in range(int(rng.integers(1, 4)))))
    punct = str(rng.choice([".", ".", "?", "!", ","]))
    return " ".join(words) + punct


def synthesise(text: str, voice: str, rate: int, pitch: int, workdir: str) -> np.ndarray:
    """Speak `text` with espeak-ng into a temporary WAV and return it at SAMPLE_RATE."""
    fd, path = tempfile.mkstemp(suffix=".wav", dir=workdir)
    os.close(fd)
    try:
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(rate), "-p", str(pitch), "-w", path, "--", text],
                       check=True, capture_output=True)
        x, rate_in = sf.read(path, dtype="float32")
    finally:
        os.unlink(path)
    if x.ndim > 1:
        x = x.mean(axis=1)
    return soxr.resample(x, rate_in, SAMPLE_RATE, quality="HQ").astype(np.float32)


def speech_track(rng: np.random.Generator, n: int, source: SpeechSource, workdir: str,
                 density: float | None = None) -> tuple[np.ndarray, list[str]]:
    """`n` samples of conversation-like speech: utterances with pauses, covering about `density` of the time."""
    density = rng.uniform(0.4, 1.0) if density is None else density
    out = np.zeros(n, dtype=np.float32)
    voices = []
    pos = int(rng.uniform(0, 1.0) * SAMPLE_RATE * (1 - density))
    while pos < n:
        x, who = source.utterance(rng, workdir)
        x = x / (np.sqrt(np.mean(x.astype(np.float64) ** 2)) + 1e-9) * 10 ** (rng.uniform(-4, 4) / 20)
        take = min(len(x), n - pos)
        out[pos:pos + take] += x[:take]
        voices.append(who)
        pause = len(x) * (1 - density) / max(density, 0.05) * rng.uniform(0.5, 1.5)
        pos += take + int(pause) + int(rng.uniform(0.05, 0.4) * SAMPLE_RATE)
    return out, voices
