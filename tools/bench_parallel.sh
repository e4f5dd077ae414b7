#!/usr/bin/env bash
# bench_parallel.sh [CLTRAIN] - data-parallel overhead on one machine under
# pocl: samples/s of one model at one global batch as
#   1 device x 2 threads | 2 devices x 1 thread | 2 MPI ranks x 1 thread,
# plus 1 device x 1 thread at half the batch (what each replica computes),
# from which the per-step overhead of the replicated runs follows.
# Threads: POCL_MAX_PTHREAD_COUNT per pocl device, OPENBLAS_NUM_THREADS for
# the host GEMMs, CLTRAIN_THREADS for the direct host convolution. Rates are taken between step 2 and the last step (the
# --log JSON lines' seconds), so start-up and the first step do not count.
#   MODELS="fcn-r:256 resnet56:64" STEPS=6 tools/bench_parallel.sh build/tools/cltrain
set -u
cltrain=${1:-build/tools/cltrain}
models=${MODELS:-"fcn-r:256 resnet56:64"}
steps=${STEPS:-6}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

rate() { # rate FILE BATCH: samples/s and ms/step between step 2 and the last
    python3 - "$1" "$2" <<'PY'
import json, sys
s = [r for r in (json.loads(l) for l in open(sys.argv[1]) if l.strip()) if r.get("event") == "step"]
b = int(sys.argv[2])
if len(s) < 3:
    print("n/a n/a"); sys.exit()
dt = s[-1]["seconds"] - s[1]["seconds"]
n = len(s) - 2
print(f"{n * b / dt:.1f} {1000 * dt / n:.1f}")
PY
}

printf "%-10s %6s  %-26s %10s %9s\n" model batch configuration samples/s ms/step
for mb in $models; do
    m=${mb%%:*}; b=${mb#*:}
    case $m in
        fcn-r) data="synthetic:784,1,1:10:$((b * (steps + 1)))" ;;
        *) data="synthetic:3,32,32:10:$((b * (steps + 1)))" ;;
    esac
    args=(train --model "$m" --data "$data:ntest=1" --batch "$b" --epochs 1 --log-every 1
          --no-progress --optimizer sgd --schedule constant --test-limit 1)
    half=(train --model "$m" --data "$data:ntest=1" --batch $((b / 2)) --epochs 1 --log-every 1
          --no-progress --optimizer sgd --schedule constant --test-limit 1 --limit $((b / 2 * (steps + 1))))
    POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=2 OPENBLAS_NUM_THREADS=2 CLTRAIN_THREADS=2 \
        "$cltrain" "${args[@]}" --device 0:0 --log "$tmp/a.jsonl" >/dev/null
    POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=1 OPENBLAS_NUM_THREADS=1 CLTRAIN_THREADS=1 \
        "$cltrain" "${half[@]}" --device 0:0 --log "$tmp/h.jsonl" >/dev/null
    POCL_DEVICES="pthread pthread" POCL_MAX_PTHREAD_COUNT=1 OPENBLAS_NUM_THREADS=1 CLTRAIN_THREADS=1 \
        "$cltrain" "${args[@]}" --device 0:0,0:1 --log "$tmp/d.jsonl" >/dev/null
    mpirun -np 2 --oversubscribe -x POCL_DEVICES=pthread -x POCL_MAX_PTHREAD_COUNT=1 -x OPENBLAS_NUM_THREADS=1 -x CLTRAIN_THREADS=1 \
        "$cltrain" "${args[@]}" --device 0:0 --log "$tmp/m.jsonl" >/dev/null 2>&1
    for c in "a:1 device x 2 threads" "h:1 device x 1 thread, b/2" "d:2 devices x 1 thread" "m:2 MPI ranks x 1 thread"; do
        k=${c%%:*}; bb=$b; [ "$k" = h ] && bb=$((b / 2))
        read -r r ms < <(rate "$tmp/$k.jsonl" "$bb")
        printf "%-10s %6s  %-26s %10s %9s\n" "$m" "$bb" "${c#*:}" "$r" "$ms"
    done
done
