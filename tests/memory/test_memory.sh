#!/usr/bin/env bash
# test_memory.sh CLTRAIN - the memory plan against the device's limits: a
# plan that does not fit is refused before anything is allocated, with the
# arena sizes, the limits and the largest batch that fits, and that batch
# does fit (a dry run says so, the next batch up does not, and one training
# epoch at it runs); CLTRAIN_MAX_ALLOC splits the activation arenas into
# several buffers and training stays bit for bit what it was in one buffer.
set -u
cltrain=$1
. "$(dirname "$0")/../lib.sh"

largest() { sed -nE 's/.*largest batch that fits is ([0-9]+).*/\1/p' "$tmp/out" "$tmp/err" | head -n 1; }
report='does not fit: .*Plan: parameters [0-9.]+ MiB, gradients .*activations [0-9.]+ MiB.*activation gradients [0-9.]+ MiB.*scratch .*MiB in all\. Limits: [0-9.]+ MiB per allocation and [0-9.]+ MiB in all .*The largest batch that fits is [1-9][0-9]*\. HINT'

# an absurd batch against the device's own limits: cnn's first activation
# alone is 6 GiB at batch 60000 (what fits depends on the device's memory,
# which pocl reports from the host's, so the largest batch is checked below
# under a fixed limit)
expect "absurd batch is refused with the plan and the limits" 1 "$report" -- \
    "$cltrain" bench --model cnn --batch 60000 --steps 1

# a limit from the environment, small enough to train at the batch it names
export CLTRAIN_MEM_LIMIT=40M
expect "CLTRAIN_MEM_LIMIT refuses the plan" 1 "$report.*raise the limit" -- \
    "$cltrain" train --model cnn --batch 512 --data synthetic:1,28,28:10:512 --epochs 1 --no-progress
grep -qE "40\.00 MiB in all .*lowered by CLTRAIN_MEM_LIMIT" "$tmp/err" ||
    { echo "FAIL the message does not name the lowered limit"; fails=$((fails + 1)); }
n=$(largest)
if [ -n "$n" ]; then
    expect "the dry run at the largest batch ($n) fits" 0 "fits +yes" -- "$cltrain" train --model cnn --batch "$n" --dry-run
    expect "the dry run one above it does not" 0 "fits +no: .*largest batch that fits is $n\$" -- \
        "$cltrain" train --model cnn --batch $((n + 1)) --dry-run
    expect "training at the largest batch ($n) under the limit runs" 0 "done: 1 epochs, 1 steps" -- \
        "$cltrain" train --model cnn --batch "$n" --data "synthetic:1,28,28:10:$n" --epochs 1 --test-limit 16 --no-progress
    expect "one above it is refused" 1 "does not fit.*largest batch that fits is $n\." -- \
        "$cltrain" train --model cnn --batch $((n + 1)) --data "synthetic:1,28,28:10:$((n + 1))" --epochs 1 --no-progress
fi
unset CLTRAIN_MEM_LIMIT

expect "parameters over one allocation: no batch helps" 1 "the parameters are one buffer of .*No batch fits" -- \
    env CLTRAIN_MAX_ALLOC=1M "$cltrain" train --model fcn-r --batch 8 --data synthetic:1,28,28:10:64 --epochs 1 --no-progress
expect "a bad limit is an error" 1 "CLTRAIN_MEM_LIMIT='lots' is not a size" -- \
    env CLTRAIN_MEM_LIMIT=lots "$cltrain" train --model cnn --dry-run

# activations in several buffers: the same bits as in one
expect "CLTRAIN_MAX_ALLOC splits the activations" 0 "activations +[0-9.]+ MiB in [2-9] buffers" -- \
    env CLTRAIN_MAX_ALLOC=4500K "$cltrain" train --model cnn --batch 16 --dry-run
for split in "" 4500K; do
    expect "cnn trains${split:+ with buffers of at most $split}" 0 "done: 1 epochs" -- \
        env ${split:+CLTRAIN_MAX_ALLOC=$split} "$cltrain" train --model cnn --batch 16 --data synthetic:1,28,28:10:128 \
        --epochs 1 --seed 3 --no-progress --out "$tmp/cnn${split}.safetensors"
done
checks=$((checks + 1))
if cmp -s "$tmp/cnn.safetensors" "$tmp/cnn4500K.safetensors"; then
    echo "ok   split and unsplit activations train to the same bits"
else
    echo "FAIL split and unsplit activations give different checkpoints"; fails=$((fails + 1))
fi

echo "$((checks - fails)) of $checks checks passed"
[ "$fails" -eq 0 ]
