#!/usr/bin/env bash
# test_train.sh CLTRAIN - end-to-end training through the CLI on a
# Fashion-MNIST subset: accuracy, bit-exact resume, checkpoints an
# independent reader accepts, eval/predict, and every kind of bad input
# (model file, dataset, checkpoint, flags) failing with the stated exit code
# and message, never a signal, never a lost checkpoint.
set -u
cltrain=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/../lib.sh"
common=(--limit 2000 --test-limit 1000 --batch 50 --no-progress)


if [ ! -d /usr/share/datasets/fashion-mnist ]; then
    echo "Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)"; exit 1
fi

# 1. accuracy: the MLP on 2000 samples for 3 epochs reaches 78% on 1000 test
#    samples (measured: ~79-80%; chance is 10%)
expect "mlp trains" 0 "epoch 3/3" -- "$cltrain" train --model mlp --epochs 3 "${common[@]}" --out "$tmp/mlp.ckpt" --log "$tmp/mlp.jsonl"
acc=$(python3 -c "import json,sys; print(json.loads(open('$tmp/mlp.jsonl').read().splitlines()[-1])['test_accuracy'])")
if python3 -c "import sys; sys.exit(0 if $acc >= 0.78 else 1)"; then ok "mlp test accuracy $acc >= 0.78"; else bad "mlp test accuracy $acc < 0.78"; fi

# 2. determinism and resume: 2 epochs straight == 1 epoch + resume for 1,
#    bit for bit (losses and the checkpoint), with dropout and batch norm
#    (the zoo's cnn, which has none, with a dropout before each dense layer)
cnn_with_dropout "$cltrain" "$tmp/cnn_dropout.txt"
cnn=(--model "$tmp/cnn_dropout.txt" --schedule constant "${common[@]}")
"$cltrain" train "${cnn[@]}" --epochs 2 --log "$tmp/s.jsonl" --out "$tmp/s.ckpt" >/dev/null 2>&1
"$cltrain" train "${cnn[@]}" --epochs 1 --log "$tmp/r.jsonl" --out "$tmp/r.ckpt" >/dev/null 2>&1
"$cltrain" train "${cnn[@]}" --epochs 2 --resume "$tmp/r.ckpt" --log "$tmp/r.jsonl" --out "$tmp/r.ckpt" >/dev/null 2>&1
if [ -s "$tmp/s.jsonl" ] && cmp -s <(cut -d, -f2-6 "$tmp/s.jsonl") <(cut -d, -f2-6 "$tmp/r.jsonl"); then
    ok "resume gives the same losses"
else
    bad "resume changed the losses"; diff "$tmp/s.jsonl" "$tmp/r.jsonl" | head -4
fi
if cmp -s "$tmp/s.ckpt" "$tmp/r.ckpt"; then ok "resume gives the same checkpoint bytes"; else bad "resumed checkpoint differs"; fi
"$cltrain" train "${cnn[@]}" --epochs 1 --log "$tmp/again.jsonl" >/dev/null 2>&1
if cmp -s <(head -1 "$tmp/s.jsonl" | cut -d, -f2-6) <(cut -d, -f2-6 "$tmp/again.jsonl"); then
    ok "the same seed reproduces the losses"; else bad "same seed, other losses"; fi

# 3. the checkpoint, read by an independent parser
expect "checkpoint parses independently" 0 "fc1.weight \[256, 784\]" -- python3 "$here/read_safetensors.py" "$tmp/mlp.ckpt" fc1.weight=256x784 fc1.bias=256 fc3.weight=10x128
expect "batch-norm checkpoint names" 0 "bn1.running_var \[32\]" -- python3 "$here/read_safetensors.py" "$tmp/s.ckpt" conv1.weight=32x1x3x3 bn1.weight=32 bn1.running_mean=32
expect "batch-norm step count (2 epochs of 40 steps)" 0 "bn1.num_batches_tracked \[\] 80$" -- python3 "$here/read_safetensors.py" "$tmp/s.ckpt"

# 4. eval and predict
expect "eval" 0 "1000 samples  loss [0-9.]+  accuracy [0-9.]+%" -- "$cltrain" eval --weights "$tmp/mlp.ckpt" --limit 1000
expect "predict" 0 "^sample 0 label 9: [0-9] \(0\.[0-9]+\)" -- "$cltrain" predict --weights "$tmp/mlp.ckpt" --count 2 --top 2
expect "dry run prints the plan" 0 "total trainable parameters: 85098" -- "$cltrain" train --model alexnet-r --dry-run

# 5. bad model files: file:line:column and what was expected; exit 1
printf 'input shape=1x28x28\nfc1: dense out=10 act=relu\nloss: softmax_cross_entropy\n' > "$tmp/good.model"
printf 'input shape=1x28x28\nfc1: dense outs=10\nloss: softmax_cross_entropy\n' > "$tmp/key.model"
printf 'input shape=1x28x28\nfc1: densely out=10\nloss: softmax_cross_entropy\n' > "$tmp/type.model"
printf 'input shape=1x28x28\nc: conv2d out=4 kernel=40\nloss: softmax_cross_entropy\n' > "$tmp/shape.model"
printf 'input shape=1x28x28\nfc1: dense out=ten\nloss: softmax_cross_entropy\n' > "$tmp/value.model"
printf 'input shape=1x28x28\na: add from=nowhere\nloss: softmax_cross_entropy\n' > "$tmp/from.model"
expect "a good model file trains" 0 "epoch 1/1" -- "$cltrain" train --model "$tmp/good.model" --epochs 1 "${common[@]}"
expect "unknown key" 1 "key.model:2:12: unknown key 'outs' for dense" -- "$cltrain" train --model "$tmp/key.model" --dry-run
expect "unknown layer type" 1 "type.model:2:6: unknown layer type 'densely'" -- "$cltrain" train --model "$tmp/type.model" --dry-run
expect "shape mismatch" 1 "shape.model:2: layer 'c' \(conv2d\): conv2d kernel 40 .* input has shape 1x28x28" -- "$cltrain" train --model "$tmp/shape.model" --dry-run
expect "bad value" 1 "value.model:2:12: out=ten: expected an integer" -- "$cltrain" train --model "$tmp/value.model" --dry-run
expect "dangling from" 1 "from.model:2:8: from: no earlier layer is named 'nowhere'" -- "$cltrain" train --model "$tmp/from.model" --dry-run
# dotted names (PyTorch's module paths), their grammar, and two layers saving one tensor name
printf 'input shape=1x28x28\nlayer1.0.conv1: conv2d out=4 kernel=3\nlayer1.0.bn1: batchnorm\nfc-1.0: dense out=10 from=layer1.0.bn1\nloss: softmax_cross_entropy\n' > "$tmp/dots.model"
printf 'input shape=1x28x28\nlayer1..conv: conv2d out=4 kernel=3\nloss: softmax_cross_entropy\n' > "$tmp/dotdot.model"
printf 'input tokens=8\nembedding vocab=16 dim=8\na: attention heads=2\na.out_proj: dense out=8\nseqpool\ndense out=3\nsoftmax_cross_entropy\n' > "$tmp/clash.model"
expect "dotted layer names" 0 "^fc-1\.0 +dense +layer1\.0\.bn1 +10 " -- "$cltrain" model "$tmp/dots.model"
expect "an empty part of a dotted name" 1 "dotdot.model:2:1: 'layer1..conv' is not a layer name" -- "$cltrain" model "$tmp/dotdot.model"
expect "one tensor name from two layers" 1 "clash.model:4: layer 'a.out_proj' would save tensor 'a.out_proj.weight', which layer 'a' \(line 3\) saves too" -- "$cltrain" model "$tmp/clash.model"
expect "missing model file" 1 "cannot read model file $tmp/none.model" -- "$cltrain" train --model "$tmp/none.model"
expect "model does not fit the data" 1 "samples of 1x28x28 but model .* takes 3x32x32" -- "$cltrain" train --model resnet56 "${common[@]}" --epochs 1

# 6. bad datasets: the file and the record; exit 1
mkdir -p "$tmp/idx"
src=/usr/share/datasets/fashion-mnist
for f in train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do zcat "$src/$f.gz" > "$tmp/idx/$f"; done
zcat "$src/train-images-idx3-ubyte.gz" | head -c 100000 > "$tmp/idx/train-images-idx3-ubyte"
expect "truncated IDX" 1 "train-images-idx3-ubyte.*(truncated|record)" -- "$cltrain" train --model mlp --data "mnist:$tmp/idx" --epochs 1 "${common[@]}"
expect "missing dataset" 1 "$tmp/nothing" -- "$cltrain" train --model mlp --data "mnist:$tmp/nothing" --epochs 1

# 7. bad checkpoints: named, exit 1, and never a signal
head -c 300 "$tmp/mlp.ckpt" > "$tmp/trunc.ckpt"
printf 'not a checkpoint at all' > "$tmp/junk.ckpt"
expect "truncated checkpoint" 1 "trunc.ckpt" -- "$cltrain" eval --weights "$tmp/trunc.ckpt"
expect "foreign checkpoint" 1 "junk.ckpt" -- "$cltrain" eval --weights "$tmp/junk.ckpt"
expect "checkpoint of another model" 1 "another model" -- "$cltrain" eval --weights "$tmp/mlp.ckpt" --model cnn
expect "resume with another optimizer" 1 "trained with adam, not sgd" -- "$cltrain" train --resume "$tmp/mlp.ckpt" --optimizer sgd --epochs 4 "${common[@]}"

# 8. bad flags: usage errors, exit 2
expect "unknown flag" 2 "unknown option or missing value '--epoch'" -- "$cltrain" train --epoch 3
expect "bad number" 2 "--epochs needs an integer" -- "$cltrain" train --epochs two
expect "bad learning rate" 2 "--lr needs a number" -- "$cltrain" train --lr -1
expect "missing value" 2 "missing value '--model'" -- "$cltrain" train --model
expect "eval needs weights" 2 "eval needs --weights" -- "$cltrain" eval
expect "unknown optimizer" 1 "unknown optimizer 'adagrad'" -- "$cltrain" train --optimizer adagrad "${common[@]}"

# 9. a failing save leaves the previous checkpoint intact: the file size
#    limit makes the write fail (EFBIG) partway through
cp "$tmp/mlp.ckpt" "$tmp/keep.ckpt"
(trap '' XFSZ; ulimit -f 200; exec "$cltrain" train --resume "$tmp/keep.ckpt" --epochs 4 "${common[@]}" --out "$tmp/keep.ckpt") >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "previous file .* untouched" "$tmp/err"; then ok "a failed save reports itself"; else bad "a failed save: exit $rc"; sed 's/^/  | /' "$tmp/err" | tail -3; fi
if cmp -s "$tmp/mlp.ckpt" "$tmp/keep.ckpt"; then ok "the previous checkpoint is untouched"; else bad "the previous checkpoint changed"; fi
expect "the previous checkpoint still loads" 0 "accuracy" -- "$cltrain" eval --weights "$tmp/keep.ckpt" --limit 200
if ls "$tmp"/keep.ckpt.tmp.* >/dev/null 2>&1; then bad "a temporary file was left behind"; else ok "no temporary file left"; fi

echo "test_train: $checks checks, $fails failed"
[ "$fails" -eq 0 ]
