#!/usr/bin/python3
"""torch2cltrain.py - a PyTorch image classifier (a class per image, or per
pixel) as a cltrain model file and its weights, named so that the two load
into each other.

usage:
  torch2cltrain.py MODULE:CALLABLE --input CxHxW --out MODEL_FILE
                   --weights OUT.safetensors [--kwargs JSON]
                   [--cltrain BIN [--device SEL] [--count N]]

MODULE:CALLABLE (e.g. torchvision.models:resnet18) is called with no
arguments, or with the keyword arguments of --kwargs ('{"num_classes": 10}'),
put in eval mode and traced with torch.fx. Every node becomes a cltrain
layer (docs/MODEL_FORMAT.md) named after the module that computes it
(`layer1.0.conv1`), so the weights' tensor names are exactly the module's
state_dict keys: the file written to --weights loads back with
`module.load_state_dict(safetensors.torch.load_file(F), strict=True)`, and
so does a checkpoint `cltrain train --init` or `--resume` writes from it
once `optimizer.state`, cltrain's own, is left out (batch norm's
num_batches_tracked is in both). The weights file is a cltrain checkpoint
too (its metadata holds the model text), so `cltrain predict --weights`,
`eval`, `export` and `train --init` take it directly. A layer without
parameters that a module computes twice (one ReLU module after two
convolutions) gets `_1`, `_2` appended to its later uses; functions get
fx's node names (`add_3`, `flatten`); a position table added to a sequence
takes its module's (`pos` for `pos.weight`).

What maps onto what, and what is refused: tools/torch2cltrain_map.py.

--cltrain BIN checks the conversion: N (--count, default 2) random inputs,
standard normal float32, are saved as .npy (float32 .npy data is fed as it
is, not normalized) and run through `BIN predict --logits` with the
weights; the inputs cltrain reports must be the ones written, and every
logit must agree with the module's within |cltrain - torch| <= 1e-4 +
1e-4 * max|torch| (absolute plus relative to the sample's largest logit:
float32 rounding accumulates in absolute terms, and a small logit of a deep
network carries as much of it as a large one; resnet50's PyTorch float32
logits are about 1e-4 from its float64 ones). Batch norm uses its running
statistics in both (eval). The report gives PyTorch's own float32 error
for scale. A model with a label per pixel is checked on its (K, H, W)
logits, zero label planes beside the inputs. Exit status 1 on any
disagreement.

Not part of the library: Debian's /usr/bin/python3 with python3-torch
(and python3-torchvision for its models).
"""
import argparse
import copy
import importlib
import json
import os
import struct
import subprocess
import sys
import tempfile

import torch
import torch.fx as fx
import torch.nn as nn
from torch.fx.passes.shape_prop import ShapeProp

from torch2cltrain_map import PARAMS, Converter, PathTracer, Refused

ATOL = RTOL = 1e-4
FORMAT = "cltrain-checkpoint-1"


def model_text(layers, source, shape):
    lines = [f"# {source}, input {'x'.join(map(str, shape))}: written by tools/torch2cltrain.py"]
    prev = None
    for name, ltype, keys, inputs in layers:
        words = [f"{name}:", ltype] if ltype not in ("input",) else [ltype]
        words += [f"{k}={fmt(v)}" for k, v in keys.items()]
        if inputs and (inputs != [prev] or ltype in ("add", "mul", "concat")):
            words.append("from=" + ",".join(inputs))
        lines.append(" ".join(words))
        prev = name
    return "\n".join(lines) + "\n"


def fmt(v):
    if isinstance(v, float):
        return repr(v)
    return str(v)


def expected_keys(layers, module):
    """state_dict keys the layers save, checked against the module's."""
    sd = module.state_dict()
    keys = []
    for name, ltype, lkeys, _ in layers:
        for suffix in PARAMS.get(ltype, []):
            if suffix == "bias" and lkeys.get("bias") == "false":
                continue
            keys.append(f"{name}.{suffix}")
    missing = [k for k in keys if k not in sd]
    unused = [k for k in sd if k not in set(keys)]
    if missing:
        raise Refused(f"the layers would save {', '.join(missing[:5])}, which the module's state_dict lacks")
    if unused:
        raise Refused(f"the module's state_dict has {', '.join(unused[:5])}{' ...' if len(unused) > 5 else ''}, "
                      "which no traced layer uses: a cltrain checkpoint would lack them")
    return keys


def write_safetensors(path, tensors, metadata):
    """tensors: (name, tensor) pairs, float32 or int64; metadata: strings.
    The standard-library writer of tools/golden_seqpool.py, atomic."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors:
        t = t.detach().contiguous().cpu()
        if t.dtype == torch.int64:
            code, fmt_ = "I64", "q"
        else:
            t, code, fmt_ = t.to(torch.float32), "F32", "f"
        data = struct.pack("<%d%s" % (t.numel(), fmt_), *t.flatten().tolist())
        header[name] = {"dtype": code, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def build(spec, kwargs):
    if ":" not in spec:
        raise SystemExit(f"torch2cltrain: '{spec}' is not MODULE:CALLABLE (e.g. torchvision.models:resnet18)")
    mod, attr = spec.split(":", 1)
    obj = importlib.import_module(mod)
    for part in attr.split("."):
        obj = getattr(obj, part)
    m = obj(**kwargs)
    if not isinstance(m, nn.Module):
        raise SystemExit(f"torch2cltrain: {spec}() returned a {type(m).__name__}, not a torch.nn.Module")
    return m.eval()


def convert(module, shape, source):
    tracer = PathTracer()
    try:
        graph = tracer.trace(module)
    except (fx.proxy.TraceError, TypeError, NotImplementedError) as e:
        raise Refused(f"torch.fx cannot trace it (data-dependent Python in a forward): {e}") from None
    gm = fx.GraphModule(tracer.root, graph)
    gm.graph.eliminate_dead_code()
    gm.recompile()
    ShapeProp(gm).propagate(torch.zeros((1,) + tuple(shape)))
    layers = Converter(module, gm, shape).convert()
    keys = expected_keys(layers, module)
    return model_text(layers, source, shape), keys


def check(cltrain, device, weights, module, shape, count, work):
    """cltrain's logits against the module's on random inputs: the largest
    difference, the largest relative to its sample's largest logit, whether
    all are within tolerance, the largest logit, and how far PyTorch's own
    float32 logits are from float64's. A model scoring every pixel has
    (K, H, W) logits per sample, which predict --logits prints in that
    order, and the labels are a zero plane per sample."""
    import numpy as np
    gen = torch.Generator().manual_seed(1234)
    x = torch.randn((count,) + tuple(shape), generator=gen, dtype=torch.float32)
    with torch.no_grad():
        want = module(x).double()
        exact = copy.deepcopy(module).double()(x.double())  # float32's own rounding, for the report
    k, per_sample = want.shape[1], tuple(want.shape[1:])
    xp, yp = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
    np.save(xp, x.numpy())
    np.save(yp, np.zeros((count,) + per_sample[1:], dtype=np.int64))  # (N), or (N, H, W) for a label per pixel
    cmd = [cltrain, "predict", "--weights", weights, "--data", f"npy:{xp},{yp}:test={xp},{yp}:classes={k}",
           "--count", str(count), "--logits"]
    if device:
        cmd += ["--device", device]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"torch2cltrain: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}{r.stdout}")
    rows = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    if len(rows) != count:
        raise SystemExit(f"torch2cltrain: cltrain predict gave {len(rows)} lines, not {count}:\n{r.stdout}")
    worst_abs = worst_rel = 0.0
    ok = True
    for i, row in enumerate(rows):
        got_x = torch.tensor(row["input"], dtype=torch.float32)
        if not torch.equal(got_x, x[i].flatten()):
            raise SystemExit(f"torch2cltrain: sample {i}: cltrain fed other inputs than the .npy holds "
                             f"(max difference {(got_x - x[i].flatten()).abs().max():.3g}); was it normalized?")
        got, w = torch.tensor(row["logits"], dtype=torch.float64), want[i].flatten()
        if got.numel() != w.numel():
            raise SystemExit(f"torch2cltrain: sample {i}: cltrain gave {got.numel()} logits, not {w.numel()} "
                             f"{per_sample}")
        d = (got - w).abs()
        scale = w.abs().max()
        worst_abs = max(worst_abs, d.max().item())
        worst_rel = max(worst_rel, (d / scale.clamp_min(1e-30)).max().item())
        bad = d > ATOL + RTOL * scale
        if bad.any():
            j = int(bad.nonzero()[0])
            at = tuple(int(v) for v in np.unravel_index(j, per_sample))
            print(f"sample {i} logit {at if len(at) > 1 else j}: cltrain {got[j].item():.9g}, "
                  f"torch {w[j].item():.9g}", file=sys.stderr)
            ok = False
    return worst_abs, worst_rel, ok, float(want.abs().max()), float((want - exact).abs().max())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("spec", metavar="MODULE:CALLABLE")
    ap.add_argument("--input", required=True, help="CxHxW, the per-sample input shape")
    ap.add_argument("--out", required=True, help="the model file to write")
    ap.add_argument("--weights", required=True, help="the safetensors file to write")
    ap.add_argument("--kwargs", default="{}", help="JSON keyword arguments for CALLABLE")
    ap.add_argument("--cltrain", help="a cltrain binary: check the logits against PyTorch's")
    ap.add_argument("--device", help="cltrain's --device for the check")
    ap.add_argument("--count", type=int, default=2, help="random samples the check runs (default 2)")
    a = ap.parse_args()
    try:
        shape = tuple(int(v) for v in a.input.split("x"))
        kwargs = json.loads(a.kwargs)
    except ValueError as e:
        raise SystemExit(f"torch2cltrain: --input {a.input!r} / --kwargs {a.kwargs!r}: {e}")
    if len(shape) != 3 or min(shape) < 1 or not isinstance(kwargs, dict):
        raise SystemExit("torch2cltrain: --input is CxHxW (like 3x224x224) and --kwargs a JSON object")
    module = build(a.spec, kwargs)
    try:
        text, keys = convert(module, shape, a.spec)
    except Refused as e:
        print(f"torch2cltrain: cannot convert {a.spec}: {e}", file=sys.stderr)
        return 1
    sd = module.state_dict()
    meta = {"format": FORMAT, "model": text, "epoch": "0", "step": "0", "seed": "0", "batch": "0",
            "optimizer": "", "data": "", "converted_from": f"{a.spec} {json.dumps(kwargs)}"}
    write_safetensors(a.weights, [(k, sd[k]) for k in sd], meta)
    with open(a.out + ".tmp", "w") as f:
        f.write(text)
    os.replace(a.out + ".tmp", a.out)
    nparams = sum(p.numel() for p in module.parameters())
    print(f"wrote {a.out} ({text.count(chr(10)) - 1} layers, {nparams} parameters) and {a.weights} "
          f"({len(keys)} tensors, the state_dict's keys)")
    if a.cltrain:
        with tempfile.TemporaryDirectory() as work:
            wa, wr, ok, top, f32 = check(a.cltrain, a.device, a.weights, module, shape, a.count, work)
        print(f"check: {a.count} samples, logits up to {top:.3g}: max |cltrain - torch| {wa:.3g}, relative to "
              f"the sample's largest logit {wr:.3g} (PyTorch's float32 against float64: {f32:.3g}); tolerance "
              f"{ATOL:g} + {RTOL:g} * max|torch|: {'ok' if ok else 'FAILED'}")
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
