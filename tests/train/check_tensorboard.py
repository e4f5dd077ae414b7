#!/usr/bin/env python3
"""check_tensorboard.py LOGDIR JSONL [options] - what TensorBoard's own
reader (EventAccumulator) sees in LOGDIR against the run's --log JSON lines.

Every scalar tag must be there with one event per epoch line (per-step tags:
one per --every steps) at the right steps, and no other tag. Values: each
epoch scalar equals its JSON field within the JSON's printed rounding (half
a unit of its last digit) plus float32 rounding (TensorBoard keeps floats:
2^-24 relative); derived ones (training perplexity, bits per byte) carry the
rounding through. The per-step points are the mean loss and accuracy of the
steps since the previous point of the epoch, which the JSON step lines
(--log-every equal to --every) give as differences of running means times
samples; the tolerance carries both lines' rounding through. With --ckpt,
one histogram per trainable tensor and epoch, the last equal to the
checkpoint's tensor: min, max, count and buckets exactly (the same
arithmetic in float64), sums within 1e-9 relative (summation order).
"""
import argparse
import glob
import json
import math
import os
import struct
import sys

import numpy as np
from tensorboard.backend.event_processing import event_accumulator as ea

F32 = 2.0 ** -24
BUCKETS = 30
# the epoch scalars that the JSON epoch lines hold as they are: tag -> field
# (a field printed as -1, or absent, has no event: no test split, or a
# metric the run does not have); src/train/tboard.c's TB_EPOCH_SCALARS
# lists the same tags
EPOCH_FIELDS = {
    "train/loss": "train_loss",
    "train/accuracy": "train_accuracy",
    "test/loss": "test_loss",
    "test/accuracy": "test_accuracy",
    "lr": "lr",
    "samples_per_second": "samples_per_second",
    "epoch": "epoch",
    "train/rmse": "train_rmse",
    "train/mae": "train_mae",
    "test/rmse": "test_rmse",
    "test/mae": "test_mae",
}


def number(text):
    """A JSON number as (value, half a unit of its last printed digit)."""
    mant, _, exp = text.lower().partition("e")
    decimals = len(mant.partition(".")[2])
    return float(text), 0.5 * 10.0 ** (int(exp or 0) - decimals)


def read_json(path):
    lines = []
    for line in open(path):
        lines.append(json.loads(line, parse_float=number, parse_int=lambda s: (float(s), 0.0)))
    return lines


def read_safetensors(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        assert t["dtype"] == "F32", (name, t["dtype"])
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype="<f4")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("logdir")
    ap.add_argument("jsonl")
    ap.add_argument("--files", type=int, default=1, help="event files expected in LOGDIR")
    ap.add_argument("--every", type=int, required=True, help="--tensorboard-every")
    ap.add_argument("--per-epoch", type=int, required=True, help="steps per epoch")
    ap.add_argument("--batch", type=int, required=True, help="samples per step")
    ap.add_argument("--tokens", type=int, default=0, help="tokens per sample (language models)")
    ap.add_argument("--regression", action="store_true",
                    help="a regression run: per-step MAE in place of accuracy")
    ap.add_argument("--no-step-values", action="store_true",
                    help="check the per-step points' steps only (MPI: rank 0's samples)")
    ap.add_argument("--ckpt", help="the last epoch's checkpoint: check the histograms against it")
    a = ap.parse_args()
    fails = []

    def check(cond, what):
        if not cond:
            fails.append(what)
        return cond

    files = glob.glob(os.path.join(a.logdir, "events.out.tfevents.*"))
    check(len(files) == a.files, f"{len(files)} event files in {a.logdir}, want {a.files}")
    acc = ea.EventAccumulator(a.logdir, size_guidance={ea.SCALARS: 0, ea.HISTOGRAMS: 0})
    acc.Reload()
    tags = acc.Tags()
    lines = read_json(a.jsonl)
    epochs = [r for r in lines if r["event"] == "epoch"]
    steps = [r for r in lines if r["event"] == "step"]
    epoch_steps = [int(r["step"][0]) for r in epochs]

    # the epoch scalars: tag -> [(value, tolerance)] per epoch line
    want = {}

    def add(tag, v, tol):
        want.setdefault(tag, []).append((v, tol + abs(v) * F32))

    for r in epochs:
        for tag, key in EPOCH_FIELDS.items():
            if key in r and r[key][0] != -1:
                add(tag, *r[key])
        if a.tokens:
            x, h = r["train_loss"]
            add("train/perplexity", math.exp(x), math.exp(x) * h * 1.0001)
            if "bits_per_byte" in r:
                add("train/bits_per_byte", x / math.log(2), h / math.log(2))
                if r["test_loss"][0] != -1:
                    add("test/bits_per_byte", *r["bits_per_byte"])
            if r["test_loss"][0] != -1:
                add("test/perplexity", *r["perplexity"])
    if a.every:
        points = [s for s in range(1, epoch_steps[-1] + 1) if s % a.every == 0]
        second = "train/step_mae" if a.regression else "train/step_accuracy"
        want_steps = {"train/step_loss": points, second: points}
    else:
        want_steps = {}
    got = set(tags["scalars"])
    check(got == set(want) | set(want_steps), f"scalar tags {sorted(got)}, want {sorted(set(want) | set(want_steps))}")
    worst = 0.0
    for tag, rows in want.items():
        if tag not in got:
            continue
        ev = acc.Scalars(tag)
        if not check([e.step for e in ev] == epoch_steps, f"{tag}: steps {[e.step for e in ev]}, want {epoch_steps}"):
            continue
        for e, (v, tol) in zip(ev, rows):
            worst = max(worst, abs(e.value - v) / tol if tol else 0)
            check(abs(e.value - v) <= tol, f"{tag} at step {e.step}: {e.value!r}, JSON {v!r} (tolerance {tol:.3g})")

    # the per-step points against the JSON step lines
    by_step = {int(r["step"][0]): r for r in steps}
    for tag, key, per in (("train/step_loss", "train_loss", 1), ("train/step_accuracy", "train_accuracy",
                                                                   max(a.tokens, 1)),
                          ("train/step_mae", "train_mae", 1)):
        if tag not in want_steps or tag not in got:
            continue
        ev = acc.Scalars(tag)
        if not check([e.step for e in ev] == want_steps[tag],
                     f"{tag}: steps {[e.step for e in ev]}, want {want_steps[tag]}"):
            continue
        if a.no_step_values:
            check(all(math.isfinite(e.value) for e in ev), f"{tag}: a value is not finite")
            continue
        prev = None  # (sum, its rounding, samples) at the epoch's previous point
        for e in ev:
            r = by_step.get(e.step)
            if not check(r is not None, f"no JSON step line at step {e.step} (--log-every {a.every}?)"):
                break
            seen = ((e.step - 1) % a.per_epoch + 1) * a.batch
            if prev is not None and (e.step - 1) // a.per_epoch != prev[3]:
                prev = None
            m, h = r[key]
            s, hs = m * seen * per, h * seen * per
            s0, h0, seen0 = (prev[0], prev[1], prev[2]) if prev else (0.0, 0.0, 0)
            v = (s - s0) / ((seen - seen0) * per)
            tol = (hs + h0) / ((seen - seen0) * per) + abs(v) * F32
            worst = max(worst, abs(e.value - v) / tol)
            check(abs(e.value - v) <= tol, f"{tag} at step {e.step}: {e.value!r}, from JSON {v!r} (tolerance {tol:.3g})")
            prev = (s, hs, seen, (e.step - 1) // a.per_epoch)

    # the histograms against the checkpoint
    nhist = 0
    if a.ckpt:
        params = {k: v for k, v in read_safetensors(a.ckpt).items() if k != "optimizer.state"}
        want_h = {"params/" + k for k in params}
        check(set(tags["histograms"]) == want_h, f"histogram tags {sorted(tags['histograms'])}, want {sorted(want_h)}")
        for name, x in params.items():
            tag = "params/" + name
            if tag not in tags["histograms"]:
                continue
            ev = acc.Histograms(tag)
            if not check([e.step for e in ev] == epoch_steps, f"{tag}: steps {[e.step for e in ev]}"):
                continue
            h = ev[-1].histogram_value
            x = x.astype(np.float64)
            lo, hi = float(x.min()), float(x.max())
            nb = BUCKETS if hi > lo else 1
            width = (hi - lo) / nb
            k = np.clip(np.floor((x - lo) / width), 0, nb - 1) if nb > 1 else np.zeros_like(x)
            counts = np.bincount(k.astype(np.int64), minlength=nb).astype(np.float64)
            limits = [lo + width * (i + 1) for i in range(nb - 1)] + [sys.float_info.max]
            check(h.min == lo and h.max == hi and h.num == x.size, f"{tag}: min/max/num {h.min} {h.max} {h.num}, "
                  f"want {lo} {hi} {x.size}")
            check(abs(h.sum - x.sum()) <= 1e-9 * np.abs(x).sum(), f"{tag}: sum {h.sum}, want {x.sum()}")
            check(abs(h.sum_squares - (x * x).sum()) <= 1e-9 * (x * x).sum(), f"{tag}: sum of squares")
            check(list(h.bucket) == list(counts), f"{tag}: buckets {list(h.bucket)}, want {list(counts)}")
            check(list(h.bucket_limit) == limits, f"{tag}: bucket limits differ")
            nhist += 1

    nscalar = sum(len(acc.Scalars(t)) for t in got)
    print(f"  {len(files)} file(s), {len(got)} scalar tags, {nscalar} scalar events, {nhist} histograms "
          f"checked; largest error / tolerance {worst:.3g}")
    for f in fails[:12]:
        print("  " + f)
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
