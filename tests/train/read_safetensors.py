#!/usr/bin/env python3
"""An independent reader of the safetensors format (standard library only),
used to check that cltrain's checkpoints are what PyTorch's safetensors
loader expects: an 8-byte little-endian header length, a JSON header whose
entries have dtype, shape and data_offsets that tile the data area exactly,
8-byte alignment of the data, and finite float32 values (batch norm's
num_batches_tracked: one int64).

usage: read_safetensors.py FILE [NAME=SHAPE ...]   (SHAPE like 256x784)
Prints one line per tensor; exits 1 on any violation."""
import json
import math
import struct
import sys


def main() -> int:
    path = sys.argv[1]
    want = {}
    for arg in sys.argv[2:]:
        name, shape = arg.split("=")
        want[name] = [int(d) for d in shape.split("x")]
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    assert 8 + n <= len(data), "header longer than the file"
    assert (8 + n) % 8 == 0, "data area not 8-byte aligned"
    header = json.loads(data[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", {})
    assert all(isinstance(v, str) for v in meta.values()), "metadata values must be strings"
    body = data[8 + n:]
    spans = []
    for name, t in header.items():
        count = math.prod(t["shape"]) if t["shape"] else 1
        b, e = t["data_offsets"]
        if name.endswith(".num_batches_tracked"):  # batch norm's step count, as PyTorch keeps it
            assert t["dtype"] == "I64" and t["shape"] == [], f"{name}: {t['dtype']} {t['shape']}, want I64 []"
            assert e - b == 8, f"{name}: {e - b} bytes for one int64"
            (steps,) = struct.unpack("<q", body[b:e])
            assert steps >= 0, f"{name}: {steps} steps"
            spans.append((b, e, name))
            print(f"{name} [] {steps}")
            continue
        assert t["dtype"] == "F32", f"{name}: dtype {t['dtype']}"
        assert e - b == 4 * count, f"{name}: {e - b} bytes for {count} floats"
        values = struct.unpack(f"<{count}f", body[b:e])
        assert all(math.isfinite(v) for v in values), f"{name}: non-finite values"
        spans.append((b, e, name))
        print(f"{name} {t['shape']} mean|x| {sum(abs(v) for v in values) / max(count, 1):.4g}")
    spans.sort()
    pos = 0
    for b, e, name in spans:
        assert b == pos, f"{name}: starts at {b}, expected {pos} (gap or overlap)"
        pos = e
    assert pos == len(body), f"data area has {len(body) - pos} stray bytes"
    for name, shape in want.items():
        assert name in header, f"missing tensor {name}"
        assert header[name]["shape"] == shape, f"{name}: shape {header[name]['shape']}, want {shape}"
    print("metadata:", ", ".join(f"{k}={v[:20]!r}" for k, v in sorted(meta.items())))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (AssertionError, ValueError, KeyError, struct.error) as e:
        print(f"{sys.argv[1]}: {e}", file=sys.stderr)
        sys.exit(1)
