#!/usr/bin/env bash
# test_segment.sh CLTRAIN - a label per pixel (segmentation) through the CLI:
# tools/make_shapes.py writes grey noise with squares, discs and triangles
# and their per-pixel labels as Keras' npz layout (x_train (N, 32, 32),
# y_train (N, 32, 32)); the zoo's unet learns them to >= 90% pixel accuracy
# (a model saying "background" everywhere gets 82%) in 2 epochs, and `eval`
# reports the same pixel accuracy from the checkpoint (`predict` points to
# eval and --logits). A model scoring
# samples against per-pixel labels, per-pixel scores against one label per
# sample, and augmentation with per-pixel labels are refused by name.
set -u
cltrain=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/../lib.sh"
py=$(py_with numpy) || { echo "skip: no numpy (tools/setup_python.sh)"; exit 77; }
"$py" "$here/../../tools/make_shapes.py" "$tmp/shapes.npz" --n 2000 --test 400 ||
    { bad "make_shapes.py"; finish segment; }
if "$cltrain" train --model unet --data "npz:$tmp/shapes.npz" --epochs 2 --batch 32 --optimizer adam --lr 3e-3 \
        --seed 1 --no-progress --out "$tmp/unet.st" >"$tmp/out" 2>&1; then
    acc=$(sed -n 's/^done: .*test accuracy \([0-9.]*\)%.*/\1/p' "$tmp/out")
    if awk -v a="$acc" 'BEGIN { exit !(a >= 90) }'; then
        ok "unet: ${acc}% of the test pixels right after 2 epochs"
    else
        bad "unet: ${acc:-no}% of the test pixels right, want >= 90"; tail -n 4 "$tmp/out" | sed 's/^/  | /'
    fi
    if "$cltrain" eval --weights "$tmp/unet.st" --data "npz:$tmp/shapes.npz" >"$tmp/eval" 2>&1 &&
        grep -q "accuracy ${acc}%" "$tmp/eval"; then
        ok "eval: the checkpoint's pixel accuracy is training's"
    else
        bad "eval disagrees with training's ${acc}%"; sed 's/^/  | /' "$tmp/eval"
    fi
    expect "predict: pixel scores point to eval and --logits" 1 "scores every pixel.*--logits" -- \
        "$cltrain" predict --weights "$tmp/unet.st" --data "npz:$tmp/shapes.npz" --count 2
else
    bad "unet training failed"; tail -n 8 "$tmp/out" | sed 's/^/  | /'
fi
printf 'input shape=1x32x32\nconv2d out=4 kernel=3\nglobal_avgpool\nsoftmax_cross_entropy\n' >"$tmp/cls.model"
expect "per-pixel labels, a classifier of samples" 1 "label per pixel" -- \
    "$cltrain" train --model "$tmp/cls.model" --data "npz:$tmp/shapes.npz" --epochs 1 --limit 64 --no-progress
expect "per-pixel scores, one label per sample" 1 "scores every pixel" -- \
    "$cltrain" train --model unet --data synthetic:1,32,32:4:64 --epochs 1 --no-progress
expect "per-pixel labels with augmentation" 1 "labels would not move with the pixels" -- \
    "$cltrain" train --model unet --data "npz:$tmp/shapes.npz" --augment --epochs 1 --limit 64 --no-progress
finish segment
