#!/usr/bin/env bash
# test_npy.sh CLTRAIN - npy: and npz: datasets through the CLI, written by
# NumPy: a Fashion-MNIST subset as uint8 .npy files trains the cnn as its IDX
# files do (within 0.5 points), as a compressed .npz of Keras' layout
# (x_train, y_train, x_test, y_test) to the same accuracy, three attributes
# per image train a multi-label cnn (bce_logits), float features with float
# targets train a regression; damaged and unsupported files fail
# naming the file and the byte offset or the reason, and leave no
# checkpoint behind.
set -u
cltrain=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/../lib.sh"
src=/usr/share/datasets/fashion-mnist
if [ ! -d $src ]; then
    echo "Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)"; exit 1
fi
py=$(py_with numpy) || { echo "skip: no numpy (tools/setup_python.sh)"; exit 77; }
"$py" "$here/fashion_files.py" $src "$tmp/f" 6000 1000 || { bad "fashion_files.py"; finish npy; }
"$py" - "$tmp" <<'PY' || { bad "writing the arrays"; finish npy; }
import gzip, struct, sys, zipfile
import numpy as np
t = sys.argv[1]
def idx(p):
    b = gzip.open(p).read()
    nd = struct.unpack(">I", b[:4])[0] & 0xff
    dims = struct.unpack(">" + "I" * nd, b[4:4 + 4 * nd])
    return np.frombuffer(b[4 + 4 * nd:], np.uint8).reshape(dims)
f = t + "/f/idx/"
xtr, ytr = idx(f + "train-images-idx3-ubyte.gz"), idx(f + "train-labels-idx1-ubyte.gz")
xte, yte = idx(f + "t10k-images-idx3-ubyte.gz"), idx(f + "t10k-labels-idx1-ubyte.gz")
np.save(t + "/xtr.npy", xtr); np.save(t + "/ytr.npy", ytr.astype(np.int64))
np.save(t + "/xte.npy", xte); np.save(t + "/yte.npy", yte.astype(np.int64))
np.savez_compressed(t + "/fm.npz", x_train=xtr, y_train=ytr, x_test=xte, y_test=yte)
# multi-label: three attributes of each image (footwear, a top, classes 0-4)
def attrs(y): return np.stack([np.isin(y, [5, 7, 9]), np.isin(y, [0, 2, 4, 6]), y < 5], 1).astype(np.float32)
np.savez(t + "/ml.npz", x_train=xtr, y_train=attrs(ytr), x_test=xte, y_test=attrs(yte))
# regression: y = 2 x0 - x1 + 0.5 x2 over float64 features
rng = np.random.default_rng(1)
x = rng.normal(size=(600, 3)); y = x @ np.array([2.0, -1.0, 0.5]) + 0.01 * rng.normal(size=600)
np.savez(t + "/reg.npz", x=x, y=y)
# damaged and unsupported files
b = open(t + "/ytr.npy", "rb").read()
open(t + "/trunc.npy", "wb").write(b[:-3])
open(t + "/extra.npy", "wb").write(b + b"\0\0\0\0")
open(t + "/magic.npy", "wb").write(b"NUMPY" + b[5:])
np.save(t + "/big.npy", ytr.astype(">i8")); np.save(t + "/fort.npy", np.asfortranarray(xtr[:10, :5, :5]))
np.save(t + "/obj.npy", np.array(["a"] * len(ytr)))
np.save(t + "/neg.npy", np.where(np.arange(len(ytr)) == 7, -1, ytr).astype(np.int32))
np.save(t + "/short.npy", ytr[:-1])
z = bytearray(open(t + "/fm.npz", "rb").read()); z[len(z) // 2] ^= 0xff
open(t + "/crc.npz", "wb").write(bytes(z))
PY
acc() { sed -n 's/.*test accuracy \([0-9.]*\)%.*/\1/p' "$1" | tail -n 1; }
run=(train --model cnn --epochs 2 --batch 50 --seed 1 --no-progress)
expect "idx trains" 0 "epoch 2/2" -- "$cltrain" "${run[@]}" --data "fashion-mnist:$tmp/f/idx"
a=$(acc "$tmp/out")
expect "npy trains" 0 "epoch 2/2" -- "$cltrain" "${run[@]}" \
    --data "npy:$tmp/xtr.npy,$tmp/ytr.npy:test=$tmp/xte.npy,$tmp/yte.npy" --out "$tmp/npy.ckpt"
b=$(acc "$tmp/out")
expect "npz (compressed, x_train/x_test) trains" 0 "epoch 2/2" -- "$cltrain" "${run[@]}" --data "npz:$tmp/fm.npz"
c=$(acc "$tmp/out")
echo "test accuracy: idx $a%, npy $b%, npz $c%"
if awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN { d = a - b; e = b - c; exit !(a > 80 && (d < 0 ? -d : d) <= 0.5 && e == 0) }'; then
    ok "npy $b% within 0.5 points of idx $a%, npz the same"
else
    bad "npy $b% / npz $c% vs idx $a% (want within 0.5 points, above 80%, npz = npy)"
fi
expect "eval from the npy checkpoint" 0 "1000 samples  loss [0-9.]+  accuracy $b%" -- \
    "$cltrain" eval --weights "$tmp/npy.ckpt" --data "npy:$tmp/xtr.npy,$tmp/ytr.npy:test=$tmp/xte.npy,$tmp/yte.npy"

# multi-label (bce_logits): the cnn with 3 logits, its label accuracy, eval,
# predict's probabilities, and the ONNX graph's logits against onnxruntime
"$cltrain" zoo cnn | sed 's/^fc2: dense out=10/fc2: dense out=3/; s/^loss: .*/loss: bce_logits/' > "$tmp/ml.model"
expect "multi-label trains" 0 "epoch 2/2" -- "$cltrain" "${run[@]}" --model "$tmp/ml.model" --data "npz:$tmp/ml.npz" \
    --out "$tmp/ml.ckpt"
m=$(acc "$tmp/out")
if awk -v m="$m" 'BEGIN { exit !(m >= 93) }'; then ok "labels right: $m% >= 93%"; else bad "labels right: $m%"; fi
expect "multi-label eval" 0 "1000 samples  loss [0-9.]+  accuracy $m%" -- \
    "$cltrain" eval --weights "$tmp/ml.ckpt" --data "npz:$tmp/ml.npz"
expect "multi-label predict gives probabilities" 0 "sample 0: target 0 predicted 0?\\.?[0-9.e-]+ true" -- \
    "$cltrain" predict --weights "$tmp/ml.ckpt" --data "npz:$tmp/ml.npz" --count 2
if pyo=$(py_with onnxruntime numpy); then
    expect "multi-label export" 0 "" -- "$cltrain" export --weights "$tmp/ml.ckpt" --onnx "$tmp/ml.onnx"
    "$cltrain" predict --weights "$tmp/ml.ckpt" --data "npz:$tmp/ml.npz" --count 16 --logits > "$tmp/ml.jsonl" 2>/dev/null
    if "$pyo" "$here/../onnx/check_onnx.py" "$tmp/ml.onnx" "$tmp/ml.jsonl" ml multilabel; then
        ok "multi-label: onnxruntime gives cltrain's logits"
    else
        bad "multi-label: onnxruntime and cltrain differ"
    fi
fi

printf 'input shape=3\nfc: dense out=1\nloss: mse\n' > "$tmp/reg.model"
expect "float64 regression trains" 0 "epoch 40/40" -- "$cltrain" train --model "$tmp/reg.model" --epochs 40 \
    --batch 16 --lr 0.05 --no-progress --data "npz:$tmp/reg.npz:split=0.2:seed=3"
mse=$(sed -n 's/.*test loss \([0-9.e-]*\).*/\1/p' "$tmp/out" | tail -n 1)
if awk -v m="$mse" 'BEGIN { exit !(m < 0.01) }'; then ok "regression test mse $mse < 0.01"; else bad "regression test mse $mse"; fi

# damaged and unsupported
d() { expect "$1" "$2" "$3" -- "$cltrain" train --model cnn --epochs 1 --no-progress --out "$tmp/no.ckpt" --data "$4"; }
p="npy:$tmp/xtr.npy"
d "truncated" 1 "trunc.npy: truncated: the header declares 6000 elements of 8 bytes" "$p,$tmp/trunc.npy:split=0.1"
d "trailing bytes" 1 "extra.npy: trailing bytes" "$p,$tmp/extra.npy:split=0.1"
d "bad magic" 1 "magic.npy: byte offset 0: not a .npy file" "$p,$tmp/magic.npy:split=0.1"
d "big-endian" 1 "big.npy: byte offset [0-9]+: the .npy header declares big-endian data" "$p,$tmp/big.npy:split=0.1"
d "Fortran order" 1 "fort.npy: byte offset [0-9]+: .*Fortran order" "npy:$tmp/fort.npy,$tmp/ytr.npy:split=0.1"
d "strings" 1 "obj.npy: byte offset [0-9]+: .*dtype '<U1', which is not read" "$p,$tmp/obj.npy:split=0.1"
d "a negative label" 1 "neg.npy: label 7 is -1" "$p,$tmp/neg.npy:split=0.1"
d "one label short" 1 "short.npy: .*5999 rows for 6000 samples" "$p,$tmp/short.npy:split=0.1"
d "missing member" 1 "no member x.npy \\(it holds x_train.npy" "npz:$tmp/fm.npz:x=x:y=y_train"
d "damaged archive" 1 "crc.npz: .*(CRC-32|damaged)" "npz:$tmp/crc.npz"
d "one file" 1 "HINT: name the samples' and the labels' files as X.npy,Y.npy" "npy:$tmp/xtr.npy"
d "no test split" 1 "has no test split; HINT" "npy:$tmp/xtr.npy,$tmp/ytr.npy"
if [ -e "$tmp/no.ckpt" ]; then bad "a failed run left a checkpoint"; else ok "no checkpoint from the failed runs"; fi
finish npy
