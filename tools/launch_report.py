#!/usr/bin/env python3
"""Reads `cltrain bench --profile --json` and checks one step's launches
against the GPU class's rules:

  - a launch that is not a matrix product and moves at least 1 MiB does at
    most 256 elements per work-item (max(bytes read, bytes written) / 4 /
    work-items);
  - a matrix product has at least 64 blocks of 64 x 64 of C times its
    k-slices, unless m n k < 2^24 (too small to matter);
  - the bytes the launches move are at most 2x the floor (each layer's
    tensors once per pass, see include/cltrain/bench.h);
  - every launch states its bytes.

    CLTRAIN_KERNELS=gpu cltrain bench --model resnet56 --profile --json > r.json
    tools/launch_report.py r.json [--verbose]

Prints one line per rule and model and, with --verbose, each offending
launch; exits 1 when a rule is broken.
"""
import argparse
import json
import math
import sys

MIB = 1 << 20


def check(r, verbose):
    bad = 0
    name = "%s (batch %d)" % (r["model"], r["batch"])
    launches = r.get("launch_list")
    if launches is None:
        print("%s: no launch_list (run bench with --profile --json)" % name)
        return 1
    heavy, thin, unstated = [], [], []
    for l in launches:
        rd, wr = l["bytes_read"], l["bytes_written"]
        if rd < 0 or wr < 0:
            unstated.append(l)
            continue
        if "gemm" in l:
            m, n, k = l["gemm"]
            blocks = math.ceil(m / 64) * math.ceil(n / 64) * l["batch"] * max(1, l["k_splits"])
            if m * n * k * l["batch"] >= (1 << 24) and blocks < 64:
                thin.append((l, blocks))
        elif rd + wr >= MIB:
            per = max(rd, wr) / 4 / max(1, l["global"])
            if per > 256:
                heavy.append((l, per))
    ratio = r["bytes_moved"] / r["bytes_floor"] if r.get("bytes_floor") else float("inf")
    print("%s: %d launches; %d state no bytes; %d non-GEMM launches over 1 MiB with > 256 elements "
          "per work-item; %d GEMMs under 64 blocks; moved %.1f MiB, floor %.1f MiB (%.2fx)"
          % (name, len(launches), len(unstated), len(heavy), len(thin), r["bytes_moved"] / MIB,
             r["bytes_floor"] / MIB, ratio))
    if verbose:
        for l in unstated:
            print("  no bytes: %s %s" % (l["layer"], l.get("kernel", "gemm")))
        for l, per in heavy:
            print("  %.0f elements per work-item: %s %s (global %d)" % (per, l["layer"], l["kernel"], l["global"]))
        for l, blocks in thin:
            print("  %d blocks: %s gemm %s batch %d k_splits %d" % (blocks, l["layer"], l["gemm"], l["batch"],
                                                                   l["k_splits"]))
    bad += bool(unstated) + bool(heavy) + bool(thin) + (ratio > 2.0)
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", help="the output of cltrain bench --profile --json")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    with open(a.json) as f:
        results = json.load(f)
    if isinstance(results, dict):
        results = [results]
    bad = 0
    for r in results:
        if "error" in r:
            print("%s: %s" % (r["model"], r["error"]))
            bad += 1
        else:
            bad += check(r, a.verbose)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
