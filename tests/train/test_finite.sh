#!/usr/bin/env bash
# test_finite.sh CLTRAIN - the NaN/Inf check (--check-finite): a huge
# learning rate makes training diverge, and the run must stop with exit 1
# and a message naming the layer where the first non-finite value appeared,
# the step, and the last good checkpoint, which must still load and be
# unchanged; no checkpoint is written from a diverged state; an overflow
# planted in the data is traced to the exact layer; the check does not
# change the losses of a healthy run; bad flag values are usage errors.
set -u
cltrain=$1
. "$(dirname "$0")/../lib.sh"
common=(--model mlp --limit 1000 --test-limit 200 --batch 50 --no-progress)


if [ ! -d /usr/share/datasets/fashion-mnist ]; then
    echo "Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)"; exit 1
fi

layer="the first non-finite value is in .*layer '[a-z0-9_]+' \([a-z_0-9]+, zoo:mlp:[0-9]+\)"

# 1. a good epoch, then a resume with SGD at a learning rate of 100
#    diverges (measured: the loss is NaN at step 25 of 60): the message
#    names the layer, the step and the checkpoint of epoch 1
expect "a healthy first epoch" 0 "epoch 1/1" -- "$cltrain" train "${common[@]}" --optimizer sgd --epochs 1 --out "$tmp/good.ckpt"
cp "$tmp/good.ckpt" "$tmp/good.copy"
expect "a huge learning rate stops training" 1 "non-finite values in training at step [0-9]+ \(epoch 2\)" -- \
    "$cltrain" train "${common[@]}" --epochs 3 --optimizer sgd --resume "$tmp/good.ckpt" --out "$tmp/good.ckpt" --lr 100 --check-finite 1
cp "$tmp/err" "$tmp/err.every"
if grep -qE "$layer" "$tmp/err.every"; then ok "the message names the layer"; else bad "the message names no layer"; sed 's/^/  | /' "$tmp/err.every"; fi
if grep -qF "the last good checkpoint is $tmp/good.ckpt (epoch 1" "$tmp/err.every"; then ok "the message names the last good checkpoint"; else bad "the message lacks the checkpoint"; sed 's/^/  | /' "$tmp/err.every"; fi
if grep -q "HINT: lower the learning rate" "$tmp/err.every"; then ok "the message has a hint"; else bad "no hint"; fi
if cmp -s "$tmp/good.ckpt" "$tmp/good.copy"; then ok "the last good checkpoint is unchanged"; else bad "the checkpoint was overwritten"; fi
expect "the last good checkpoint loads" 0 "accuracy" -- "$cltrain" eval --weights "$tmp/good.ckpt" --limit 200

# 2. checking every step finds it no later than the default interval, and
#    with the check off (0) the epoch's end still stops the run before the
#    checkpoint is written
expect "the default interval stops it too" 1 "non-finite values in training at step [0-9]+" -- \
    "$cltrain" train "${common[@]}" --epochs 3 --optimizer sgd --resume "$tmp/good.ckpt" --out "$tmp/good.ckpt" --lr 100
s1=$(grep -oE "at step [0-9]+" "$tmp/err.every" | head -1 | grep -oE "[0-9]+")
s100=$(grep -oE "at step [0-9]+" "$tmp/err" | head -1 | grep -oE "[0-9]+")
if [ -n "$s1" ] && [ -n "$s100" ] && [ "$s1" -le "$s100" ]; then ok "every step finds it first (step $s1 <= $s100)"; else bad "steps: every $s1, default $s100"; fi
expect "--check-finite 0: the epoch's end stops it" 1 "epoch's mean training loss is .*; $layer.*last good checkpoint is $tmp/good.ckpt" -- \
    "$cltrain" train "${common[@]}" --epochs 3 --optimizer sgd --resume "$tmp/good.ckpt" --out "$tmp/good.ckpt" --lr 100 --check-finite 0
if cmp -s "$tmp/good.ckpt" "$tmp/good.copy"; then ok "still unchanged after --check-finite 0"; else bad "the checkpoint was overwritten with the check off"; fi

# 3. diverging in the first epoch: no checkpoint exists, and none is written
expect "diverging before any checkpoint" 1 "no checkpoint was written" -- \
    "$cltrain" train "${common[@]}" --epochs 2 --optimizer sgd --lr 100 --out "$tmp/never.ckpt"
if [ -e "$tmp/never.ckpt" ]; then bad "a checkpoint was written from a diverged run"; else ok "no checkpoint from a diverged run"; fi

# 4. where exactly: a CSV sample holding 3e38 makes x + x overflow in the
#    first layer after the input, so with a check every step the message
#    names that layer as in the model file, the one bad value of the batch,
#    and points at the data; with the check off, the epoch's end finds the
#    parameters the NaN reached, which then come first
printf 'input shape=4\ns: add from=input\nfc: dense out=3\nloss: softmax_cross_entropy\n' > "$tmp/big.model"
python3 - "$tmp" <<'PY'
import random, sys
r = random.Random(1)
rows = ["label,f1,f2,f3,f4"]
for i in range(40):
    x = [r.uniform(-1, 1) for _ in range(4)]
    if i == 13:
        x[2] = 3e38  # finite in float; twice it is not
    rows.append("%d," % (i % 3) + ",".join("%.6g" % v for v in x))
open(sys.argv[1] + "/big.csv", "w").write("\n".join(rows) + "\n")
open(sys.argv[1] + "/small.csv", "w").write("\n".join(rows[:1] + rows[1:9]) + "\n")
PY
csv=(--model "$tmp/big.model" --data "csv:$tmp/big.csv:test=$tmp/small.csv" --batch 8 --epochs 1 --no-progress)
expect "a huge input value: the layer reading it" 1 "the batch's loss is nan; the first non-finite value is in the output of layer 's' \(add, $tmp/big.model:2\) \(1 of 32 values\).*HINT: look for extreme values in the data" -- \
    "$cltrain" train "${csv[@]}" --check-finite 1
expect "a huge input value, checked at the epoch's end" 1 "the first non-finite value is in parameter 'fc.weight' of layer 'fc' \(dense, $tmp/big.model:3\) \(12 of 12 values\): an update since the start made it so" -- \
    "$cltrain" train "${csv[@]}" --check-finite 0

# 5. the check only reads: losses with a check every step equal those without
"$cltrain" train "${common[@]}" --epochs 2 --check-finite 1 --log "$tmp/c1.jsonl" >/dev/null 2>&1
"$cltrain" train "${common[@]}" --epochs 2 --check-finite 0 --log "$tmp/c0.jsonl" >/dev/null 2>&1
if [ -s "$tmp/c1.jsonl" ] && cmp -s <(cut -d, -f2-8 "$tmp/c1.jsonl") <(cut -d, -f2-8 "$tmp/c0.jsonl"); then
    ok "checking every step leaves the losses bit for bit"
else
    bad "the check changed the losses"; diff "$tmp/c1.jsonl" "$tmp/c0.jsonl" | head -4
fi

# 6. flag values
expect "--check-finite 0 is accepted" 0 "total trainable parameters" -- "$cltrain" train --model mlp --check-finite 0 --dry-run
expect "--check-finite 250 is accepted" 0 "total trainable parameters" -- "$cltrain" train --model mlp --check-finite 250 --dry-run
expect "a negative interval" 2 "--check-finite needs an integer" -- "$cltrain" train --check-finite -1 --dry-run
expect "a garbage interval" 2 "--check-finite needs an integer" -- "$cltrain" train --check-finite often --dry-run
expect "a fractional interval" 2 "--check-finite needs an integer" -- "$cltrain" train --check-finite 1.5 --dry-run
expect "a missing interval" 2 "--check-finite needs an integer in \[0, [0-9]+\], got ''" -- "$cltrain" train --check-finite

echo "test_finite: $checks checks, $fails failed"
[ "$fails" -eq 0 ]
