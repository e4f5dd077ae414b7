#!/usr/bin/env bash
# test_rusticl.sh CLTRAIN - cltrain on a second OpenCL implementation: Mesa's
# rusticl with its llvmpipe device (mesa-opencl-icd; RUSTICL_ENABLE=llvmpipe
# exposes it). A CPU-type device unlike pocl's: OpenCL C 1.2, no fp64, 32 KiB
# of local memory, CL_DEVICE_MAX_WORK_GROUP_SIZE 1024 but
# CL_KERNEL_WORK_GROUP_SIZE 32 for every kernel, and nothing submitted to the
# device before a flush. Exits 77 (skipped) when no llvmpipe device is listed.
#  - selftest, every op against the host reference, in both device classes
#    (CLTRAIN_KERNELS=cpu and gpu) and on both GEMM paths (CLTRAIN_GEMM=host
#    and clblast), and the GPU class with bf16 and fp16 products (the
#    register tiles' 16-bit variants; 3 random shapes per op), without the
#    host reference's own finite-difference check (--no-finite-diff): it does
#    not depend on the device, checkcl-host runs it on pocl, and it was 3/4
#    of a selftest's time here (the GPU class: 60 s with it, 17 s without);
#  - the MLP on a Fashion-MNIST subset (2000 samples, 3 epochs, as
#    tests/train/test_train.sh on pocl) in both classes reaches 77% on 1000
#    test samples (measured: 79.1% in both; chance is 10%). The GPU class
#    blocks on nothing during an epoch, so it also checks that every event
#    another queue waits on is flushed (without, the run hangs: rusticl does
#    not submit unflushed work).
set -u
cltrain=$1
. "$(dirname "$0")/../lib.sh"
export RUSTICL_ENABLE=${RUSTICL_ENABLE:+$RUSTICL_ENABLE,}llvmpipe

# Under AddressSanitizer (the sanitizer run of .ci/run): with the slow
# unwinder that .ci/run asks for (fast_unwind_on_malloc=0), a malloc while
# LLVM registers the unwind tables of llvmpipe's JIT-compiled code
# (__register_frame) re-enters libgcc's unwinder, which already holds its
# own lock: the first kernel launch deadlocks. The fast unwinder avoids it;
# it cuts stacks short inside libraries built without frame pointers, where
# the clover library's start-up leak (tests/sanitizers/lsan.supp) would then
# show no frame its suppression matches, so only rusticl's ICD is loaded.
# The sanitizer run checks host code, not kernels: there the selftests take
# 2 random shapes per op instead of 8 (with 8 they ran past 600 s under
# ASan on a 2-core Emerald Rapids guest; 230 s without ASan), and only the
# two classes' selftests run (the GEMM paths' and the 16-bit ones' host code
# is the same as on pocl, which the sanitizer run's checkcl tests cover; all
# six ran 850-960 s under ASan, serially, the longest test of the suite).
iters=()
asan=0
if ldd "$cltrain" 2>/dev/null | grep -q libasan; then
    asan=1
    iters=(--iterations 2)
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=1"
    vendors=${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}
    if [ -d "$vendors" ]; then
        icd=$(grep -l libRusticlOpenCL "$vendors"/*.icd 2>/dev/null | head -1)
        [ -n "$icd" ] && export OCL_ICD_VENDORS=$icd
    fi
fi

if ! "$cltrain" --devices 2>/dev/null | grep -q ' llvmpipe'; then
    echo "no llvmpipe OpenCL device (Mesa's rusticl: apt-get install mesa-opencl-icd); skipped"
    exit 77
fi
if [ ! -d /usr/share/datasets/fashion-mnist ]; then
    echo "Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)"; exit 1
fi
"$cltrain" --devices | grep ' llvmpipe' | sed 's/^/  /'

# 1. every op, both classes, both GEMM paths
envs=(CLTRAIN_KERNELS=cpu CLTRAIN_KERNELS=gpu)
[ $asan = 0 ] && envs+=(CLTRAIN_GEMM=host CLTRAIN_GEMM=clblast)
for e in "${envs[@]}"; do
    expect "selftest $e" 0 "all ops passed" -- env "$e" "$cltrain" selftest --device llvmpipe --no-finite-diff "${iters[@]}"
    grep '^selftest on' "$tmp/out" | sed 's/^/  | /'
done
precs=(bf16 fp16)
[ $asan = 1 ] && precs=()
for p in "${precs[@]}"; do
    expect "selftest CLTRAIN_KERNELS=gpu --precision $p" 0 "all ops passed" -- \
        env CLTRAIN_KERNELS=gpu "$cltrain" selftest --device llvmpipe --no-finite-diff --precision $p --iterations 3
done

# 2. the MLP trains to the stated accuracy in both classes
for k in cpu gpu; do
    expect "mlp trains (CLTRAIN_KERNELS=$k)" 0 "epoch 3/3" -- \
        env CLTRAIN_KERNELS=$k timeout 300 "$cltrain" train --model mlp --device llvmpipe --epochs 3 \
        --limit 2000 --test-limit 1000 --batch 50 --no-progress --log "$tmp/mlp-$k.jsonl" || continue
    if ! grep -q "^training mlp .* llvmpipe .*(kernels $k, " "$tmp/out"; then
        bad "mlp ($k class): not on llvmpipe in the $k class"; head -1 "$tmp/out" | sed 's/^/  | /'
        continue
    fi
    acc=$(python3 -c "import json; print(json.loads(open('$tmp/mlp-$k.jsonl').read().splitlines()[-1])['test_accuracy'])")
    if python3 -c "import sys; sys.exit(0 if $acc >= 0.77 else 1)"; then
        ok "mlp ($k class) test accuracy $acc >= 0.77"
    else
        bad "mlp ($k class) test accuracy $acc < 0.77"
    fi
done

finish test_rusticl
