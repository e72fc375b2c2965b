"""argparse value types the tools share, so a bad number is one clear line before any work starts."""

from __future__ import annotations

import argparse


def number_in(low: float, high: float = float("inf"), high_open: bool = False):
    """An argparse type: a number in [low, high], or [low, high) with `high_open`."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not (low <= value and (value < high if high_open else value <= high)):
            raise argparse.ArgumentTypeError(f"{text} is not in [{low:g}, {high:g}{')' if high_open else ']'}")
        return value
    return parse


def rise_ratios(text: str) -> tuple[float | None, ...]:
    """An argparse type for the tracker's onset_rise_ratio candidates: values in (0, 1] or "none", e.g.
    none,0.3,0.2 (none: stamp the onset at the threshold crossing)."""
    values: list[float | None] = []
    for v in text.split(","):
        try:
            values.append(None if v == "none" else float(v))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{v!r} is neither a number nor 'none'") from None
        if values[-1] is not None and not 0 < values[-1] <= 1:
            raise argparse.ArgumentTypeError(f"rise ratio {v} is not in (0, 1]")
    return tuple(values)
