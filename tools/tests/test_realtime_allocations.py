"""The real-time path allocates nothing per frame (STYLE: capture -> features -> CNN -> enhancer -> playback).

`hearalert-bench realtime-probe` builds every real-time component, warms it up, then feeds it N frames of 10 ms
audio and prints nothing that depends on N. Under valgrind's memcheck, the heap's total allocation count
("total heap usage: X allocs") is then the same for N and 2N frames exactly when a frame allocates nothing; any
per-frame allocation adds at least N. One run pair covers every stage; only when the totals differ are the
stages run one by one to name the culprit. A deliberately allocating stage shows the check can fail.

The probe is the release build (what people run). Valgrind 3.19 cannot read the DWARF 5 debug information Swift
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
REQUIRED_STAGES = {"ring", "features", "stft", "cnn", "tracker", "enhancer"}
ALLOCATING_STAGE = "self-test-allocating"

pytestmark = pytest.mark.skipif(VALGRIND is None, reason="valgrind is not installed (apt install valgrind)")


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    """The release hearalert-bench, built if needed, copied without debug sections."""
    build = ["swift", "build", "-c", "release", "--product", "hearalert-bench"]
    result = subprocess.run(build, cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(build)} failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
    bin_dir = subprocess.run(build + ["--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True)
    stripped = tmp_path_factory.mktemp("probe") / "hearalert-bench"
    subprocess.run(["objcopy", "--strip-debug", str(Path(bin_dir.stdout.strip()) / "hearalert-bench"),
                    str(stripped)], check=True)
    return stripped


def heap_allocations(probe, frames, stages=None):
    """Total heap allocations of one probe run under memcheck, and the stages it reported done."""
    environment = dict(os.environ, SWIFT_DETERMINISTIC_HASHING="1", HEARALERT_PROBE_FRAMES=str(frames))
    if stages is not None:
        environment["HEARALERT_PROBE_STAGES"] = ",".join(stages)
    command = [VALGRIND, "--tool=memcheck", "--leak-check=no", "--undef-value-errors=no", str(probe),
               "realtime-probe"]
    result = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"realtime-probe failed under valgrind:\n{result.stdout}{result.stderr[-3000:]}"
    usage = re.search(r"total heap usage: ([\d,]+) allocs", result.stderr)
    assert usage, f"no heap summary from valgrind:\n{result.stderr[-3000:]}"
    done = re.findall(r"^realtime-probe: (\S+) ok:", result.stdout, flags=re.MULTILINE)
    return int(usage.group(1).replace(",", "")), done


def test_real_time_path_allocates_nothing_per_frame(probe):
    once, stages = heap_allocations(probe, FRAMES)
    twice, _ = heap_allocations(probe, 2 * FRAMES)
    assert REQUIRED_STAGES <= set(stages), f"the probe skipped stages: {sorted(REQUIRED_STAGES - set(stages))}"
    if once == twice:
        return
    growth = {}
    for stage in stages:
        extra = heap_allocations(probe, 2 * FRAMES, [stage])[0] - heap_allocations(probe, FRAMES, [stage])[0]
        if extra:
            growth[stage] = extra
    culprits = ", ".join(f"{stage} (+{extra})" for stage, extra in growth.items()) or "none alone (an interaction)"
    pytest.fail(f"{twice - once:+d} heap allocations over {FRAMES} more frames of the real-time path; "
                f"stages that allocate per frame: {culprits}. Find the call with: SWIFT_DETERMINISTIC_HASHING=1 "
                f"HEARALERT_PROBE_STAGES=<stage> valgrind --tool=massif or --xtree-memory=full on realtime-probe")


def test_the_check_sees_an_allocation_per_frame(probe):
    once, stages = heap_allocations(probe, FRAMES, [ALLOCATING_STAGE])
    twice, _ = heap_allocations(probe, 2 * FRAMES, [ALLOCATING_STAGE])
    assert stages == [ALLOCATING_STAGE]
    assert twice - once >= FRAMES, f"one allocation per frame went unseen: {once} vs {twice} allocations"
