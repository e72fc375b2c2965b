#!/usr/bin/env bash
# The main job, on the bundled default model and demo clip (speech in noise with a smoke alarm and a siren):
# installs what is missing, builds, prints the alerts the detector finds in models/demo.wav, and writes the
# enhanced speech — with those alerts kept audible — to out/demo-enhanced.wav.
# Set HEARALERT_MODEL to try another weight file, or pass another clip: tools/demo.sh [AUDIO_FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh

clip="${1:-models/demo.wav}"
model="${HEARALERT_MODEL:-models/default.safetensors}"
echo "demo: building hearalert (release)" >&2
swift build -c release --product hearalert >&2
hearalert=.build/release/hearalert
mkdir -p out
name=$(basename "$clip")
name="${name%.*}"

echo "demo: alerts in $clip (model $model):" >&2
"$hearalert" detect "$clip" --model "$model" --format text
"$hearalert" detect "$clip" --model "$model" --format tsv > "out/$name-alerts.tsv"
"$hearalert" enhance "$clip" "out/$name-enhanced.wav" --alert-intervals "out/$name-alerts.tsv"
echo "demo: enhanced speech (alerts kept audible) in out/$name-enhanced.wav; events in out/$name-alerts.tsv" >&2
