#!/usr/bin/env bash
# test_regression_cli.sh CLTRAIN - regression through the CLI on a small
# table made here (y = 2a - b + 0.5 and z = a + b, exactly): training a
# model ending in mse on csv target= data, the epoch line and JSON log's
# RMSE and MAE, eval and predict on its checkpoint (predict's values give
# back eval's RMSE and MAE), and the errors: a bad target cell names
# FILE:LINE:COLUMN, target= data with a classifier, class labels with an
# mse model, a model predicting the wrong number of targets, target= with
# label=.
set -u
cltrain=$1
. "$(dirname "$0")/../lib.sh"

python3 - "$tmp" <<'PY'
import random, sys
r = random.Random(5)
for name, n in (("train", 256), ("test", 64)):
    with open(f"{sys.argv[1]}/{name}.csv", "w") as f:
        f.write("a,y,b,z\n")
        for _ in range(n):
            a, b = r.uniform(-1, 1), r.uniform(-1, 1)
            f.write(f"{a:.6f},{2 * a - b + 0.5:.6f},{b:.6f},{a + b:.6f}\n")
    with open(f"{sys.argv[1]}/{name}_labels.csv", "w") as f:
        f.write("label,a,b\n")
        for _ in range(n):
            a, b = r.uniform(-1, 1), r.uniform(-1, 1)
            f.write(f"{int(a > b)},{a:.6f},{b:.6f}\n")
PY
cat > "$tmp/two.model" <<'EOF2'
input features=2
fc1: dense out=16 act=relu
fc2: dense out=2
loss: mse
EOF2
cat > "$tmp/one.model" <<'EOF2'
input features=2
fc1: dense out=1
loss: mse
EOF2
data="csv:$tmp/train.csv:target=y,z:test=$tmp/test.csv"

expect "trains a 2-target mse model" 0 "^done: 30 epochs, 240 steps; test rmse [0-9.]+ mae [0-9.]+" -- \
    "$cltrain" train --model "$tmp/two.model" --data "$data" --epochs 30 --batch 32 --lr 1e-2 \
    --schedule constant --out "$tmp/two.st" --log "$tmp/two.jsonl" --no-progress
grep -E "^epoch 30/30  train loss [0-9.]+ rmse [0-9.]+ mae [0-9.]+  test loss [0-9.]+ rmse [0-9.]+ mae" \
    "$tmp/out" >/dev/null && ok "the epoch line has RMSE and MAE" || bad "the epoch line: $(tail -n 2 "$tmp/out")"

# the log: loss, RMSE = sqrt(loss), MAE; the fit is good (the targets are
# exact functions; a 16-unit ReLU net after 30 epochs gets within 0.1)
python3 - "$tmp/two.jsonl" > "$tmp/log.txt" <<'PY'
import json, math, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
last = ev[-1]
need = ["train_loss", "train_rmse", "train_mae", "test_loss", "test_rmse", "test_mae"]
assert all(k in last for k in need), last
assert "train_accuracy" not in last and "test_accuracy" not in last, last
for p in ("train", "test"):
    assert abs(last[p + "_rmse"] - math.sqrt(last[p + "_loss"])) <= 1e-6 * last[p + "_rmse"], last
    # MAE <= RMSE always (the mean of |d| is at most the root of the mean of d^2)
    assert 0 < last[p + "_mae"] <= last[p + "_rmse"], last
assert last["test_rmse"] < 0.1, last
assert ev[0]["test_rmse"] > 2 * last["test_rmse"], (ev[0], last)
print(last["test_loss"], last["test_rmse"], last["test_mae"])
PY
if [ $? -eq 0 ]; then ok "the log's RMSE is sqrt(loss), MAE <= RMSE, the fit improves: $(cat "$tmp/log.txt")"
else bad "the log's regression fields: $(tail -n 3 "$tmp/log.txt")"; fi
read -r log_loss log_rmse log_mae < "$tmp/log.txt"

expect "eval prints RMSE and MAE" 0 "^64 samples  loss [0-9.]+  rmse [0-9.]+  mae [0-9.]+  \(2 targets\)" -- \
    "$cltrain" eval --weights "$tmp/two.st" --data "$data"
cp "$tmp/out" "$tmp/eval.txt"
expect "predict prints each target's value and the data's" 0 \
    "^sample 0: y predicted [-0-9.e]+ true [-0-9.e]+, z predicted [-0-9.e]+ true [-0-9.e]+$" -- \
    "$cltrain" predict --weights "$tmp/two.st" --data "$data" --count 64
# eval's figures, the log's, and those recomputed from predict's values agree
python3 - "$tmp/out" "$tmp/eval.txt" "$log_rmse" "$log_mae" > "$tmp/cmp.txt" <<'PY'
import math, re, sys
d = []
for line in open(sys.argv[1]):
    for p, t in re.findall(r"predicted (\S+) true ([^,\s]+)", line):
        d.append(float(p) - float(t))
assert len(d) == 128, len(d)
rmse = math.sqrt(sum(x * x for x in d) / len(d))
mae = sum(abs(x) for x in d) / len(d)
ev = open(sys.argv[2]).read().split()
e_rmse, e_mae = float(ev[5]), float(ev[7])
l_rmse, l_mae = float(sys.argv[3]), float(sys.argv[4])
# predict prints 6 significant digits: a relative 1e-5 of |d| ~ 0.05 each;
# eval prints 4 decimals (5e-5); the log 8 significant digits
for a, b, what in ((rmse, e_rmse, "rmse"), (mae, e_mae, "mae"), (rmse, l_rmse, "log rmse"),
                   (mae, l_mae, "log mae")):
    assert abs(a - b) <= 1e-4, (what, a, b)
print("from predict: rmse %.6f mae %.6f; eval %.4f %.4f; log %.6f %.6f" % (rmse, mae, e_rmse, e_mae, l_rmse, l_mae))
PY
if [ $? -eq 0 ]; then ok "predict's values give eval's and the log's RMSE and MAE: $(cat "$tmp/cmp.txt")"
else bad "predict against eval: $(tail -n 3 "$tmp/cmp.txt")"; fi

# the training RMSE and MAE the device accumulates equal the host's over
# the same samples: one epoch at lr 1e-12 (the weights move by ~1e-12) with
# the training file as the test split (256 rows, 8 full batches)
expect "device and host metrics: train" 0 "^done" -- "$cltrain" train --model "$tmp/two.model" \
    --data "csv:$tmp/train.csv:target=y,z:test=$tmp/train.csv" --epochs 1 --batch 32 --lr 1e-12 \
    --log "$tmp/same.jsonl" --no-progress
python3 - "$tmp/same.jsonl" > "$tmp/same.txt" <<'PY'
import json, sys
e = [json.loads(l) for l in open(sys.argv[1])][-1]
# float sums on the device (Kahan within a batch, float across batches):
# relative 1e-5
for k in ("loss", "rmse", "mae"):
    a, b = e["train_" + k], e["test_" + k]
    assert abs(a - b) <= 1e-5 * abs(b), (k, a, b)
print("train rmse %.8g mae %.8g, host %.8g %.8g" % (e["train_rmse"], e["train_mae"], e["test_rmse"], e["test_mae"]))
PY
if [ $? -eq 0 ]; then ok "the device's running RMSE and MAE equal the host's: $(cat "$tmp/same.txt")"
else bad "device against host metrics: $(tail -n 3 "$tmp/same.txt")"; fi

# errors, each saying what to change
printf 'a,y,b,z\n0.5,1,0.25,2\n0.1,oops,0.2,3\n' > "$tmp/bad.csv"
expect "a non-numeric target names file:line:column" 1 "bad\.csv:3:5: target 'y' 'oops' is not a finite float" -- \
    "$cltrain" train --model "$tmp/two.model" --data "csv:$tmp/bad.csv:target=y,z" --epochs 1 --batch 1
printf 'a,y,b,z\n0.5,1,0.25,2\n0.1,2,0.2,\n' > "$tmp/bad.csv"
expect "a missing target names file:line:column" 1 "bad\.csv:3:11: target 'z' is missing" -- \
    "$cltrain" train --model "$tmp/two.model" --data "csv:$tmp/bad.csv:target=y,z" --epochs 1 --batch 1
expect "target= data with a classifier" 1 "holds regression targets \(target=\) but model .* ends in softmax_cross_entropy.*HINT: end the model in .loss: mse. after a dense layer with out=2" -- \
    "$cltrain" train --model mlp --data "$data" --epochs 1
expect "class labels with an mse model" 1 "ends in mse \(regression\) but dataset .* has class labels.*HINT: name the target columns with csv:FILE:target=COL" -- \
    "$cltrain" train --model "$tmp/two.model" --data "csv:$tmp/train_labels.csv:label=label:test=$tmp/test_labels.csv" --epochs 1 \
    --out "$tmp/bad.st"
expect "a model predicting 1 value for 2 targets" 1 "predicts 1 value per sample .* has 2 targets.*out=2" -- \
    "$cltrain" train --model "$tmp/one.model" --data "$data" --epochs 1
expect "target= with label=" 1 "both target= and label=" -- \
    "$cltrain" train --model "$tmp/two.model" --data "$data:label=a" --epochs 1
expect "eval of a regression checkpoint on labelled data" 1 "ends in mse \(regression\) but dataset" -- \
    "$cltrain" eval --weights "$tmp/two.st" --data "csv:$tmp/train_labels.csv:test=$tmp/test_labels.csv"
expect "the refused run wrote no checkpoint" 0 "" -- test ! -e "$tmp/bad.st"
finish test_regression_cli
