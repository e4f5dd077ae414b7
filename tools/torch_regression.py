#!/usr/bin/env python3
"""torch_regression.py TRAIN.csv TEST.csv - the PyTorch peer of `cltrain train`
on regression CSV files (as tools/make_diabetes.py writes them: a header, the
last column the target, every other column a feature).

It trains the network of tests/train/diabetes_mlp.model (features -> dense
--hidden with ReLU -> dense 1, mean squared error) the way `cltrain train
--schedule constant` does: Adam (betas 0.9/0.999, eps 1e-8, no weight decay)
at a constant --lr, --batch rows per step, the rows reshuffled every epoch and
the last partial batch dropped, PyTorch's default initialization (which
cltrain reproduces), float32. After --epochs it prints one JSON line with the
test split's loss (the mean squared error), RMSE (its square root) and MAE,
over every test row, and the same for the training split: the numbers
cltrain's epoch report and JSON log give. The random streams (initial
weights, shuffling) differ from cltrain's, so the two agree statistically:
compare averages over a few --seed values.
"""
import argparse
import json
import math

import numpy as np
import torch


def read(path):
    with open(path) as f:
        next(f)
        rows = [[float(v) for v in line.split(",")] for line in f if line.strip()]
    a = np.array(rows, dtype=np.float32)
    return torch.from_numpy(a[:, :-1].copy()), torch.from_numpy(a[:, -1:].copy())


def metrics(net, x, y):
    with torch.no_grad():
        d = (net(x) - y).double()
    mse = float((d * d).mean())
    return mse, math.sqrt(mse), float(d.abs().mean())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("train")
    ap.add_argument("test")
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(1)
    xtr, ytr = read(a.train)
    xte, yte = read(a.test)
    net = torch.nn.Sequential(torch.nn.Linear(xtr.shape[1], a.hidden), torch.nn.ReLU(),
                              torch.nn.Linear(a.hidden, 1))
    opt = torch.optim.Adam(net.parameters(), lr=a.lr, betas=(0.9, 0.999), eps=1e-8)
    loss_fn = torch.nn.MSELoss()
    g = torch.Generator().manual_seed(a.seed)
    steps = len(ytr) // a.batch
    for _ in range(a.epochs):
        order = torch.randperm(len(ytr), generator=g)
        for s in range(steps):
            idx = order[s * a.batch:(s + 1) * a.batch]
            opt.zero_grad()
            loss = loss_fn(net(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
    tr, te = metrics(net, xtr, ytr), metrics(net, xte, yte)
    print(json.dumps({"seed": a.seed, "epochs": a.epochs, "train_loss": tr[0], "train_rmse": tr[1],
                      "train_mae": tr[2], "test_loss": te[0], "test_rmse": te[1], "test_mae": te[2]}))


if __name__ == "__main__":
    main()
