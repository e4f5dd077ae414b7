#!/usr/bin/env bash
# test_floors.sh - each floor of the library uses only its own and the ones
# below it (docs/ARCHITECTURE.md, "Floors"):
#   1 src/core   2 src/cl   3 src/tensor.*, src/ops, src/ref, src/check, src/optim
#   4 src/nn, src/data, src/io (and protoc-c's code from its .proto files)
#   5 src/train   6 tools (the public API only)
#
# Includes: every #include "..." of every file under src/ and tools/ must
# name a header of its own floor or a lower one. Calls: given the internal
# static library, every symbol an object takes from another object of it
# (nm) must come from its own floor or a lower one. Any arrow up fails,
# named with its file and line (or object and symbol).
#
# usage: test_floors.sh SOURCE_ROOT [LIBCLTRAIN_INTERNAL.a]
set -u
root=${1:?usage: test_floors.sh SOURCE_ROOT [LIBCLTRAIN_INTERNAL.a]}
lib=${2:-}
case $lib in
    "" | /*) ;;
    *) lib=$PWD/$lib ;; # meson passes it relative to the build directory
esac
fails=0

# The floor of a path relative to the source root ("" when none).
floor_of() {
    case $1 in
        src/core/*) echo 1 ;;
        src/cl/*) echo 2 ;;
        src/tensor.c | src/tensor.h | src/ops/* | src/ref/* | src/check/* | src/optim/*) echo 3 ;;
        src/nn/* | src/data/* | src/io/*) echo 4 ;;
        src/train/*) echo 5 ;;
        tools/*) echo 6 ;;
        *) echo "" ;;
    esac
}

# The floor of a public header: the lowest floor that implements what it
# declares (gemm.h: the GEMM path is chosen by the device class, floor 2).
public_floor() {
    case $1 in
        cltrain/common.h | cltrain/opencl.h) echo 1 ;;
        cltrain/device.h | cltrain/context.h | cltrain/gemm.h) echo 2 ;;
        cltrain/selftest.h) echo 3 ;;
        cltrain/model.h | cltrain/data.h) echo 4 ;;
        cltrain/train.h | cltrain/parallel.h | cltrain/bench.h) echo 5 ;;
        cltrain/cltrain.h) echo 6 ;;
        *) echo "" ;;
    esac
}

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# ---- includes ----
cd "$root" || exit 1
files=$(find src tools -name '*.[ch]' -o -name '*.h.in' | sort)
[ -n "$files" ] || { echo "no sources under $root/src"; exit 1; }
nfiles=0
for f in $files; do
    nfiles=$((nfiles + 1))
    mine=$(floor_of "$f")
    if [ -z "$mine" ]; then
        fail "$f has no floor. HINT: add its directory to floor_of in tests/test_floors.sh and to the Floors table"
        continue
    fi
    dir=$(dirname "$f")
    while IFS=: read -r line inc; do
        inc=${inc#*\"}
        inc=${inc%%\"*}
        if [ "$inc" = kernel_list.h ]; then
            theirs=2 # generated from src/cl/kernel_list.h.in
        elif [ "${inc%.pb-c.h}" != "$inc" ] && [ -f "$dir/${inc%.pb-c.h}.proto" ]; then
            theirs=$(floor_of "$dir/${inc%.pb-c.h}.proto") # protoc-c's, from a .proto beside it
        elif [ "${inc#cltrain/}" != "$inc" ]; then
            theirs=$(public_floor "$inc")
        elif [ "$mine" = 6 ]; then
            # the CLI: the public API and its own headers only
            if [ -f "$dir/$inc" ] && [ "$(floor_of "$dir/$inc")" = 6 ]; then theirs=6; else theirs=""; fi
        elif [ -f "src/$inc" ]; then
            theirs=$(floor_of "src/$inc")
        elif [ -f "$dir/$inc" ]; then
            theirs=$(floor_of "$dir/$inc")
        else
            theirs=""
        fi
        if [ -z "$theirs" ] && [ "$mine" = 6 ]; then
            fail "$f:$line: #include \"$inc\": the CLI uses the public API (cltrain/*.h) only"
        elif [ -z "$theirs" ]; then
            fail "$f:$line: #include \"$inc\" is not a header of any floor"
        elif [ "$theirs" -gt "$mine" ]; then
            fail "$f:$line: #include \"$inc\" reaches floor $theirs from floor $mine"
        fi
    done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
done
echo "includes: $nfiles files checked"

# ---- calls ----
if [ -n "$lib" ]; then
    if ! command -v nm >/dev/null 2>&1; then
        echo "nm not found: calls not checked"
    else
        # archive members are named for their sources: src_ops_conv_host.c.o
        # for src/ops/conv_host.c; meson-generated_*.cl.c.o are the embedded
        # kernel sources, which src/cl/program.c holds (floor 2), except
        # protoc-c's code (*.pb-c.c.o), from the .proto files of src/io (floor 4)
        report=$(nm -A "$lib" 2>/dev/null | awk '
            function floor_of(o) {
                sub(/^.*\//, "", o)
                if (o ~ /^meson-generated_.*\.pb-c\.c\.o$/) return 4
                if (o ~ /^meson-generated_/) return 2
                if (o ~ /^src_core_/) return 1
                if (o ~ /^src_cl_/) return 2
                if (o ~ /^src_(tensor\.c|ops_|ref_|check_|optim_)/) return 3
                if (o ~ /^src_(nn|data|io)_/) return 4
                if (o ~ /^src_train_/) return 5
                return 0
            }
            {
                # archive:member: [value] type name
                n = split($0, part, ":")
                obj = part[2]
                k = split(part[n], f, " ")
                type = f[k - 1]
                sym = f[k]
                if (type == "U") {
                    nu++
                    uobj[nu] = obj
                    usym[nu] = sym
                } else if (type ~ /^[TDBRCV]$/) {
                    def[sym] = obj
                }
            }
            END {
                objs = 0
                for (i = 1; i <= nu; i++) {
                    if (!(usym[i] in def)) continue
                    a = floor_of(uobj[i])
                    b = floor_of(def[usym[i]])
                    if (!a) { print "FAIL: object " uobj[i] " has no floor"; continue }
                    if (!b) { print "FAIL: object " def[usym[i]] " has no floor"; continue }
                    checked++
                    if (b > a) {
                        d = def[usym[i]]
                        sub(/^.*\//, "", d)
                        o = uobj[i]
                        sub(/^.*\//, "", o)
                        print "FAIL: " o " (floor " a ") calls " usym[i] " of " d " (floor " b ")"
                    }
                }
                print "calls: " checked + 0 " references between objects checked"
            }')
        echo "$report"
        case $report in
            *FAIL:*) fails=$((fails + $(grep -c '^FAIL:' <<<"$report"))) ;;
            "calls: 0 "*) fail "no references found in $lib" ;;
        esac
    fi
fi

if [ "$fails" -gt 0 ]; then
    echo "$fails failure(s). HINT: for an arrow up, a lower floor offers a hook the upper one registers (docs/ARCHITECTURE.md, Floors), or the code moves down"
    exit 1
fi
echo "floors: no arrow up"
