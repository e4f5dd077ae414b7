#!/usr/bin/env python3
"""make_shapes.py OUT.npz [--n N] [--test N] [--size S] [--seed K] - a
segmentation set for cltrain's per-pixel losses: grey images of noise with
one to four filled shapes on them (squares, discs, triangles at random
places, sizes and brightnesses), and a label per pixel: 0 background, 1
square, 2 disc, 3 triangle (a later shape covers an earlier one). Written
as Keras' layout (x_train (N, S, S) uint8, y_train (N, S, S) uint8, x_test,
y_test), which `npz:OUT.npz` reads. Needs NumPy only."""
import argparse

import numpy as np


def draw(rng, s):
    img = rng.normal(0.35, 0.12, (s, s))
    lab = np.zeros((s, s), np.uint8)
    yy, xx = np.mgrid[0:s, 0:s]
    for _ in range(rng.integers(1, 5)):
        kind = int(rng.integers(1, 4))
        r = rng.uniform(0.1, 0.22) * s
        cy, cx = rng.uniform(r, s - r, 2)
        if kind == 1:
            m = (abs(yy - cy) <= r) & (abs(xx - cx) <= r)
        elif kind == 2:
            m = (yy - cy) ** 2 + (xx - cx) ** 2 <= r * r
        else:  # upward triangle: below the apex, between the two sides
            m = (yy >= cy - r) & (yy <= cy + r) & (abs(xx - cx) <= (yy - (cy - r)) / 2)
        img[m] = rng.uniform(0.55, 0.95) + rng.normal(0, 0.05, int(m.sum()))
        lab[m] = kind
    return (np.clip(img, 0, 1) * 255).astype(np.uint8), lab


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--test", type=int, default=400)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    parts = {}
    for name, n in (("train", a.n), ("test", a.test)):
        xs, ys = zip(*(draw(rng, a.size) for _ in range(n)))
        parts[f"x_{name}"], parts[f"y_{name}"] = np.stack(xs), np.stack(ys)
    np.savez_compressed(a.out, **parts)


if __name__ == "__main__":
    main()
