#!/usr/bin/env bash
# test_doctor.sh CLTRAIN - `cltrain doctor`: on a working machine it lists
# the loader, the ICD files (each library found), the devices with their
# class and why, the selected device's verdicts, cache and a measurement,
# and exits 0 with no problem; with no ICD file, an ICD file naming a
# missing library, or OCL_ICD_VENDORS pointing nowhere, it names the
# problem and what to do, and exits 1; --json is one valid object either
# way; under Oclgrind and with rusticl's llvmpipe it reports those devices.
set -u
cltrain=$1
. "$(dirname "$0")/../lib.sh"

expect "a working machine" 0 "0 problems" -- "$cltrain" doctor
for want in "OpenCL ICD loader: /" "pocl.icd .*found at /" "0:0 cpu .*Portable Computing Language" \
    "kernels cpu, GEMM host \(a CPU device\)" "verified op families: " "kernel cache: " "measured: GEMM [0-9]+\^3 [0-9.]+ GFLOP/s, copy [0-9.]+ GB/s"; do
    if grep -qE -- "$want" "$tmp/out"; then ok "lists /$want/"; else bad "lacks /$want/"; sed 's/^/  | /' "$tmp/out"; fi
done
json_ok() { # json_ok FILE PYTHON-CONDITION
    python3 -c "import json, sys; d = json.load(open('$1')); sys.exit(0 if ($2) else 1)" 2>/dev/null
}
"$cltrain" doctor --json >"$tmp/ok.json" 2>/dev/null
if json_ok "$tmp/ok.json" "d['problems'] == [] and d['devices'][0]['kernels'] == 'cpu' and d['selected']['gemm_gflops'] > 0 and any(f['found'] for f in d['icd_files'])"; then
    ok "--json: one object, no problem"
else bad "--json"; head -c 600 "$tmp/ok.json"; fi

mkdir -p "$tmp/empty" "$tmp/bad"
expect "no ICD file" 1 "no ICD file in $tmp/empty: no OpenCL driver is registered\. Install one" -- \
    env OCL_ICD_VENDORS="$tmp/empty" "$cltrain" doctor
if grep -q "no OpenCL platform found" "$tmp/out"; then ok "no platform is reported"; else bad "no platform not reported"; fi
echo libdoesnotexist.so.1 >"$tmp/bad/broken.icd"
expect "an ICD file naming a missing library" 1 \
    "$tmp/bad/broken.icd names libdoesnotexist.so.1, which is not found .*: install the driver package that provides it, or remove" -- \
    env OCL_ICD_VENDORS="$tmp/bad" "$cltrain" doctor
expect "OCL_ICD_VENDORS pointing nowhere" 1 "OCL_ICD_VENDORS=$tmp/nowhere is not a directory.*unset it" -- \
    env OCL_ICD_VENDORS="$tmp/nowhere" "$cltrain" doctor
OCL_ICD_VENDORS="$tmp/bad" "$cltrain" doctor --json >"$tmp/bad.json" 2>/dev/null
if json_ok "$tmp/bad.json" "len(d['problems']) >= 2 and d['devices'] == [] and not d['icd_files'][0]['found']"; then
    ok "--json with problems: one object"
else bad "--json with problems"; head -c 600 "$tmp/bad.json"; fi
expect "a bad flag is a usage error" 2 "doctor: unknown option '--bogus'" -- "$cltrain" doctor --bogus

# Oclgrind and rusticl check drivers, not host code: not under the
# sanitizers (Oclgrind's preloaded runtime cannot precede ASan's, and
# llvmpipe's JIT deadlocks ASan's slow unwinder: tests/rusticl/test_rusticl.sh)
asan=no
ldd "$cltrain" 2>/dev/null | grep -q libasan && asan=yes
if [ $asan = yes ]; then
    echo "a sanitizer build: the Oclgrind and rusticl cases skipped"
elif command -v oclgrind >/dev/null; then
    expect "under Oclgrind" 0 "Oclgrind Simulator.*|0 problems" -- oclgrind "$cltrain" doctor
    if grep -q "kernels gpu, GEMM" "$tmp/out"; then ok "Oclgrind: the GPU class"; else bad "Oclgrind: no class line"; fi
else
    echo "oclgrind is not installed: its case skipped"
fi
if [ $asan = yes ]; then
    :
elif ls /usr/lib/x86_64-linux-gnu/libRusticlOpenCL.so* >/dev/null 2>&1; then
    expect "rusticl's llvmpipe" 0 "" -- env RUSTICL_ENABLE=llvmpipe "$cltrain" doctor
    if grep -qE "[0-9]+:0 (gpu|cpu|other) .*llvmpipe" "$tmp/out"; then ok "rusticl: the llvmpipe device is listed"; else bad "rusticl: no llvmpipe device"; sed 's/^/  | /' "$tmp/out"; fi
else
    echo "rusticl is not installed: its case skipped"
fi
finish doctor
