#!/usr/bin/env python3
"""zoo_step_setup.py CLTRAIN NAME DIR - what one recorded training step of the
zoo model NAME runs on, written to DIR: the model file (DIR/model), a seeded
batch of samples and labels as NumPy files (DIR/x.npy, float32 (N, C, H, W),
and DIR/y.npy, int64 (N)), and on stdout the `cltrain train` arguments of the
step, one per line. tools/record_zoo_step.py and tests/train/test_zoo_step.sh
both call it, so the reference and the test step from the same model and
data.

The model is `cltrain zoo NAME` with two edits: the input side is SIDE (the
zoo's 224 is more than a test needs; ResNet-18 and MobileNetV2 end in a
global average pool, so any side that leaves the last stage a 2x2 map or
more runs the same layers), and dropout's p is 0 (a dropout mask cannot be
matched in PyTorch; p=0 makes the layer the identity in both). The samples
are N(0, 1) from Python's random.Random(SEED) (Mersenne Twister: the same
numbers on every platform and version), the labels uniform over the classes.

Standard library only.
"""
import random
import re
import struct
import subprocess
import sys

# side, batch, classes (the zoo model's), data seed; unet and vit keep their
# own one-channel inputs (side None), unet with a label per pixel
CASES = {
    "resnet18": (64, 8, 1000, 11),
    "mobilenetv2": (64, 8, 1000, 12),
    "mobilenetv2-32": (32, 8, 10, 13),
    "unet": (None, 8, 4, 14),
    "vit": (None, 8, 10, 15),
}
# the step: SGD with momentum and weight decay at a constant lr from --seed 7's weights
STEP = {"lr": 1e-3, "momentum": 0.9, "weight_decay": 1e-4, "seed": 7}


def npy(path, descr, shape, payload):
    """A version-1 .npy file: the magic, the header dict padded to 64 bytes, the data."""
    head = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else ""))
    head += " " * (-(10 + len(head) + 1) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode("latin1") + payload)


def model_text(cltrain, name, side):
    text = subprocess.run([cltrain, "zoo", name], check=True, capture_output=True, text=True).stdout
    if side is None:
        return text
    text, n = re.subn(r"^input shape=3x\d+x\d+$", f"input shape=3x{side}x{side}", text, flags=re.M)
    if n != 1:
        raise SystemExit(f"zoo_step_setup: {name} has no 'input shape=3xHxW' line")
    return re.sub(r"^(\S+: dropout) p=\S+$", r"\1 p=0", text, flags=re.M)


def main():
    cltrain, name, out = sys.argv[1:4]
    if name not in CASES:
        raise SystemExit(f"zoo_step_setup: no case for {name} (cases: {', '.join(CASES)})")
    side, n, classes, seed = CASES[name]
    text = model_text(cltrain, name, side)
    with open(f"{out}/model", "w") as f:
        f.write(text)
    c, h, w = (int(v) for v in re.search(r"^input shape=(\d+)x(\d+)x(\d+)$", text, flags=re.M).groups())
    per = h * w if name == "unet" else 1  # labels per sample: a label per pixel for unet
    r = random.Random(seed)
    xs = [r.gauss(0.0, 1.0) for _ in range(n * c * h * w)]
    ys = [r.randrange(classes) for _ in range(n * per)]
    npy(f"{out}/x.npy", "<f4", (n, c, h, w), struct.pack(f"<{len(xs)}f", *xs))
    npy(f"{out}/y.npy", "<i8", (n, h, w) if per > 1 else (n,), struct.pack(f"<{len(ys)}q", *ys))
    data = f"npy:{out}/x.npy,{out}/y.npy:test={out}/x.npy,{out}/y.npy:classes={classes}"
    args = ["--model", f"{out}/model", "--data", data, "--epochs", "1", "--batch", str(n),
            "--optimizer", "sgd", "--lr", f"{STEP['lr']:g}", "--momentum", f"{STEP['momentum']:g}",
            "--weight-decay", f"{STEP['weight_decay']:g}", "--schedule", "constant",
            "--seed", str(STEP["seed"]), "--no-augment", "--no-progress"]
    print("\n".join(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
