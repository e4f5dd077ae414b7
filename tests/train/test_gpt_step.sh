#!/usr/bin/env bash
# test_gpt_step.sh CLTRAIN - one AdamW training step of the zoo's gpt against
# PyTorch's from the same weights: the loss and every parameter after the
# step within 1e-4 relative (tests/train/compare_step.py says how and why),
# in both device classes. The reference, tests/data/gpt_step_ref.safetensors,
# was written by tools/record_gpt_step.sh (PyTorch in float64, one step on
# the 64 windows of tests/data/gpt_step.txt, seq 128, as one batch of 64);
# the initial weights are cltrain's for --seed 7, so a change to the
# initialization shows here first: record the reference again then.
# Then 30 steps on that batch (the CPU class; the GPU class's GEMMs on pocl
# take seconds a step): each step's loss within 1e-3 relative of PyTorch's
# (tests/data/gpt_steps_losses.txt, float64). float32 rounding compounds
# over the steps: measured 1.3e-4 after 30, growing about linearly. (In the
# sanitizer run, 6 steps: the same code, a 30-step run took 2 minutes there.)
# Needs only the standard library's python3.
set -u
cltrain=$1
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
text=$root/tests/data/gpt_step.txt
for k in cpu gpu; do
    if ! CLTRAIN_KERNELS=$k "$cltrain" train --model gpt \
            --data "text:$text:tokens=byte:seq=128:test=$text" --epochs 1 --batch 64 \
            --optimizer adamw --lr 1e-3 --schedule constant --seed 7 --no-progress \
            --out "$tmp/$k.safetensors" --log "$tmp/$k.json" >"$tmp/out" 2>&1; then
        bad "$k class: training failed"; tail -n 12 "$tmp/out" | sed 's/^/  | /'; continue
    fi
    steps=$(python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).readline())['step'])" "$tmp/$k.json")
    [ "$steps" = 1 ] && ok "$k class: one step" || bad "$k class: $steps steps, want 1"
    loss=$(python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).readline())['train_loss'])" "$tmp/$k.json")
    if python3 "$root/tests/train/compare_step.py" "$root/tests/data/gpt_step_ref.safetensors" \
            "$tmp/$k.safetensors" "$loss" >"$tmp/cmp" 2>&1; then
        ok "$k class: loss and parameters after the step ($(tail -n 1 "$tmp/cmp"))"
    else
        bad "$k class: differs from the reference"; sed 's/^/  | /' "$tmp/cmp"
    fi
done
nsteps=30
[ "$sanitized" = 1 ] && nsteps=6
if CLTRAIN_KERNELS=cpu "$cltrain" train --model gpt --data "text:$text:tokens=byte:seq=128:test=$text" \
        --epochs $nsteps --batch 64 --optimizer adamw --lr 1e-3 --schedule constant --seed 7 --no-progress \
        --log "$tmp/30.json" >"$tmp/out" 2>&1; then
    if python3 - "$tmp/30.json" "$root/tests/data/gpt_steps_losses.txt" $nsteps <<'EOF'; then ok "$nsteps steps: every loss within 1e-3 of PyTorch's"; else bad "$nsteps steps differ from PyTorch's"; fi
import json, sys
got = [json.loads(line)["train_loss"] for line in open(sys.argv[1])]
want = [float(v) for v in open(sys.argv[2])][:int(sys.argv[3])]
if len(got) != len(want):
    sys.exit(f"  {len(got)} steps, want {len(want)}")
worst = max(abs(a - b) / b for a, b in zip(got, want))
print(f"  step 1 {got[0]:.6f} / {want[0]:.6f}, step {len(got)} {got[-1]:.6f} / {want[-1]:.6f}; "
      f"worst relative difference {worst:.2e}")
sys.exit(0 if worst <= 1e-3 else 1)
EOF
else
    bad "$nsteps steps: training failed"; tail -n 12 "$tmp/out" | sed 's/^/  | /'
fi
finish gpt-step
