#!/usr/bin/python3
"""golden_to_sequence.py - PyTorch golden vectors for the to_sequence layer.

Writes tests/golden/data/to_sequence_0.safetensors (or into the directory
given as the only argument): images x (N, C, H, W) as the sequence a vision
transformer reads, x.flatten(2).permute(2, 0, 1), (H W, N, C) time-major as
cltrain keeps sequences, with PyTorch's autograd for dx.

The file holds
    x   (N, C, H, W) F32   the images
    y   (T, N, C)    F32   the sequence, T = H W
    dy  (T, N, C)    F32   the upstream gradient
    dx  (N, C, H, W) F32   the gradient of sum(y * dy) with respect to x
and the metadata {"op": "to_sequence"}. Shapes are no multiple of the
kernels' 16 x 16 tiles. torch is Debian's python3-torch.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_seqpool import write_safetensors  # noqa: E402


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden", "data")
    gen = torch.Generator().manual_seed(11)
    x = torch.randn(3, 19, 5, 7, generator=gen, requires_grad=True)
    y = x.flatten(2).permute(2, 0, 1)
    dy = torch.randn(y.shape, generator=gen)
    (y * dy).sum().backward()
    write_safetensors(os.path.join(out, "to_sequence_0.safetensors"),
                      [("x", x), ("y", y), ("dy", dy), ("dx", x.grad)], {"op": "to_sequence"})


if __name__ == "__main__":
    main()
