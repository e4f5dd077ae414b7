#!/usr/bin/env python3
"""Runs an exported ONNX model with onnxruntime (CPUExecutionProvider) on
the inputs `cltrain predict --logits` printed and compares its logits with
cltrain's own.

usage: check_onnx.py MODEL.onnx OUTPUTS.jsonl NAME float|tokens|multilabel

Checks, each failing with exit 1 and a line saying what differs:
- the graph's interface: input "input" of the model's per-sample shape
  with a symbolic batch dimension, float32 (int64 for tokens); outputs
  "logits" and "probabilities" of the logits' shape;
- the logits within TOL = 1e-4 of cltrain's, relative to max(1, |logit|),
  that is absolute for logits up to 1 and relative above. Both compute in
  float32 but sum in different orders (onnxruntime's MLAS kernels against
  OpenBLAS, pocl's kernels and cltrain's direct convolution): each dot
  product then differs by a few float32 ulps of its terms' magnitude, about
  1e-7 to 1e-6 of the logits, and that compounds mildly with depth
  (measured up to 1.5e-6 for gpt, 2e-7 for resnet56). 1e-4 leaves two
  orders of magnitude of margin, while a wrong layout, gate order or
  window gives errors of 1e-3 and more (a shifted LRN window: 3e-3);
- the same top-1 class wherever cltrain's best two logits are more than
  2 TOL apart (where they are closer, float noise may order them either way);
- the probabilities are the softmax of the logits (multilabel: each
  logit's sigmoid);
- the batch is dynamic: the first sample alone gives the same logits;
- the check is not vacuous: the logits vary across samples by far more than
  TOL (a network whose output ignores its input would pass any export).
"""
import json
import sys

import numpy as np
import onnxruntime as ort

TOL = 1e-4


def main() -> int:
    path, jsonl, name, tokens = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "tokens"
    rows = [json.loads(line) for line in open(jsonl)]
    if not rows:
        print(f"FAIL {name}: predict --logits printed no samples")
        return 1
    ishape, oshape = rows[0]["input_shape"], rows[0]["logits_shape"]
    x = np.array([r["input"] for r in rows], dtype=np.int64 if tokens else np.float32)
    x = x.reshape([len(rows)] + ishape)
    ref = np.array([r["logits"] for r in rows], dtype=np.float32).reshape([len(rows)] + oshape)

    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    fails = []
    ins, outs = sess.get_inputs(), sess.get_outputs()
    want_type = "tensor(int64)" if tokens else "tensor(float)"
    if [i.name for i in ins] != ["input"] or ins[0].type != want_type or \
            len(ins[0].shape) != 1 + len(ishape) or isinstance(ins[0].shape[0], int) or \
            list(ins[0].shape[1:]) != ishape:
        fails.append(f"input {[(i.name, i.type, i.shape) for i in ins]}, expected input {want_type} "
                     f"[N, {ishape}]")
    if [o.name for o in outs] != ["logits", "probabilities"] or \
            any(list(o.shape[1:]) != oshape or isinstance(o.shape[0], int) for o in outs):
        fails.append(f"outputs {[(o.name, o.shape) for o in outs]}, expected logits and "
                     f"probabilities [N, {oshape}]")

    logits, probs = sess.run(["logits", "probabilities"], {"input": x})
    err = np.abs(logits - ref) / np.maximum(1.0, np.abs(ref))
    worst = np.unravel_index(np.argmax(err), err.shape)
    if not err.max() <= TOL:
        fails.append(f"logits differ by {err.max():.3g} (relative to max(1, |logit|)) > {TOL} at "
                     f"{tuple(int(i) for i in worst)}: onnxruntime {logits[worst]}, cltrain {ref[worst]}")

    top2 = np.sort(ref, axis=-1)[..., -2:]
    clear = (top2[..., 1] - top2[..., 0]) > 2 * TOL * np.maximum(1.0, np.abs(top2[..., 1]))
    differ = (logits.argmax(-1) != ref.argmax(-1)) & clear
    if differ.any():
        fails.append(f"top-1 differs for {int(differ.sum())} of {differ.size} predictions "
                     f"(of {int(clear.sum())} with a clear winner)")

    z = ref.astype(np.float64)
    if sys.argv[4] == "multilabel":
        soft, what = 1 / (1 + np.exp(-z)), "sigmoid"
    else:
        soft = np.exp(z - z.max(-1, keepdims=True))
        soft /= soft.sum(-1, keepdims=True)
        what = "softmax"
    if not np.abs(probs - soft).max() <= 1e-5:
        fails.append(f"probabilities are not the {what} of the logits (off by {np.abs(probs - soft).max():.3g})")

    (one,) = sess.run(["logits"], {"input": x[:1]})
    if not np.abs(one - logits[:1]).max() <= TOL:
        fails.append("the first sample alone gives other logits: the batch dimension is not free")

    spread = float(ref.std(axis=0).mean()) if len(rows) > 1 else 0.0
    if not spread > 20 * TOL:
        fails.append(f"the logits vary across samples by only {spread:.3g}: the comparison says little")

    print(f"  {name}: {len(rows)} samples, logits {oshape}, max difference {err.max():.3g} "
          f"(tolerance {TOL}), spread across samples {spread:.3g}, top-1 agrees on "
          f"{int((logits.argmax(-1) == ref.argmax(-1)).sum())}/{differ.size}")
    for f in fails:
        print(f"FAIL {name}: {f}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
