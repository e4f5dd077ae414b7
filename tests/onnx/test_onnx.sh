#!/usr/bin/env bash
# test_onnx.sh CLTRAIN - `cltrain export` against onnxruntime. Each zoo
# model the export covers (mlp, cnn, resnet56, lstm, textcls, gpt), and
# three models of its own that use every other layer type and setting
# (dilation, strides, no bias, each activation fused and alone, average
# pooling with and without the padding counted, LRN of odd and even size,
# batch norm on features, attention without the causal mask, a position
# table longer than the sequence, stacked LSTMs and GRUs, seqpool max, last
# and mean over padded texts), is trained briefly, exported, and run by onnxruntime
# on the test samples `cltrain predict --logits` prints with its own
# logits: same interface, logits within 1e-4, same top-1
# (tests/onnx/check_onnx.py says why that tolerance); a text of padding
# only gives what `predict --text ""` gives. An mse model's checkpoint,
# written here, exports its output. And the errors: a missing,
# truncated or foreign checkpoint, a --model that is not the checkpoint's,
# an --onnx that cannot be written (no directory; the file size limit
# partway through, which must leave the previous file as it was and no
# temporary), a missing --onnx. The comparisons skip (exit 77) without
# onnxruntime (tools/setup_python.sh installs it); the errors are checked
# first either way.
set -u
cltrain=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

if [ ! -d /usr/share/datasets/fashion-mnist ]; then
    echo "Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)"; exit 1
fi

python3 - "$tmp" <<'EOF'
import os, random, sys
tmp = sys.argv[1]
r = random.Random(11)
words = "the quick brown fox jumps over a lazy dog and then runs home again".split()
with open(f"{tmp}/words.txt", "w") as f:  # word-level language-model text
    for _ in range(400):
        f.write(" ".join(r.choice(words) for _ in range(10)) + ".\n")
# 8 classes of texts from different letters, many shorter than the
# sequence, so padding is masked
for split, n in (("train", 24), ("test", 6)):
    for c, alphabet in enumerate(("aeiouly", "bcdfgkptxz", "mnrs", "aei", "xyz", "lo", "qw", "er")):
        os.makedirs(f"{tmp}/td/{split}/c{c}", exist_ok=True)
        for i in range(n):
            text = " ".join("".join(r.choice(alphabet) for _ in range(r.randint(2, 7)))
                            for _ in range(r.randint(1, 30)))
            open(f"{tmp}/td/{split}/c{c}/{i}.txt", "w").write(text)
EOF

q=(--no-progress --epochs 1)
if ! "$cltrain" train --model mlp --limit 512 --test-limit 64 --batch 32 --out "$tmp/mlp.st" "${q[@]}" >"$tmp/out" 2>&1; then
    bad "training the mlp"; tail -3 "$tmp/out"; finish test_onnx
fi

# ---- 1. errors (no onnxruntime needed) ----
expect "a missing checkpoint" 1 "cannot load checkpoint.*none.st" -- \
    "$cltrain" export --weights "$tmp/none.st" --onnx "$tmp/x.onnx"
if [ -e "$tmp/x.onnx" ]; then bad "a failed export left $tmp/x.onnx"; else ok "a failed export writes nothing"; fi
head -c 4000 "$tmp/mlp.st" >"$tmp/trunc.st"
expect "a truncated checkpoint" 1 "trunc.st" -- "$cltrain" export --weights "$tmp/trunc.st" --onnx "$tmp/x.onnx"
python3 - "$tmp/foreign.st" <<'EOF'
import json, struct, sys
header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
header += b" " * (-len(header) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(header)) + header + struct.pack("<2f", 1, 2))
EOF
expect "a safetensors file that is no checkpoint" 1 "holds no model text" -- \
    "$cltrain" export --weights "$tmp/foreign.st" --onnx "$tmp/x.onnx"
expect "--model not the checkpoint's" 1 "saved from another model" -- \
    "$cltrain" export --weights "$tmp/mlp.st" --model cnn --onnx "$tmp/x.onnx"
expect "--model the checkpoint's own" 0 "wrote $tmp/mlp.onnx: ONNX opset 17 \(IR version 8\)" -- \
    "$cltrain" export --weights "$tmp/mlp.st" --model mlp --onnx "$tmp/mlp.onnx"
expect "an --onnx in no directory" 1 "cannot write ONNX file $tmp/no/dir/m.onnx: cannot create" -- \
    "$cltrain" export --weights "$tmp/mlp.st" --onnx "$tmp/no/dir/m.onnx"
expect "export without --onnx" 2 "export needs --weights CKPT and --onnx FILE" -- \
    "$cltrain" export --weights "$tmp/mlp.st"
expect "predict --logits with --text" 2 "--logits reads test samples" -- \
    "$cltrain" predict --weights "$tmp/mlp.st" --text hello --logits
# a write that fails partway (the file size limit, EFBIG; the file is ~1 MB)
printf 'an earlier export\n' >"$tmp/keep.onnx"
cp "$tmp/keep.onnx" "$tmp/keep.copy"
(trap '' XFSZ; ulimit -f 64; exec "$cltrain" export --weights "$tmp/mlp.st" --onnx "$tmp/keep.onnx") >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "cannot write ONNX file $tmp/keep.onnx: cannot write .*previous file .* untouched" "$tmp/err"; then
    ok "a failed write reports itself"
else
    bad "a failed write: exit $rc"; sed 's/^/  | /' "$tmp/err" | tail -3
fi
if cmp -s "$tmp/keep.onnx" "$tmp/keep.copy"; then ok "the previous file is untouched"; else bad "the previous file changed"; fi
if ls "$tmp"/keep.onnx.tmp.* >/dev/null 2>&1; then bad "a temporary file was left behind"; else ok "no temporary file left"; fi
# predict's own output stays as it was without --logits
expect "predict without --logits" 0 "^sample 0 label [0-9]: [0-9] \([01]\.[0-9]{4}\)" -- \
    "$cltrain" predict --weights "$tmp/mlp.st" --count 2

# ---- 2. against onnxruntime ----
if ! py=$(py_with onnxruntime numpy); then
    echo "test_onnx: $checks checks, $fails failed"
    [ "$fails" -eq 0 ] || exit 1
    echo "skipped: the comparisons need onnxruntime (tools/setup_python.sh)"; exit 77
fi

# case NAME KIND COUNT TRAIN-ARGS... : train, export, predict --logits, compare
case_() {
    local name=$1 kind=$2 count=$3; shift 3
    local data=()
    for a in "$@"; do [ "${prev:-}" = --data ] && data=(--data "$a"); prev=$a; done
    prev=
    if ! "$cltrain" train "$@" "${q[@]}" --out "$tmp/$name.st" >"$tmp/out" 2>&1; then
        bad "$name: training failed"; sed 's/^/  | /' "$tmp/out" | tail -3; return
    fi
    if ! "$cltrain" export --weights "$tmp/$name.st" --onnx "$tmp/$name.onnx" >"$tmp/out" 2>&1; then
        bad "$name: export failed"; sed 's/^/  | /' "$tmp/out" | tail -3; return
    fi
    if ! "$cltrain" predict --weights "$tmp/$name.st" "${data[@]}" --count "$count" --logits >"$tmp/$name.jsonl" 2>"$tmp/err"; then
        bad "$name: predict --logits failed"; sed 's/^/  | /' "$tmp/err" | tail -3; return
    fi
    if "$py" "$here/check_onnx.py" "$tmp/$name.onnx" "$tmp/$name.jsonl" "$name" "$kind"; then
        ok "$name: onnxruntime gives cltrain's logits"
    else
        bad "$name: onnxruntime and cltrain differ"
    fi
}

img=(--limit 512 --test-limit 64 --batch 32)
case_ mlp float 64 --model mlp "${img[@]}"
case_ cnn float 32 --model cnn "${img[@]}"
case_ resnet56 float 16 --model resnet56 --data synthetic:3,32,32:10:64:ntest=16 --batch 16
case_ lstm tokens 2 --model lstm --data "text:$tmp/words.txt:tokens=word:seq=32:split=0.2" --batch 16 --limit 64 --test-limit 8
case_ textcls tokens 32 --model textcls --data "textdir:$tmp/td" --batch 16
case_ gpt tokens 2 --model gpt --data "text:$tmp/words.txt:seq=128:split=0.2" --batch 8 --limit 32 --test-limit 4

cat >"$tmp/img1.model" <<'EOF'
input shape=1x28x28
c1: conv2d out=4 kernel=3 pad=2 dilation=2 act=gelu
n4: lrn size=4 alpha=1 beta=0.75 k=1
c2: conv2d out=4 kernel=3 stride=2 pad=1 bias=false act=leaky_relu
ap: avgpool kernel=3 stride=2 pad=1 count_include_pad=false
fc: dense out=10
loss: softmax_cross_entropy
EOF
cat >"$tmp/img2.model" <<'EOF'
input shape=1x28x28
c1: conv2d out=4 kernel=5 pad=2 act=tanh
n3: lrn size=3 alpha=1 beta=0.75 k=1
mp: maxpool kernel=3 stride=2 pad=1
bn: batchnorm
ap: avgpool kernel=2 pad=1
f: flatten
d: dropout p=0.2
fc1: dense out=16 act=sigmoid
bnf: batchnorm
s: sigmoid from=bnf
t: tanh from=bnf
g: gelu from=bnf
lr: leaky_relu from=bnf
a1: add from=s,t
a2: add from=g,lr
a3: add from=a1,a2
fc2: dense out=10 bias=false
loss: softmax_cross_entropy
EOF
cat >"$tmp/seq.model" <<'EOF'
input tokens=40
emb: embedding vocab=256 dim=16
pos: posembed max_len=64
ln: layernorm
att: attention heads=2 causal=false
a1: add from=att,pos
rms: rmsnorm eps=1e-5
lstm: lstm hidden=16 layers=2
gru: gru hidden=16 layers=3 from=rms
pmax: seqpool mode=max from=lstm
plast: seqpool mode=last from=lstm
pmean: seqpool mode=mean from=a1
pgru: seqpool mode=last from=gru
s1: add from=pmax,plast
s2: add from=s1,pmean
s3: add from=s2,pgru
cs: concat from=lstm,gru
pcat: seqpool mode=mean
pc: dense out=16
s4: add from=s3,pc
ln2: layernorm
fc: dense out=16 act=gelu
fc2: dense out=8
loss: softmax_cross_entropy
EOF
cat >"$tmp/img3.model" <<'EOF'
input shape=1x28x28
c1: conv2d out=8 kernel=3 pad=1 act=silu
b1: conv2d out=4 kernel=1 from=c1
b2: conv2d out=4 kernel=3 pad=1 from=c1
b3: maxpool kernel=3 stride=1 pad=1 from=c1
cat: concat from=b1,b2,b3
c2: conv2d out=8 kernel=3 stride=2 pad=1 groups=4 act=relu6
c3: conv2d out=8 kernel=3 stride=2 pad=1 groups=8 act=hardswish
gp: global_avgpool
se1: dense out=4 act=relu
se2: dense out=8 act=sigmoid
se: mul from=c3,se2
up: upsample mode=bilinear scale=2
u: concat from=up,c2
un: upsample scale=2
ct: conv_transpose2d out=6 kernel=3 stride=2 pad=1 output_padding=1 act=relu
ct2: conv_transpose2d out=4 kernel=2 stride=2 bias=false
p4: maxpool kernel=4 stride=4
f: flatten
fc1: dense out=32
h: hardswish from=fc1
r: relu6 from=fc1
s: silu from=fc1
a1: add from=h,r
hs: mul from=a1,s
a2: add from=hs,s
cf: concat from=a2,h
fn: rmsnorm
fc2: dense out=10
loss: softmax_cross_entropy
EOF
case_ img1 float 32 --model "$tmp/img1.model" "${img[@]}"
case_ vit float 32 --model vit "${img[@]}"
case_ img3 float 32 --model "$tmp/img3.model" "${img[@]}"
case_ img2 float 32 --model "$tmp/img2.model" "${img[@]}"
case_ seq tokens 32 --model "$tmp/seq.model" --data "textdir:$tmp/td:seq=40" --batch 16
# a text that is all padding (no test file is empty: predict --text "" makes
# one): seqpool gives zeros in the net and in the graph alike
if "$cltrain" predict --weights "$tmp/seq.st" --text "" --top 8 >"$tmp/empty.txt" 2>&1 &&
    "$py" - "$tmp/seq.onnx" "$tmp/empty.txt" <<'EOF'; then
import re, sys
import numpy as np, onnxruntime as ort
s = ort.InferenceSession(sys.argv[1], providers=["CPUExecutionProvider"])
(p,) = s.run(["probabilities"], {"input": np.zeros((1, 40), np.int64)})
want = {int(c): float(v) for c, v in re.findall(r"c(\d) \(([0-9.]+)\)", open(sys.argv[2]).read())}
assert len(want) == 8, open(sys.argv[2]).read()
err = max(abs(p[0][c] - v) for c, v in want.items())
print(f"  all padding: probabilities within {err:.2g} of predict --text's 4 decimals")
assert err <= 6e-5, err
EOF
    ok "seq: a text of padding only"
else
    bad "seq: a text of padding only"; sed 's/^/  | /' "$tmp/empty.txt" | tail -3
fi

# an mse head: the graph's output "output", here checked against numpy
# (training has no regression targets yet, so the checkpoint is written here)
python3 - "$tmp/mse.st" <<'EOF'
import json, random, struct, sys
r = random.Random(5)
model = "input features=6\nfc: dense out=3 act=tanh\nloss: mse\n"
w = [r.uniform(-1, 1) for _ in range(18)]
b = [r.uniform(-1, 1) for _ in range(3)]
meta = {"format": "cltrain-checkpoint-1", "model": model, "epoch": "1", "step": "1", "seed": "1", "batch": "1"}
header = json.dumps({"__metadata__": meta,
                     "fc.weight": {"dtype": "F32", "shape": [3, 6], "data_offsets": [0, 72]},
                     "fc.bias": {"dtype": "F32", "shape": [3], "data_offsets": [72, 84]}}).encode()
header += b" " * (-len(header) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(header)) + header + struct.pack("<21f", *(w + b)))
EOF
if "$cltrain" export --weights "$tmp/mse.st" --onnx "$tmp/mse.onnx" >"$tmp/out" 2>&1 &&
    "$py" - "$tmp/mse.st" "$tmp/mse.onnx" <<'EOF'; then
import json, struct, sys
import numpy as np, onnxruntime as ort
data = open(sys.argv[1], "rb").read()
(n,) = struct.unpack("<Q", data[:8])
v = np.frombuffer(data[8 + n:], dtype="<f4")
w, b = v[:18].reshape(3, 6), v[18:]
s = ort.InferenceSession(sys.argv[2], providers=["CPUExecutionProvider"])
o = s.get_outputs()
assert [x.name for x in o] == ["output"] and o[0].shape[1:] == [3], [(x.name, x.shape) for x in o]
x = np.random.default_rng(1).standard_normal((5, 6)).astype(np.float32)
(y,) = s.run(None, {"input": x})
err = np.abs(y - np.tanh(x @ w.T + b)).max()
print(f"  mse: output {y.shape}, max difference from numpy {err:.3g}")
assert err < 1e-5, err
EOF
    ok "mse: the output of an mse model"
else
    bad "mse: export or run failed"; sed 's/^/  | /' "$tmp/out" | tail -3
fi

finish test_onnx
