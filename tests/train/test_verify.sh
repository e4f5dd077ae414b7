#!/usr/bin/env bash
# test_verify.sh CLTRAIN SOURCE_ROOT - kernels verified on first contact:
# a kernel directory with an off-by-one planted in the optimizer's kernels
# makes training refuse, naming the op, its case and the ways out; the
# failure is cached and read back; without the bug the model's op families
# are checked once (train says so), the verdict is cached, and the next
# start reads it (`cltrain verify --json` says which); a corrupt verdict is
# checked again;
# CLTRAIN_VERIFY=off skips the check, =always repeats it, a bad value is an
# error naming the variable.
set -u
cltrain=$1
src=$2
. "$(dirname "$0")/../lib.sh"

if [ ! -d /usr/share/datasets/fashion-mnist ]; then
    echo "Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)"; exit 1
fi
export CLTRAIN_CACHE_DIR=$tmp/cache
export CLTRAIN_KERNELS=gpu # every op on OpenCL kernels, which the kernel directory replaces
common=(train --model mlp --limit 600 --test-limit 100 --batch 50 --epochs 1 --no-progress)

# the planted bug: the step kernels read the gradient one element ahead
mkdir -p "$tmp/kernels"
cp "$src"/cl_kernels/*.cl "$tmp/kernels/"
sed -i 's/g\[k\] = in ? grad\[grad_off + i\] : 0.0f;/g[k] = in ? grad[grad_off + (i + 1 < n ? i + 1 : i)] : 0.0f;/' \
    "$tmp/kernels/optim.cl"
if cmp -s "$src/cl_kernels/optim.cl" "$tmp/kernels/optim.cl"; then
    bad "the bug could not be planted (optim.cl changed?)"; finish verify
fi

expect "a planted bug stops training" 1 \
    "op 'optim' computes wrong numbers on .*checked now.*\\[case .*\\]. Training stops here. Ways out: another device \(the other class's kernels fail here too\)" -- \
    env CLTRAIN_KERNEL_DIR="$tmp/kernels" "$cltrain" "${common[@]}" --out "$tmp/bug.ckpt"
if [ -e "$tmp/bug.ckpt" ]; then bad "a checkpoint was written"; else ok "no checkpoint from the refused run"; fi
expect "the failure is cached" 1 "op 'optim' computes wrong numbers on .*checked on [0-9]{4}-" -- \
    env CLTRAIN_KERNEL_DIR="$tmp/kernels" "$cltrain" "${common[@]}"
expect "CLTRAIN_VERIFY=off trains anyway" 0 "epoch 1/1" -- \
    env CLTRAIN_KERNEL_DIR="$tmp/kernels" CLTRAIN_VERIFY=off "$cltrain" "${common[@]}"
expect "a bad CLTRAIN_VERIFY is an error" 1 "CLTRAIN_VERIFY=sometimes: expected auto, always or off" -- \
    env CLTRAIN_VERIFY=sometimes "$cltrain" "${common[@]}"

# a bug in a GPU-class kernel only (the loss's backward): the way out names
# the CPU class where its kernels (or host code) pass here
mkdir -p "$tmp/kernels2"
cp "$src"/cl_kernels/*.cl "$tmp/kernels2/"
sed -i 's/K, labels\[labels_off + r\],/K, labels[labels_off + (r + 1 < N ? r + 1 : r)],/' "$tmp/kernels2/loss.cl"
if cmp -s "$src/cl_kernels/loss.cl" "$tmp/kernels2/loss.cl"; then bad "the loss bug could not be planted"; fi
expect "a GPU-class bug names the way out" 1 \
    "op 'loss' computes wrong numbers .*Ways out: (CLTRAIN_KERNELS=cpu \(the CPU class's kernels pass this check here\)|another device)" -- \
    env CLTRAIN_KERNEL_DIR="$tmp/kernels2" "$cltrain" "${common[@]}"

# without the bug: checked once, then read from the cache
expect "the first start checks" 0 "verified kernels on .*: [a-z, ]*optim[a-z, ]* checked in [0-9.]+ s, the verdicts kept" -- \
    "$cltrain" "${common[@]}"
n=$(ls "$tmp/cache" | grep -c '^verified-')
if [ "$n" -ge 4 ]; then ok "verdicts cached ($n files)"; else bad "only $n verdicts cached"; fi
expect "the second start trains" 0 "epoch 1/1" -- "$cltrain" "${common[@]}"
if grep -q "verified kernels" "$tmp/out" "$tmp/err"; then bad "the second start checked again"; else ok "the second start read the verdicts"; fi
expect "verify --json: read back" 0 '"model": "mlp".*"ok": true, "checked": "", "cached": "[a-z, ]*optim[a-z, ]*", "cached_since": [1-9]' -- \
    "$cltrain" verify --model mlp --json
expect "verify --always checks again" 0 "mlp on .*: ok; checked now: [a-z, ]*optim" -- "$cltrain" verify --model mlp --always
expect "CLTRAIN_VERIFY=always checks again in train" 0 "verified kernels on .*optim" -- \
    env CLTRAIN_VERIFY=always "$cltrain" "${common[@]}"
expect "verify: a planted bug fails" 1 '"ok": false.*"failed": "optim".*computes wrong numbers' -- \
    env CLTRAIN_KERNEL_DIR="$tmp/kernels" "$cltrain" verify --model mlp --json

# a corrupt verdict is not trusted: checked again, and training runs
for f in "$tmp"/cache/verified-*.clbin; do printf 'garbage' >"$f"; done
expect "corrupt verdicts are checked again" 0 "verified kernels on .*optim.* checked in" -- "$cltrain" "${common[@]}"

finish verify
