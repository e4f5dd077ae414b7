#!/usr/bin/env python3
"""compare_step.py REF CKPT LOSS [-v] - one training step of cltrain against a
reference step (tools/pytorch_gpt.py step): the loss, and every parameter
tensor of REF against the same-named tensor of cltrain's checkpoint CKPT.

Tolerance, 1e-4 relative, normwise for each tensor: ||cltrain - ref||_2 <=
1e-4 * ||ref||_2. The reference is computed in float64 and cltrain in
float32. After one AdamW step an element has moved by lr * g / (|g| + eps)
(+ weight decay), which is exact in sign and near-exact in size wherever
|g| >> eps = 1e-8; where |g| is within a few hundred eps, float32 rounding of
a gradient that is a sum of 8192 cancelling terms changes the move by up to
a few percent of lr (measured: up to 1.8e-5 = 1.8% of lr in 0.2% of the
elements of a dense weight on the GPU class, whose GEMM sums in another
order). Elementwise relative bounds would fail on those elements and on the
ones that pass near zero; the norm does not, and still fails on any wrong
sign of a move (2 lr = 2e-3) in all but the two embedding tables: every
other tensor has ||ref|| <= 14, so one wrong element is >= 1.4e-4 of it; wte
and wpe (N(0, 1) init, ||ref|| 181 and 128) need ten and seven. Measured: worst tensor 1.0e-5
(CPU class) and 1.04e-5 (GPU class), 10x inside the bound. Also printed:
each tensor's largest elementwise difference relative to its largest value.
Standard library only.
"""
import json
import struct
import sys
from array import array


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    body = data[8 + n:]
    out = {}
    for name, t in header.items():
        if t["dtype"] != "F32":
            continue
        b, e = t["data_offsets"]
        a = array("f")
        a.frombytes(body[b:e])
        if sys.byteorder != "little":
            a.byteswap()
        out[name] = (t["shape"], a)
    return out, meta


def main():
    ref, meta = read(sys.argv[1])
    got, _ = read(sys.argv[2])
    loss = float(sys.argv[3])
    rtol = 1e-4
    fails = 0
    want_loss = float(meta["loss"])
    rel = abs(loss - want_loss) / abs(want_loss)
    ok = rel <= rtol
    fails += not ok
    print(f"{'ok  ' if ok else 'FAIL'} loss: cltrain {loss:.8f}, reference {want_loss:.8f}, "
          f"relative {rel:.2e} (bound {rtol:g})")
    worst = 0.0
    for name, (shape, r) in ref.items():
        if name not in got:
            print(f"FAIL {name}: not in the cltrain checkpoint")
            fails += 1
            continue
        gshape, g = got[name]
        if gshape != shape:
            print(f"FAIL {name}: shape {gshape}, reference {shape}")
            fails += 1
            continue
        norm = sum(v * v for v in r) ** 0.5
        dnorm = sum((a - b) ** 2 for a, b in zip(g, r)) ** 0.5
        scale = max(abs(v) for v in r)
        dmax = max(abs(a - b) for a, b in zip(g, r))
        rel = dnorm / norm if norm else dnorm
        worst = max(worst, rel)
        ok = rel <= rtol
        fails += not ok
        if not ok or "-v" in sys.argv[4:]:
            print(f"{'ok  ' if ok else 'FAIL'} {name} {shape}: ||difference|| {rel:.2e} of "
                  f"||reference|| {norm:.3g}; largest difference {dmax:.3g} = "
                  f"{dmax / scale if scale else dmax:.2e} of its largest value")
    print(f"{len(ref)} tensors, {sum(len(r) for _, r in ref.values())} parameters; worst "
          f"tensor {worst:.2e} normwise (bound {rtol:g}); {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
