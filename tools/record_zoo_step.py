#!/usr/bin/python3
"""record_zoo_step.py NAME [CLTRAIN] - writes tests/data/NAME_step_ref.safetensors,
the reference that tests/train/test_zoo_step.sh compares one SGD step of the
zoo model NAME (resnet18, mobilenetv2, mobilenetv2-32, unet, vit) in cltrain
against.

1. tests/train/zoo_step_setup.py writes the model (the zoo's, at a smaller
   input side and with dropout p=0), a seeded batch and the step's arguments.
2. cltrain writes the initial weights of that run (--seed 7): the same step at
   lr 1e-12, which moves no weight by more than 1e-12 of its gradient (batch
   norm's running statistics and num_batches_tracked, which that step did
   move, are set back to 0, 1 and 0).
3. PyTorch's twin, torchvision.models.resnet18 / mobilenet_v2 (num_classes as
   the model's; for mobilenetv2-32 mobilenet_v2(num_classes=10) with stride 1
   in features.0.0 and in features.2's depthwise convolution, the two strides
   the CIFAR variant drops), loads those weights strictly (the zoo's layers
   are named after torchvision's modules, so the checkpoint's tensors are the
   state_dict's) and takes the same step in float64: batch
   statistics in batch norm (training mode), cross-entropy over the batch,
   torch.optim.SGD with the momentum and weight decay of the step's arguments.
4. The reference keeps, per tensor of the checkpoint (parameters and batch
   norm's running statistics), a digest rather than the tensor (ResNet-18's
   11.7M floats are 47 MB): `NAME.index` (int64: up to 128 element indices
   drawn from random.Random(NAME)); `NAME.digest` (float64: the sum, sum of
   squares and sum of |x| after the step) and `NAME.samples` (float64: those
   elements after the step); `NAME.init_norm` (the norm of those elements
   before it); for parameters `NAME.grad_digest` and `NAME.grad_samples`, the
   same of SGD's momentum buffer after the step: the gradient plus weight
   decay times the weight. The loss and num_batches_tracked after the step
   (1) are in the metadata.
5. It runs the test's comparison (tests/train/compare_zoo_step.py) on
   PyTorch's own step in float32 from the same weights and prints the result:
   the yardstick for the test's tolerances.

Not part of the library: Debian's /usr/bin/python3 with python3-torch and
python3-torchvision. Run it again for a model whenever its initialization,
its layers or the setup change.
"""
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

from array import array

import numpy as np
import torch
import torch.nn.functional as F
import torchvision

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "train"))
import compare_zoo_step  # noqa: E402  (the test's comparison, standard library only)
sys.path.insert(0, os.path.join(ROOT, "tools"))
import pytorch_zoo  # noqa: E402  (the twins of the zoo's unet and vit)

TYPECODE = {torch.float64: "d", torch.float32: "f", torch.int64: "q"}
SAMPLES = 128


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", {})
    body = memoryview(data)[8 + n:]
    out = {}
    kinds = {"F32": torch.float32, "I64": torch.int64}
    for name, t in header.items():
        if t["dtype"] not in kinds:
            raise ValueError(f"{path}: {name} has dtype {t['dtype']}, want F32 or I64")
        b, e = t["data_offsets"]
        out[name] = torch.frombuffer(bytearray(body[b:e]), dtype=kinds[t["dtype"]]).reshape(t["shape"])
    return out, meta


def write_safetensors(path, tensors, meta):
    """tensors {name: torch tensor of float64, float32 or int64} with string metadata."""
    kinds = {torch.float64: "F64", torch.float32: "F32", torch.int64: "I64"}
    header, blobs, off = {"__metadata__": meta}, [], 0
    for name, t in tensors.items():
        b = t.detach().contiguous().numpy().tobytes()  # little-endian hosts
        header[name] = {"dtype": kinds[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def twin(name, classes):
    if name in pytorch_zoo.TWINS:
        return pytorch_zoo.TWINS[name](classes=classes)
    if name == "resnet18":
        return torchvision.models.resnet18(num_classes=classes)
    model = torchvision.models.mobilenet_v2(num_classes=classes)
    if name == "mobilenetv2-32":
        model.features[0][0].stride = (1, 1)
        model.features[2].conv[1][0].stride = (1, 1)
    return model


def step(name, classes, init, x, y, args, dtype):
    """PyTorch's twin of the model after one SGD step from init in dtype: its
    state_dict, SGD's momentum buffers by parameter name, and the loss."""
    model = twin(name, classes)
    model.load_state_dict(init, strict=True)
    model = model.to(dtype).train()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0  # as the model file's dropout p=0
    opt = torch.optim.SGD(model.parameters(), lr=float(option(args, "--lr")),
                          momentum=float(option(args, "--momentum")),
                          weight_decay=float(option(args, "--weight-decay")))
    opt.zero_grad()
    loss = F.cross_entropy(model(x.to(dtype)), y)
    loss.backward()
    opt.step()
    names = {id(p): k for k, p in model.named_parameters()}
    grads = {names[id(p)]: st["momentum_buffer"].detach().double() for p, st in opt.state.items()}
    return {k: v.detach().to(torch.float64 if v.is_floating_point() else v.dtype)
            for k, v in model.state_dict().items()}, grads, loss.item()


def option(args, flag):
    return args[args.index(flag) + 1]


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__.split("\n\n")[0])
    name = sys.argv[1]
    cltrain = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "build/tools/cltrain")
    torch.set_num_threads(2)
    with tempfile.TemporaryDirectory() as tmp:
        args = subprocess.run([sys.executable, os.path.join(ROOT, "tests/train/zoo_step_setup.py"),
                               cltrain, name, tmp], check=True, capture_output=True,
                              text=True).stdout.split("\n")
        args = [a for a in args if a]
        init_args = list(args)
        init_args[init_args.index("--lr") + 1] = "1e-12"
        subprocess.run([cltrain, "train", *init_args, "--out", f"{tmp}/init.safetensors"], check=True,
                       stdout=subprocess.DEVNULL)
        init, _ = read_safetensors(f"{tmp}/init.safetensors")
        x = torch.from_numpy(np.load(f"{tmp}/x.npy")).to(torch.float64)
        y = torch.from_numpy(np.load(f"{tmp}/y.npy")).to(torch.int64)
    init = {k: v for k, v in init.items() if k != "optimizer.state"}
    # the lr 1e-12 step moved batch norm's running statistics by a batch's
    # worth; the step under test starts from their initial values, as cltrain's does
    for k, v in init.items():
        if k.endswith((".running_mean", ".running_var", ".num_batches_tracked")):
            init[k] = torch.full_like(v, 1 if k.endswith("var") else 0)
    tracked = [k for k in init if k.endswith(".num_batches_tracked")]
    classes = int(option(args, "--data").rsplit("classes=", 1)[1])
    after, grads, loss = step(name, classes, init, x, y, args, torch.float64)
    after32, grads32, loss32 = step(name, classes, init, x, y, args, torch.float32)
    out = {}
    for k in (k for k in init if k not in tracked):
        v = after[k].reshape(-1)
        n = v.numel()
        idx = torch.tensor(sorted(random.Random(k).sample(range(n), min(n, SAMPLES))), dtype=torch.int64)
        out[f"{k}.index"] = idx
        out[f"{k}.digest"] = torch.stack([v.sum(), (v * v).sum(), v.abs().sum()])
        out[f"{k}.samples"] = v[idx].clone()
        out[f"{k}.init_norm"] = init[k].reshape(-1)[idx].double().norm().reshape(1)
        if k in grads:
            g = grads[k].reshape(-1)
            out[f"{k}.grad_digest"] = torch.stack([g.sum(), (g * g).sum(), g.abs().sum()])
            out[f"{k}.grad_samples"] = g[idx].clone()
    meta = {"loss": f"{loss:.12g}", "model": name, "side": str(x.shape[-1]),
            "batch": str(x.shape[0]), "classes": str(classes), "optimizer": "sgd",
            "lr": option(args, "--lr"), "momentum": option(args, "--momentum"),
            "weight_decay": option(args, "--weight-decay"), "seed": option(args, "--seed"),
            "torch": torch.__version__, "torchvision": torchvision.__version__}
    if tracked:
        meta["num_batches_tracked"] = str(int(after[tracked[0]]))
    path = os.path.join(ROOT, "tests/data", f"{name}_step_ref.safetensors")
    write_safetensors(path, out, meta)
    print(f"{name}: PyTorch's float64 loss {loss:.10f}, {len(init) - len(tracked)} tensors -> "
          f"{os.path.relpath(path, ROOT)} ({os.path.getsize(path)} bytes)")
    # the yardstick of the test's tolerances: PyTorch's own float32 step
    # against the reference, as the test compares cltrain's
    ref = {k: array(TYPECODE[v.dtype], v.numpy().tobytes()) for k, v in out.items()}
    got = {k: after32[k].reshape(-1).tolist() for k in init}
    got_grads = {k: grads32[k].reshape(-1).tolist() for k in init if k in grads32}
    lines = []
    compare_zoo_step.compare(ref, meta, got, got_grads, loss32, out=lines.append)
    print(f"PyTorch in float32 against it: {lines[0][5:]}; {lines[-1]}")
    print("".join(f"  {line}\n" for line in lines[1:-1] if line.startswith("FAIL")), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
