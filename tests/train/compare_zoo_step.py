#!/usr/bin/env python3
"""compare_zoo_step.py REF CKPT LOSS [-v] - one SGD step of cltrain against the
digest of PyTorch's float64 step that tools/record_zoo_step.py wrote (REF).

CKPT is cltrain's checkpoint after the step; LOSS the step's loss from its
log. Each check is normwise per tensor: the sampled elements (||W[idx] -
ref|| against ||ref||), the whole tensor's norm (from the sum of squares)
and its sum (against the sum of |ref|: a sum may cancel to near zero).
1. The loss within RTOL = 1e-4 relative.
2. Every tensor after the step (parameters and batch norm's running
   statistics) within RTOL, but for the parameters that start at zero (batch
   norm's biases): after the step they are minus lr times their gradient,
   and are held to the gradients' bound.
3. Every parameter's gradient within GTOL = 5e-2. After SGD's first step the
   momentum buffer, which the checkpoint holds as `optimizer.state` (one
   float per parameter, in the checkpoint's order of the trainable tensors),
   is the gradient plus weight decay times the weight, with no cancellation;
   the reference keeps the same sum. The weights alone would hardly test the
   gradients: at the step's lr (1e-3) most weights move by 1e-4 to 1e-6 of
   themselves, and a batch norm weight of 1 by less than float32's spacing
   at 1. Why GTOL is not 1e-4 (ReLU6's kinks) and what was measured:
   tests/train/test_zoo_step.sh.
A tensor that is zero in exact arithmetic has no relative error: a batch
norm's bias followed by a convolution and another batch norm (its gradient
cancels: 1e-16 in float64, 1e-9 in float32), a running mean of channels
that a batch norm has just centred. So each bound has a floor: the bound
times the root-mean-square element of the model's tensors of the same kind
(weight, bias, running_mean, running_var), per element compared.
Standard library only; `compare` is also what tools/record_zoo_step.py runs
on PyTorch's own float32 step.
"""
import json
import math
import struct
import sys
from array import array

RTOL = 1e-4
GTOL = 5e-2


def read(path):
    """{name: array} of a safetensors file's F32, F64 and I64 tensors in the
    file's data order, and its metadata."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    body = data[8 + n:]
    out = {}
    for name, t in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        code = {"F32": "f", "F64": "d", "I64": "q"}.get(t["dtype"])
        if code is None:
            continue
        b, e = t["data_offsets"]
        a = array(code)
        a.frombytes(body[b:e])
        if sys.byteorder != "little":
            a.byteswap()
        out[name] = a
    return out, meta


def trainable(name):
    return not name.endswith((".running_mean", ".running_var", ".num_batches_tracked"))


def gradients(ckpt):
    """{name: memoryview} of each trainable tensor's slice of optimizer.state
    (SGD's momentum buffer after one step: gradient + weight decay x weight)."""
    state = ckpt.get("optimizer.state")
    names = [k for k in ckpt if k != "optimizer.state" and trainable(k)]
    total = sum(len(ckpt[k]) for k in names)
    if state is None or len(state) != total:
        raise ValueError(f"optimizer.state has {len(state) if state is not None else 'no'} floats, "
                         f"the trainable tensors {total}: not SGD with momentum's buffer")
    out, at = {}, 0
    for k in names:
        out[k] = memoryview(state)[at:at + len(ckpt[k])]
        at += len(ckpt[k])
    return out


def norm(v):
    return math.sqrt(math.fsum(x * x for x in v))


def check(ref, prefix, name, w):
    """One tensor w against the reference's digest and samples: (error of the
    samples, of the norm, of the sum, each over its relative bound), and the
    reference's sampled norm and count for the floor."""
    s_ref, ss_ref, l1_ref = ref[f"{name}.{prefix}digest"]
    idx, want = ref[f"{name}.index"], ref[f"{name}.{prefix}samples"]
    if max(idx) >= len(w):
        raise ValueError(f"{name}: {len(w)} elements, the reference samples index {max(idx)}")
    d = norm([float(w[i]) - b for i, b in zip(idx, want)])
    nw = math.sqrt(math.fsum(float(v) * v for v in w))
    return (d, norm(want)), (abs(nw - math.sqrt(ss_ref)), math.sqrt(ss_ref)), (abs(math.fsum(w) - s_ref), l1_ref), len(idx), len(w)


def compare(ref, meta, got, grads, loss, verbose=False, out=print):
    """ref: the reference's arrays; got, grads: {name: flat sequence} after the
    step and the gradients. Prints a line per failed (or, verbose, every)
    tensor and a summary; returns the failures."""
    fails = 0
    want_loss = float(meta["loss"])
    rel = abs(loss - want_loss) / abs(want_loss)
    fails += rel > RTOL
    out(f"{'ok  ' if rel <= RTOL else 'FAIL'} loss: cltrain {loss:.8f}, reference {want_loss:.8f}, "
        f"relative {rel:.2e} (bound {RTOL:g})")
    names = [k[:-len(".digest")] for k in ref if k.endswith(".digest")]
    # batch norm's count of batches, an integer: exactly the reference's
    # (a model without batch norm, vit: none in either)
    tracked = [k for k in got if k.endswith(".num_batches_tracked")]
    want = meta.get("num_batches_tracked")
    bad = [k for k in tracked if want is None or [int(v) for v in got[k]] != [int(want)]]
    fails += len(bad) + ((not tracked) != (want is None))
    out(f"{'ok  ' if (not tracked) == (want is None) and not bad else 'FAIL'} num_batches_tracked: "
        f"{len(tracked) - len(bad)} of {len(tracked)} tensors are {want}" +
        (f" ({bad[0]}: {list(got[bad[0]])})" if bad else ""))
    rows = []
    for name in names:
        for what, prefix, src in (("after", "", got), ("gradient", "grad_", grads)):
            if what == "gradient" and not trainable(name):
                continue
            if name not in src:
                out(f"FAIL {name}: no {what} in the checkpoint")
                fails += 1
                continue
            # a parameter that starts at zero (batch norm's bias) is, after
            # the step, minus lr times its gradient: its bound is the gradients'
            tol = GTOL if what == "gradient" or (trainable(name) and ref[f"{name}.init_norm"][0] < 0.5 * norm(
                ref[f"{name}.samples"])) else RTOL
            rows.append((name, what, tol, *check(ref, prefix, name, src[name])))
    # the floor: 1e-4 of the RMS element of the kind, per element compared
    rms = {}
    for name, what, _, (_, r), _, _, k, _ in rows:
        acc = rms.setdefault((what, name.rsplit(".", 1)[1]), [0.0, 0])
        acc[0] += r * r
        acc[1] += k
    worst = {RTOL: (0.0, ""), GTOL: (0.0, "")}
    for name, what, tol, samples, nrm, sm, k, n in rows:
        ms, count = rms[(what, name.rsplit(".", 1)[1])]
        typ = math.sqrt(ms / count) if count else 0.0
        # each error relative to its reference (with the floor): <= RTOL passes
        e = [err / den if den else err for err, den in
             ((samples[0], samples[1] + typ * math.sqrt(k)), (nrm[0], nrm[1] + typ * math.sqrt(n)),
              (sm[0], sm[1] + typ * n))]
        ok = max(e) <= tol
        fails += not ok
        if max(e) > worst[tol][0]:
            worst[tol] = (max(e), f"{name} {what}")
        if verbose or not ok:
            out(f"{'ok  ' if ok else 'FAIL'} {name} {what} ({n}): samples {e[0]:.2e} of {samples[1]:.3g}, "
                f"norm {e[1]:.2e} of {nrm[1]:.3g}, sum {e[2]:.2e} (bound {tol:g})")
    strict = sum(1 for r in rows if r[2] == RTOL)
    grads = sum(1 for r in rows if r[1] == "gradient")
    out(f"{len(names)} tensors: {strict} after the step within {RTOL:g} (worst {worst[RTOL][0]:.2e}, "
        f"{worst[RTOL][1]}); {grads} gradients and {len(rows) - strict - grads} tensors that start at zero "
        f"within {GTOL:g} (worst {worst[GTOL][0]:.2e}, {worst[GTOL][1]}); {fails} failed")
    return fails


def main():
    ref, meta = read(sys.argv[1])
    ckpt, _ = read(sys.argv[2])
    try:
        grads = gradients(ckpt)
    except ValueError as e:
        print(f"FAIL {e}")
        return 1
    fails = compare(ref, meta, ckpt, grads, float(sys.argv[3]), "-v" in sys.argv[4:])
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
