#!/usr/bin/env bash
# bench_overlap.sh [CLTRAIN] [BASELINE] - the exposed cost of the gradient
# all-reduce on two pocl devices, with the reduction overlapped with the
# backward (the default) and switched off (CLTRAIN_REDUCE_OVERLAP=0), and,
# given a BASELINE cltrain (e.g. a build of main before the overlap), with
# that one too. Exposed cost = ms per step of the two-device run at the
# global batch - ms per step of one device at half the batch (what each
# replica computes). Configurations are interleaved within each of ROUNDS
# rounds (default 3) and the medians reported; each device gets one pocl
# thread (POCL_MAX_PTHREAD_COUNT=1, OPENBLAS_NUM_THREADS=1,
# CLTRAIN_THREADS=1), as in tools/bench_parallel.sh. A run's ms per step
# is the median of its steps' times from step 3 on (the --log lines'
# seconds; the median, as other jobs on a shared machine stall single steps). The two-device
# runs' own measurement of the exposed reduction, the --log lines'
# reduce_exposed_ms (from the end of the last replica's backward to the
# sums written back, mean per step), is reported beside it.
#   MODELS="resnet56:128 gpt:64" STEPS=6 ROUNDS=3 tools/bench_overlap.sh build/tools/cltrain
set -u
cltrain=${1:-build/tools/cltrain}
baseline=${2:-}
models=${MODELS:-"resnet56:128 gpt:64"}
steps=${STEPS:-6}
rounds=${ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export POCL_MAX_PTHREAD_COUNT=1 OPENBLAS_NUM_THREADS=1 CLTRAIN_THREADS=1

python3 - "$tmp" <<'PY'
import random, sys
r = random.Random(7)
words = "the quick brown fox jumps over a lazy dog and then runs home again".split()
for name, n in (("lm.train", 3000), ("lm.test", 150)):
    with open(f"{sys.argv[1]}/{name}", "w") as f:
        for _ in range(n):
            f.write(" ".join(r.choice(words) for _ in range(8)) + ".\n")
PY

ms() { # ms FILE: the median ms of the steps from step 3 on
    python3 - "$1" <<'PY'
import json, statistics, sys
s = [e["seconds"] for e in map(json.loads, open(sys.argv[1])) if e.get("event") == "step"]
d = [b - a for a, b in zip(s[1:], s[2:])]
print(f"{1000 * statistics.median(d):.1f}" if d else "nan")
PY
}
red() { # red FILE: the last step line's reduce_exposed_ms
    python3 - "$1" <<'PY'
import json, sys
s = [e for e in map(json.loads, open(sys.argv[1])) if e.get("event") == "step"]
print(s[-1].get("reduce_exposed_ms", "nan") if s else "nan")
PY
}

printf "%-9s %5s %5s  %9s %9s %9s %9s  %-26s %s\n" model batch round "b/2 ms" "on ms" "off ms" "base ms" \
    "exposed on/off/base ms" "reduce_exposed_ms on/off"
for mb in $models; do
    m=${mb%%:*}; b=${mb#*:}
    case $m in
        gpt|bytelm) data="text:$tmp/lm.train:tokens=byte:seq=128:test=$tmp/lm.test" ;;
        *) data="synthetic:3,32,32:10:$((b * (steps + 1))):ntest=1" ;;
    esac
    common=(train --model "$m" --data "$data" --epochs 1 --log-every 1 --no-progress --optimizer sgd
            --schedule constant --test-limit 1)
    : >"$tmp/$m.rows"
    for r in $(seq 1 "$rounds"); do
        rm -f "$tmp"/*.jsonl # --log appends
        POCL_DEVICES=pthread "$cltrain" "${common[@]}" --batch $((b / 2)) --limit $((b / 2 * (steps + 1))) \
            --device 0:0 --log "$tmp/h.jsonl" >/dev/null 2>&1
        POCL_DEVICES="pthread pthread" "$cltrain" "${common[@]}" --batch "$b" --limit $((b * (steps + 1))) \
            --device 0:0,0:1 --log "$tmp/on.jsonl" >/dev/null 2>&1
        POCL_DEVICES="pthread pthread" CLTRAIN_REDUCE_OVERLAP=0 "$cltrain" "${common[@]}" --batch "$b" \
            --limit $((b * (steps + 1))) --device 0:0,0:1 --log "$tmp/off.jsonl" >/dev/null 2>&1
        : >"$tmp/base.jsonl"
        [ -n "$baseline" ] && POCL_DEVICES="pthread pthread" "$baseline" "${common[@]}" --batch "$b" \
            --limit $((b * (steps + 1))) --device 0:0,0:1 --log "$tmp/base.jsonl" >/dev/null 2>&1
        h=$(ms "$tmp/h.jsonl"); on=$(ms "$tmp/on.jsonl"); off=$(ms "$tmp/off.jsonl"); base=$(ms "$tmp/base.jsonl")
        ron=$(red "$tmp/on.jsonl"); roff=$(red "$tmp/off.jsonl")
        echo "$h $on $off $base $ron $roff" >>"$tmp/$m.rows"
        printf "%-9s %5s %5s  %9s %9s %9s %9s  %-26s %s\n" "$m" "$b" "$r" "$h" "$on" "$off" "$base" \
            "$(python3 -c "import sys; h,a,b,c=map(float,sys.argv[1:]); print(f'{a-h:.1f} / {b-h:.1f} / {c-h:.1f}')" $h $on $off $base)" \
            "$ron / $roff"
    done
    python3 - "$tmp/$m.rows" "$m" "$b" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
med = lambda k: statistics.median(r[k] for r in rows)
exp = lambda k: statistics.median(r[k] - r[0] for r in rows)
print(f"{sys.argv[2]:<9} {sys.argv[3]:>5} median {med(0):9.1f} {med(1):9.1f} {med(2):9.1f} {med(3):9.1f}  "
      f"{exp(1):.1f} / {exp(2):.1f} / {exp(3):.1f}{'':8} {med(4):.2f} / {med(5):.2f}")
PY
done
