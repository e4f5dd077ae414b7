#!/usr/bin/env bash
# test_tensorboard.sh CLTRAIN [MPIRUN] - `train --tensorboard DIR` read back
# by TensorBoard's own reader (EventAccumulator, tests/train/check_tensorboard.py):
# every scalar tag with one event per epoch (and per --tensorboard-every
# steps) equal to the --log JSON lines within their printed rounding and
# float32's, the parameter histograms equal to the checkpoint's tensors; a
# resumed run adding a second file beside the first, which stays as it was;
# a language model's perplexity and bits per byte; two devices and two MPI
# ranks writing one file (rank 0's); and the failures: a directory that
# cannot be made stops the run before training, a file that stops growing
# (the file size limit) is a warning naming it and training goes on.
# Skips (exit 77) without a Python that has tensorboard (tools/setup_python.sh).
set -u
cltrain=$1
mpirun=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/../lib.sh"
py=$(py_with tensorboard numpy) || { echo "skip: no Python with tensorboard and numpy (tools/setup_python.sh)"; exit 77; }

if [ ! -d /usr/share/datasets/fashion-mnist ]; then
    echo "Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)"; exit 1
fi
# 500 samples in batches of 50: 10 steps an epoch; a point every 3 steps
common=(--model mlp --limit 500 --test-limit 200 --batch 50 --no-progress --tensorboard-every 3 --log-every 3)
check() { # check NAME CHECKER-ARGS...
    local name=$1; shift
    if "$py" "$here/check_tensorboard.py" "$@" >"$tmp/check.out" 2>&1; then
        ok "$name"; sed 's/^/  | /' "$tmp/check.out" | head -3
    else
        bad "$name"; sed 's/^/  | /' "$tmp/check.out" | tail -14
    fi
}

# 1. two epochs with histograms: scalars, per-step points and histograms
expect "train --tensorboard" 0 "epoch 2/2" -- "$cltrain" train "${common[@]}" --epochs 2 \
    --tensorboard "$tmp/tb/run" --tensorboard-histograms --log "$tmp/a.jsonl" --out "$tmp/a.ckpt"
check "TensorBoard reads what the JSON log says, and the histograms" "$tmp/tb/run" "$tmp/a.jsonl" \
    --every 3 --per-epoch 10 --batch 50 --ckpt "$tmp/a.ckpt"
first=$(ls "$tmp/tb/run")
if [[ $first =~ ^events\.out\.tfevents\.[0-9]{10}\.$(hostname)$ ]]; then ok "file name $first"; else bad "file name $first"; fi

# 2. a resumed run into the same directory: a second file, the first as it was
cp "$tmp/tb/run/$first" "$tmp/first.copy"
expect "resume --tensorboard" 0 "epoch 3/3" -- "$cltrain" train "${common[@]}" --epochs 3 --resume "$tmp/a.ckpt" \
    --tensorboard "$tmp/tb/run" --tensorboard-histograms --log "$tmp/a.jsonl" --out "$tmp/a.ckpt"
if cmp -s "$tmp/tb/run/$first" "$tmp/first.copy"; then ok "the first file is untouched"; else bad "the first file changed"; fi
check "both runs' events, read as one" "$tmp/tb/run" "$tmp/a.jsonl" --files 2 --every 3 --per-epoch 10 \
    --batch 50 --ckpt "$tmp/a.ckpt"

# 3. per epoch only: no per-step tags
expect "--tensorboard-every 0" 0 "epoch 1/1" -- "$cltrain" train --model mlp --limit 500 --test-limit 200 \
    --batch 50 --no-progress --epochs 1 --tensorboard "$tmp/tb0" --tensorboard-every 0 --log "$tmp/e0.jsonl"
check "epoch scalars only" "$tmp/tb0" "$tmp/e0.jsonl" --every 0 --per-epoch 10 --batch 50

# 4. a byte-level language model: per-token accuracies, perplexity, bits per byte
"$py" - "$tmp" <<'EOF'
import random, sys
r = random.Random(3)
words = "the quick brown fox jumps over a lazy dog".split()
for name, n in (("lm.train", 240), ("lm.test", 40)):
    with open(f"{sys.argv[1]}/{name}", "w") as f:
        for _ in range(n):
            f.write(" ".join(r.choice(words) for _ in range(6)) + ".\n")
EOF
printf 'input tokens=16\nembedding vocab=256 dim=8\nlstm hidden=16\ndense out=256\nsoftmax_cross_entropy\n' >"$tmp/lm.model"
lm=(--model "$tmp/lm.model" --data "text:$tmp/lm.train:seq=16:test=$tmp/lm.test" --batch 16 --no-progress --epochs 2)
expect "language model --tensorboard" 0 "bits/byte" -- "$cltrain" train "${lm[@]}" --tensorboard "$tmp/tblm" \
    --tensorboard-every 2 --log "$tmp/lm.jsonl" --log-every 2
per=$("$py" -c "import json; print([r for r in map(json.loads, open('$tmp/lm.jsonl')) if r['event'] == 'epoch'][0]['step'])"); echo "steps per epoch: $per"
check "perplexity, bits per byte, per-token accuracy" "$tmp/tblm" "$tmp/lm.jsonl" --every 2 --per-epoch "$per" \
    --batch 16 --tokens 16

# 4b. regression (a model ending in mse on csv target= data): RMSE and MAE
# per epoch, the per-step MAE in place of accuracy
"$py" - "$tmp" <<'EOF'
import random, sys
r = random.Random(5)
for name, n in (("reg.train", 400), ("reg.test", 100)):
    with open(f"{sys.argv[1]}/{name}", "w") as f:
        f.write("a,b,c,y\n")
        for _ in range(n):
            a, b, c = (r.uniform(-1, 1) for _ in range(3))
            f.write(f"{a:.4f},{b:.4f},{c:.4f},{2 * a - b + 0.5 * c * c + r.gauss(0, 0.1):.4f}\n")
EOF
printf 'input features=3\ndense out=16 act=relu\ndense out=1\nmse\n' >"$tmp/reg.model"
expect "regression --tensorboard" 0 "epoch 2/2" -- "$cltrain" train --model "$tmp/reg.model" \
    --data "csv:$tmp/reg.train:target=y:test=$tmp/reg.test" --batch 40 --epochs 2 --no-progress \
    --tensorboard "$tmp/tbreg" --tensorboard-every 3 --log "$tmp/reg.jsonl" --log-every 3
check "regression: RMSE, MAE and the per-step MAE" "$tmp/tbreg" "$tmp/reg.jsonl" --every 3 --per-epoch 10 \
    --batch 40 --regression

# 5. two devices in one process: rank 0 writes the totals of both replicas
if POCL_DEVICES="pthread pthread" "$cltrain" --devices | grep -q '^ *0:1 '; then
    expect "two devices --tensorboard" 0 "epoch 2/2" -- env POCL_DEVICES="pthread pthread" "$cltrain" train \
        "${common[@]}" --epochs 2 --device 0:0,0:1 --tensorboard "$tmp/tb2" --log "$tmp/two.jsonl"
    check "two devices: one file, both replicas' losses" "$tmp/tb2" "$tmp/two.jsonl" --every 3 --per-epoch 10 --batch 50
else
    echo "no second pocl device: the two-device case is not run"
fi

# 6. mpirun -np 2: only rank 0 writes (its per-step points are its own samples')
if [ -n "$mpirun" ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    expect "mpirun -np 2 --tensorboard" 0 "epoch 2/2" -- "$mpirun" -np 2 --oversubscribe "$cltrain" train \
        "${common[@]}" --epochs 2 --device 0:0 --tensorboard "$tmp/tbmpi" --log "$tmp/mpi.jsonl"
    check "two ranks: one file, the epoch scalars" "$tmp/tbmpi" "$tmp/mpi.jsonl" --every 3 --per-epoch 10 \
        --batch 50 --no-step-values
fi

# 7. failures: a directory that cannot be made stops the run before training
touch "$tmp/plain"
expect "an impossible directory is an error" 1 "cannot create the directory $tmp/plain/tb: Not a directory" -- \
    "$cltrain" train "${common[@]}" --epochs 1 --tensorboard "$tmp/plain/tb"
if grep -q "epoch 1" "$tmp/out"; then bad "it trained anyway"; else ok "nothing trained"; fi
expect "--tensorboard-histograms alone is a usage error" 2 "needs --tensorboard DIR" -- \
    "$cltrain" train --tensorboard-histograms
expect "--tensorboard-every alone is a usage error" 2 "needs --tensorboard DIR" -- \
    "$cltrain" train --tensorboard-every 5
# the file size limit (2 KiB, with SIGXFSZ ignored: EFBIG) stops the events at
# the first epoch's flush: one warning naming the file, training goes on
(trap '' XFSZ; ulimit -f 2; exec "$cltrain" train "${common[@]}" --epochs 2 --tensorboard "$tmp/tbfull" \
    --tensorboard-histograms) >"$tmp/out" 2>"$tmp/err"
rc=$?
file=$(ls "$tmp/tbfull" 2>/dev/null | head -1)
if [ "$rc" -eq 0 ] && grep -q "epoch 2/2" "$tmp/out"; then ok "a full event file: training goes on"; else
    bad "a full event file: exit $rc"; sed 's/^/  | /' "$tmp/out" "$tmp/err" | tail -5; fi
if [ -n "$file" ] && [ "$(grep -c "warning: cannot write TensorBoard events to $tmp/tbfull/$file: File too large; no more TensorBoard events are written, training goes on" "$tmp/err")" = 1 ]; then
    ok "one warning naming the file and the cause"
else
    bad "the warning"; sed 's/^/  | /' "$tmp/err" | tail -5
fi

# what was written before the failure still reads: the first epoch's scalars
if [ -n "$file" ] && "$py" - "$tmp/tbfull" <<'EOF'; then ok "TensorBoard reads the cut file up to its last whole record"; else bad "the cut file does not read"; fi
import sys
from tensorboard.backend.event_processing import event_accumulator as ea
acc = ea.EventAccumulator(sys.argv[1], size_guidance={ea.SCALARS: 0})
acc.Reload()
steps = [e.step for e in acc.Scalars("train/loss")]
print(f"  train/loss at steps {steps}")
sys.exit(0 if steps == [10] else 1)
EOF

finish test_tensorboard
