#!/usr/bin/env python3
"""make_diabetes.py OUT [--seed S] - scikit-learn's diabetes data (442
patients, 10 features, a disease-progression target from 25 to 346; it
ships inside the package) as train/test CSV files for cltrain's
csv:FILE:target=target spec and the PyTorch peer (tools/torch_regression.py).

A seeded 80/20 split (numpy's RandomState(S).permutation; the first 88 rows
of it are the test split). Features and target are standardized with the
training part's mean and population standard deviation, so every network
trains on numbers near unit scale and the test split leaks nothing into the
scaling. Writes OUT/train.csv and OUT/test.csv (header age,sex,bmi,bp,s1..s6,
target; %.9g keeps every float32 exactly) and OUT/scale.json with the
target's training mean and std: an RMSE or MAE on the standardized target
times std is the same figure in the original units (disease progression).
"""
import argparse
import json
import os

import numpy as np
from sklearn.datasets import load_diabetes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    d = load_diabetes(scaled=True)
    x, y = d.data.astype(np.float64), d.target.astype(np.float64)
    order = np.random.RandomState(a.seed).permutation(len(y))
    ntest = int(round(0.2 * len(y)))
    test, train = order[:ntest], order[ntest:]
    xm, xs = x[train].mean(0), x[train].std(0)
    ym, ys = y[train].mean(), y[train].std()
    os.makedirs(a.out, exist_ok=True)
    names = list(d.feature_names) + ["target"]
    for split, rows in (("train", train), ("test", test)):
        xz = (x[rows] - xm) / xs
        yz = (y[rows] - ym) / ys
        with open(os.path.join(a.out, split + ".csv"), "w") as f:
            f.write(",".join(names) + "\n")
            for r in range(len(rows)):
                vals = [float(np.float32(v)) for v in xz[r]] + [float(np.float32(yz[r]))]
                f.write(",".join("%.9g" % v for v in vals) + "\n")
    with open(os.path.join(a.out, "scale.json"), "w") as f:
        json.dump({"target_mean": ym, "target_std": ys, "train": len(train), "test": len(test),
                   "seed": a.seed}, f)
    print(json.dumps({"train": len(train), "test": len(test), "target_mean": ym, "target_std": ys}))


if __name__ == "__main__":
    main()
