#!/usr/bin/env bash
# test_init.sh CLTRAIN - the layers' initialization keys, read back from a
# checkpoint written after one step at lr 1e-12 (which moves no weight by
# more than 1e-12): std= on dense, embedding, posembed and attention
# (std=, out_std=) give N(0, std^2) weights and zero biases, and the
# defaults stay PyTorch's (uniform in +-1/sqrt(fan_in) for dense, N(0, 1)
# for the embeddings, xavier uniform for in_proj_weight). Bounds: each
# tensor's sample deviation within 5% of the asked one (every tensor checked
# has >= 4096 elements, so the standard error of a sample deviation is
# <= 1.1% and 5% is over 4 standard errors), its mean within 5 standard
# errors of 0, biases exactly 0, uniform draws inside their bound.
set -u
cltrain=$1
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
text=$root/tests/data/gpt_step.txt
cat > "$tmp/m.model" <<'EOF2'
input tokens=64
wte: embedding vocab=256 dim=64 std=0.5
wpe: posembed max_len=64 std=0.2
ln: layernorm
attn: attention heads=4 std=0.03 out_std=0.01
fc: dense out=128 std=0.05
head: dense out=256
loss: softmax_cross_entropy
EOF2
cat > "$tmp/d.model" <<'EOF2'
input tokens=64
wte: embedding vocab=256 dim=64
wpe: posembed max_len=64
ln: layernorm
attn: attention heads=4
head: dense out=256
loss: softmax_cross_entropy
EOF2
for m in m d; do
    expect "$m: one step at lr 1e-12" 0 "" -- "$cltrain" train --model "$tmp/$m.model" \
        --data "text:$text:tokens=byte:seq=64:test=$text" --epochs 1 --batch 128 --lr 1e-12 \
        --optimizer adam --no-progress --out "$tmp/$m.safetensors"
done
if python3 - "$root/tests/train" "$tmp/m.safetensors" "$tmp/d.safetensors" <<'PY'
import math, sys
sys.path.insert(0, sys.argv[1])
from compare_step import read
fails = 0
def check(ok, what):
    global fails
    print(("ok   " if ok else "FAIL ") + what)
    fails += not ok
def normal(t, name, std):
    v = t[name][1]
    n = len(v)
    mean = sum(v) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / n)
    check(abs(sd / std - 1) <= 0.05 and abs(mean) <= 5 * std / math.sqrt(n),
          f"{name}: {n} elements, deviation {sd:.5g} (want {std:g}), mean {mean:.3g}")
def uniform(t, name, bound):
    v = t[name][1]
    sd = math.sqrt(sum(x * x for x in v) / len(v))
    check(max(abs(x) for x in v) <= bound and abs(sd / (bound / math.sqrt(3)) - 1) <= 0.05,
          f"{name}: uniform in +-{bound:.4g}, deviation {sd:.4g} (want {bound / math.sqrt(3):.4g})")
def zero(t, name):
    check(all(abs(x) <= 1e-11 for x in t[name][1]), f"{name}: zero (to the 1e-12 step)")
m, _ = read(sys.argv[2])
normal(m, "wte.weight", 0.5)
normal(m, "wpe.weight", 0.2)
normal(m, "attn.in_proj_weight", 0.03)
normal(m, "attn.out_proj.weight", 0.01)
normal(m, "fc.weight", 0.05)
zero(m, "fc.bias")
zero(m, "attn.in_proj_bias")
uniform(m, "head.weight", 1 / math.sqrt(128))
d, _ = read(sys.argv[3])
normal(d, "wte.weight", 1.0)
normal(d, "wpe.weight", 1.0)
uniform(d, "attn.in_proj_weight", math.sqrt(6 / (64 + 3 * 64)))
uniform(d, "attn.out_proj.weight", 1 / 8)
uniform(d, "head.weight", 1 / 8)
sys.exit(1 if fails else 0)
PY
then ok "initial weights as asked"; else bad "initial weights"; fi
finish init
