#!/usr/bin/env bash
# The default model's recipe, from nothing to models/default.safetensors and its scores on real recordings.
#
#   tools/recipes/default.sh [WORK]        (WORK: where audio, corpora and caches go; default corpora/recipe)
#
# 1. real audio from pinned public sources (tools/real_audio*.tsv, tools/alert_recordings.tsv), by role:
#    train (heard in training or distillation), dev (model choice only), test (never heard)
# 2. the synthetic corpus (make_corpus.py), a regression check and the bulk of the labelled alerts
# 3. real sets (make_real_set.py): labelled real alerts in real backgrounds for training; alert-free real audio
#    to distil the YAMNet teacher on; a development set and a test set, disjoint by source
# 4. training (train.py), in two stages: a first network from random weights, then that network fine-tuned
#    (--init) with the YAMNet teacher's scores on unlabelled real sound effects added to the distillation audio
#    and half of each label's positive windows drawn from the real train alerts (--real-positive-fraction 0.5);
#    checkpoints chosen on the real development set; neither stage tunes thresholds (--no-tune) or reads the test
#    set, since step 5 makes the one choice of thresholds and step 6 the one test reading
# 5. thresholds and tracker (retune.py) chosen on the real development set: at most 2 false alarms per hour on its
#    real alert-free audio kept with 95 % confidence (--fa-target), then per label where the set has the label,
#    only upward (--raise-only)
# 6. scores on the real test set (score_real.py through the host) and the synthetic test split
# Every step prints what it wrote; a step whose output exists is not redone (delete it to redo it).
# Environment: THREADS (torch threads, default 2), SEED (training seed, default 1), MIRROR (a folder of git
# repositories, MIRROR/OWNER+NAME/repo, read instead of cloning from GitHub: for a machine without GitHub access).
set -euo pipefail
cd "$(dirname "$0")/../.."
WORK=${1:-corpora/recipe}
THREADS=${THREADS:-2}
SEED=${SEED:-1}
PY=.venv/bin/python
mkdir -p "$WORK"
tools/setup.sh --python
step() { printf '\n== %s (%s)\n' "$1" "$(date +%T)" >&2; }

step "real recordings"
$PY tools/fetch_real_audio.py --out "$WORK/real" --cache "$WORK/cache" --skip-existing \
    --sources-tsv "$WORK/SOURCES.tsv" ${MIRROR:+--mirror-dir "$MIRROR"}
cmp -s "$WORK/SOURCES.tsv" models/SOURCES.tsv ||
  echo "recipe: $WORK/SOURCES.tsv differs from models/SOURCES.tsv: the manifests changed; commit the new rows" >&2
step "synthetic corpus"
[ -f "$WORK/alerts/splits.tsv" ] || $PY tools/fetch_alert_recordings.py --out "$WORK/alerts" --debs "$WORK/cache/debs"
[ -f "$WORK/synth/test/corpus.json" ] || $PY tools/make_corpus.py --out "$WORK/synth" \
    --splits train=16,val=1.5,test=1.5 --seed 2026 --alerts-dir "$WORK/alerts" --real-alert-fraction 0.25 --no-progress
step "real sets"
real_set() {  # real_set NAME ROLE SEED [make_real_set.py options]
  local name=$1 role=$2 seed=$3
  shift 3
  [ -f "$WORK/$name/corpus.json" ] || $PY tools/make_real_set.py --real "$WORK/real" --role "$role" \
      --out "$WORK/$name" --seed "$seed" "$@"
}
real_set real-train-alerts train 13 --kinds mixture,isolated --mixtures-per-alert 20 --snr=-10,15 --speed 0.8,1.25 \
    --alert-components
real_set real-train-free train 13 --kinds free --max-free-seconds 180
real_set real-train-fx train 13 --kinds effects
real_set real-dev dev 11
real_set real-test test 12
step "training"
common=(--train "$WORK/synth/train" --train "$WORK/real-train-alerts" --val "$WORK/real-dev"
        --cache "$WORK/cache/features" --seed "$SEED" --threads "$THREADS" --frames 96 --start-padding 90
        --region 0.2 --onset-lag 0.2 --channels 24,48,96,192 --hard-negatives 0.15 --minutes 120
        --select-fa-weight 0.002 --no-tune)
[ -f "$WORK/stage1.safetensors" ] || $PY tools/train.py "${common[@]}" --distill "$WORK/real-train-free" \
    --out "$WORK/stage1.safetensors" --report "$WORK/stage1.json" --steps 8000 --eval-every 2000 --patience 3
[ -f "$WORK/stage2.safetensors" ] || $PY tools/train.py "${common[@]}" --distill "$WORK/real-train-free" \
    --distill "$WORK/real-train-fx" --init "$WORK/stage1.safetensors" --lr 5e-4 --steps 2000 --eval-every 500 \
    --patience 2 --real-positive-fraction 0.5 --out "$WORK/stage2.safetensors" --report "$WORK/stage2.json"
step "thresholds"
$PY tools/retune.py --model "$WORK/stage2.safetensors" --val "$WORK/real-dev" --fa-target 2 --per-label-thresholds \
    --raise-only --rise-ratios 0.3 --scores-cache "$WORK/cache/dev-scores.npz" --out models/default.safetensors \
    --report "$WORK/report.json"
step "scores"
swift build -c release >&2
$PY tools/score_real.py --corpus "$WORK/real-test" --model models/default.safetensors --json "$WORK/real-test.json"
.build/release/hearalert evaluate --corpus "$WORK/synth/test" --model models/default.safetensors --no-enhancement \
    --json "$WORK/synth-test.json" | tail -n 25
