#!/usr/bin/env bash
# test_accumulate.sh CLTRAIN [MPIRUN] - gradient accumulation (--accumulate K):
# K micro-batches of --batch rows per optimizer step must compute the step
# of one batch of K x --batch rows:
#  - the zoo's mlp (Adam, and with a dropout layer under SGD, which checks
#    that each micro-batch draws its slice of the big batch's mask) and the
#    zoo's gpt (SGD with momentum, and AdamW): --batch 16 --accumulate 4
#    against --batch 64, 10 optimizer steps: every step's loss and every
#    tensor of the final checkpoints (optimizer state included) within 1e-5
#    relative (normwise per tensor, tests/train/compare_ckpts.py); the mlp
#    runs on 700 samples, so both drop their last partial step alike (10
#    steps: 43 micro-batches make 10 steps of 4, 60 samples left out);
#  - with two pocl devices (POCL_DEVICES="pthread pthread"), --device
#    0:0,0:1 --batch 32 --accumulate 2 against one device at 64; with MPIRUN
#    (a build with MPI) the same over mpirun -np 2;
#  - --freeze and --check-finite: the same equivalence with a frozen layer
#    and a check every step, and a diverging run stopped at a step;
#  - the checkpoint records K ("accumulate"), --resume keeps it (bit for bit
#    the uninterrupted run), refuses another K; K < 1, K > 65536 and K
#    micro-batches larger than the training set are errors.
#
# Tolerance: the runs compute the same mathematics; the GEMMs sum 16 rows
# four times (the backward adds each into the parameter gradients) instead
# of 64 at once. SGD: measured <= 1.6e-7 (gpt) and <= 1.3e-7 (mlp) over 10
# steps. AdamW on gpt is the one exception: Adam divides each gradient by
# its own size, so where a gradient is a sum of cancelling terms within a
# few hundred eps of zero, the summation order alone moves the update by a
# fraction of lr (tests/train/compare_step.py): measured 1.16e-5 (the layer
# norm h0_ln2's bias; the median tensor 9e-7), and the same two batch-64
# runs with only the GEMM's order changed (CLTRAIN_HOST_GEMM=blas against
# the own kernel) differ by 1.46e-5 in the same tensor. Its parameters are
# held to 5e-5; its losses to 1e-5 (measured 3e-7). A micro-batch whose
# gradient is not scaled by 1/K, not added to the others, or a dropout mask
# not offset changes them by 1e-2 or more.
set -u
cltrain=$1
mpirun=${2:-}
. "$(dirname "$0")/../lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
export POCL_DEVICES=${POCL_DEVICES:-"pthread pthread"}
tol=1e-5

if [ ! -d /usr/share/datasets/fashion-mnist ]; then
    echo "Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)"; exit 1
fi

run() { # run NAME ARGS... : trains, logging to $tmp/NAME.jsonl, checkpoint $tmp/NAME.ckpt
    local name=$1; shift
    if ! "$cltrain" train --epochs 1 --log-every 1 --no-progress --schedule constant --log "$tmp/$name.jsonl" \
            --out "$tmp/$name.ckpt" "$@" >"$tmp/$name.out" 2>&1; then
        bad "$name: exit non-zero"; sed 's/^/  | /' "$tmp/$name.out" | tail -5; return 1
    fi
}

# same NAME A B RTOL [KEY=VALUE...]: A's and B's step losses within $tol (the
# same step numbers, 10 of them), and their checkpoints within RTOL
same() {
    local name=$1 a=$2 b=$3 rtol=$4 out; shift 4
    if out=$(python3 - "$tmp/$a.jsonl" "$tmp/$b.jsonl" "$tol" <<'PY'
import json, sys
def steps(p):
    return [(r["step"], r["train_loss"]) for r in map(json.loads, open(p)) if r["event"] == "step"]
a, b, tol = steps(sys.argv[1]), steps(sys.argv[2]), float(sys.argv[3])
if [s for s, _ in a] != list(range(1, 11)) or [s for s, _ in a] != [s for s, _ in b]:
    print(f"steps {[s for s, _ in a]} and {[s for s, _ in b]}"); sys.exit(1)
worst = max(abs(x - y) / abs(x) for (_, x), (_, y) in zip(a, b))
print(f"losses {worst:.2g}")
sys.exit(0 if worst <= tol else 1)
PY
    ) && out="$out, $(python3 "$here/compare_ckpts.py" "$tmp/$a.ckpt" "$tmp/$b.ckpt" "$rtol" "$@" 2>&1 | tail -n 1)" &&
       python3 "$here/compare_ckpts.py" "$tmp/$a.ckpt" "$tmp/$b.ckpt" "$rtol" "$@" >/dev/null 2>&1; then
        ok "$name: $out"
    else
        bad "$name: $out"
        python3 "$here/compare_ckpts.py" "$tmp/$a.ckpt" "$tmp/$b.ckpt" "$rtol" "$@" 2>&1 | sed 's/^/  | /' | tail -n 5
    fi
}

# 1. mlp: Adam (the default optimizer), and SGD with a dropout layer
mlp=(--model mlp --limit 700 --test-limit 64 --device 0:0)
run mlp64 "${mlp[@]}" --batch 64 && run mlp16x4 "${mlp[@]}" --batch 16 --accumulate 4 &&
same "mlp, Adam: 4 x 16 vs 64" mlp64 mlp16x4 $tol accumulate=4 step=10 batch=16
"$cltrain" zoo mlp | sed 's/^\(fc2: .*\)$/drop: dropout p=0.25\n\1/' >"$tmp/drop.model"
grep -q ': dropout' "$tmp/drop.model" || bad "could not write the dropout mlp"
drop=(--model "$tmp/drop.model" --limit 640 --test-limit 64 --optimizer sgd --lr 0.01)
run drop64 "${drop[@]}" --device 0:0 --batch 64 && run drop16x4 "${drop[@]}" --device 0:0 --batch 16 --accumulate 4 &&
same "mlp with dropout, SGD: 4 x 16 vs 64" drop64 drop16x4 $tol

# 2. gpt on the text test_text.sh makes (more of it: 640 windows of 128 bytes)
python3 - "$tmp" <<'EOF'
import random, sys
r = random.Random(7)
words = "the quick brown fox jumps over a lazy dog and then runs home again".split()
with open(f"{sys.argv[1]}/lm.train", "w") as f:
    for _ in range(2500):
        f.write(" ".join(r.choice(words) for _ in range(8)) + ".\n")
EOF
gpt=(--model gpt --data "text:$tmp/lm.train:tokens=byte:seq=128:test=$tmp/lm.train" --limit 640 --test-limit 8
     --device 0:0 --lr 1e-3)
run gsgd64 "${gpt[@]}" --optimizer sgd --batch 64 && run gsgd16x4 "${gpt[@]}" --optimizer sgd --batch 16 --accumulate 4 &&
same "gpt, SGD: 4 x 16 vs 64" gsgd64 gsgd16x4 $tol accumulate=4
run gadamw64 "${gpt[@]}" --optimizer adamw --batch 64 &&
run gadamw16x4 "${gpt[@]}" --optimizer adamw --batch 16 --accumulate 4 &&
same "gpt, AdamW: 4 x 16 vs 64 (parameters within the stated 5e-5)" gadamw64 gadamw16x4 5e-5 accumulate=4

# 3. replicas and ranks: two devices of 16 rows, two micro-batches per step
if [ "$("$cltrain" --devices | grep -c '^ *0:[01] ')" -ge 2 ]; then
    run drop2dev "${drop[@]}" --device 0:0,0:1 --batch 32 --accumulate 2 &&
    same "2 devices x 2 micro-batches of 32 vs 1 device at 64 (dropout)" drop64 drop2dev $tol accumulate=2
else
    bad "needs two OpenCL devices on platform 0 (POCL_DEVICES=\"pthread pthread\")"; "$cltrain" --devices
fi
if [ -n "$mpirun" ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    if timeout 120 "$mpirun" -np 2 --oversubscribe "$cltrain" train "${drop[@]}" --device 0:0 --batch 32 --accumulate 2 --epochs 1 \
            --log-every 1 --no-progress --schedule constant --log "$tmp/dropmpi.jsonl" --out "$tmp/dropmpi.ckpt" \
            >"$tmp/dropmpi.out" 2>&1; then
        same "mpirun -np 2, 2 micro-batches of 32 vs 1 process at 64 (dropout)" drop64 dropmpi $tol accumulate=2
    else
        bad "mpirun -np 2 --accumulate 2: exit non-zero"; tail -n 5 "$tmp/dropmpi.out" | sed 's/^/  | /'
    fi
fi

# 4. --freeze and --check-finite
run frz64 "${mlp[@]}" --freeze fc1 --check-finite 1 --batch 64 &&
run frz16x4 "${mlp[@]}" --freeze fc1 --check-finite 1 --batch 16 --accumulate 4 &&
same "--freeze fc1 --check-finite 1: 4 x 16 vs 64" frz64 frz16x4 $tol accumulate=4
expect "--check-finite stops a diverging accumulated run at its step" 1 \
    "non-finite values in training at step [0-9]+ \(epoch [0-9]+\)" -- "$cltrain" train --model mlp --limit 1000 \
    --test-limit 64 --batch 25 --accumulate 2 --optimizer sgd --lr 100 --check-finite 1 --epochs 3 --no-progress

# 5. resume keeps K; another K, K < 1, K > 65536, too many micro-batches
rs=(--model mlp --limit 640 --test-limit 64 --batch 16 --optimizer sgd --lr 0.01 --schedule constant --no-progress)
"$cltrain" train "${rs[@]}" --accumulate 4 --epochs 2 --out "$tmp/whole.ckpt" >/dev/null 2>&1
"$cltrain" train "${rs[@]}" --accumulate 4 --epochs 1 --out "$tmp/half.ckpt" >/dev/null 2>&1
expect "--resume without --accumulate keeps the checkpoint's 4" 0 "2 epochs, 20 steps" -- \
    "$cltrain" train "${rs[@]}" --epochs 2 --resume "$tmp/half.ckpt" --out "$tmp/resumed.ckpt"
if out=$(python3 "$here/compare_ckpts.py" "$tmp/whole.ckpt" "$tmp/resumed.ckpt" 0 accumulate=4 step=20 2>&1); then
    ok "resumed equals uninterrupted, bit for bit: $out"
else
    bad "resumed differs from uninterrupted"; echo "$out" | sed 's/^/  | /' | tail -n 5
fi
expect "--resume with another K" 1 "trained with 4 micro-batches per step, not 2. HINT: pass --accumulate 4" -- \
    "$cltrain" train "${rs[@]}" --epochs 2 --resume "$tmp/half.ckpt" --accumulate 2
expect "--accumulate 0" 2 "--accumulate needs an integer in \[1, 65536\], got '0'" -- "$cltrain" train "${rs[@]}" --accumulate 0
expect "--accumulate 65537" 2 "--accumulate needs an integer in \[1, 65536\]" -- "$cltrain" train "${rs[@]}" --accumulate 65537
expect "more micro-batches than the training set" 1 "41 micro-batches of 16 per step take 656 samples, more than the training set's 640" -- \
    "$cltrain" train "${rs[@]}" --accumulate 41
finish accumulate
