"""Room acoustics: a bank of random shoebox rooms simulated with pyroomacoustics' image-source method.

Simulating a room per clip would dominate generation time, so each split draws its own bank of rooms (from its
own seed: no room shared between splits); a clip picks a room and distinct source positions in it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyroomacoustics as pra

from .signals import SR

SOURCES_PER_ROOM = 5
MAX_ORDER = 20
MAX_RIR_SECONDS = 1.0


@dataclass
class Room:
    dims: tuple[float, float, float]
    rt60: float
    distances: list[float]
    rirs: list[np.ndarray]

    def describe(self) -> dict:
        return {"dims_m": [round(d, 2) for d in self.dims], "rt60_s": round(self.rt60, 3)}


def random_room(rng: np.random.Generator) -> Room:
    while True:
        dims = (rng.uniform(3, 10), rng.uniform(2.5, 8), rng.uniform(2.3, 4))
        rt60 = rng.uniform(0.15, 0.9)
        try:
            absorption, order = pra.inverse_sabine(rt60, list(dims))
        except ValueError:  # room too small for that short a reverberation time: draw again
            continue
        break
    room = pra.ShoeBox(list(dims), fs=SR, materials=pra.Material(absorption), max_order=min(order, MAX_ORDER),
                       air_absorption=True)
    margin = 0.3
    mic = np.array([rng.uniform(margin, d - margin) for d in dims])
    distances = []
    for _ in range(SOURCES_PER_ROOM):
        pos = np.array([rng.uniform(margin, d - margin) for d in dims])
        room.add_source(pos)
        distances.append(float(np.linalg.norm(pos - mic)))
    room.add_microphone(mic)
    room.compute_rir()
    rirs = []
    for rir in room.rir[0]:
        rir = np.asarray(rir, dtype=np.float32)[: int(MAX_RIR_SECONDS * SR)]
        rirs.append(rir / (np.max(np.abs(rir)) + 1e-12))
    return Room(dims, rt60, distances, rirs)


def room_bank(seed_sequence: np.random.SeedSequence, count: int) -> list[Room]:
    """`count` rooms, each from its own child seed (so the bank does not depend on how it is computed)."""
    return [random_room(np.random.default_rng(child)) for child in seed_sequence.spawn(count)]
