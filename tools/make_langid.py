#!/usr/bin/env python3
"""make_langid.py - a language-identification dataset from Debian's fortunes.

Builds a textdir tree (cltrain's textdir:DIR, Keras' text_dataset_from_directory)
of one fortune per file:

    OUT/train/<lang>/00000.txt ...   (--train per language, default 900)
    OUT/test/<lang>/00000.txt ...    (--test per language, default 150)

for eight languages, each from its Debian package:

    cs fortunes-cs   de fortunes-de   en fortunes (and fortunes-min)
    es fortunes-es   it fortunes-it   pl fortunes-pl
    pt fortunes-br   ru fortunes-ru

Records are the texts between lines holding '%'. A record is kept when it
has 20 to 1000 bytes (UTF-8) and at least half of its characters are
letters (which leaves out ASCII art); repeats are kept once. Each
language's records are shuffled by a generator seeded with --seed and the
language, and the first train + test are taken, so the same packages and
seed always give the same tree. Python 3 standard library only.

Usage: tools/make_langid.py [--root DIR] [--train N] [--test M] [--seed S] OUT
"""
import argparse
import os
import random
import sys

ROOT = "/usr/share/games/fortunes"

# The English files of the fortunes and fortunes-min packages (not other
# packages that also install there), less the pictures (art, ascii-art).
ENGLISH = [
    "computers", "cookie", "debian", "definitions", "disclaimer", "drugs", "education",
    "ethnic", "food", "fortunes", "goedel", "humorists", "kids", "knghtbrd", "law", "linux",
    "linuxcookie", "literature", "love", "magic", "medicine", "men-women", "miscellaneous",
    "news", "paradoxum", "people", "perl", "pets", "platitudes", "politics", "pratchett",
    "riddles", "science", "songs-poems", "sports", "startrek", "tao", "translate-me",
    "wisdom", "work", "zippy",
]

# language: (package, folder under ROOT or None for ROOT itself, files or
# None for every file of the folder, files left out)
LANGUAGES = {
    "cs": ("fortunes-cs", "cs", None, {"klasik-sk"}),  # klasik-sk is Slovak
    "de": ("fortunes-de", "de", None, {"asciiart"}),
    "en": ("fortunes", None, ENGLISH, set()),
    "es": ("fortunes-es", "es", None, set()),
    "it": ("fortunes-it", "it", None, set()),
    "pl": ("fortunes-pl", "pl", None, set()),
    "pt": ("fortunes-br", None, ["brasil"], set()),
    "ru": ("fortunes-ru", "ru", None, set()),
}


def fortune_files(root, lang):
    """The record files of one language, sorted, or raise FileNotFoundError."""
    package, folder, names, skip = LANGUAGES[lang]
    base = os.path.join(root, folder) if folder else root
    if names is None:
        if not os.path.isdir(base):
            raise FileNotFoundError(f"{base} is missing: install {package}")
        names = sorted(
            n for n in os.listdir(base)
            if not n.endswith((".dat", ".u8")) and not n.startswith(".")
            and os.path.isfile(os.path.join(base, n)))
    paths = [os.path.join(base, n) for n in names if n not in skip]
    for p in paths:
        if not os.path.isfile(p):
            raise FileNotFoundError(f"{p} is missing: install {package}")
    return paths


def fortune_records(path):
    """The records of a fortune file, in order, each without its separator
    line and with line ends as \\n; empty records are left out."""
    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("utf-8")  # the packages ship UTF-8; anything else is an error
    records, lines = [], []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line == "%":
            records.append("\n".join(lines))
            lines = []
        else:
            lines.append(line)
    records.append("\n".join(lines))
    return [r for r in records if r.strip()]


def usable(record):
    size = len(record.encode("utf-8"))
    if size < 20 or size > 1000:
        return False
    letters = sum(ch.isalpha() for ch in record)
    return letters * 2 >= len(record)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="the folder to create (must not exist, or be empty)")
    ap.add_argument("--root", default=ROOT, help=f"where the fortunes are (default {ROOT})")
    ap.add_argument("--train", type=int, default=900, help="training files per language")
    ap.add_argument("--test", type=int, default=150, help="test files per language")
    ap.add_argument("--seed", type=int, default=1, help="seed of the per-language shuffle")
    a = ap.parse_args()
    if a.train < 1 or a.test < 1:
        sys.exit("make_langid: --train and --test must be at least 1")
    if os.path.exists(a.out) and (not os.path.isdir(a.out) or os.listdir(a.out)):
        sys.exit(f"make_langid: {a.out} exists and is not an empty folder")
    picked = {}
    for lang in sorted(LANGUAGES):
        try:
            files = fortune_files(a.root, lang)
        except FileNotFoundError as e:
            sys.exit(f"make_langid: {e}")
        seen, pool = set(), []
        for p in files:
            for r in fortune_records(p):
                r = r.rstrip()
                if usable(r) and r not in seen:
                    seen.add(r)
                    pool.append(r)
        want = a.train + a.test
        if len(pool) < want:
            sys.exit(f"make_langid: {lang} has {len(pool)} usable records, fewer than {want}")
        random.Random(f"{a.seed}:{lang}").shuffle(pool)
        picked[lang] = pool[:want]
        print(f"{lang}: {len(pool)} usable records in {len(files)} files, "
              f"{a.train} train + {a.test} test")
    for lang, recs in picked.items():
        for split, part in (("train", recs[:a.train]), ("test", recs[a.train:])):
            d = os.path.join(a.out, split, lang)
            os.makedirs(d, exist_ok=True)
            for i, r in enumerate(part):
                with open(os.path.join(d, f"{i:05d}.txt"), "w", encoding="utf-8",
                          newline="\n") as f:
                    f.write(r + "\n")
    print(f"make_langid: wrote {a.out}/train and {a.out}/test: {len(picked)} languages")


if __name__ == "__main__":
    main()
