#!/usr/bin/python3
"""pytorch_text.py - PyTorch peers of cltrain's text models, for side-by-side runs.

What it compares
    cls DIR: a byte-level text classifier on a text folder (DIR/train/<class>/*,
        DIR/test/<class>/*; class names sorted, as `cltrain train --data textdir:DIR`
        reads them). Each file is one sample: its UTF-8 bytes as token ids 1..255,
        truncated or padded with 0 to --seq (128). Model: embedding (256, --dim 32)
        -> LSTM --hidden 128 -> mean over the non-padding positions -> dense to the
        classes -> softmax cross-entropy; the zoo's `textcls` and this model
        file:
            input tokens=128
            embedding vocab=256 dim=32
            lstm hidden=128
            seqpool mode=mean
            dense out=8
            softmax_cross_entropy
    lm TRAIN TEST: a byte-level language model on a text file. The bytes of the
        file are cut into (bytes - 1) / T windows of --seq (T) tokens at offsets 0,
        T, 2T, ...; the target of each position is the next byte. Model: embedding (256, --dim) -> LSTM
        --hidden x --layers -> dense 256 on every position. The loss is the mean
        nats per byte; perplexity e^loss and bits per byte loss/ln 2 are printed too.
        With --model gpt --init CKPT: the zoo's gpt instead (tools/pytorch_gpt.py's
        module), starting from the weights of a cltrain checkpoint (strict load),
        so both sides start from the same point.

    Training: Adam (--lr; betas 0.9/0.999, eps 1e-8), constant rate unless
    --schedule cosine (to 0 over all steps, stepped per batch), batch --batch, the
    training samples reshuffled every epoch and the last partial batch dropped.
    --optimizer adamw is AdamW with weight decay 0.01 (cltrain's default);
    --warmup N ramps the rate linearly from 0 over the first N steps and runs
    the cosine over the rest, as cltrain's --warmup.
    Evaluation after each epoch on the whole test split. Initialization is
    PyTorch's default, which cltrain reproduces; the random streams differ, so
    the results agree statistically, not bit for bit. One line per epoch in
    cltrain's format, plus the seconds per training step.

How to run it
    PyTorch comes from Debian's python3-torch (Debian's /usr/bin/python3):

        OMP_NUM_THREADS=2 /usr/bin/python3 tools/pytorch_text.py cls /tmp/langid --epochs 4 --lr 2e-3
        OMP_NUM_THREADS=2 /usr/bin/python3 tools/pytorch_text.py lm /tmp/en.train /tmp/en.test \\
            --seq 64 --hidden 256 --layers 2 --dim 64 --epochs 1

    tools/make_langid.py and tools/split_fortunes.py make those inputs from the
    fortunes packages.

PyTorch is a peer for comparison only: it is never a dependency of cltrain,
its build or its tests, and nothing in the project imports this script.
"""
import argparse
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn


def read_textdir(root, split, seq):
    base = os.path.join(root, split)
    classes = sorted(d for d in os.listdir(base) if os.path.isdir(os.path.join(base, d)))
    xs, ys = [], []
    for k, c in enumerate(classes):
        folder = os.path.join(base, c)
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name), "rb") as f:
                data = f.read()[:seq]
            row = np.zeros(seq, dtype=np.int64)
            row[: len(data)] = np.frombuffer(data, dtype=np.uint8)
            xs.append(row)
            ys.append(k)
    return classes, torch.from_numpy(np.stack(xs)), torch.tensor(ys)


def read_windows(path, seq):
    with open(path, "rb") as f:
        data = np.frombuffer(f.read(), dtype=np.uint8).astype(np.int64)
    count = (len(data) - 1) // seq
    if count < 1:
        sys.exit(f"{path}: fewer than {seq + 1} bytes")
    x = np.stack([data[k * seq:(k + 1) * seq] for k in range(count)])
    y = np.stack([data[k * seq + 1:(k + 1) * seq + 1] for k in range(count)])
    return torch.from_numpy(x), torch.from_numpy(y)


class Classifier(nn.Module):
    def __init__(self, dim, hidden, classes):
        super().__init__()
        self.embedding = nn.Embedding(256, dim)
        self.lstm = nn.LSTM(dim, hidden)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, tokens):  # (N, T)
        h, _ = self.lstm(self.embedding(tokens.t()))  # (T, N, H)
        mask = (tokens.t() != 0).unsqueeze(-1).to(h.dtype)
        pooled = (h * mask).sum(0) / mask.sum(0).clamp(min=1)
        return self.fc(pooled)


class LanguageModel(nn.Module):
    def __init__(self, dim, hidden, layers):
        super().__init__()
        self.embedding = nn.Embedding(256, dim)
        self.lstm = nn.LSTM(dim, hidden, layers)
        self.fc = nn.Linear(hidden, 256)

    def forward(self, tokens):  # (N, T) -> (T, N, 256)
        h, _ = self.lstm(self.embedding(tokens.t()))
        return self.fc(h)


def evaluate(model, x, y, batch, lm):
    model.eval()
    loss_sum, correct, count = 0.0, 0, 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            xb, yb = x[i:i + batch], y[i:i + batch]
            out = model(xb)
            if lm:
                out, yb = out.reshape(-1, 256), yb.t().reshape(-1)
            loss_sum += nn.functional.cross_entropy(out, yb, reduction="sum").item()
            correct += (out.argmax(1) == yb).sum().item()
            count += len(yb)
    model.train()
    return loss_sum / count, correct / count


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("task", choices=["cls", "lm"])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--schedule", choices=["constant", "cosine"], default="constant")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-minutes", type=float, default=0, help="stop training after this long")
    ap.add_argument("--no-eval", action="store_true", help="skip the test split (step timing only)")
    ap.add_argument("--model", choices=["lstm", "gpt"], default="lstm", help="lm: the model")
    ap.add_argument("--init", help="lm --model gpt: the cltrain checkpoint to start from")
    ap.add_argument("--optimizer", choices=["adam", "adamw"], default="adam")
    ap.add_argument("--warmup", type=int, default=0)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    lm = a.task == "lm"
    if lm:
        if len(a.paths) != 2:
            sys.exit("lm takes TRAIN and TEST files")
        xtr, ytr = read_windows(a.paths[0], a.seq)
        xte, yte = read_windows(a.paths[1], a.seq)
        if a.model == "gpt":
            if not a.init:
                sys.exit("--model gpt needs --init CKPT (cltrain's initial weights)")
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            import pytorch_gpt

            gpt, t = pytorch_gpt.load(a.init, torch.float32)
            if t != a.seq:
                sys.exit(f"{a.init}: context {t}, --seq {a.seq}")

            class GPTLM(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.gpt = gpt

                def forward(self, tokens):  # (N, T) -> (T, N, 256)
                    return self.gpt(tokens.t())

            model = GPTLM().train()
        else:
            model = LanguageModel(a.dim, a.hidden, a.layers)
        what = f"{len(xtr)} train / {len(xte)} test windows of {a.seq} bytes"
    else:
        classes, xtr, ytr = read_textdir(a.paths[0], "train", a.seq)
        _, xte, yte = read_textdir(a.paths[0], "test", a.seq)
        model = Classifier(a.dim, a.hidden, len(classes))
        what = f"{len(classes)} classes, {len(xtr)} train / {len(xte)} test samples"
    params = sum(p.numel() for p in model.parameters())
    print(f"pytorch {torch.__version__}, {a.threads} threads: {a.task} ({params} parameters), {what}, "
          f"batch {a.batch}, {a.optimizer} {a.lr:g}, {a.schedule}, warmup {a.warmup}", flush=True)
    if a.optimizer == "adamw":
        opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.01)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    steps_per_epoch = len(xtr) // a.batch
    total = max(1, steps_per_epoch * a.epochs - a.warmup)

    def rate(s):
        if s < a.warmup:
            return s / a.warmup
        if a.schedule == "cosine":
            return 0.5 * (1 + math.cos(math.pi * min(s - a.warmup, total) / total))
        return 1.0

    sched = torch.optim.lr_scheduler.LambdaLR(opt, rate)
    start = time.time()
    steps = 0
    for epoch in range(1, a.epochs + 1):
        t0 = time.time()
        order = torch.randperm(len(xtr))
        loss_sum, correct, count = 0.0, 0, 0
        step_secs = []
        for s in range(steps_per_epoch):
            ts = time.time()
            idx = order[s * a.batch:(s + 1) * a.batch]
            xb, yb = xtr[idx], ytr[idx]
            out = model(xb)
            if lm:
                out, yb = out.reshape(-1, 256), yb.t().reshape(-1)
            loss = nn.functional.cross_entropy(out, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            steps += 1
            loss_sum += loss.item() * len(yb)
            correct += (out.argmax(1) == yb).sum().item()
            count += len(yb)
            step_secs.append(time.time() - ts)
            if a.max_minutes and time.time() - start > 60 * a.max_minutes:
                break
        secs = time.time() - t0
        tl, ta = evaluate(model, xte, yte, 256, lm) if not a.no_eval else (float("nan"), float("nan"))
        median = sorted(step_secs)[len(step_secs) // 2]
        line = (f"epoch {epoch}/{a.epochs}  train loss {loss_sum / count:.4f} acc {100 * correct / count:.2f}%  "
                f"test loss {tl:.4f} acc {100 * ta:.2f}%  {secs:.1f} s  {median:.3f} s/step (median of "
                f"{len(step_secs)})")
        if lm and not a.no_eval:
            line += f"  ppl {math.exp(tl):.2f}  bits/byte {tl / math.log(2):.3f}"
        print(line, flush=True)
        if a.max_minutes and time.time() - start > 60 * a.max_minutes:
            print(f"stopped after {(time.time() - start) / 60:.1f} minutes ({steps} steps)")
            break


if __name__ == "__main__":
    main()
