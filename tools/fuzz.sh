#!/usr/bin/env bash
# fuzz.sh - builds the libFuzzer targets (clang, ASan + UBSan) in
# build-fuzz/ if needed and runs each target, or those named, for a given
# number of seconds on its corpus in tests/fuzz/corpus/<target>/, then
# prints executions per target. New inputs go to build-fuzz/fuzz-work/<target>/;
# findings (crash-*, leak-*, timeout-*, oom-*) go there too.
#
#   tools/fuzz.sh [-t SECONDS] [-j PARALLEL] [-m] [TARGET...]
#     -t SECONDS  per target (default 60)
#     -j N        targets at a time (default 1)
#     -m          afterwards merge the new inputs into the committed corpus
#                 (libFuzzer -merge=1: only inputs that add coverage)
#   BUILD_DIR=dir tools/fuzz.sh ...   another build directory
set -euo pipefail
cd "$(dirname "$0")/.."

all=(model idx cifar csv npy image imagefolder imgindex vocab text textdir csvtext safetensors checkpoint cache tune selector cli)
secs=60 par=1 merge=0
while getopts "t:j:m" o; do
  case $o in
    t) secs=$OPTARG ;;
    j) par=$OPTARG ;;
    m) merge=1 ;;
    *) sed -n '2,14p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")
for t in "${targets[@]}"; do
  case " ${all[*]} " in *" $t "*) ;; *) echo "fuzz.sh: no target '$t' (targets: ${all[*]})" >&2; exit 2 ;; esac
done

build=${BUILD_DIR:-build-fuzz}
if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ meson setup "$build" -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbuildtype=debugoptimized
fi
ninja -C "$build" $(printf "tests/fuzz/fuzz_%s " "${targets[@]}")

work=$build/fuzz-work
mkdir -p "$work"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

run_one() {
  local t=$1 corpus=tests/fuzz/corpus/$1 out=$work/$1
  mkdir -p "$out/new"
  local start=$SECONDS
  # -timeout: one input taking over 10 s is a hang; -rss_limit_mb: parsers must
  # not allocate what the input does not hold
  "$build/tests/fuzz/fuzz_$t" "$out/new" "$corpus" -max_total_time="$secs" -timeout=10 \
    -rss_limit_mb=2048 -max_len=65536 -artifact_prefix="$out/" -print_final_stats=1 \
    >"$out/log" 2>&1 || true
  local took=$((SECONDS - start)) execs findings
  # a finding stops libFuzzer early; its log then has no final stats
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/log" | tail -1)
  [ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9][0-9]*\).*/\1/p' "$out/log" | tail -1)
  findings=$(find "$out" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' \) | wc -l)
  printf "%-12s %6ss %12s execs %6s new inputs  %s findings%s\n" "$t" "$took" "${execs:-?}" \
    "$(find "$out/new" -type f | wc -l)" "$findings" \
    "$([ "$findings" != 0 ] && echo " (see $out/)")"
}

running=0
for t in "${targets[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$par" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

if [ "$merge" = 1 ]; then
  for t in "${targets[@]}"; do
    "$build/tests/fuzz/fuzz_$t" -merge=1 -max_len=65536 "tests/fuzz/corpus/$t" "$work/$t/new" \
      >"$work/$t/merge.log" 2>&1
    echo "$t: corpus now $(ls "tests/fuzz/corpus/$t" | wc -l) files, $(du -sb "tests/fuzz/corpus/$t" | cut -f1) bytes"
  done
fi
