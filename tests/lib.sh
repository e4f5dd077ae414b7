# lib.sh - what the shell tests share; source it after `set -u`:
#   . "$(dirname "$0")/../lib.sh"
# It makes $tmp (removed at exit; a test with more to clean up sets its own
# trap and removes $tmp there), counts checks in $checks and $fails, and
# gives ok, bad, expect, cnn_with_dropout and finish.

fails=0; checks=0

# sanitized: 1 when $cltrain (set before sourcing this) is an AddressSanitizer
# build (the sanitizer run of .ci/run), where host code runs 3-5x slower:
# there the longest tests leave out repeats that check numbers, not code
# (each says which), the release run keeps them.
sanitized=0
if [ -n "${cltrain:-}" ] && ldd "$cltrain" 2>/dev/null | grep -q libasan; then
    sanitized=1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok   $1"; checks=$((checks + 1)); }
bad() { echo "FAIL $1"; checks=$((checks + 1)); fails=$((fails + 1)); }

# cnn_with_dropout CLTRAIN FILE: writes the zoo's cnn with a dropout of 0.25
# before each dense layer (the zoo's has none) to FILE, for the tests that
# check dropout's masks end to end; a bad check if the result lacks them.
cnn_with_dropout() {
    "$1" zoo cnn | sed -e 's/^\(fc1: .*\)$/drop1: dropout p=0.25\n\1/' \
                     -e 's/^\(fc2: .*\)$/drop2: dropout p=0.25\n\1/' >"$2"
    if [ "$(grep -c ': dropout' "$2")" != 2 ]; then bad "could not write the dropout CNN"; cat "$2"; return 1; fi
}

# expect NAME WANT_RC PATTERN -- CMD...: CMD exits WANT_RC and its output
# (stdout and stderr) matches the extended regex PATTERN (empty: anything).
# On failure the last lines of the output are shown and it returns 1.
expect() {
    local name=$1 want=$2 pattern=$3; shift 4
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" -ne "$want" ]; then
        bad "$name: exit $rc, want $want"; cat "$tmp/out" "$tmp/err" | tail -n 12 | sed 's/^/  | /'
        return 1
    fi
    if [ -n "$pattern" ] && ! grep -qE -- "$pattern" "$tmp/out" "$tmp/err"; then
        bad "$name: output lacks /$pattern/"; cat "$tmp/out" "$tmp/err" | tail -n 12 | sed 's/^/  | /'
        return 1
    fi
    ok "$name"
}

# finish NAME: the tally, and the exit status meson reads
finish() {
    echo "$1: $checks checks, $fails failed"
    [ "$fails" -eq 0 ]
    exit
}

# py_with MODULE...: prints the Python that imports every MODULE (the
# project's .venv made by tools/setup_python.sh first, then Debian's), or
# returns 1 with nothing printed.
py_with() {
    local root py
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    for py in "$root/.venv/bin/python" /usr/bin/python3; do
        [ -x "$py" ] || continue
        if "$py" -c "import $(IFS=,; echo "$*")" 2>/dev/null; then
            echo "$py"; return 0
        fi
    done
    return 1
}
