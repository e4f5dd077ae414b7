#!/bin/bash
# The register-tile SGEMMs (cl_kernels/gemm_reg.cl) under Oclgrind's
# simulator with its uninitialized-value, data-race and API checks: the
# kernels run every product on Mesa's llvmpipe (reg) and on pocl (vec),
# which the op-family run (run_oclgrind.sh) never selects, so test_gemm_cl
# runs them here by name (--tiles reg, --tiles vec: every transposition,
# split-K, edges, guards, epilogues); then the 16-bit variants: the small
# tiled kernels (the big and huge ones share their code; the op-family
# run selects the tiled kernels in float32 only) and the vector tiles in
# bf16, both register tiles in fp16 (every form of common.cl's rounding).
# Fails on any report, a crash or a failed check.
#
#   run_gemm_reg.sh TEST_GEMM_CL
#
# Exit 77 (skip) when oclgrind is not installed. See docs/RELIABILITY.md,
# "Oclgrind".
set -u
bin=${1:?usage: run_gemm_reg.sh TEST_GEMM_CL}
if ! command -v oclgrind > /dev/null 2>&1; then
    echo "oclgrind is not installed (Debian: apt-get install oclgrind); skipping"
    exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/gemm_reg.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
unset OCLGRIND_BUILD_OPTIONS CLTRAIN_KERNELS CLTRAIN_GEMM
export CLTRAIN_CACHE=off CLTRAIN_DEVICE=oclgrind
reports='Uninitialized value|Uninitialized address|depends on an uninitialized|'
reports+='Controlflow depends|Invalid read|Invalid write|data race|divergence|'
reports+='Unaligned address|Oclgrind - OpenCL runtime error|OCLGRIND FATAL ERROR'
runs=("--tiles reg" "--tiles vec" "--tiles small --precision bf16" "--tiles vec --precision bf16"
      "--tiles reg --precision fp16" "--tiles vec --precision fp16")
# one run per core at a time (OCLGRIND_JOBS, default nproc: the simulator
# runs a kernel on one thread); the verdicts are printed in the list's order
jobs=${OCLGRIND_JOBS:-$(nproc)}
one_run() {
    local i=$1 err=$dir/$1.err rc n
    # shellcheck disable=SC2086 # each run is a list of arguments
    oclgrind --data-races --uninitialized --check-api "$bin" --small ${runs[$i]} \
        --build-options -cl-opt-disable > "$dir/$i.out" 2> "$err"
    rc=$?
    n=$(grep -cE "$reports" "$err")
    if [ $rc -ne 0 ] || [ "$n" -ne 0 ]; then
        {
            echo "FAIL (${runs[$i]}): exit status $rc, $n Oclgrind reports; first lines of stderr:"
            head -20 "$err" | sed 's/^/  | /'
            echo "  last lines of its output:"
            tail -5 "$dir/$i.out" | sed 's/^/  | /'
        } > "$dir/$i.res"
        return
    fi
    echo "ok: ${runs[$i]}: clean under Oclgrind" > "$dir/$i.res"
}
for i in "${!runs[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
        wait -n
    done
    one_run "$i" &
done
wait
failed=0
for i in "${!runs[@]}"; do
    if [ ! -f "$dir/$i.res" ]; then
        echo "FAIL (${runs[$i]}): no result (its job died)"
        failed=1
        continue
    fi
    cat "$dir/$i.res"
    grep -q '^ok: ' "$dir/$i.res" || failed=1
done
exit $failed
