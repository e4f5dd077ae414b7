#!/usr/bin/python3
"""pytorch_train.py - a PyTorch peer of `cltrain train`, for side-by-side comparisons.

What it compares
    It trains the same models as cltrain's zoo (`mlp`, `cnn`, `cnn-small`; see
    `cltrain zoo NAME`) on Fashion-MNIST with the same hyper-parameters as
    `cltrain train`'s defaults, and prints one line per epoch in the format
    cltrain prints, so the two can be read epoch by epoch:

        epoch 1/5  train loss 0.4321 acc 84.31%  test loss 0.3456 acc 87.65%  123.4 s  486 samples/s  lr 0.000905

    - data: the IDX .gz files in /usr/share/datasets/fashion-mnist (read with
      gzip + numpy; no torchvision, no downloads), normalized as cltrain does:
      (x/255 - 0.2860) / 0.3530; --limit / --test-limit keep the first N samples;
    - training: batch 64, Adam lr 1e-3 (betas 0.9/0.999, eps 1e-8, no weight
      decay), cosine annealing to 0 over epochs * steps_per_epoch, stepped per
      batch; reshuffled every epoch; the last partial batch dropped;
      SGD (default lr 0.05, momentum 0.9) and AdamW (weight decay 0 unless
      --weight-decay) as cltrain sets them up;
    - initialization: PyTorch's defaults, which cltrain reproduces
      (kaiming_uniform(a=sqrt(5)), i.e. U(+-1/sqrt(fan_in)) for weights and biases;
      batch norm weight 1, bias 0, eps 1e-5, momentum 0.1);
    - evaluation: the whole test split (or --test-limit) in eval mode, after
      each epoch; the epoch's seconds and samples/s cover the training loop only;
      train loss and accuracy are means over the epoch's training samples.

    The random streams differ (initial weights, shuffling order, dropout masks),
    so the numbers agree statistically, not bit for bit.

    --json FILE appends the JSON lines `cltrain train --log FILE` writes (same
    keys and number formats; accuracies as fractions; "epoch" events, and
    "step" events every --log-every steps), so tables can be made from either.

How to run it
    PyTorch comes from Debian's python3-torch package, which installs into
    Debian's /usr/bin/python3 (not a pyenv or venv python3 that may come first
    on PATH):

        apt-get install python3-torch
        OMP_NUM_THREADS=2 /usr/bin/python3 tools/pytorch_train.py --model cnn
        OMP_NUM_THREADS=2 /usr/bin/python3 tools/pytorch_train.py --model mlp --epochs 1 --limit 3200 --test-limit 1000

    and the cltrain run to compare with:

        build/tools/cltrain train --model cnn --log cltrain.jsonl

    --threads (default 2) sets torch.set_num_threads; keep it equal to the
    cores cltrain's OpenCL device uses when comparing speed on a CPU.

PyTorch is a peer for comparison only: it is never a dependency of cltrain,
its build or its tests, and nothing in the project imports this script.
"""
import argparse
import gzip
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

DATA_DIR = "/usr/share/datasets/fashion-mnist"
MEAN, STD = 0.2860, 0.3530


def read_idx(path):
    """An IDX file (gzip'd or not) as a numpy array of its dimensions."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        sys.exit(f"pytorch_train: {path} is not an unsigned-byte IDX file")
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    off = 4 + 4 * ndim
    n = int(np.prod(dims))
    if len(raw) < off + n:
        sys.exit(f"pytorch_train: {path} is truncated")
    return np.frombuffer(raw, dtype=np.uint8, count=n, offset=off).reshape(dims)


def find(data_dir, stem):
    for name in (stem + ".gz", stem):
        p = os.path.join(data_dir, name)
        if os.path.exists(p):
            return p
    sys.exit(f"pytorch_train: no {stem}[.gz] in {data_dir}")


def load_split(data_dir, prefix, limit):
    x = read_idx(find(data_dir, f"{prefix}-images-idx3-ubyte"))
    y = read_idx(find(data_dir, f"{prefix}-labels-idx1-ubyte"))
    if len(x) != len(y):
        sys.exit(f"pytorch_train: {prefix}: {len(x)} images but {len(y)} labels")
    if limit:
        x, y = x[:limit], y[:limit]
    x = (x.astype(np.float32) / 255.0 - MEAN) / STD
    return torch.from_numpy(x).unsqueeze(1).contiguous(), torch.from_numpy(y.astype(np.int64))


def make_model(name):
    if name == "mlp":
        return nn.Sequential(
            nn.Flatten(),
            nn.Linear(784, 256), nn.ReLU(),
            nn.Linear(256, 128), nn.ReLU(),
            nn.Linear(128, 10))
    if name == "cnn":
        return nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(3136, 128), nn.ReLU(),
            nn.Linear(128, 10))
    if name == "cnn-small":
        return nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(3136, 128), nn.ReLU(),
            nn.Linear(128, 10))
    raise ValueError(name)


def make_optimizer(args, params):
    if args.optimizer == "sgd":
        lr = args.lr if args.lr else 0.05
        return torch.optim.SGD(params, lr=lr, momentum=args.momentum, nesterov=args.nesterov,
                               weight_decay=args.weight_decay)
    lr = args.lr if args.lr else 1e-3
    cls = torch.optim.Adam if args.optimizer == "adam" else torch.optim.AdamW
    return cls(params, lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=args.weight_decay)


def log_json(path, event, epoch, step, lr, train_loss, train_acc, test_loss, test_acc, secs, rate):
    """One line in the format of src/train/jsonlog.c's ct_log_json."""
    if not path:
        return
    if test_loss is None or math.isnan(test_loss):
        test_loss = -1.0
    if test_acc is None or math.isnan(test_acc):
        test_acc = -1.0
    with open(path, "a") as f:
        f.write('{"event": "%s", "epoch": %d, "step": %d, "lr": %.8g, "train_loss": %.8g, '
                '"train_accuracy": %.6f, "test_loss": %.8g, "test_accuracy": %.6f, "seconds": %.3f, '
                '"samples_per_second": %.1f}\n'
                % (event, epoch, step, lr, train_loss, train_acc, test_loss, test_acc, secs, rate))


@torch.no_grad()
def evaluate(model, x, y, batch):
    model.eval()
    loss_sum, correct = 0.0, 0
    for i in range(0, len(x), batch):
        xb, yb = x[i:i + batch], y[i:i + batch]
        z = model(xb)
        loss_sum += F.cross_entropy(z, yb, reduction="sum").double().item()
        correct += int((z.argmax(1) == yb).sum())
    n = len(x)
    return (loss_sum / n, correct / n) if n else (float("nan"), float("nan"))


def main():
    ap = argparse.ArgumentParser(description="PyTorch peer of `cltrain train` for comparisons "
                                 "(run with /usr/bin/python3, which has Debian's python3-torch).")
    ap.add_argument("--model", default="cnn", choices=["mlp", "cnn", "cnn-small"])
    ap.add_argument("--data", default=DATA_DIR, help="folder with the Fashion-MNIST IDX files")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0, help="default: 1e-3 (adam, adamw), 0.05 (sgd)")
    ap.add_argument("--optimizer", default="adam", choices=["sgd", "adam", "adamw"])
    ap.add_argument("--momentum", type=float, default=0.9, help="sgd only")
    ap.add_argument("--nesterov", action="store_true", help="sgd only")
    ap.add_argument("--weight-decay", type=float, default=0.0)
    ap.add_argument("--schedule", default="cosine", choices=["cosine", "constant"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    ap.add_argument("--limit", type=int, default=0, help="train on the first N samples")
    ap.add_argument("--test-limit", type=int, default=0, help="evaluate on the first N test samples")
    ap.add_argument("--json", metavar="FILE", help="append cltrain --log style JSON lines to FILE")
    ap.add_argument("--log-every", type=int, default=0, help="with --json: a step event every N steps")
    args = ap.parse_args()
    if args.epochs < 1 or args.batch < 1 or args.threads < 1:
        ap.error("--epochs, --batch and --threads must be >= 1")

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    xtr, ytr = load_split(args.data, "train", args.limit)
    xte, yte = load_split(args.data, "t10k", args.test_limit)
    if len(xtr) < args.batch:
        sys.exit(f"pytorch_train: the batch ({args.batch}) is larger than the training set "
                 f"({len(xtr)} samples)")

    model = make_model(args.model)
    opt = make_optimizer(args, model.parameters())
    per_epoch = len(xtr) // args.batch  # drop_last
    total = args.epochs * per_epoch
    sched = (torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=total, eta_min=0.0)
             if args.schedule == "cosine" else None)
    shuffle = torch.Generator().manual_seed(args.seed)

    nparams = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"pytorch {torch.__version__}, {torch.get_num_threads()} threads: {args.model} "
          f"({nparams} parameters), {len(xtr)} train / {len(xte)} test samples, batch {args.batch}, "
          f"{args.optimizer}, {args.schedule}", file=sys.stderr)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(len(xtr), generator=shuffle)
        loss_sum, correct, seen, lr = 0.0, 0, 0, 0.0
        t0 = time.perf_counter()
        for b in range(per_epoch):
            idx = perm[b * args.batch:(b + 1) * args.batch]
            xb, yb = xtr[idx], ytr[idx]
            lr = opt.param_groups[0]["lr"]  # the rate this step uses
            opt.zero_grad(set_to_none=True)
            z = model(xb)
            loss = F.cross_entropy(z, yb)
            loss.backward()
            opt.step()
            if sched:
                sched.step()
            step += 1
            n = len(yb)
            loss_sum += loss.item() * n
            correct += int((z.argmax(1) == yb).sum())
            seen += n
            if args.json and args.log_every > 0 and step % args.log_every == 0:
                secs = time.perf_counter() - t0
                log_json(args.json, "step", epoch + 1, step, lr, loss_sum / seen, correct / seen,
                         None, None, secs, seen / secs)
        secs = time.perf_counter() - t0
        train_loss, train_acc = loss_sum / seen, correct / seen
        if not math.isfinite(train_loss):
            sys.exit(f"pytorch_train: the training loss became {train_loss} in epoch {epoch + 1} "
                     f"(step {step})")
        test_loss, test_acc = evaluate(model, xte, yte, args.batch) if len(xte) else (float("nan"),) * 2
        print("epoch %d/%d  train loss %.4f acc %.2f%%  test loss %.4f acc %.2f%%  %.1f s  %.0f samples/s  lr %.3g"
              % (epoch + 1, args.epochs, train_loss, 100 * train_acc, test_loss, 100 * test_acc, secs,
                 seen / secs, lr), flush=True)
        log_json(args.json, "epoch", epoch + 1, step, lr, train_loss, train_acc, test_loss, test_acc,
                 secs, seen / secs)


if __name__ == "__main__":
    main()
