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
