#!/usr/bin/env bash
# test_precision.sh CLTRAIN - --precision through the CLI, CPU class: the mlp
# on 6,000 Fashion-MNIST images for 2 epochs with bf16 and fp16 products
# reaches fp32's test accuracy within 1.5 points (measured 0.1-0.5); fp16
# started at a loss scale of 2^24 overflows, skips its first steps halving
# the scale to 2^21, says so in the epoch line and the --log, and trains on;
# the checkpoint records the precision and the scale, and --resume keeps
# both; fp16 with a learning rate that blows the forward up is a divergence
# (--check-finite's report), not an overflow; the cnn's convolutions in bf16
# (dot-product pairs forced, and rounded operands) train as fp32 does within
# 1.5 points, and so do the mlp's bf16 and fp16 products in the GPU class;
# 16-bit activation storage in the GPU class (below: a mini resnet and a
# mini gpt); bad values are refused by name.
set -u
cltrain=$1
. "$(dirname "$0")/../lib.sh"
common=(--model mlp --epochs 2 --limit 6000 --test-limit 1000 --batch 64 --no-progress)
acc() { sed -n 's/^done: .*test accuracy \([0-9.]*\)%.*/\1/p' "$1"; }
# near WHAT A B: ok when test accuracy A (%) is within 1.5 points of fp32's B
near() {
    if [ -n "$2" ] && [ -n "$3" ] && awk -v a="$2" -v b="$3" 'BEGIN { d = a - b; exit !(d <= 1.5 && d >= -1.5) }'; then
        ok "$1: test accuracy $2% against fp32's $3%"
    else
        bad "$1: test accuracy ${2:-none}% against fp32's ${3:-none}%"
    fi
}
declare -A got
for p in fp32 bf16 fp16; do
    if "$cltrain" train "${common[@]}" --precision $p --out "$tmp/$p.st" >"$tmp/$p.out" 2>&1; then
        got[$p]=$(acc "$tmp/$p.out")
    else
        bad "$p: training failed"; tail -n 5 "$tmp/$p.out" | sed 's/^/  | /'
    fi
done
for p in bf16 fp16; do
    near "$p" "${got[$p]:-}" "${got[fp32]:-}"
done
grep -q "bf16 products" "$tmp/bf16.out" && ok "bf16: the run says so" || bad "bf16: no word of it"
# the cnn (its convolutions take bf16 too: the direct host tiles' pairs or
# rounded operands) in fp32, in bf16 with AVX512_BF16's dot products forced
# (where the CPU has them; else rounded operands) and with rounded operands
cnn=(--model cnn --epochs 1 --limit 3000 --test-limit 1000 --batch 64 --no-progress)
declare -A cg
for v in fp32:avx512 bf16:avx512bf16 bf16:avx512; do
    if env CLTRAIN_HOST_ISA=${v#*:} "$cltrain" train "${cnn[@]}" --precision ${v%%:*} --out "$tmp/cnn.st" \
            >"$tmp/cnn.out" 2>&1; then
        cg[$v]=$(acc "$tmp/cnn.out")
    else
        bad "cnn $v: training failed"; tail -n 5 "$tmp/cnn.out" | sed 's/^/  | /'
    fi
done
for v in bf16:avx512bf16 bf16:avx512; do
    near "cnn, bf16 (CLTRAIN_HOST_ISA=${v#*:})" "${cg[$v]:-}" "${cg[fp32:avx512]:-}"
done
if "$cltrain" train "${common[@]}" --precision fp16 --loss-scale 16777216 --log "$tmp/f16.json" \
        --out "$tmp/f16.st" >"$tmp/f16.out" 2>&1; then
    if grep -q "epoch 1/2.*loss scale 2097152 (3 steps skipped on fp16 overflow, the first 1" "$tmp/f16.out" &&
        grep -q '"loss_scale": 2097152, "skipped_steps": 3' "$tmp/f16.json"; then
        ok "fp16 from 2^24: three overflowing steps skipped, the scale halved to 2^21, reported"
    else
        bad "fp16 from 2^24: the overflows are not reported as expected"; sed 's/^/  | /' "$tmp/f16.out"
    fi
    near "fp16 after the overflows" "$(acc "$tmp/f16.out")" "${got[fp32]:-}"
    python3 "$(dirname "$0")/read_safetensors.py" "$tmp/f16.st" >"$tmp/meta" 2>&1
    grep -q "precision='fp16'" "$tmp/meta" && grep -q "loss_scale='2097152'" "$tmp/meta" &&
        ok "the checkpoint records fp16 and its scale" || { bad "checkpoint metadata"; sed 's/^/  | /' "$tmp/meta"; }
    if "$cltrain" train --resume "$tmp/f16.st" --epochs 3 --limit 6000 --test-limit 1000 --no-progress \
            --out "$tmp/f16b.st" >"$tmp/res.out" 2>&1 &&
        grep -q "epoch 3/3.*loss scale 2097152" "$tmp/res.out"; then
        ok "--resume keeps fp16 and the scale"
    else
        bad "--resume"; tail -n 4 "$tmp/res.out" | sed 's/^/  | /'
    fi
else
    bad "fp16 from 2^24 failed"; tail -n 5 "$tmp/f16.out" | sed 's/^/  | /'
fi
expect "fp16 with a forward that overflows: a divergence" 1 "non-finite values in training" -- \
    "$cltrain" train "${common[@]}" --precision fp16 --optimizer sgd --lr 2 --schedule constant
# the GPU class: its own SGEMM kernels' 16-bit variants, loss scaling as above
for p in bf16 fp16; do
    if env CLTRAIN_KERNELS=gpu "$cltrain" train "${common[@]}" --precision $p >"$tmp/gpu-$p.out" 2>&1 &&
        grep -q "kernels gpu" "$tmp/gpu-$p.out" && grep -q "$p products" "$tmp/gpu-$p.out"; then
        near "GPU class, $p" "$(acc "$tmp/gpu-$p.out")" "${got[fp32]:-}"
    else
        bad "GPU class, $p: training failed or not in the GPU class"; tail -n 5 "$tmp/gpu-$p.out" | sed 's/^/  | /'
    fi
done
# 16-bit activation storage (the GPU class, every layer with a form): the
# plan shows the 16-bit arenas (and none with CLTRAIN_ACT16=0, saying why,
# or in the CPU class; a grouped convolution keeps float32 and says so); a small residual network with every layer type ResNet-56 has
# (tests/train/mini_resnet.model) trains one epoch in bf16 and fp16 to
# fp32's test loss within 0.01 (measured: 1.4e-3 on 46 steps; a store that
# misreads its format or skips the input's conversion is far off: chance is
# 2.30). The mlp above already ran with it (its GPU-class runs).
mini=$(dirname "$0")/mini_resnet.model
for p in bf16 fp16; do
    expect "GPU class, $p: 16-bit activation arenas in the plan" 0 "activations .* MiB $p" -- \
        env CLTRAIN_KERNELS=gpu "$cltrain" train --model "$mini" --precision $p --dry-run
done
for e in "CLTRAIN_KERNELS=gpu CLTRAIN_ACT16=0" "CLTRAIN_KERNELS=cpu"; do
    want='MiB$'
    [ "${e#*ACT16}" != "$e" ] && want='MiB float32 [(]CLTRAIN_ACT16=0[)]$'
    if env $e "$cltrain" train --model "$mini" --precision bf16 --dry-run >"$tmp/plan" 2>&1 &&
        grep -q "^  activations .* $want" "$tmp/plan"; then
        ok "$e: float32 activations in the plan"
    else
        bad "$e: float32 activations in the plan"; grep activations "$tmp/plan" | sed 's/^/  | /'
    fi
done
printf 'input shape=4x8x8\nc1: conv2d out=4 kernel=3 pad=1 groups=2 bias=false\npool: global_avgpool\nfc: dense out=3\nloss: softmax_cross_entropy\n' >"$tmp/grouped.model"
expect "a grouped convolution keeps float32 activations, named" 0 "activations .* MiB float32 [(]layer 'c1' [(]conv2d[)] has no 16-bit form: groups[)]" -- \
    env CLTRAIN_KERNELS=gpu "$cltrain" train --model "$tmp/grouped.model" --precision bf16 --dry-run
tloss() { sed -n 's/^done: .*(loss \([0-9.]*\)).*/\1/p' "$1"; }
# formats WHAT TOL ARGS...: train ARGS in the GPU class in fp32, bf16 and
# fp16; ok where each 16-bit run's held-out loss is within TOL of fp32's
formats() {
    local what=$1 tol=$2 p
    shift 2
    local -A l
    for p in fp32 bf16 fp16; do
        if env CLTRAIN_KERNELS=gpu "$cltrain" train "$@" --precision $p >"$tmp/run-$p.out" 2>&1; then
            l[$p]=$(tloss "$tmp/run-$p.out")
        else
            bad "$what, GPU class, $p: training failed"; tail -n 5 "$tmp/run-$p.out" | sed 's/^/  | /'
        fi
    done
    for p in bf16 fp16; do
        if [ -n "${l[$p]:-}" ] && [ -n "${l[fp32]:-}" ] &&
            awk -v a="${l[$p]}" -v b="${l[fp32]}" -v t="$tol" 'BEGIN { d = a - b; exit !(d <= t && d >= -t) }'; then
            ok "$what, 16-bit activations ($p): held-out loss ${l[$p]} against fp32's ${l[fp32]}"
        else
            bad "$what, 16-bit activations ($p): held-out loss ${l[$p]:-none} against fp32's ${l[fp32]:-none}"
        fi
    done
}
# halved WHAT MODEL MOST: bytes moved per step (bench --profile's count of
# what each launch states it moves, not a timing) at batch 32 in bf16 at
# most MOST times fp32's
halved() {
    local what=$1 model=$2 most=$3 p
    local -A b
    for p in fp32 bf16; do
        if env CLTRAIN_KERNELS=gpu "$cltrain" bench --model "$model" --batch 32 --steps 1 --warmup 0 --profile \
                --json --precision $p >"$tmp/bench-$p.json" 2>"$tmp/bench-$p.err"; then
            b[$p]=$(python3 -c "import json, sys; d = json.load(open(sys.argv[1]))[0]; print(d['bytes_moved'] if d.get('activations') == sys.argv[2] else '')" "$tmp/bench-$p.json" $p)
        fi
        [ -n "${b[$p]:-}" ] || { bad "$what bench $p: no bytes moved with $p activations"; tail -n 3 "$tmp/bench-$p.err" | sed 's/^/  | /'; }
    done
    if [ -n "${b[bf16]:-}" ] && [ -n "${b[fp32]:-}" ] &&
        awk -v a="${b[bf16]}" -v b="${b[fp32]}" -v m="$most" 'BEGIN { exit !(a <= m * b) }'; then
        ok "$what bench: bf16 activations move ${b[bf16]} bytes per step, fp32 ${b[fp32]} (at most ${most}x)"
    else
        bad "$what bench: bf16 moves ${b[bf16]:-?} bytes per step against fp32's ${b[fp32]:-?} (want at most ${most}x)"
    fi
}
# the mini resnet: test loss within 0.01 of fp32's; bytes at most 0.6x
# fp32's (measured 0.47: the float32 parameters are what keeps it above
# one half)
formats "mini resnet" 0.01 --model "$mini" --epochs 1 --limit 3000 --test-limit 1000 --batch 64 --no-progress
halved "mini resnet" "$mini" 0.6
# a transformer (mini_gpt.model: embedding, positions, layer norms,
# attention, gelu dense, residual adds) takes the storage too: one epoch on
# generated sentences in each format ends within 0.02 nats of fp32's
# held-out loss (measured 2.4314 fp32, 2.4304 bf16, 2.4314 fp16), and its
# bytes moved per step at bf16 stay at most 0.6x fp32's (measured 0.55)
gpt=$(dirname "$0")/mini_gpt.model
python3 - "$tmp" <<'PY'
import random, sys
r = random.Random(7)
words = "the quick brown fox jumps over a lazy dog and then runs home again".split()
for name, n in (("train", 1500), ("test", 150)):
    with open(f"{sys.argv[1]}/lm.{name}", "w") as f:
        for _ in range(n):
            f.write(" ".join(r.choice(words) for _ in range(8)) + ".\n")
PY
lm=(--model "$gpt" --data "text:$tmp/lm.train:seq=32:test=$tmp/lm.test" --epochs 1 --batch 32 --lr 3e-3 --no-progress)
expect "mini gpt, GPU class: bf16 activation arenas in the plan" 0 "activations .* MiB bf16" -- \
    env CLTRAIN_KERNELS=gpu "$cltrain" train "${lm[@]}" --precision bf16 --dry-run
formats "mini gpt" 0.02 "${lm[@]}"
halved "mini gpt" "$gpt" 0.6
expect "an unknown precision" 2 "fp32, bf16 or fp16" -- "$cltrain" train --precision fp8
expect "a loss scale that is no power of two" 1 "power of two" -- \
    "$cltrain" train "${common[@]}" --precision fp16 --loss-scale 3
finish precision
