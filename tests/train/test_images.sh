#!/usr/bin/env bash
# test_images.sh CLTRAIN - imagefolder: datasets through the CLI: a PNG copy
# of a Fashion-MNIST subset trains the CNN as its IDX files do, the
# training split's normalization goes into the checkpoint and eval and
# predict use it (with the class names), JPEG files, size=, --augment, and
# bad folders and images failing with messages that name the file.
set -u
cltrain=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/../lib.sh"
src=/usr/share/datasets/fashion-mnist
if [ ! -d $src ]; then
    echo "Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)"; exit 1
fi
py=$(py_with gzip,zlib) || { echo "skip: no python3"; exit 77; }

# the first 6000 training and 1000 test samples, as IDX files and as PNG
# files, both ordered by class (the order imagefolder: lists the files)
"$py" "$here/fashion_files.py" $src "$tmp/f" 6000 1000 || { bad "fashion_files.py"; finish images; }
run=(train --model cnn --epochs 3 --batch 50 --seed 1 --no-progress)

# 1. the same samples, pixels and recipe: the same accuracy within 1 point.
#    The runs differ only in the normalization (Fashion-MNIST's constants
#    0.2860/0.3530 against this subset's own mean and std, which are within
#    1% of them); measured: 86.9% (IDX) and 86.5% (PNG).
acc() { sed -n 's/.*test accuracy \([0-9.]*\)%.*/\1/p' "$1" | tail -n 1; }
expect "idx trains" 0 "epoch 3/3" -- "$cltrain" "${run[@]}" --data "fashion-mnist:$tmp/f/idx"
cp "$tmp/out" "$tmp/idx.out"
expect "imagefolder trains" 0 "epoch 3/3" -- "$cltrain" "${run[@]}" --data "imagefolder:$tmp/f/images" \
    --out "$tmp/img.ckpt"
cp "$tmp/out" "$tmp/img.out"
a=$(acc "$tmp/idx.out"); b=$(acc "$tmp/img.out")
echo "test accuracy: idx $a%, imagefolder $b%"
if awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; exit !(a > 80 && (d < 0 ? -d : d) <= 1.0) }'; then
    ok "imagefolder accuracy $b% within 1 point of idx $a%"
else
    bad "imagefolder accuracy $b% vs idx $a% (want within 1 point, above 80%)"
fi

# 2. the checkpoint keeps the training split's mean and std (computed here
#    from the IDX bytes; float32 printed and read back: 1e-6) and the class
#    names; eval and predict use them
"$py" - "$tmp/f/idx/train-images-idx3-ubyte.gz" "$tmp/img.ckpt" <<'EOF' && ok "normalize in the checkpoint" || bad "normalize in the checkpoint"
import gzip, json, struct, sys
px = gzip.open(sys.argv[1]).read()[16:]
n = len(px)
mean = sum(px) / n / 255
std = (sum(v * v for v in px) / n / 65025 - mean * mean) ** 0.5
raw = open(sys.argv[2], "rb").read()
hlen = struct.unpack("<Q", raw[:8])[0]
meta = json.loads(raw[8:8 + hlen])["__metadata__"]
norm = json.loads(meta["normalize"])
print("checkpoint", norm, "expected", mean, std)
assert abs(norm["mean"][0] - mean) < 1e-6 and abs(norm["std"][0] - std) < 1e-6
assert json.loads(meta["classes"])[0] == "0_T-shirt_top"
EOF
expect "eval from the checkpoint" 0 "1000 samples  loss [0-9.]+  accuracy $b%" -- \
    "$cltrain" eval --weights "$tmp/img.ckpt" --data "imagefolder:$tmp/f/images"
expect "predict prints class names" 0 "sample 0 label 0_T-shirt_top: [0-9]_[A-Za-z_-]+ \(0\.[0-9]+\)" -- \
    "$cltrain" predict --weights "$tmp/img.ckpt" --data "imagefolder:$tmp/f/images" --count 3

# 3. a folder of class folders split by split=F (stratified, seeded), with
#    --augment, and size= resizing
mkdir -p "$tmp/one"
cp -r "$tmp/f/images/test/." "$tmp/one/"
expect "split= and --augment train" 0 "epoch 1/1" -- "$cltrain" train --model cnn --epochs 1 --batch 20 \
    --no-progress --augment --data "imagefolder:$tmp/one:split=0.2:seed=3"
expect "size= resizes" 1 "samples of 1x14x14 but model .* takes 1x28x28" -- \
    "$cltrain" train --model mlp --epochs 1 --no-progress --data "imagefolder:$tmp/one:split=0.2:size=14x14"

# 4. JPEG files (written by PIL when it is there)
if pyimg=$(py_with PIL); then
    "$pyimg" - "$tmp/one" "$tmp/jpg" <<'EOF'
import os, sys
from PIL import Image
for root, _, files in os.walk(sys.argv[1]):
    for f in files:
        out = os.path.join(sys.argv[2], os.path.relpath(root, sys.argv[1]))
        os.makedirs(out, exist_ok=True)
        Image.open(os.path.join(root, f)).convert("RGB").save(os.path.join(out, f[:-4] + ".jpg"), quality=95)
EOF
    expect "jpeg folder trains" 0 "epoch 1/1" -- "$cltrain" train --model cnn --epochs 1 --batch 20 \
        --no-progress --data "imagefolder:$tmp/jpg:split=0.2"
else
    echo "skip: JPEG training (no PIL)"
fi

# 5. bad folders and images
small=$tmp/small
for s in train test; do
    for c in a b; do
        mkdir -p "$small/$s/$c"
        ls "$tmp/f/images/$s/$([ $c = a ] && echo 0_T-shirt_top || echo 1_Trouser)"/*.png | head -n 30 |
            xargs -I{} cp {} "$small/$s/$c/"
    done
done
tiny=(train --model cnn --epochs 1 --batch 10 --no-progress)
expect "a clean small folder trains" 0 "epoch 1/1" -- "$cltrain" "${tiny[@]}" --data "imagefolder:$small"
first=$(ls "$small/train/a" | head -n 1)
head -c 60 "$small/train/a/$first" > "$small/train/a/zz-cut.png"
expect "truncated PNG named" 1 "train/a/zz-cut.png.*libpng" -- "$cltrain" "${tiny[@]}" --data "imagefolder:$small"
# bad=skip: found when drawn (opening decodes nothing), counted in the epoch
# line, named in a warning
expect "bad=skip counts it in the epoch line" 0 "epoch 1/1 .* skipped files 1" -- \
    "$cltrain" "${tiny[@]}" --data "imagefolder:$small:bad=skip"
grep -q "warning: epoch 1: 1 training file did not decode and was skipped.*zz-cut.png" "$tmp/err" &&
    ok "bad=skip names it in a warning" || bad "bad=skip names it in a warning"
rm "$small/train/a/zz-cut.png"
printf '\377\330\377\340garbage' > "$small/test/b/broken.jpg"
expect "corrupt JPEG named" 1 "test/b/broken.jpg.*libjpeg" -- "$cltrain" "${tiny[@]}" --data "imagefolder:$small"
rm "$small/test/b/broken.jpg"
printf 'GIF89a' > "$small/train/b/fake.png"
expect "not an image named" 1 "train/b/fake.png: byte 0: neither a PNG nor a JPEG" -- \
    "$cltrain" "${tiny[@]}" --data "imagefolder:$small"
rm "$small/train/b/fake.png"
mkdir -p "$small/train/c"
touch "$small/train/c/notes.txt"
expect "class folder without images" 1 "class folder .*train/c holds no images" -- \
    "$cltrain" "${tiny[@]}" --data "imagefolder:$small"
rm -r "$small/train/c"
mkdir -p "$small/test/z" && cp "$small/test/a/$(ls "$small/test/a" | head -n 1)" "$small/test/z/"
expect "test class unknown to training" 1 "class folder .*test/z is not one of the 2 classes" -- \
    "$cltrain" "${tiny[@]}" --data "imagefolder:$small"
rm -r "$small/test/z"
mkdir -p "$tmp/empty"
expect "empty folder" 1 "empty has no class folders" -- "$cltrain" "${tiny[@]}" --data "imagefolder:$tmp/empty:split=0.5"
expect "missing folder" 1 "nothing is not a folder" -- "$cltrain" "${tiny[@]}" --data "imagefolder:$tmp/nothing"
expect "no test split" 1 "has no test split.*split=F" -- "$cltrain" "${tiny[@]}" --data "imagefolder:$small/train"
expect "split= out of range" 1 "split '1.5' is not a fraction" -- "$cltrain" "${tiny[@]}" --data "imagefolder:$small/train:split=1.5"
expect "bad= value" 1 "bad takes error .* or skip" -- "$cltrain" "${tiny[@]}" --data "imagefolder:$small:bad=maybe"
expect "size= value" 1 "size=28; HINT: write it as HxW" -- "$cltrain" "${tiny[@]}" --data "imagefolder:$small:size=28"

finish images
