"""The real-time path allocates nothing per frame (STYLE: capture -> features -> CNN -> enhancer -> playback).

`hearalert-realtime-probe` builds every real-time component, warms it up, then feeds it N frames of 10 ms
audio and prints nothing that depends on N. Under valgrind's memcheck, the heap's total allocation count
("total heap usage: X allocs") is then the same for N and 2N frames exactly when a frame allocates nothing; any
per-frame allocation adds at least N. One run pair covers every stage; only when the totals differ are the
stages run one by one to name the culprit. A deliberately allocating stage shows the check can fail.

The probe is the release build, what people run (a debug build allocates about a thousand times per frame:
unoptimised Swift boxes and copies freely, so it says nothing about the product). Valgrind 3.19 cannot read the DWARF 5 debug information Swift
writes, so it runs a copy without debug sections. Hashing is made deterministic (SWIFT_DETERMINISTIC_HASHING):
Swift seeds it randomly per process, which changes how many allocations building the components takes.

    .venv/bin/python -m pytest -q tools/tests/test_realtime_allocations.py
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VALGRIND = shutil.which("valgrind")
FRAMES = 800  # a multiple of every stage's cycle (the 8 s audio loop is 800 frames)
# Stages the probe must run: a stage dropped from the probe must not pass silently.
REQUIRED_STAGES = {"ring", "features", "stft", "cnn", "tracker", "enhancer", "detector", "live-chain",
                   "detector-restarts"}
ALLOCATING_STAGE = "self-test-allocating"

pytestmark = pytest.mark.skipif(VALGRIND is None, reason="valgrind is not installed (apt install valgrind)")


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    """The release hearalert-realtime-probe, built if needed, copied without debug sections."""
    build = ["swift", "build", "-c", "release", "--product", "hearalert-realtime-probe"]
    result = subprocess.run(build, cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(build)} failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
    bin_dir = subprocess.run(build + ["--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True)
    stripped = tmp_path_factory.mktemp("probe") / "hearalert-realtime-probe"
    subprocess.run(["objcopy", "--strip-debug", str(Path(bin_dir.stdout.strip()) / "hearalert-realtime-probe"),
                    str(stripped)], check=True)
    return stripped


def heap_allocations(probe, frames, stages=None, xtree=None):
    """Total heap allocations of one probe run under memcheck, and the stages it reported done; with `xtree`, a
    file path, valgrind also writes there the allocations made under each function."""
    environment = dict(os.environ, SWIFT_DETERMINISTIC_HASHING="1", HEARALERT_PROBE_FRAMES=str(frames))
    if stages is not None:
        environment["HEARALERT_PROBE_STAGES"] = ",".join(stages)
    command = [VALGRIND, "--tool=memcheck", "--leak-check=no", "--undef-value-errors=no"]
    if xtree:
        command += ["--xtree-memory=full", f"--xtree-memory-file={xtree}"]
    command += [str(probe)]
    result = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"realtime-probe failed under valgrind:\n{result.stdout}{result.stderr[-3000:]}"
    usage = re.search(r"total heap usage: ([\d,]+) allocs", result.stderr)
    assert usage, f"no heap summary from valgrind:\n{result.stderr[-3000:]}"
    done = re.findall(r"^realtime-probe: (\S+) ok:", result.stdout, flags=re.MULTILINE)
    return int(usage.group(1).replace(",", "")), done


def test_real_time_path_allocates_nothing_per_frame(probe, tmp_path):
    once, stages = heap_allocations(probe, FRAMES)
    twice, _ = heap_allocations(probe, 2 * FRAMES)
    assert REQUIRED_STAGES <= set(stages), f"the probe skipped stages: {sorted(REQUIRED_STAGES - set(stages))}"
    if once == twice:
        return
    report = []
    for stage in stages:
        trees = [tmp_path / f"{stage}.{frames}.xtree" for frames in (FRAMES, 2 * FRAMES)]
        extra = (heap_allocations(probe, 2 * FRAMES, [stage], trees[1])[0]
                 - heap_allocations(probe, FRAMES, [stage], trees[0])[0])
        if extra:
            report.append(f"  {stage}: {extra:+d} allocations, made under these functions (allocations over the "
                          f"extra frames; the probe's loop, then the component, then the allocator):\n"
                          + allocating_functions(*trees))
    pytest.fail(f"{twice - once:+d} heap allocations over {FRAMES} more frames of the real-time path\n"
                + ("\n".join(report) or "  no stage allocates alone (an interaction between stages)"))


def allocating_functions(fewer, more, limit=30):
    """Functions under which allocations grew between two xtree files (everything else is identical), most first,
    with Swift names demangled: the component's function that allocates is among them."""
    def blocks_per_function(path):
        text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(path)],
                              capture_output=True, text=True, check=True).stdout
        counts = {}
        for line in text.splitlines():
            # Six event columns (curB curBk totB totBk totFdB totFdBk), each maybe with a percentage, then
            # file:function. totBk is the number of blocks allocated under the function, callees included.
            match = re.match(r"^\s*((?:[\d,]+(?: \(\s*[\d.]+%\))?\s+){6})(\S.*)$", line)
            if match:
                numbers = re.sub(r"\(\s*[\d.]+%\)", "", match.group(1)).split()
                counts[match.group(2).partition(":")[2]] = int(numbers[3].replace(",", ""))
        return counts

    before, after = blocks_per_function(fewer), blocks_per_function(more)
    grown = sorted(((after[name] - before.get(name, 0), name) for name in after
                    if name and after[name] > before.get(name, 0)), key=lambda item: -item[0])[:limit]
    names = "\n".join(name for _, name in grown)
    demangled = subprocess.run(["swift", "demangle", "--simplified"], input=names, capture_output=True,
                               text=True).stdout.splitlines()
    if len(demangled) != len(grown):
        demangled = names.splitlines()
    return "\n".join(f"    {count:+8d}  {name[:160]}" for (count, _), name in zip(grown, demangled))


def test_the_check_sees_an_allocation_per_frame(probe):
    once, stages = heap_allocations(probe, FRAMES, [ALLOCATING_STAGE])
    twice, _ = heap_allocations(probe, 2 * FRAMES, [ALLOCATING_STAGE])
    assert stages == [ALLOCATING_STAGE]
    assert twice - once >= FRAMES, f"one allocation per frame went unseen: {once} vs {twice} allocations"
