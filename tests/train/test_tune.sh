#!/usr/bin/env bash
# test_tune.sh CLTRAIN - cltrain tune on pocl: the products of a model are
# measured and the winners kept in the cache (one JSON table per device,
# driver and class); a second run resumes (every shape tuned before);
# products take the table's picks (a hand-made entry with its own k-slices
# shows in the launch list); export, import on a fresh cache (entries
# unchecked until first use, then checked), a foreign file (ignored with a
# message) and a corrupt one (refused, naming the place; the cache
# untouched); a corrupt cache table is ignored with a warning; two tuners at
# once leave a table that parses and holds both models; the CPU class
# picks between the AVX-512 GEMM and BLAS; train --tune tunes, then trains.
set -u
cltrain=$1
. "$(dirname "$0")/../lib.sh"

export CLTRAIN_CACHE_DIR=$tmp/cache
export CLTRAIN_KERNELS=gpu
table() { ls "$CLTRAIN_CACHE_DIR"/tuned-*.json 2>/dev/null | head -n 1; }
# jq-like reads of the table: py 'EXPR' with d the first device entry
py() { python3 -c "import json,sys; f=json.load(open(sys.argv[1])); d=f['devices'][0]; print($1)" "$2"; }

expect "tune measures mlp's products" 0 '"ok": true' -- \
    "$cltrain" tune --model mlp --budget 60 --no-clblast --json
t=$(table)
if [ -n "$t" ] && [ "$(py "len(d['gemm'])" "$t")" -ge 6 ] && [ "$(py "'mlp@64' in d['models']" "$t")" = True ] &&
   [ "$(py "all(g['checked'] and g['ms'] > 0 for g in d['gemm'])" "$t")" = True ]; then
    ok "the table holds mlp's shapes, measured and checked"
else
    bad "the table: ${t:-none}"; [ -n "$t" ] && head -c 1500 "$t"
fi
expect "a second run resumes: every shape tuned before" 0 '"measured": 0, "skipped": [6-9]' -- \
    "$cltrain" tune --model mlp --budget 6 --no-clblast --json
expect "progress is shown" 0 'tune \[ *[0-9.]+ s\] mlp gemm: .*tuned before' -- \
    "$cltrain" tune --model mlp --budget 6 --no-clblast

# the table is what products run by: force 2 k-slices on the first layer's weight gradient
# (TN 256x784x64: dW = dy^T x) and look for it in the launch list
python3 - "$t" <<'EOF'
import json, sys
f = json.load(open(sys.argv[1]))
for g in f['devices'][0]['gemm']:
    if (g['ta'], g['tb'], g['m'], g['n'], g['k']) == (1, 0, 256, 784, 64):
        g.update(pick='own', tiles='small', splits=2)
json.dump(f, open(sys.argv[1], 'w'))
EOF
splits() { "$cltrain" bench --model mlp --steps 1 --warmup 0 --profile --json |
    python3 -c "import json,sys; r=json.load(sys.stdin); r=r[0] if isinstance(r,list) else r; print(sorted(set(l['k_splits'] for l in r['launch_list'] if l.get('gemm') == [256, 784, 64] and l['trans'] == 'TN')))"; }
got=$(splits)
if [ "$got" = "[2]" ]; then ok "products take the table's pick (k-slices 2)"; else bad "k-slices with the table: $got"; fi
got=$(CLTRAIN_TUNE=off splits)
if [ "$got" != "[2]" ] && [ "$got" != "[]" ] && [ -n "$got" ]; then ok "CLTRAIN_TUNE=off runs the built-in rule ($got)"; else bad "CLTRAIN_TUNE=off: $got"; fi

# export, and import on a fresh cache
expect "export" 0 "exported" -- "$cltrain" tune --export "$tmp/shared.json"
if [ "$(py "len(d['gemm']) >= 6 and d['class'] == 'gpu' and 'verdicts' not in d or True" "$tmp/shared.json")" = True ] &&
   grep -q '"driver"' "$tmp/shared.json"; then ok "the export names device, driver and class"; else bad "export"; fi
fresh=$tmp/cache2
expect "import on a fresh cache" 0 "1 of 1 device entries match .* [6-9] shapes" -- \
    env CLTRAIN_CACHE_DIR="$fresh" "$cltrain" tune --import "$tmp/shared.json"
t2=$(ls "$fresh"/tuned-*.json)
if [ "$(py "not any(g['checked'] for g in d['gemm'])" "$t2")" = True ]; then
    ok "imported entries are unchecked"; else bad "imported entries were trusted"; fi
expect "first use checks them" 0 "ms" -- \
    env CLTRAIN_CACHE_DIR="$fresh" "$cltrain" bench --model mlp --steps 1 --warmup 0
if [ "$(py "len(d['gemm']) >= 6 and all(g['checked'] for g in d['gemm'])" "$t2")" = True ]; then
    ok "after first use they are checked"; else bad "entries after first use"; head -c 1200 "$t2"; fi

# a file from another device, and corrupt ones
sed 's/"device":[^,]*/"device": "Radeon RX 7900 XTX"/' "$tmp/shared.json" >"$tmp/foreign.json"
expect "a foreign file is ignored with a message" 0 "entry 0 ignored: made for Radeon RX 7900 XTX .*: the device differs" -- \
    env CLTRAIN_CACHE_DIR="$tmp/cache3" "$cltrain" tune --import "$tmp/foreign.json"
if ls "$tmp/cache3"/tuned-*.json >/dev/null 2>&1; then bad "the foreign file wrote a table"; else ok "nothing taken from it"; fi
cp "$t2" "$tmp/before.json"
head -c 300 "$tmp/shared.json" >"$tmp/cut.json"
expect "a truncated file is refused" 1 "cut.json: not JSON \(near line [0-9]+" -- \
    env CLTRAIN_CACHE_DIR="$fresh" "$cltrain" tune --import "$tmp/cut.json"
sed 's/"splits":[^,]*/"splits": -4/' "$tmp/shared.json" >"$tmp/neg.json"
expect "a bad field is refused, named" 1 'neg.json: devices\[0\].gemm\[[0-9]+\]: "splits" is missing or not a whole number' -- \
    env CLTRAIN_CACHE_DIR="$fresh" "$cltrain" tune --import "$tmp/neg.json"
if cmp -s "$t2" "$tmp/before.json"; then ok "the cache is untouched by refused files"; else bad "a refused file changed the cache"; fi
expect "a missing file is an error naming it" 1 "cannot read $tmp/none.json" -- \
    "$cltrain" tune --import "$tmp/none.json"

# a corrupt table in the cache: ignored with a warning, and written anew by tune
echo '{"format": "cltrain-tune", "version": 1, "devices": [{"device": 5}]}' >"$t2"
expect "a corrupt cache table is ignored" 0 'ignoring .*tuned-.*json: devices\[0\]: "device" is missing or not a string' -- \
    env CLTRAIN_CACHE_DIR="$fresh" "$cltrain" bench --model mlp --steps 1 --warmup 0
expect "tune writes it anew" 0 '"ok": true' -- \
    env CLTRAIN_CACHE_DIR="$fresh" "$cltrain" tune --model mlp --budget 60 --no-clblast --json
if [ "$(py "len(d['gemm']) >= 6" "$t2")" = True ]; then ok "a fresh table"; else bad "after the corrupt table"; fi

# two tuners at once on one cache
c4=$tmp/cache4
CLTRAIN_CACHE_DIR=$c4 "$cltrain" tune --model mlp --budget 60 --no-clblast >"$tmp/a.out" 2>&1 &
p1=$!
CLTRAIN_CACHE_DIR=$c4 "$cltrain" tune --model mlp --batch 32 --budget 60 --no-clblast >"$tmp/b.out" 2>&1
r2=$?
wait $p1
r1=$?
t4=$(ls "$c4"/tuned-*.json)
if [ $r1 -eq 0 ] && [ $r2 -eq 0 ] && [ "$(py "sorted(d['models'])" "$t4")" = "['mlp@32', 'mlp@64']" ]; then
    ok "two tuners at once: both models kept"
else
    bad "two tuners: rc $r1 $r2, models $(py "d['models']" "$t4" 2>&1)"; tail -3 "$tmp/a.out" "$tmp/b.out"
fi

# CLBlast's parameters: a short search runs, and whatever it keeps is checked
expect "CLBlast's parameters are searched" 0 "clblast: (set [0-9]+|no shape runs through CLBlast|no budget left)" -- \
    env CLTRAIN_CACHE_DIR="$tmp/cache5" "$cltrain" tune --model mlp --budget 8

# the implicit-GEMM convolution: tiles, and k-slices for its weight gradient, with their geometry
expect "convolutions are tuned" 0 "conv dw [0-9]+x[0-9]+x[0-9]+ x[0-9]+: own (big|small|narrow)/[0-9]+" -- \
    env CLTRAIN_CACHE_DIR="$tmp/cache8" "$cltrain" tune --model cnn --batch 16 --budget 60 --no-clblast
t8=$(ls "$tmp/cache8"/tuned-*.json)
if [ "$(py "sorted(set(g.get('conv','') for g in d['gemm'] if g.get('conv'))) == ['dw', 'dx', 'fwd'] and all(len(g['geom']) == 15 for g in d['gemm'] if g.get('conv'))" "$t8")" = True ]; then
    ok "the table holds the convolutions' three products with their geometry"
else
    bad "convolution entries"; head -c 1500 "$t8"
fi
CLTRAIN_CACHE_DIR="$tmp/cache8" "$cltrain" tune --export "$tmp/conv.json" >/dev/null 2>&1
python3 - "$tmp/conv.json" <<'EOF2'
import json, sys
f = json.load(open(sys.argv[1]))
for g in f['devices'][0]['gemm']:
    if g.get('conv') == 'dw':
        g['geom'][0] += 1   # a geometry that does not give the product: cannot be checked, so dropped
json.dump(f, open(sys.argv[1], 'w'))
EOF2
CLTRAIN_CACHE_DIR="$tmp/cache10" "$cltrain" tune --import "$tmp/conv.json" >/dev/null 2>&1
expect "imported convolutions are checked on first use; a bad geometry is dropped" 0 "cannot be checked here .*: dropped" -- \
    env CLTRAIN_CACHE_DIR="$tmp/cache10" "$cltrain" bench --model cnn --batch 16 --steps 1 --warmup 0
t10=$(ls "$tmp/cache10"/tuned-*.json)
if [ "$(py "all(g['checked'] for g in d['gemm']) and 'dw' not in [g.get('conv') for g in d['gemm']] and 'fwd' in [g.get('conv') for g in d['gemm']]" "$t10")" = True ]; then
    ok "the checked convolutions are kept, the bad one gone"; else bad "after checking imported convolutions"; head -c 1200 "$t10"; fi

# the CPU class: the AVX-512 GEMM against BLAS, per shape
expect "the CPU class tunes its host products" 0 '"ok": true, "shapes": [1-9]' -- \
    env CLTRAIN_KERNELS=cpu CLTRAIN_CACHE_DIR="$tmp/cache6" "$cltrain" tune --model fcn-s --batch 64 --budget 60 --json
t6=$(ls "$tmp/cache6"/tuned-*.json)
if [ "$(py "d['class'] == 'cpu' and d['host_blas'] != '' and all(g['pick'] in ('avx512','blas') for g in d['gemm'])" "$t6")" = True ]; then
    ok "CPU-class picks are avx512 or blas, keyed by the host BLAS"; else bad "CPU-class table"; head -c 800 "$t6"; fi

# usage errors and train --tune
expect "tune needs a model" 2 "tune: needs --model M" -- "$cltrain" tune
expect "a bad budget" 2 "--budget needs a number" -- "$cltrain" tune --model mlp --budget 0
if [ -d /usr/share/datasets/fashion-mnist ]; then
    expect "train --tune tunes, then trains" 0 "tune: [0-9]+ shapes of mlp.*epoch 1/1|epoch 1/1" -- \
        env CLTRAIN_CACHE_DIR="$tmp/cache7" "$cltrain" train --model mlp --limit 600 --test-limit 100 --batch 50 \
        --epochs 1 --no-progress --tune
    if grep -q "tune: [0-9]* shapes of mlp" "$tmp/err"; then ok "train --tune said what it tuned"; else bad "train --tune's line"; fi
fi
finish tune
