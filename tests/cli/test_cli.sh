#!/usr/bin/env bash
# test_cli.sh CLTRAIN - the command-line tool as a user meets it: device
# listing (text and JSON), exit codes (0 ok, 1 error, 2 usage), no OpenCL
# platform at all, and a bad device selector. A signal (exit > 128) always fails.
set -u
cltrain=$1
. "$(dirname "$0")/../lib.sh"


expect "--help" 0 "usage: cltrain" -- "$cltrain" --help
expect "--version" 0 "^cltrain [0-9]+\.[0-9]+\.[0-9]+" -- "$cltrain" --version
expect "--devices lists a device" 0 "^0:0  (cpu|gpu|accelerator|other)  .+ \| driver .+ \| OpenCL C [0-9.]+.* \| [0-9]+ CU .*max alloc .* local .* max WG [0-9]+ \| fp16 (yes|no), fp64 (yes|no), subgroups (yes|no)" -- "$cltrain" --devices
expect "--devices --json" 0 '"selector": "0:0"' -- "$cltrain" --devices --json
checks=$((checks + 1))
if "$cltrain" --devices --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert isinstance(d, list) and d, "empty"
for k in ("selector", "type", "name", "vendor", "driver_version", "opencl_c_version", "compute_units",
          "global_mem_bytes", "max_alloc_bytes", "local_mem_bytes", "max_work_group_size", "fp16", "fp64", "subgroups"):
    assert k in d[0], k
'; then echo "ok   --devices --json parses with every field"; else echo "FAIL --devices --json is not valid JSON with every field"; fails=$((fails + 1)); fi

expect "unknown command is a usage error" 2 "unknown command 'frobnicate'" -- "$cltrain" frobnicate
expect "unknown flag is a usage error" 2 "unknown option '--colour'" -- "$cltrain" --devices --colour
expect "kernels builds every program" 0 "total" -- "$cltrain" kernels
expect "bad device selector" 1 "no device 7:7.*HINT" -- "$cltrain" kernels --device 7:7
expect "malformed device selector" 1 "malformed device selector term '0:x'" -- "$cltrain" kernels --device 0:x
CLTRAIN_DEVICE=no-such-gpu expect "bad CLTRAIN_DEVICE" 1 "CLTRAIN_DEVICE 'no-such-gpu'" -- "$cltrain" kernels

expect "selftest passes" 0 "^ok +act .*all ops passed|all ops passed" -- "$cltrain" selftest --filter act --iterations 2
expect "selftest --no-finite-diff passes, and says so" 0 "seed [0-9]+, no finite differences" -- "$cltrain" selftest --filter act --iterations 2 --no-finite-diff
expect "selftest bad filter" 1 "no op matches 'nonesuch'" -- "$cltrain" selftest --filter nonesuch
expect "selftest bad iterations" 2 "--iterations needs an integer" -- "$cltrain" selftest --iterations many

expect "bench smoke" 0 "^mlp +8 0:0 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+" -- "$cltrain" bench --model mlp --batch 8 --steps 2 --warmup 1
expect "bench on tokens (lstm layer)" 0 '"model": "lstm".*"median_ms"' -- "$cltrain" bench --model lstm --batch 2 --steps 1 --warmup 0 --json
# pocl reports a share of the memory free at start-up as the device's, so
# the limit is pinned: the 12 GiB plan never fits in 2 GiB
CLTRAIN_MEM_LIMIT=2G expect "bench of a model that does not fit" 1 "FAILED: the memory plan at batch 20000 does not fit: .*The largest batch that fits is [0-9]+\\. HINT: use a batch of [0-9]+ or less" -- "$cltrain" bench --model fcn-s --batch 20000 --steps 1
expect "bench bad flag" 2 "bench: unknown option" -- "$cltrain" bench --modle mlp

mkdir -p "$tmp/no-vendors"
OCL_ICD_VENDORS="$tmp/no-vendors" expect "no OpenCL platform" 1 "no OpenCL platform found.*HINT: install an OpenCL driver" -- "$cltrain" --devices
OCL_ICD_VENDORS="$tmp/no-vendors" expect "no OpenCL platform (kernels)" 1 "pocl-opencl-icd" -- "$cltrain" kernels

echo "test_cli: $checks checks, $fails failed"
[ "$fails" -eq 0 ]
