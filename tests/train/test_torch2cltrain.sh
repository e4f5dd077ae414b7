#!/usr/bin/env bash
# test_torch2cltrain.sh CLTRAIN - tools/torch2cltrain.py on torchvision's
# resnet18 (10 classes, 3x64x64 inputs, random batch-norm statistics:
# tests/train/torch_models.py), resnet50 and mobilenet_v2 at 3x64x64, and
# a small module holding the other idioms it maps, tools/pytorch_zoo.py's
# twins of the zoo's unet (a label per pixel: (K, H, W) logits) and vit
# (with randomized norms and biases), and a batch-first transformer's
# idioms: the converted models'
# logits agree with PyTorch's within 1e-4 + 1e-4 * max|torch| on random
# inputs (the tool's check, through `cltrain predict --logits`), resnet18's
# weights file loads into the module with load_state_dict(strict=True) and
# gives back its tensors, and so does the checkpoint of a training epoch
# started from it (optimizer.state left out); batch norm's
# num_batches_tracked there is the micro-batches trained (--accumulate 2); --freeze takes the dotted
# names' prefixes (only the head moves). Modules holding an op cltrain has
# no layer for are refused, naming the op and where it sits, and nothing is
# written. Skips (exit 77) without PyTorch and torchvision.
set -u
cltrain=$1
. "$(dirname "$0")/../lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
tool="$here/../../tools/torch2cltrain.py"
if ! "$py" -c 'import torch, torchvision' 2>/dev/null; then
    echo "skip: $py cannot import torch and torchvision (python3-torch, python3-torchvision)"
    exit 77
fi
export PYTHONPATH="$here:$here/../../tools"

# 1. resnet18, converted and checked by the tool
expect "resnet18 converts and its logits agree" 0 "^check: 4 samples, .*: ok$" -- "$py" "$tool" \
    torch_models:resnet18 --kwargs '{"num_classes": 10}' --input 3x64x64 --out "$tmp/r18.model" \
    --weights "$tmp/r18.st" --cltrain "$cltrain" --count 4
grep "^check:" "$tmp/out"
expect "the model file names layers as the module does" 0 \
    "^layer2\.0\.downsample\.0: conv2d out=128 kernel=1 stride=2 bias=false from=layer1\.1\.relu$" -- \
    cat "$tmp/r18.model"
expect "cltrain reads the model file" 0 "^total trainable parameters: 11181642$" -- "$cltrain" model "$tmp/r18.model"

for m in resnet50 mobilenet_v2; do
    expect "$m converts and its logits agree" 0 "^check: 2 samples, .*: ok$" -- "$py" "$tool" \
        "torch_models:$m" --input 3x64x64 --out "$tmp/$m.model" --weights "$tmp/$m.st" --cltrain "$cltrain"
    grep "^check:" "$tmp/out"
done
expect "mobilenet_v2's depthwise convolutions" 0 \
    "^features\.1\.conv\.0\.0: conv2d out=32 kernel=3 pad=1 groups=32 bias=false$" -- cat "$tmp/mobilenet_v2.model"
expect "the other idioms convert and their logits agree" 0 "^check: 4 samples, .*: ok$" -- "$py" "$tool" \
    torch_models:Idioms --input 3x16x16 --out "$tmp/idioms.model" --weights "$tmp/idioms.st" \
    --cltrain "$cltrain" --count 4
grep "^check:" "$tmp/out"
expect "squeeze-and-excitation: convolutions on the pooled image, the gate second" 0 \
    "^se\.avgpool: avgpool kernel=16\$" -- grep -A3 "^se.avgpool:" "$tmp/idioms.model"
expect "a gate multiplied in with the image first" 0 "^mul: mul from=up,se\.fc2\$" -- cat "$tmp/idioms.model"

# the zoo's twins: per-pixel logits (K, H, W) and a vision transformer's sequences
expect "the unet twin converts and its per-pixel logits agree" 0 "^check: 2 samples, .*: ok$" -- "$py" "$tool" \
    torch_models:unet --input 1x32x32 --out "$tmp/unet.model" --weights "$tmp/unet.st" --cltrain "$cltrain"
grep "^check:" "$tmp/out"
expect "the unet's F.max_pool2d and its head of 4 class planes" 0 \
    "^input shape=1x32x32 enc1a: .* max_pool2d: maxpool kernel=2 .*head: conv2d out=4 kernel=1 loss: softmax_cross_entropy\$" -- \
    sh -c 'grep -v "^#" "$1" | paste -sd " " -' sh "$tmp/unet.model"
expect "the vit twin converts and its logits agree" 0 "^check: 2 samples, .*: ok$" -- "$py" "$tool" \
    torch_models:vit --input 1x28x28 --out "$tmp/vit.model" --weights "$tmp/vit.st" --cltrain "$cltrain"
grep "^check:" "$tmp/out"
expect "patches as a sequence, the position table named as the module" 0 \
    "^permute: to_sequence pos: posembed max_len=49 b0_ln1: layernorm b0_attn: attention heads=4 causal=false\$" -- \
    sh -c 'grep -A3 "^permute:" "$1" | paste -sd " " -' sh "$tmp/vit.model"
expect "the mean over the steps is seqpool" 0 "^mean: seqpool mode=mean\$" -- cat "$tmp/vit.model"
expect "the vit's weights load strictly into pytorch_zoo.ViT" 0 "^strict load of 55 tensors: ok\$" -- "$py" -c "
import json, struct, sys, torch, pytorch_zoo
data = open(sys.argv[1], 'rb').read()
(n,) = struct.unpack('<Q', data[:8])
header = json.loads(data[8:8 + n])
header.pop('__metadata__')
sd = {k: torch.frombuffer(bytearray(data[8 + n + t['data_offsets'][0]:8 + n + t['data_offsets'][1]]),
                          dtype=torch.float32).reshape(t['shape']) for k, t in header.items()}
pytorch_zoo.ViT().load_state_dict(sd, strict=True)
print(f'strict load of {len(sd)} tensors: ok')" "$tmp/vit.st"
expect "batch-first sequences, a sliced table and a time-major add convert and agree" 0 \
    "^check: 2 samples, .*: ok$" -- "$py" "$tool" torch_models:SeqIdioms --input 3x8x8 --out "$tmp/seq.model" \
    --weights "$tmp/seq.st" --cltrain "$cltrain"
grep "^check:" "$tmp/out"

# 2. the weights, and a checkpoint cltrain trains from them, load strictly
"$py" - "$tmp" <<'PY'
import numpy as np, sys
g = np.random.default_rng(5)
np.save(f"{sys.argv[1]}/x.npy", g.standard_normal((8, 3, 64, 64), dtype=np.float32))
np.save(f"{sys.argv[1]}/y.npy", g.integers(0, 10, 8))
PY
data="npy:$tmp/x.npy,$tmp/y.npy:test=$tmp/x.npy,$tmp/y.npy"
expect "cltrain trains from the weights" 0 "loaded 102 of the model's 102 tensors" -- "$cltrain" train \
    --model "$tmp/r18.model" --init "$tmp/r18.st" --data "$data" --epochs 1 --batch 2 --accumulate 2 \
    --lr 0.01 --no-progress --out "$tmp/r18.ckpt"
cat > "$tmp/load.py" <<'PY'
"""load.py FILE STEPS CHANGED: FILE's tensors (less optimizer.state) into
torch_models.resnet18(num_classes=10) with strict=True; each batch norm's
num_batches_tracked must be STEPS (or the module's own when STEPS is -),
and the tensors the module's own (CHANGED=0) or not all (CHANGED=1)."""
import json, struct, sys
import torch
import torch_models

path, steps, changed = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
data = open(path, "rb").read()
(n,) = struct.unpack("<Q", data[:8])
header = json.loads(data[8:8 + n])
header.pop("__metadata__")
sd = {}
for name, t in header.items():
    if name == "optimizer.state":
        continue
    b, e = t["data_offsets"]
    dtype = {"F32": torch.float32, "I64": torch.int64}[t["dtype"]]
    sd[name] = torch.frombuffer(bytearray(data[8 + n + b:8 + n + e]), dtype=dtype).reshape(t["shape"])
m = torch_models.resnet18(num_classes=10)
own = {k: v.clone() for k, v in m.state_dict().items()}
m.load_state_dict(sd, strict=True)
counts = {k: int(v) for k, v in sd.items() if k.endswith("num_batches_tracked")}
want = {k: int(own[k]) if steps == "-" else int(steps) for k in counts}
assert counts == want, f"num_batches_tracked {sorted(set(counts.values()))}, want {sorted(set(want.values()))}"
same = [k for k in own if torch.equal(own[k], m.state_dict()[k])]
assert (len(same) < len(own)) if changed else len(same) == len(own), f"{len(same)} of {len(own)} unchanged"
print(f"strict load of {len(sd)} tensors: ok, num_batches_tracked {sorted(set(counts.values()))}")
PY
expect "the weights load strictly and are the module's" 0 "strict load of 122 tensors: ok" -- \
    "$py" "$tmp/load.py" "$tmp/r18.st" - 0
expect "the trained checkpoint loads strictly (2 steps of 2 micro-batches)" 0 \
    "strict load of 122 tensors: ok, num_batches_tracked \[4\]" -- "$py" "$tmp/load.py" "$tmp/r18.ckpt" 4 1

# --freeze with dotted names: a prefix per stage; only the head's parameters move
expect "cltrain fine-tunes the head alone" 0 "epoch 1/1" -- "$cltrain" train --model "$tmp/r18.model" \
    --init "$tmp/r18.st" --freeze 'conv1,bn1,layer1.*,layer2.*,layer3.*,layer4.*' --data "$data" --epochs 1 \
    --batch 4 --lr 0.01 --no-progress --out "$tmp/head.ckpt"
cat > "$tmp/moved.py" <<'PY'
"""moved.py A B DIR: the parameters (not the running statistics) that differ
between two files, read by DIR/compare_step.py"""
import sys
sys.path.insert(0, sys.argv[3])
from compare_step import read
a, b = read(sys.argv[1])[0], read(sys.argv[2])[0]
moved = sorted(k for k in a if k in b and not k.startswith("optimizer") and "running" not in k and a[k][1] != b[k][1])
print("moved:", " ".join(moved))
PY
expect "--freeze 'layer1.*' and the rest kept the frozen parameters" 0 "^moved: fc.bias fc.weight$" -- \
    "$py" "$tmp/moved.py" "$tmp/r18.st" "$tmp/head.ckpt" "$here"

# 3. refusals: the op, the fx node and the module it sits in; no files
expect "an unsupported function is refused" 1 \
    "cannot convert torch_models:Refused: fx node 'logsumexp' \(call_function logsumexp\) in module 'block' \(Block\): function torch.logsumexp has no cltrain layer" -- \
    "$py" "$tool" torch_models:Refused --input 3x8x8 --out "$tmp/bad.model" --weights "$tmp/bad.st"
expect "an unsupported module is refused" 1 \
    "fx node 'block_act' \(call_module block.act\) in module 'block.act' \(ELU\): module type torch.nn.modules.activation.ELU has no cltrain layer" -- \
    "$py" "$tool" torch_models:RefusedModule --input 3x8x8 --out "$tmp/bad.model" --weights "$tmp/bad.st"
expect "a position table that is no module's weight is refused" 1 \
    "fx node 'pos_embed' \(get_attr pos_embed\) in module '<top>' \(RefusedTable\): the tensor 'pos_embed' read directly" -- \
    "$py" "$tool" torch_models:RefusedTable --input 3x8x8 --out "$tmp/bad.model" --weights "$tmp/bad.st"
if [ -e "$tmp/bad.model" ] || [ -e "$tmp/bad.st" ]; then bad "a refused module left files"; else ok "a refused module writes nothing"; fi

finish test_torch2cltrain
