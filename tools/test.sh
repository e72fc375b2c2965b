#!/usr/bin/env bash
# Runs every test HearAlert has: the Swift package (Swift Testing) and the Python tools (pytest).
# Installs what is missing first (tools/setup.sh), so it works on a fresh Debian 12 machine with Swift.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh --python

echo "== Swift package" >&2
swift build --build-tests
swift test

echo "== Python tools" >&2
.venv/bin/python -m pytest -q tools/tests
