#!/usr/bin/env bash
# test_parallel.sh CLTRAIN [MPIRUN] - data-parallel training under pocl with
# two CPU devices (POCL_DEVICES="pthread pthread"):
#  - two replicas in one process (--device 0:0,0:1) give the losses of one
#    device at the same global batch: an MLP (also with unequal --shares), and
#    a batch-norm CNN with dropout (the zoo's cnn plus two dropouts), whose per-replica batch statistics one
#    device reproduces with --bn-groups 2; a negative control shows that the
#    comparison sees the batch-norm difference when the reference lacks it;
#  - with MPIRUN (a build with MPI): the same for `mpirun -np 2`, a model
#    mismatch between ranks ending the job with an error, and a rank killed
#    mid-run making the job exit non-zero instead of hanging.
#
# Tolerance: the step losses (the running mean the --log JSON lines carry)
# must agree to 1e-6 relative. The runs compute the same mathematics; only
# the float summation order differs (GEMMs and batch-norm sums over 32 rows
# twice plus the host's weighted sum of two gradients, against 64 rows at
# once), ~1e-7 relative per step, which SGD carries along. Measured: <= 1e-7
# over 8 steps at lr 0.01 (at lr 0.05 the CNN's early steps amplify it 2-5x
# per step, to 1.5e-5 after 8, so the runs use 0.01). A missed dropout
# offset, a wrong gradient weight or a replica out of step changes the loss
# by > 1e-4; the control (no batch-norm groups) differs by ~2e-3.
set -u
cltrain=$1
mpirun=${2:-}
. "$(dirname "$0")/../lib.sh"
export POCL_DEVICES=${POCL_DEVICES:-"pthread pthread"}
tol=1e-6

if [ ! -d /usr/share/datasets/fashion-mnist ]; then
    echo "Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)"; exit 1
fi
if [ "$("$cltrain" --devices | grep -c '^ *0:[01] ')" -lt 2 ]; then
    echo "needs two OpenCL devices on platform 0 (POCL_DEVICES=\"pthread pthread\")"
    "$cltrain" --devices; exit 1
fi

common=(--limit 512 --test-limit 128 --batch 64 --epochs 1 --log-every 1 --no-progress
        --optimizer sgd --lr 0.01 --schedule constant)

run() { # run NAME ARGS... : trains, logging to $tmp/NAME.jsonl
    local name=$1; shift
    if ! "$cltrain" train "${common[@]}" --log "$tmp/$name.jsonl" "$@" >"$tmp/$name.out" 2>&1; then
        bad "$name: exit non-zero"; sed 's/^/  | /' "$tmp/$name.out" | tail -5; return 1
    fi
}

# compare NAME A B [differ]: the step losses of A and B agree within $tol
# (or, with "differ", disagree by more than 10 x $tol somewhere)
compare() {
    python3 - "$tmp/$2.jsonl" "$tmp/$3.jsonl" "$tol" "${4:-same}" <<'PY'
import json, sys
def losses(p):
    return [json.loads(l)["train_loss"] for l in open(p) if '"step"' in l]
a, b, tol, mode = losses(sys.argv[1]), losses(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
if len(a) != len(b) or len(a) < 4:
    print(f"step counts {len(a)} and {len(b)}"); sys.exit(1)
worst = max(abs(x - y) / max(1.0, abs(x)) for x, y in zip(a, b))
print(f"{len(a)} steps, largest relative difference {worst:.3g} (tolerance {tol:g})")
if mode == "same":
    sys.exit(0 if worst <= tol else 1)
sys.exit(0 if worst > 10 * tol else 1)
PY
}

check() { # check NAME A B [differ]
    local out
    if out=$(compare "$@"); then ok "$1: $out"; else bad "$1: $out"; fi
}

# 1. MLP: two replicas of 32 rows == one device of 64, equal and unequal shares
run mlp1 --model mlp --device 0:0 &&
run mlp2 --model mlp --device 0:0,0:1 --out "$tmp/mlp2.ckpt" &&
check "mlp, 2 devices vs 1" mlp1 mlp2
run mlp31 --model mlp --device 0:0,0:1 --shares 3,1 && check "mlp, shares 3:1 (48 + 16 rows) vs 1 device" mlp1 mlp31
if [ "$(grep -c '"event": "epoch"' "$tmp/mlp2.jsonl" 2>/dev/null)" = 1 ] && [ -s "$tmp/mlp2.ckpt" ] &&
   "$cltrain" eval --weights "$tmp/mlp2.ckpt" --limit 128 >/dev/null 2>&1; then
    ok "2 devices: one epoch line, one checkpoint that evaluates"
else
    bad "2 devices: log or checkpoint"
fi

# 2. CNN with batch norm and dropout: per-replica statistics == one device
#    with two batch-norm groups; plain one device must differ. The zoo's cnn
#    has no dropout, so this is it with two.
cnnd=$tmp/cnn_dropout.txt
cnn_with_dropout "$cltrain" "$cnnd"
run cnn1g --model "$cnnd" --device 0:0 --bn-groups 2 &&
run cnn2 --model "$cnnd" --device 0:0,0:1 &&
check "cnn+bn, 2 devices vs 1 device with --bn-groups 2" cnn1g cnn2
run cnn1 --model "$cnnd" --device 0:0 && check "cnn+bn, 2 devices vs 1 device without groups differ (control)" cnn1 cnn2 differ

# 3. the reduction overlapped with the backward (buckets, the default) and
#    after it (CLTRAIN_REDUCE_OVERLAP=0) sum the same floats in the same
#    order: the same losses and checkpoints, bit for bit (the cnn's
#    gradients are 3 buckets, the mlp's 2: src/train/bucket.c)
same_bits() { # same_bits NAME A B: A's and B's step losses and checkpoints are identical
    if cmp -s <(grep '"step"' "$tmp/$2.jsonl" | sed 's/, "seconds".*//') \
              <(grep '"step"' "$tmp/$3.jsonl" | sed 's/, "seconds".*//') &&
       cmp -s "$tmp/$2.ckpt" "$tmp/$3.ckpt"; then
        ok "$1: the same losses and checkpoint, bit for bit"
    else
        bad "$1: the losses or checkpoints differ"
    fi
}
run cnn2o --model "$cnnd" --device 0:0,0:1 --out "$tmp/cnn2o.ckpt" &&
CLTRAIN_REDUCE_OVERLAP=0 run cnn2s --model "$cnnd" --device 0:0,0:1 --out "$tmp/cnn2s.ckpt" &&
same_bits "cnn+bn, 2 devices, reduction overlapped vs after the backward" cnn2o cnn2s
CLTRAIN_REDUCE_OVERLAP=0 run mlp2s --model mlp --device 0:0,0:1 --out "$tmp/mlp2s.ckpt" &&
same_bits "mlp, 2 devices, reduction overlapped vs after the backward" mlp2 mlp2s
if CLTRAIN_REDUCE_OVERLAP=yes "$cltrain" train "${common[@]}" --model mlp --device 0:0,0:1 >"$tmp/env.out" 2>&1 ||
   ! grep -q "CLTRAIN_REDUCE_OVERLAP=yes: not 0 or 1" "$tmp/env.out"; then
    bad "CLTRAIN_REDUCE_OVERLAP=yes: not refused"; tail -3 "$tmp/env.out"
else
    ok "CLTRAIN_REDUCE_OVERLAP=yes: refused with a message"
fi

if [ -z "$mpirun" ]; then
    echo "$checks checks, $fails failed (no MPI: the mpirun cases are not built)"
    [ "$fails" -eq 0 ]; exit
fi

# 4. MPI on localhost: two ranks of one device each == one process
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=("$mpirun" -np 2 --oversubscribe)
mrun() { # mrun NAME ARGS...
    local name=$1; shift
    if ! "${mpi[@]}" "$cltrain" train "${common[@]}" --log "$tmp/$name.jsonl" "$@" >"$tmp/$name.out" 2>&1; then
        bad "$name: mpirun exit non-zero"; sed 's/^/  | /' "$tmp/$name.out" | tail -8; return 1
    fi
}
mrun mpi_mlp --model mlp --device 0:0 --out "$tmp/mpi.ckpt" && check "mlp, mpirun -np 2 vs 1 process" mlp1 mpi_mlp
mrun mpi_cnn --model "$cnnd" --device 0:0 && check "cnn+bn, mpirun -np 2 vs 1 device with --bn-groups 2" cnn1g mpi_cnn
mrun mpi_cnn4 --model "$cnnd" --device 0:0,0:1 --bn-groups 1 --out "$tmp/mpi_cnn4.ckpt" &&
run cnn1g4 --model "$cnnd" --device 0:0 --bn-groups 4 &&
check "cnn+bn, mpirun -np 2 x 2 devices vs 1 device with --bn-groups 4" cnn1g4 mpi_cnn4
# each bucket one MPI_Iallreduce as the backward runs, against the whole
# arena's sum after it
CLTRAIN_REDUCE_OVERLAP=0 mrun mpi_cnn4s --model "$cnnd" --device 0:0,0:1 --bn-groups 1 --out "$tmp/mpi_cnn4s.ckpt" &&
same_bits "cnn+bn, mpirun -np 2 x 2 devices, reduction overlapped vs after the backward" mpi_cnn4 mpi_cnn4s

# 5. ranks with different models: an error, not a hang and not a run. Every
#    rank gathers all ranks' model hashes, finds that rank 1 differs, prints
#    so and calls MPI_Abort; Open MPI then kills the other rank, which may not
#    have printed yet (under load it often has not). So the error must come
#    from at least one rank, either one, and the job must end non-zero before
#    the timeout without finishing an epoch. A mismatch that went unnoticed
#    would train (or crash or hang in a gradient sum of the wrong size) and
#    print no such line.
sed 's/out=128/out=64/' <("$cltrain" zoo mlp) >"$tmp/other.model"
timeout 120 "$mpirun" --oversubscribe -np 1 "$cltrain" train "${common[@]}" --model mlp --device 0:0 : \
    -np 1 "$cltrain" train "${common[@]}" --model "$tmp/other.model" --device 0:0 >"$tmp/mismatch.out" 2>&1
rc=$?
n=$(grep -cE "rank [01] of 2: rank 1 trains another model than rank 0" "$tmp/mismatch.out")
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$n" -ge 1 ] && ! grep -q "epoch 1/1" "$tmp/mismatch.out"; then
    ok "model mismatch: exit $rc, the error from $n of 2 ranks (the other may be killed first)"
else
    bad "model mismatch: exit $rc, $n ranks said so"; sed 's/^/  | /' "$tmp/mismatch.out" | tail -8
fi

# 6. a rank killed mid-run: the job ends non-zero (bound: 60 s, a hang guard)
"${mpi[@]}" "$cltrain" train --model mlp --device 0:0 --limit 4096 --test-limit 128 --batch 64 --epochs 1000 \
    --log-every 1 --no-progress --log "$tmp/kill.jsonl" >"$tmp/kill.out" 2>&1 &
job=$!
victim=""
for _ in $(seq 1 600); do
    victim=$(sed -n 's/^cltrain: rank 1 of 2: pid \([0-9]*\),.*/\1/p' "$tmp/kill.out" | head -1)
    steps=$(grep -c '"step"' "$tmp/kill.jsonl" 2>/dev/null)
    if [ -n "$victim" ] && [ "${steps:-0}" -ge 3 ]; then break; fi
    sleep 0.1
done
if [ -z "$victim" ]; then
    bad "rank death: the run did not start"; kill "$job" 2>/dev/null; wait "$job"
else
    kill -9 "$victim"
    t0=$(date +%s)
    for _ in $(seq 1 600); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$job" 2>/dev/null; then
        bad "rank death: the job still runs 60 s after rank 1 was killed"; kill "$job"; wait "$job"
    else
        wait "$job"; rc=$?
        if [ "$rc" -ne 0 ]; then
            ok "rank death: mpirun exit $rc after $(( $(date +%s) - t0 )) s"
            grep -v '^{' "$tmp/kill.out" | grep -iE "signal|killed|abort|exited" | head -3 | sed 's/^/  | /'
        else
            bad "rank death: exit 0"
        fi
    fi
fi

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ]
