#!/usr/bin/env python3
"""compare_ckpts.py A B RTOL [KEY=VALUE ...] - two cltrain checkpoints hold
the same tensors (names and shapes) and, per tensor, normwise within RTOL:
||a - b||_2 <= RTOL * ||b||_2, the optimizer state ("optimizer.state")
included. Each KEY=VALUE is a metadata entry B must have. Prints the worst
tensor; exits 1 on any violation. Standard library only.

Normwise, not elementwise, for the reason compare_step.py gives: elements
that pass near zero, or Adam moves of gradients within a few hundred eps of
zero, differ by more than RTOL of themselves through float rounding alone.
"""
import math
import sys

from compare_step import read


def main():
    a, _ = read(sys.argv[1])
    b, meta = read(sys.argv[2])
    rtol = float(sys.argv[3])
    fails = 0
    for kv in sys.argv[4:]:
        key, want = kv.split("=", 1)
        if meta.get(key) != want:
            print(f"FAIL metadata {key}: {meta.get(key)!r}, want {want!r}")
            fails += 1
    if sorted(a) != sorted(b):
        print(f"FAIL tensors differ: {sorted(set(a) ^ set(b))}")
        return 1
    worst, worst_name = 0.0, ""
    for name in sorted(a):
        (sa, va), (sb, vb) = a[name], b[name]
        if sa != sb:
            print(f"FAIL {name}: shape {sa} against {sb}")
            fails += 1
            continue
        diff = math.sqrt(sum((x - y) ** 2 for x, y in zip(va, vb)))
        norm = math.sqrt(sum(y * y for y in vb))
        rel = diff / norm if norm > 0 else diff
        if not rel <= rtol:
            print(f"FAIL {name}: relative difference {rel:.3g} (tolerance {rtol:g})")
            fails += 1
        if rel > worst or not rel == rel:
            worst, worst_name = rel, name
    print(f"{len(a)} tensors, largest relative difference {worst:.3g} ({worst_name})")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
