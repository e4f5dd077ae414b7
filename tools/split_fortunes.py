#!/usr/bin/env python3
"""split_fortunes.py - the English fortunes as language-model train and test files.

Reads the English records (the fortunes and fortunes-min packages, less
their pictures: the same files as make_langid.py's "en") in file-name
order and writes every tenth record (the 10th, 20th, ...) to TEST, the rest
to TRAIN, each file in the fortune format: records separated by lines
holding '%'. Nothing is filtered or shuffled, so the split is the same on
every machine with the same packages. Python 3 standard library only.

Usage: tools/split_fortunes.py [--root DIR] TRAIN TEST
Then: cltrain train --data text:TRAIN:test=TEST ...
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_langid import ROOT, fortune_files, fortune_records  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("train", help="the training file to write")
    ap.add_argument("test", help="the test file to write")
    ap.add_argument("--root", default=ROOT, help=f"where the fortunes are (default {ROOT})")
    a = ap.parse_args()
    try:
        files = fortune_files(a.root, "en")
    except FileNotFoundError as e:
        sys.exit(f"split_fortunes: {e}")
    records = [r for p in files for r in fortune_records(p)]
    train = [r for i, r in enumerate(records) if i % 10 != 9]
    test = [r for i, r in enumerate(records) if i % 10 == 9]
    for path, part in ((a.train, train), (a.test, test)):
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write("\n%\n".join(part) + "\n")
    size = {p: os.path.getsize(p) for p in (a.train, a.test)}
    print(f"split_fortunes: {len(records)} records of {len(files)} files: "
          f"{len(train)} ({size[a.train]} bytes) to {a.train}, "
          f"{len(test)} ({size[a.test]} bytes) to {a.test}")


if __name__ == "__main__":
    main()
