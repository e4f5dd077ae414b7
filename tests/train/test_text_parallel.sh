#!/usr/bin/env bash
# test_text_parallel.sh CLTRAIN [MPIRUN] - text and sequence models trained
# data-parallel under pocl with two CPU devices (POCL_DEVICES="pthread
# pthread"), on the texts test_text.sh makes:
#  - the zoo's gpt (byte windows of 128) and bytelm (windows of 64), one
#    epoch at a global batch of 64: two devices (32 columns of each (T, N)
#    batch each) against one device; the epoch's held-out loss within 1e-3
#    relative, and its training loss and every step's within 1e-5;
#  - with MPIRUN (a build with MPI): the same for `mpirun -np 2`, one device
#    per rank;
#  - --accumulate 2 at --batch 32 on two devices (gpt) and two ranks
#    (bytelm) against one device at 64;
#  - a text classifier (the zoo's textcls, a label per text) on two devices
#    and two ranks against one device;
#  - the two-device checkpoint evaluates to the logged held-out loss, and a
#    two-device run resumed after its first epoch ends with the tensors of
#    the uninterrupted one, bit for bit (bytelm on 512 windows);
#  - a control: one device at a global batch of 32 differs from 64 by more
#    than 10x the tolerance, so the comparisons see a wrong batch split.
#
# Tolerance: the runs compute the same mean loss over the global batch's
# tokens; only float summation order differs (GEMMs over 32 columns twice
# and the host's weighted sum of two gradients, against 64 at once):
# measured <= 1e-7 in every loss (printed with each check). Step 1's loss
# is the same mean however the columns are dealt; from step 2 on a replica
# given the wrong columns (inputs and labels apart), a wrong weight or a
# replica out of step moves the training losses by 1e-4 or more, so they
# are held to 1e-5; the held-out loss to the 1e-3 asked of it.
set -u
cltrain=$1
mpirun=${2:-}
. "$(dirname "$0")/../lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
export POCL_DEVICES=${POCL_DEVICES:-"pthread pthread"}
tol=1e-3 step_tol=1e-5

if [ "$("$cltrain" --devices | grep -c '^ *0:[01] ')" -lt 2 ]; then
    echo "needs two OpenCL devices on platform 0 (POCL_DEVICES=\"pthread pthread\")"
    "$cltrain" --devices; exit 1
fi

# test_text.sh's texts: a language model's sentences and a two-class folder
python3 - "$tmp" <<'EOF'
import os, random, sys
tmp = sys.argv[1]
r = random.Random(7)
words = "the quick brown fox jumps over a lazy dog and then runs home again".split()
with open(f"{tmp}/lm.train", "w") as f:
    for _ in range(1500):
        f.write(" ".join(r.choice(words) for _ in range(8)) + ".\n")
with open(f"{tmp}/words.txt", "w") as f:
    f.write(" ".join(f"w{i}x" for i in range(600)) + "\n")
with open(f"{tmp}/lm.test", "w") as f:
    for _ in range(150):
        f.write(" ".join(r.choice(words) for _ in range(8)) + ".\n")
for split, n in (("train", 120), ("test", 30)):
    for c, alphabet in (("soft", "aeiouly"), ("hard", "bcdfgkptxz")):
        os.makedirs(f"{tmp}/td/{split}/{c}", exist_ok=True)
        for i in range(n):
            text = " ".join("".join(r.choice(alphabet) for _ in range(r.randint(2, 7)))
                            for _ in range(r.randint(3, 12)))
            open(f"{tmp}/td/{split}/{c}/{i}.txt", "w").write(text)
EOF

gpt_data="text:$tmp/lm.train:tokens=byte:seq=128:test=$tmp/lm.test"
lm_data="text:$tmp/lm.train:seq=64:test=$tmp/lm.test"
cls_data="textdir:$tmp/td:seq=128"
gpt=(--model gpt --data "$gpt_data" --optimizer adamw --lr 1e-3)
lm=(--model bytelm --data "$lm_data" --lr 3e-3)
cls=(--model textcls --data "$cls_data" --lr 2e-3)
common=(--epochs 1 --log-every 1 --no-progress)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

run() { # run NAME ARGS... : trains, logging to $tmp/NAME.jsonl, checkpoint $tmp/NAME.ckpt
    local name=$1; shift
    if ! "$cltrain" train "${common[@]}" --log "$tmp/$name.jsonl" --out "$tmp/$name.ckpt" "$@" \
            >"$tmp/$name.out" 2>&1; then
        bad "$name: exit non-zero"; sed 's/^/  | /' "$tmp/$name.out" | tail -5; return 1
    fi
}
mrun() { # mrun NAME ARGS... : the same under mpirun -np 2
    local name=$1; shift
    if ! timeout 300 "$mpirun" -np 2 --oversubscribe "$cltrain" train "${common[@]}" --log "$tmp/$name.jsonl" \
            --out "$tmp/$name.ckpt" "$@" >"$tmp/$name.out" 2>&1; then
        bad "$name: mpirun exit non-zero"; sed 's/^/  | /' "$tmp/$name.out" | tail -8; return 1
    fi
}

# same NAME A B [differ]: the epochs' held-out losses of A and B within
# $tol relative, their training losses and the steps' within $step_tol (or,
# with differ, the held-out losses further apart than 10 x $tol); prints
# the held-out losses and the differences
same() {
    local out
    if out=$(python3 - "$tmp/$2.jsonl" "$tmp/$3.jsonl" "$tol" "$step_tol" "${4:-same}" <<'PY'
import json, sys
def read(p):
    rows = [json.loads(l) for l in open(p)]
    return ([r for r in rows if r["event"] == "epoch"],
            [(r["step"], r["train_loss"]) for r in rows if r["event"] == "step"])
(ea, sa), (eb, sb) = read(sys.argv[1]), read(sys.argv[2])
tol, step_tol, mode = float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
if len(ea) != len(eb) or not ea:
    print(f"epoch counts {len(ea)} and {len(eb)}"); sys.exit(1)
rel = lambda x, y: abs(x - y) / abs(x)
test = max(rel(a["test_loss"], b["test_loss"]) for a, b in zip(ea, eb))
losses = " ".join(f"{a['test_loss']:.7f}/{b['test_loss']:.7f}" for a, b in zip(ea, eb))
if mode == "differ":
    print(f"held-out {losses}, relative difference {test:.3g}")
    sys.exit(0 if test > 10 * tol else 1)
if [s for s, _ in sa] != [s for s, _ in sb] or len(sa) < 4:
    print(f"steps {[s for s, _ in sa]} and {[s for s, _ in sb]}"); sys.exit(1)
train = max(rel(a["train_loss"], b["train_loss"]) for a, b in zip(ea, eb))
steps = max(rel(x, y) for (_, x), (_, y) in zip(sa, sb))
print(f"held-out {losses} ({test:.2g}), training {train:.2g}, {len(sa)} steps {steps:.2g}")
sys.exit(0 if test <= tol and max(train, steps) <= step_tol else 1)
PY
    ); then ok "$1: $out"; else bad "$1: $out"; fi
}

# 1. two devices against one at the same global batch of 64
run gpt1 "${gpt[@]}" --device 0:0 --batch 64 &&
run gpt2 "${gpt[@]}" --device 0:0,0:1 --batch 64 &&
same "gpt, 2 devices vs 1" gpt1 gpt2
run lm1 "${lm[@]}" --device 0:0 --batch 64 &&
run lm2 "${lm[@]}" --device 0:0,0:1 --batch 64 &&
same "bytelm, 2 devices vs 1" lm1 lm2
run cls1 "${cls[@]}" --device 0:0 --batch 32 &&
run cls2 "${cls[@]}" --device 0:0,0:1 --batch 32 &&
same "textcls, 2 devices vs 1" cls1 cls2
# (the sanitizer run leaves out this control and the mpirun --accumulate
# run below: numbers, not code; the two devices' --accumulate run covers
# the text batches' micro-batch slicing there)
[ "$sanitized" = 0 ] &&
run lm1b32 "${lm[@]}" --device 0:0 --batch 32 && same "bytelm, batch 32 vs 64 differ (control)" lm1 lm1b32 differ

# 2. the checkpoint of two devices: eval gives the logged held-out loss;
#    resumed after epoch 1 of 2 == uninterrupted, bit for bit (a constant
#    learning rate, so that the 1-epoch run's schedule is the 2-epoch run's)
want=$(python3 -c "import json; print('%.4f' % [json.loads(l) for l in open('$tmp/lm2.jsonl')][-1]['test_loss'])")
expect "eval of the 2-device checkpoint: loss $want" 0 "loss $want" -- "$cltrain" eval --weights "$tmp/lm2.ckpt" --data "$lm_data"
rs=("${lm[@]}" --device 0:0,0:1 --batch 64 --limit 512 --schedule constant)
run lmwhole "${rs[@]}" --epochs 2 && run lmhalf "${rs[@]}" &&
run lmres "${rs[@]}" --epochs 2 --resume "$tmp/lmhalf.ckpt" &&
if out=$(python3 "$here/compare_ckpts.py" "$tmp/lmwhole.ckpt" "$tmp/lmres.ckpt" 0 step=16 2>&1); then
    ok "2 devices, resumed after epoch 1 == uninterrupted, bit for bit: $(echo "$out" | tail -n 1)"
else
    bad "2 devices, resumed: $(echo "$out" | tail -n 3)"
fi

# 3. accumulation: 2 devices x 2 micro-batches of 32 == 1 device at 64
run gpt2acc "${gpt[@]}" --device 0:0,0:1 --batch 32 --accumulate 2 &&
same "gpt, 2 devices x --accumulate 2 of 32 vs 1 device at 64" gpt1 gpt2acc

if [ -z "$mpirun" ]; then
    finish "text-parallel (no MPI: the mpirun cases are not built)"
fi

# 4. two ranks of one device each == one process
mrun gptmpi "${gpt[@]}" --device 0:0 --batch 64 && same "gpt, mpirun -np 2 vs 1 process" gpt1 gptmpi
mrun lmmpi "${lm[@]}" --device 0:0 --batch 64 && same "bytelm, mpirun -np 2 vs 1 process" lm1 lmmpi
[ "$sanitized" = 0 ] &&
mrun lmmpiacc "${lm[@]}" --device 0:0 --batch 32 --accumulate 2 &&
same "bytelm, mpirun -np 2 x --accumulate 2 of 32 vs 1 process at 64" lm1 lmmpiacc
mrun clsmpi "${cls[@]}" --device 0:0 --batch 32 && same "textcls, mpirun -np 2 vs 1 process" cls1 clsmpi

finish text-parallel
