#!/usr/bin/env python3
"""fashion_files.py - copies of a Fashion-MNIST subset in other layouts, for
the image-folder and CSV tests (standard library only).

  fashion_files.py SRC OUT NTRAIN NTEST

reads the first NTRAIN training and NTEST test samples of the IDX files in
SRC and writes, each split ordered by class and then by position in the
IDX file (the order in which imagefolder: lists the PNG files):
  OUT/idx/        the IDX files (gzip) of the subset in that order
  OUT/images/     train/<class>/<position>.png and test/..., 8-bit grey PNGs
  OUT/train.csv   Kaggle's layout: header label,pixel1,...,pixel784
  OUT/test.csv
"""
import gzip
import os
import struct
import sys
import zlib

# numbered so that their sorted order (imagefolder's class ids) is the IDX labels' order
CLASSES = ["0_T-shirt_top", "1_Trouser", "2_Pullover", "3_Dress", "4_Coat", "5_Sandal", "6_Shirt",
           "7_Sneaker", "8_Bag", "9_Ankle_boot"]


def read_idx(path, n):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack(">I", data[:4])[0]
    dims = [struct.unpack(">I", data[4 + 4 * i:8 + 4 * i])[0] for i in range(magic & 0xff)]
    off = 4 + 4 * len(dims)
    per = 1
    for d in dims[1:]:
        per *= d
    return [data[off + i * per:off + (i + 1) * per] for i in range(min(n, dims[0]))], dims[1:]


def png(pixels, w, h):
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    rows = b"".join(b"\0" + pixels[y * w:(y + 1) * w] for y in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def write_idx(path, records, dims):
    with gzip.open(path, "wb") as f:
        kind = 3 if dims else 1
        f.write(struct.pack(">I", 0x800 + kind) + struct.pack(">I", len(records)))
        for d in dims:
            f.write(struct.pack(">I", d))
        for r in records:
            f.write(r)


def main():
    src, out, ntrain, ntest = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    os.makedirs(os.path.join(out, "idx"), exist_ok=True)
    for split, prefix, n in (("train", "train", ntrain), ("test", "t10k", ntest)):
        images, dims = read_idx(os.path.join(src, prefix + "-images-idx3-ubyte.gz"), n)
        labels, _ = read_idx(os.path.join(src, prefix + "-labels-idx1-ubyte.gz"), n)
        h, w = dims
        order = sorted(range(len(images)), key=lambda i: (labels[i][0], i))
        write_idx(os.path.join(out, "idx", prefix + "-images-idx3-ubyte.gz"),
                  [images[i] for i in order], dims)
        write_idx(os.path.join(out, "idx", prefix + "-labels-idx1-ubyte.gz"),
                  [labels[i] for i in order], [])
        for k, name in enumerate(CLASSES):
            os.makedirs(os.path.join(out, "images", split, name), exist_ok=True)
        with open(os.path.join(out, split + ".csv"), "w") as csv:
            csv.write("label," + ",".join("pixel%d" % (i + 1) for i in range(h * w)) + "\n")
            for i in order:
                k = labels[i][0]
                with open(os.path.join(out, "images", split, CLASSES[k], "%05d.png" % i), "wb") as f:
                    f.write(png(images[i], w, h))
                csv.write("%d,%s\n" % (k, ",".join(str(b) for b in images[i])))


if __name__ == "__main__":
    main()
