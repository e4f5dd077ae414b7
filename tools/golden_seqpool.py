#!/usr/bin/python3
"""golden_seqpool.py - PyTorch golden vectors for the seqpool layer.

Writes tests/golden/data/seqpool_0..2.safetensors (or into the directory
given as the only argument): mean, max and last pooling of a sequence
x (T, N, F) over time, ignoring padding, with PyTorch's autograd for dx.

Each file holds
    x       (T, N, F) F32   the sequence, time-major
    tokens  (T, N)    I64   token ids; 0 is the pad id (a padding position)
    y       (N, F)    F32   the pooled vectors
    dy      (N, F)    F32   the upstream gradient
    dx      (T, N, F) F32   the gradient of sum(y * dy) with respect to x
and the metadata {"op": "seqpool", "mode": "mean" | "max" | "last"}.
Every file has padding and one sample that is all padding (zeros forward,
a zero gradient). max takes torch.max over the real positions, which
routes the gradient to the first maximum; last takes each sample's latest
real position (the files of "last" are padded at the end, as text is).

The safetensors files are written by a small standard-library writer (an
8-byte little-endian header length, the JSON header padded with spaces to
a multiple of 8, then the tensors' bytes), so the safetensors package is
not needed; torch is Debian's python3-torch.
"""
import json
import os
import struct
import sys

import torch

DTYPES = {torch.float32: ("F32", "f"), torch.int64: ("I64", "q")}


def write_safetensors(path, tensors, metadata):
    """tensors: a list of (name, tensor); metadata: a dict of strings."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors:
        t = t.detach().contiguous().cpu()
        code, fmt = DTYPES[t.dtype]
        data = struct.pack("<%d%s" % (t.numel(), fmt), *t.flatten().tolist())
        header[name] = {"dtype": code, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def seqpool(mode, x, real):
    """y (N, F) from x (T, N, F) over the positions where real (T, N) holds."""
    T, N, F = x.shape
    rows = []
    for n in range(N):
        idx = real[:, n].nonzero().flatten()
        if idx.numel() == 0:
            rows.append(torch.zeros(F, dtype=x.dtype))
        elif mode == "mean":
            rows.append(x[idx, n, :].mean(dim=0))
        elif mode == "max":
            rows.append(x[idx, n, :].max(dim=0).values)
        else:
            rows.append(x[idx[-1], n, :])
    return torch.stack(rows)


def tokens_for(gen, mode, T, N, empty):
    """Token ids (T, N): random padding, or padded at the end for "last";
    sample `empty` is all padding."""
    ids = torch.randint(1, 1000, (T, N), generator=gen)
    if mode == "last":
        lengths = torch.randint(1, T + 1, (N,), generator=gen)
        lengths[0] = T  # one full sequence
        pad = torch.arange(T)[:, None] >= lengths[None, :]
    else:
        pad = torch.rand(T, N, generator=gen) < 0.4
        pad[:, 0] = False  # one sample without padding
    pad[:, empty] = True
    return torch.where(pad, torch.zeros_like(ids), ids)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "tests", "golden", "data")
    cases = [("mean", 7, 5, 6), ("max", 6, 4, 9), ("last", 8, 5, 3)]
    for k, (mode, T, N, F) in enumerate(cases):
        gen = torch.Generator().manual_seed(1000 + k)
        x = torch.randn(T, N, F, generator=gen, dtype=torch.float32)
        tokens = tokens_for(gen, mode, T, N, empty=N - 1)
        dy = torch.randn(N, F, generator=gen, dtype=torch.float32)
        x.requires_grad_(True)
        y = seqpool(mode, x, tokens != 0)
        (y * dy).sum().backward()
        path = os.path.normpath(os.path.join(out, "seqpool_%d.safetensors" % k))
        write_safetensors(path, [("x", x), ("tokens", tokens), ("y", y), ("dy", dy), ("dx", x.grad)],
                          {"op": "seqpool", "mode": mode})
        print("wrote %s (%s, T=%d N=%d F=%d)" % (path, mode, T, N, F))


if __name__ == "__main__":
    main()
