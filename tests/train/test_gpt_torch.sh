#!/usr/bin/env bash
# test_gpt_torch.sh CLTRAIN - a gpt-shaped model against PyTorch: cltrain
# trains it a few steps on a small text and logs its held-out loss; the
# checkpoint loads strictly into tools/pytorch_gpt.py's module (every tensor
# name and shape as PyTorch's), whose loss over the same windows in float64
# must agree within 1e-4 relative. The loss is the JSON log's (8
# significant digits; eval prints 4). Done on a small model (2 blocks, width
# 32, context 16) after 6 steps, and on the zoo's gpt with its initial
# weights (one step at lr 1e-12). Skips (exit 77) without PyTorch.
set -u
cltrain=$1
. "$(dirname "$0")/../lib.sh"
py=/usr/bin/python3
tool="$(dirname "$0")/../../tools/pytorch_gpt.py"
if ! "$py" -c 'import torch' 2>/dev/null; then
    echo "skip: $py cannot import torch (python3-torch)"
    exit 77
fi

python3 - "$tmp" <<'PY'
import random, sys
r = random.Random(3)
words = "the cat sat on a mat while one dog ran far away from home".split()
for name, n in (("train", 400), ("test", 60)):
    with open(f"{sys.argv[1]}/{name}.txt", "w") as f:
        for _ in range(n):
            f.write(" ".join(r.choice(words) for _ in range(7)) + ".\n")
PY

cat > "$tmp/tiny.model" <<'EOF2'
# gpt's shape, small: 2 blocks, 4 heads, width 32, context 16
input tokens=16
wte: embedding vocab=256 dim=32
wpe: posembed max_len=16
h0_ln1: layernorm from=wpe
h0_attn: attention heads=4 causal=true
h0_add1: add from=h0_attn,wpe
h0_ln2: layernorm
h0_fc: dense out=128 act=gelu
h0_proj: dense out=32
h0_add2: add from=h0_proj,h0_add1
h1_ln1: layernorm from=h0_add2
h1_attn: attention heads=4 causal=true
h1_add1: add from=h1_attn,h0_add2
h1_ln2: layernorm
h1_fc: dense out=128 act=gelu
h1_proj: dense out=32
h1_add2: add from=h1_proj,h1_add1
ln_f: layernorm
head: dense out=256
loss: softmax_cross_entropy
EOF2

# compare NAME MODEL SEQ LIMIT TEST_LIMIT BATCH LR: train, then PyTorch's loss
compare() {
    local name=$1 model=$2 seq=$3 limit=$4 tlimit=$5 batch=$6 lr=$7
    rm -f "$tmp/$name.jsonl"
    if ! expect "$name: cltrain trains" 0 "^done: 1 epochs" -- "$cltrain" train --model "$model" \
        --data "text:$tmp/train.txt:seq=$seq:test=$tmp/test.txt" --limit "$limit" \
        --test-limit "$tlimit" --batch "$batch" --lr "$lr" --epochs 1 --no-progress \
        --out "$tmp/$name.st" --log "$tmp/$name.jsonl"; then
        return
    fi
    local loss
    loss=$(grep '"event": "epoch"' "$tmp/$name.jsonl" | sed -E 's/.*"test_loss": ([0-9.eE+-]+).*/\1/')
    expect "$name: PyTorch's loss over the same $tlimit windows within 1e-4 of cltrain's $loss" 0 \
        "within" -- "$py" "$tool" loss "$tmp/$name.st" "$tmp/test.txt" --limit "$tlimit" \
        --cltrain-loss "$loss"
    cat "$tmp/out"
    # the comparison is not vacuous: 1e-3 off is refused
    local off
    off=$(python3 -c "print($loss * 1.001)")
    expect "$name: a loss 1e-3 off is refused" 1 "OVER" -- "$py" "$tool" loss "$tmp/$name.st" \
        "$tmp/test.txt" --limit "$tlimit" --cltrain-loss "$off"
}

compare tiny "$tmp/tiny.model" 16 96 40 16 3e-3
compare gpt gpt 128 8 12 8 1e-12

expect "the state_dict's names are the checkpoint's" 0 "^h1_attn\.in_proj_weight \(96, 32\)$" -- \
    "$py" "$tool" model "$tmp/tiny.st"
finish test_gpt_torch
