#!/bin/bash
# Every op family's kernel check (checkcl --filter FAMILY) under Oclgrind's
# simulator with its uninitialized-value, data-race and API checks; fails on
# any report, a crash or a failed check. One line per family.
#
#   run_oclgrind.sh CHECKCL [--precision bf16|fp16] [FAMILY...]
#                                   (default: every family, checkcl --list;
#                                   --precision: the products' 16-bit kernels)
#
# Exit 77 (skip) when oclgrind is not installed. OCLGRIND_FAMILY_LIMIT: seconds
# per family (default 480). OCLGRIND_LOG_DIR keeps the
# per-family logs (default: a temporary directory, removed when all pass).
# See docs/RELIABILITY.md, "Oclgrind".
set -u

checkcl=${1:?usage: run_oclgrind.sh CHECKCL [--precision bf16|fp16] [FAMILY...]}
shift
prec=()
if [ "${1:-}" = --precision ]; then
    prec=(--precision "${2:?--precision needs bf16 or fp16}")
    shift 2
fi
if ! command -v oclgrind > /dev/null 2>&1; then
    echo "oclgrind is not installed (Debian: apt-get install oclgrind); skipping"
    exit 77
fi
if [ $# -gt 0 ]; then
    families=("$@")
else
    mapfile -t families < <("$checkcl" --list) || true
fi
if [ ${#families[@]} -eq 0 ]; then
    echo "run_oclgrind.sh: $checkcl --list named no op families" >&2
    exit 1
fi

logs=${OCLGRIND_LOG_DIR:-}
keep=1
if [ -z "$logs" ]; then
    logs=$(mktemp -d "${TMPDIR:-/tmp}/oclgrind.XXXXXX") || exit 1
    keep=0
fi
mkdir -p "$logs" || exit 1

# -cl-opt-disable on cltrain's kernels: optimized, several of them hold LLVM
# 'freeze' instructions, at which the uninitialized-value check stops.
# CLBlast's are built as usual (3x faster to simulate, and not ours to
# check). No kernel cache: a binary built here must not serve a run with
# other build options, nor come from one.
unset OCLGRIND_BUILD_OPTIONS
export CLTRAIN_CACHE=off
unset CLTRAIN_KERNELS CLTRAIN_GEMM CLTRAIN_CONV

# What Oclgrind prints when a check fires (all on stderr).
reports='Uninitialized value|Uninitialized address|depends on an uninitialized|'
reports+='Controlflow depends|Invalid read|Invalid write|data race|divergence|'
reports+='Unaligned address|Oclgrind - OpenCL runtime error|OCLGRIND FATAL ERROR'

# seconds per family: attention, the slowest, simulates in about 70 s on an
# idle 2-core machine (conv 42 s; the small cases skip what exists only for
# the host paths, which the simulator never runs)
limit=${OCLGRIND_FAMILY_LIMIT:-480}
# The simulator runs a kernel on one thread, so the families run side by
# side, one per core (OCLGRIND_JOBS, default nproc); each family's lines are
# printed in checkcl --list order once all are done.
jobs=${OCLGRIND_JOBS:-$(nproc)}

# one family: its verdict lines into $logs/$f.res, "ok" or "fail" into $logs/$f.rc
run_family() {
    local f=$1 out=$logs/$1.out err=$logs/$1.err t0=$SECONDS rc nrep verdict kernels reason
    local why=()
    timeout "$limit" oclgrind --data-races --uninitialized --check-api \
        "$checkcl" --device oclgrind --filter "$f" --iterations 1 --no-finite-diff --small "${prec[@]}" \
        --build-options -cl-opt-disable > "$out" 2> "$err"
    rc=$?
    local dt=$((SECONDS - t0))
    nrep=$(grep -cE "$reports" "$err")
    verdict=$(grep -E "^(ok|FAIL) " "$out" | head -1)
    if [ $rc -eq 0 ] && [ "$nrep" -eq 0 ] && [ ! -s "$err" ] && [ -n "$verdict" ]; then
        printf 'ok    %-10s %4d s  %s\n' "$f" "$dt" "$(sed -E 's/^ok +[^ ]+ +//' <<< "$verdict")" > "$logs/$f.res"
        echo ok > "$logs/$f.rc"
        return
    fi
    if [ $rc -eq 124 ]; then why+=("timed out after $limit s")
    elif [ $rc -gt 128 ]; then why+=("killed by signal $((rc - 128))")
    elif [ $rc -ne 0 ]; then why+=("exit status $rc")
    fi
    [ "$nrep" -gt 0 ] && why+=("$nrep Oclgrind reports")
    [ "$nrep" -eq 0 ] && [ -s "$err" ] && why+=("output on stderr")
    [ -z "$verdict" ] && why+=("no verdict from checkcl")
    kernels=$(grep -E '^[[:space:]]*Kernel:' "$err" | awk '{print $2}' | sort | uniq -c |
              awk '{printf "%s%s x%s", sep, $2, $1; sep=", "}')
    reason=$(IFS=';'; echo "${why[*]}")
    [ -z "$verdict" ] && verdict=$(tail -1 "$out")
    {
        printf 'FAIL  %-10s %4d s  %s%s\n' "$f" "$dt" "${reason//;/, }" "${kernels:+ (kernels: $kernels)}"
        echo "      checkcl: $verdict"
        echo "      first lines of $err:"
        head -12 "$err" | sed 's/^/      | /'
    } > "$logs/$f.res"
    echo fail > "$logs/$f.rc"
}

failed=0
start_all=$SECONDS
for f in "${families[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
        wait -n
    done
    run_family "$f" &
done
wait
for f in "${families[@]}"; do
    if [ -f "$logs/$f.res" ]; then
        cat "$logs/$f.res"
    else
        printf 'FAIL  %-10s no result (the family\x27s job died)\n' "$f"
    fi
    if [ "$(cat "$logs/$f.rc" 2> /dev/null)" != ok ]; then
        failed=$((failed + 1))
        keep=1
    fi
done
echo "oclgrind: ${#families[@]} families, $failed failed, $((SECONDS - start_all)) s"
if [ $keep -eq 1 ]; then
    echo "logs: $logs"
else
    rm -rf "$logs"
fi
[ $failed -eq 0 ]
