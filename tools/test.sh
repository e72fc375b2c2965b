#!/usr/bin/env bash
# Runs every test HearAlert has: the C inference core alone (plain, under AddressSanitizer and
# UndefinedBehaviorSanitizer, under valgrind, and a one-minute libFuzzer run on its loader), the Swift package
# (Swift Testing) and the Python tools (pytest).
# Installs what is missing first (tools/setup.sh), so it works on a fresh Debian 12 machine with Swift.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh --python

echo "== alertnet C core" >&2
make -C CSources/alertnet test sanitize valgrind
make -C CSources/alertnet fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-60}"

echo "== Swift package" >&2
swift build --build-tests
swift test

echo "== Python tools" >&2
.venv/bin/python -m pytest -q tools/tests
