#!/usr/bin/env bash
# record_gpt_step.sh [CLTRAIN] - writes tests/data/gpt_step_ref.safetensors,
# the reference that the gpt-step test compares cltrain's one AdamW step of
# the zoo gpt against: cltrain writes the initial weights of `--seed 7`
# (one step at lr 1e-12, which moves no weight by more than 1e-12), then
# tools/pytorch_gpt.py takes one AdamW step (lr 1e-3, weight decay 0.01) from
# them in float64 on the 64 windows of tests/data/gpt_step.txt as one batch.
# Also tests/data/gpt_steps_losses.txt: the loss of each of 30 AdamW steps
# on that same batch, which the test compares cltrain's 30 steps with.
# Needs Debian's python3-torch. Run it again when the initialization changes.
set -euo pipefail
cd "$(dirname "$0")/.."
cltrain=${1:-build/tools/cltrain}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cltrain" train --model gpt --data text:tests/data/gpt_step.txt:tokens=byte:seq=128:test=tests/data/gpt_step.txt \
    --epochs 1 --batch 64 --optimizer adamw --lr 1e-12 --schedule constant --seed 7 \
    --no-progress --out "$tmp/init.safetensors" >/dev/null
/usr/bin/python3 tools/pytorch_gpt.py step "$tmp/init.safetensors" tests/data/gpt_step.txt \
    --lr 1e-3 --weight-decay 0.01 --out tests/data/gpt_step_ref.safetensors
/usr/bin/python3 tools/pytorch_gpt.py step "$tmp/init.safetensors" tests/data/gpt_step.txt \
    --lr 1e-3 --weight-decay 0.01 --steps 30 --losses tests/data/gpt_steps_losses.txt \
    --out "$tmp/after30.safetensors" >/dev/null
