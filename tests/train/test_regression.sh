#!/usr/bin/env bash
# test_regression.sh CLTRAIN - regression on real data against a peer:
# scikit-learn's diabetes data (442 patients, 10 features, a continuous
# target; tools/make_diabetes.py: a seeded 80/20 split, features and target
# standardized on the training part), the network of
# tests/train/diabetes_mlp.model (10-32-1, ReLU, mse) trained by cltrain and
# by PyTorch (tools/torch_regression.py) alike: Adam at a constant 1e-3,
# batch 32 (the last partial batch dropped), 40 epochs, PyTorch's default
# initialization. The random streams differ (initial weights, shuffles), so
# each side is averaged over seeds 1, 2 and 3, and cltrain's mean test RMSE
# must be within 5% of PyTorch's: one run's test RMSE varies by about 1%
# (relative standard deviation over seeds) on either side, so the means of 3
# runs of two equal trainers differ by about 0.8% (one standard deviation),
# and 5% is over 6 of those. RMSE is compared on the standardized target (the same ratio as
# in the target's units, which are also reported). Skips (exit 77) without
# scikit-learn or PyTorch.
set -u
cltrain=$1
. "$(dirname "$0")/../lib.sh"
here=$(dirname "$0")
py=$(py_with sklearn,numpy,torch) || { echo "skip: no Python with scikit-learn, numpy and torch (tools/setup_python.sh)"; exit 77; }

expect "make_diabetes.py writes the split" 0 '"train": 354, "test": 88' -- \
    "$py" "$here/../../tools/make_diabetes.py" "$tmp/d" --seed 0
std=$(python3 -c "import json; print(json.load(open('$tmp/d/scale.json'))['target_std'])")
data="csv:$tmp/d/train.csv:target=target:test=$tmp/d/test.csv"
for s in 1 2 3; do
    expect "cltrain seed $s" 0 "^done: 40 epochs, 440 steps; test rmse" -- "$cltrain" train \
        --model "$here/diabetes_mlp.model" --data "$data" --epochs 40 --batch 32 --lr 1e-3 \
        --optimizer adam --schedule constant --seed "$s" --log "$tmp/c$s.jsonl" --no-progress
    expect "PyTorch seed $s" 0 '"test_rmse"' -- "$py" "$here/../../tools/torch_regression.py" \
        "$tmp/d/train.csv" "$tmp/d/test.csv" --hidden 32 --epochs 40 --batch 32 --lr 1e-3 --seed "$s"
    tail -n 1 "$tmp/out" > "$tmp/t$s.json"
done
python3 - "$tmp" "$std" > "$tmp/cmp.txt" <<'PY'
import json, sys
d, std = sys.argv[1], float(sys.argv[2])
c = [json.loads(open(f"{d}/c{s}.jsonl").read().splitlines()[-1]) for s in (1, 2, 3)]
t = [json.load(open(f"{d}/t{s}.json")) for s in (1, 2, 3)]
cr = [e["test_rmse"] for e in c]
tr = [e["test_rmse"] for e in t]
cm, tm = sum(cr) / 3, sum(tr) / 3
cmae, tmae = sum(e["test_mae"] for e in c) / 3, sum(e["test_mae"] for e in t) / 3
rel = abs(cm - tm) / tm
print("test RMSE over seeds 1-3: cltrain %s mean %.4f (%.1f in target units), PyTorch %s mean %.4f "
      "(%.1f); MAE %.1f and %.1f; difference %.2f%%" % (
          " ".join("%.4f" % v for v in cr), cm, cm * std, " ".join("%.4f" % v for v in tr), tm,
          tm * std, cmae * std, tmae * std, 100 * rel))
sys.exit(0 if rel <= 0.05 else 1)
PY
if [ $? -eq 0 ]; then ok "cltrain's test RMSE within 5% of PyTorch's: $(cat "$tmp/cmp.txt")"
else bad "cltrain against PyTorch: $(cat "$tmp/cmp.txt")"; fi
finish test_regression
