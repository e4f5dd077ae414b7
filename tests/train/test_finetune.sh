#!/usr/bin/env bash
# test_finetune.sh CLTRAIN - --init and --freeze: the cnn trained on
# Fashion-MNIST's classes 0-4 (30,000 images, 2 epochs), then started from
# those weights with a new 5-way head for classes 5-9 and its convolutions
# and batch norms frozen: one epoch of 3,000 images must reach a higher test
# accuracy (5,000 test images) than the same model from scratch, on average
# over seeds 1 and 2 (all four printed; measured 93.44 / 94.28% against
# 93.40 / 93.30%: classes 5-9 are easy, so the margin is small). The frozen
# layers' tensors come out unchanged; bad --init and --freeze arguments
# fail clearly.
set -u
cltrain=$1
. "$(dirname "$0")/../lib.sh"
src=/usr/share/datasets/fashion-mnist
if [ ! -d $src ]; then
    echo "Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)"; exit 1
fi
py=$(py_with numpy) || { echo "skip: no numpy (tools/setup_python.sh)"; exit 77; }
"$py" - "$src" "$tmp" <<'PY' || { bad "writing the class splits"; finish finetune; }
import gzip, os, struct, sys
import numpy as np
src, t = sys.argv[1], sys.argv[2]
def idx(name):
    p = [os.path.join(src, f) for f in os.listdir(src) if f.startswith(name)][0]
    b = gzip.open(p).read() if p.endswith(".gz") else open(p, "rb").read()
    nd = struct.unpack(">I", b[:4])[0] & 0xff
    dims = struct.unpack(">" + "I" * nd, b[4:4 + 4 * nd])
    return np.frombuffer(b[4 + 4 * nd:], np.uint8).reshape(dims)
xtr, ytr, xte, yte = idx("train-images"), idx("train-labels"), idx("t10k-images"), idx("t10k-labels")
def part(x, y, lo, n):
    keep = (y >= lo) & (y < lo + 5)
    return x[keep][:n], (y[keep][:n] - lo).astype(np.int64)
a_tr, a_te, b_tr, b_te = part(xtr, ytr, 0, 30000), part(xte, yte, 0, 1000), part(xtr, ytr, 5, 3000), part(xte, yte, 5, 5000)
np.savez(t + "/a.npz", x_train=a_tr[0], y_train=a_tr[1], x_test=a_te[0], y_test=a_te[1])
np.savez(t + "/b.npz", x_train=b_tr[0], y_train=b_tr[1], x_test=b_te[0], y_test=b_te[1])
PY
"$cltrain" zoo cnn | sed 's/^fc2: dense out=10/fc2: dense out=5/' > "$tmp/a.model"
sed 's/^fc2: dense out=5/head: dense out=5/' "$tmp/a.model" > "$tmp/b.model"
acc() { sed -n 's/.*test accuracy \([0-9.]*\)%.*/\1/p' "$1" | tail -n 1; }
common=(--epochs 1 --batch 50 --no-progress)
expect "classes 0-4 pretrain" 0 "epoch 2/2" -- "$cltrain" train --model "$tmp/a.model" --data "npz:$tmp/a.npz" \
    --epochs 2 --batch 50 --seed 1 --no-progress --out "$tmp/a.ckpt"
s=() f=()
for seed in 1 2; do
    expect "classes 5-9 from scratch, seed $seed" 0 "epoch 1/1" -- "$cltrain" train --model "$tmp/b.model" \
        --data "npz:$tmp/b.npz" "${common[@]}" --seed $seed
    s+=("$(acc "$tmp/out")")
    expect "classes 5-9 from the pretrained convolutions, frozen, seed $seed" 0 \
        "loaded 12 of the model's 14 tensors.*kept as initialized: head.weight \\(not in the file\\), head.bias" -- \
        "$cltrain" train --model "$tmp/b.model" --data "npz:$tmp/b.npz" "${common[@]}" --seed $seed \
        --init "$tmp/a.ckpt" --freeze 'conv*,bn1,bn2' --out "$tmp/ft.ckpt"
    f+=("$(acc "$tmp/out")")
done
echo "classes 5-9 after one epoch of 3,000 images (seeds 1, 2): from scratch ${s[*]}%, fine-tuned ${f[*]}%"
if awk -v s="${s[0]} ${s[1]}" -v f="${f[0]} ${f[1]}" \
    'BEGIN { split(s, a, " "); split(f, b, " "); exit !(b[1] + b[2] > a[1] + a[2]) }'; then
    ok "fine-tuned (${f[*]}%) above from scratch (${s[*]}%) on average"
else
    bad "fine-tuned (${f[*]}%) not above from scratch (${s[*]}%) on average"
fi
if "$py" - "$tmp/a.ckpt" "$tmp/ft.ckpt" <<'PY'; then
import json, struct, sys
import numpy as np
def load(p):
    b = open(p, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
    return {k: b[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]] for k, v in h.items() if k != "__metadata__"}
a, f = load(sys.argv[1]), load(sys.argv[2])
frozen = ["conv1.weight", "bn1.weight", "bn1.bias", "conv2.weight", "bn2.weight", "bn2.bias"]
assert all(a[k] == f[k] for k in frozen), [k for k in frozen if a[k] != f[k]]
assert a["fc1.weight"] != f["fc1.weight"], "fc1 did not train"
PY
    ok "the frozen tensors are unchanged, fc1 trained"
else
    bad "frozen tensors changed, or fc1 did not train"
fi
expect "--freeze naming no layer" 1 "--freeze conv\\*,nosuch: 'nosuch' names no layer with parameters" -- \
    "$cltrain" train --model "$tmp/b.model" --data "npz:$tmp/b.npz" "${common[@]}" --freeze 'conv*,nosuch'
expect "--freeze of every layer" 1 "freezes every layer with parameters: nothing would train" -- \
    "$cltrain" train --model "$tmp/b.model" --data "npz:$tmp/b.npz" "${common[@]}" --freeze '*'
printf 'input shape=1x28x28\nf: flatten\nx: dense out=5\nloss: softmax_cross_entropy\n' > "$tmp/c.model"
expect "--init matching nothing" 1 "none of its [0-9]+ tensors has the name and shape" -- \
    "$cltrain" train --model "$tmp/c.model" --data "npz:$tmp/b.npz" "${common[@]}" --init "$tmp/a.ckpt"
expect "--init with --resume" 1 "--init .* and --resume .*: a resumed run continues its own weights" -- \
    "$cltrain" train --data "npz:$tmp/b.npz" "${common[@]}" --init "$tmp/a.ckpt" --resume "$tmp/ft.ckpt"
finish finetune
