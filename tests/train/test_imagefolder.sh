#!/usr/bin/env bash
# test_imagefolder.sh CLTRAIN MAKE_IMAGEFOLDER - a generated folder of 300
# JPEGs (tools/make_imagefolder.c) through the CLI: opening decodes no file
# (a damaged one is found only when drawn), stats=N decodes N images for the
# mean and std, bad=skip counts per epoch, the batches (so the weights) do
# not depend on --loader-threads, a resumed run keeps the checkpoint's
# statistics, and index=FILE is written, reused, and refused when stale or
# damaged.
set -u
cltrain=$1
make=$2
. "$(dirname "$0")/../lib.sh"
py=$(py_with json,struct) || { echo "skip: no python3"; exit 77; }

"$make" "$tmp/f" 300 60 3 64 64 7 || { bad "make_imagefolder"; finish imagefolder; }
cat >"$tmp/m.model" <<'EOF'
input shape=3x32x32
conv1: conv2d out=8 kernel=3 pad=1 act=relu
pool1: maxpool kernel=4
fc1: dense out=3
loss: softmax_cross_entropy
EOF
run=(train --model "$tmp/m.model" --batch 20 --no-progress --seed 3)
# the JSON number `key` of the last line of a --log file holding it
num() { sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p" "$1" | tail -n 1; }

# 1. stats=N: the mean and std come from N decoded images, the default and
#    stats=all from all 300 (fewer than 10000)
expect "stats=20 trains" 0 "epoch 1/1" -- "$cltrain" "${run[@]}" --epochs 1 --log "$tmp/s20.jsonl" --out "$tmp/s20.ckpt" \
    --data "imagefolder:$tmp/f:stats=20"
[ "$(num "$tmp/s20.jsonl" norm_images)" = 20 ] && ok "stats=20 decodes 20 images" ||
    bad "stats=20: norm_images $(num "$tmp/s20.jsonl" norm_images), want 20"
expect "stats=all trains" 0 "epoch 1/1" -- "$cltrain" "${run[@]}" --epochs 1 --log "$tmp/sall.jsonl" \
    --data "imagefolder:$tmp/f:stats=all"
[ "$(num "$tmp/sall.jsonl" norm_images)" = 300 ] && ok "stats=all decodes 300 images" ||
    bad "stats=all: norm_images $(num "$tmp/sall.jsonl" norm_images), want 300"
expect "stats= value" 1 "stats '0' is not an integer.*stats=all" -- "$cltrain" "${run[@]}" --epochs 1 \
    --data "imagefolder:$tmp/f:stats=0"

# 2. a JPEG cut short: opening lists files only, so with stats=20 (a sample
#    that leaves it out) steps run before it is drawn and named; stats=all
#    decodes it before the first step
victim=$tmp/f/train/class_1/img_000100.jpg
size=$(stat -c %s "$victim")
head -c $((size / 2)) "$victim" >"$tmp/cut" && cp "$tmp/cut" "$victim"
expect "found when drawn" 1 "img_000100.jpg.*libjpeg" -- "$cltrain" "${run[@]}" --epochs 1 \
    --log "$tmp/drawn.jsonl" --log-every 1 --data "imagefolder:$tmp/f:stats=20"
steps=$(grep -c '"event": "step"' "$tmp/drawn.jsonl" 2>/dev/null)
[ "${steps:-0}" -ge 1 ] && ok "open is index-only: $steps steps before the damaged file was drawn" ||
    bad "the damaged file failed before any step (the open decoded it?)"
expect "stats=all finds it before training" 1 "img_000100.jpg.*normalization statistics" -- \
    "$cltrain" "${run[@]}" --epochs 1 --data "imagefolder:$tmp/f:stats=all"

# 3. bad=skip: counted in every epoch (each draws every file once), left out
#    of the statistics; and the same weights for 1 and 3 loader threads, with
#    augmentation and the skipped file's substitute in play
for t in 1 3; do
    expect "bad=skip, $t loader threads" 0 "epoch 2/2 .* skipped files 1" -- "$cltrain" "${run[@]}" --epochs 2 \
        --augment --loader-threads $t --log "$tmp/t$t.jsonl" --out "$tmp/t$t.ckpt" \
        --data "imagefolder:$tmp/f:bad=skip:stats=all"
done
[ "$(grep -c '"skipped_files": 1' "$tmp/t1.jsonl")" = 2 ] && ok "skipped_files 1 in each epoch's log line" ||
    bad "skipped_files per epoch: $(grep -o '"skipped_files": [0-9]*' "$tmp/t1.jsonl" | tr '\n' ' ')"
[ "$(num "$tmp/t1.jsonl" norm_images)" = 299 ] && ok "the statistics leave the damaged file out" ||
    bad "norm_images $(num "$tmp/t1.jsonl" norm_images), want 299"
cmp -s "$tmp/t1.ckpt" "$tmp/t3.ckpt" && ok "1 and 3 loader threads: identical checkpoints" ||
    bad "1 and 3 loader threads gave different checkpoints"
cmp -s <(cut -d, -f1-8 "$tmp/t1.jsonl") <(cut -d, -f1-8 "$tmp/t3.jsonl") && ok "... and identical losses" ||
    bad "1 and 3 loader threads gave different losses"
cp "$tmp/f/train/class_1/img_000103.jpg" "$victim"

# 4. --resume keeps the checkpoint's statistics (stats=20's), computes none
expect "resume with stats=all" 0 "epoch 2/2" -- "$cltrain" "${run[@]}" --epochs 2 --resume "$tmp/s20.ckpt" \
    --out "$tmp/r.ckpt" --log "$tmp/r.jsonl" --data "imagefolder:$tmp/f:stats=all"
norm() { "$py" -c '
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
print(json.loads(raw[8:8 + n])["__metadata__"]["normalize"])' "$1"; }
a=$(norm "$tmp/s20.ckpt"); b=$(norm "$tmp/r.ckpt"); c=$(norm "$tmp/t1.ckpt")
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" != "$c" ] && ok "the resumed run keeps the checkpoint's mean and std" ||
    bad "resumed normalization $b, checkpoint's $a (stats=all's: $c)"
grep -q norm_images "$tmp/r.jsonl" && bad "the resumed run computed statistics" ||
    ok "the resumed run decoded no statistics sample"

# 5. index=FILE: written by the first run, reused, refused when the folder
#    changed or the file is damaged, rewritten once deleted
ix=$tmp/f.index
expect "index written" 0 "epoch 1/1" -- "$cltrain" "${run[@]}" --epochs 1 --data "imagefolder:$tmp/f:index=$ix"
[ "$(head -n 1 "$ix")" = "cltrain-imagefolder-index 1" ] && [ "$(grep -c '^files ' "$ix")" = 2 ] &&
    ok "the index lists both splits" || bad "the index: $(head -n 3 "$ix" | tr '\n' '|')"
cp "$ix" "$tmp/ix.before"
expect "index reused" 0 "epoch 1/1" -- "$cltrain" "${run[@]}" --epochs 1 --data "imagefolder:$tmp/f:index=$ix"
cmp -s "$ix" "$tmp/ix.before" && ok "a matching index is left as it was" || bad "a matching index was rewritten"
cp "$tmp/f/train/class_0/img_000000.jpg" "$tmp/f/train/class_0/img_999999.jpg"
expect "an added file is found" 1 "index .* no longer matches .*class_0 holds 101 images, the index 100.*HINT: delete" -- \
    "$cltrain" "${run[@]}" --epochs 1 --data "imagefolder:$tmp/f:index=$ix"
rm "$tmp/f/train/class_0/img_999999.jpg"
touch -d '2001-01-01' "$tmp/f/test/class_2/img_000005.jpg"
expect "a changed file is found" 1 "no longer matches .*test/class_2/img_000005.jpg changed" -- \
    "$cltrain" "${run[@]}" --epochs 1 --data "imagefolder:$tmp/f:index=$ix"
rm "$ix"
expect "a deleted index is rewritten" 0 "epoch 1/1" -- "$cltrain" "${run[@]}" --epochs 1 \
    --data "imagefolder:$tmp/f:index=$ix"
sed -i '8s/^0 /2 /' "$ix"
expect "a damaged index" 1 "f.index:[0-9]+: expected .*delete it" -- "$cltrain" "${run[@]}" --epochs 1 \
    --data "imagefolder:$tmp/f:index=$ix"

finish imagefolder
