#!/usr/bin/python3
"""pytorch_gpt.py - the zoo's gpt (and models of its shape) as a PyTorch
module whose parameter names are the cltrain checkpoint's tensor names, and
a check of cltrain's loss against PyTorch's on the same text windows.

Not part of the library: Debian's /usr/bin/python3 with python3-torch.

The module is nanoGPT's pre-LN decoder written with the cltrain layers'
PyTorch equivalents, each registered under its cltrain layer name so that
`<layer>.<parameter>` is both the checkpoint's tensor name and the
state_dict key:

    wte: embedding          nn.Embedding(vocab, E)                 wte.weight (vocab, E)
    wpe: posembed           a learned (max_len, E) table           wpe.weight (max_len, E)
    hK_ln1, hK_ln2, ln_f    nn.LayerNorm(E, eps)                   weight, bias (E)
    hK_attn: attention      nn.MultiheadAttention(E, H), causal    in_proj_weight (3E, E),
                                                                   in_proj_bias (3E),
                                                                   out_proj.weight (E, E),
                                                                   out_proj.bias (E)
    hK_fc: dense act=gelu   nn.Linear(E, 4E) then erf GELU         weight (4E, E), bias (4E)
    hK_proj: dense          nn.Linear(4E, E)                       weight (E, 4E), bias (E)
    head: dense             nn.Linear(E, vocab)                    weight (vocab, E), bias (vocab)

Sequences are time-major, (T, N), as cltrain lays out a batch. The sizes
(vocab, E, heads, context, blocks, eps) come from the model text that the
checkpoint carries; the text must be exactly the zoo gpt's layer sequence
(tools/pytorch_gpt.py model prints the one it expects for those sizes).

usage:
  pytorch_gpt.py model CKPT
      print the model text the checkpoint carries and the state_dict's
      names and shapes after a strict load
  pytorch_gpt.py loss CKPT TEXTFILE [--limit N] [--cltrain-loss X] [--rtol R]
      the mean cross-entropy, nats per token, over the first N windows of
      TEXTFILE as cltrain's text:TEXTFILE:seq=T cuts them (window k: bytes
      kT..kT+T-1, targets kT+1..kT+T), computed in float64; with
      --cltrain-loss, exit 1 unless |X - loss| <= R * loss (default 1e-4)
  pytorch_gpt.py logits CKPT (--tokens FILE | --seed S --batch N) [--out FILE]
      the logits (T, N, vocab) for the token ids of FILE (whitespace-separated
      integers, T * N of them, time-major: token t of sample n is the
      (t * N + n)-th) or for ids drawn from the seed; written as float32
      little-endian to --out, else their sum of squares printed
  pytorch_gpt.py step CKPT TEXTFILE --out REF [--lr X] [--weight-decay W]
                   [--steps K [--losses FILE]]
      one AdamW step (betas 0.9/0.999, eps 1e-8, as cltrain's adamw) from
      the checkpoint's weights on every window of TEXTFILE as one batch,
      computed in float64; REF gets the parameters after the step (float32
      safetensors, the checkpoint's tensor names) and, in its metadata, the
      first step's loss and settings (tests/data/gpt_step_ref.safetensors is
      made this way by tools/record_gpt_step.sh); with --steps K, K steps on
      that batch, each step's loss printed (and written to FILE), REF after
      the last
"""
import argparse
import json
import struct
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


def read_safetensors(path):
    """The tensors (float32, as torch tensors) and metadata of a safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", {})
    body = memoryview(data)[8 + n:]
    tensors = {}
    for name, t in header.items():
        if t["dtype"] != "F32":
            raise ValueError(f"{path}: {name} has dtype {t['dtype']}, want F32")
        b, e = t["data_offsets"]
        flat = torch.frombuffer(bytearray(body[b:e]), dtype=torch.float32)
        tensors[name] = flat.reshape(t["shape"]) if t["shape"] else flat.reshape(())
    return tensors, meta


def parse_model(text):
    """[(name, type, {key: value}, from)] of a cltrain model text (unnamed
    layers are refused: the module needs the names)."""
    layers = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        name = None
        if words[0].endswith(":"):
            name = words.pop(0)[:-1]
        kind = words.pop(0)
        keys = dict(w.split("=", 1) for w in words)
        src = keys.pop("from", None)
        if name is None and kind != "input":
            raise ValueError(f"model line {lineno}: layer {kind} has no name")
        layers.append((name or "input", kind, keys, src))
    return layers


def expected_layers(vocab, dim, heads, context, blocks, eps):
    """The layer list of gpt with these sizes, as parse_model gives it."""
    e = {} if eps is None else {"eps": eps}
    out = [("input", "input", {"tokens": str(context)}, None),
           ("wte", "embedding", {"vocab": str(vocab), "dim": str(dim)}, None),
           ("wpe", "posembed", {"max_len": str(context)}, None)]
    x = "wpe"
    for k in range(blocks):
        h = f"h{k}_"
        out += [(h + "ln1", "layernorm", dict(e), x),
                (h + "attn", "attention", {"heads": str(heads), "causal": "true"}, None),
                (h + "add1", "add", {}, f"{h}attn,{x}"),
                (h + "ln2", "layernorm", dict(e), None),
                (h + "fc", "dense", {"out": str(4 * dim), "act": "gelu"}, None),
                (h + "proj", "dense", {"out": str(dim)}, None),
                (h + "add2", "add", {}, f"{h}proj,{h}add1")]
        x = h + "add2"
    out += [("ln_f", "layernorm", dict(e), None), ("head", "dense", {"out": str(vocab)}, None),
            ("loss", "softmax_cross_entropy", {}, None)]
    return out


class GPT(nn.Module):
    """nanoGPT's decoder with cltrain's layer names; forward takes (T, N) ids."""

    def __init__(self, vocab, dim, heads, context, blocks, eps=1e-5):
        super().__init__()
        self.context, self.blocks = context, blocks
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(context, dim)
        for k in range(blocks):
            setattr(self, f"h{k}_ln1", nn.LayerNorm(dim, eps=eps))
            setattr(self, f"h{k}_attn", nn.MultiheadAttention(dim, heads))
            setattr(self, f"h{k}_ln2", nn.LayerNorm(dim, eps=eps))
            setattr(self, f"h{k}_fc", nn.Linear(dim, 4 * dim))
            setattr(self, f"h{k}_proj", nn.Linear(4 * dim, dim))
        self.ln_f = nn.LayerNorm(dim, eps=eps)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):  # ids (T, N) -> logits (T, N, vocab)
        t = ids.shape[0]
        x = self.wte(ids) + self.wpe.weight[:t].unsqueeze(1)  # (T, N, E)
        # True above the diagonal: query i does not see keys after i
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool, device=ids.device), diagonal=1)
        for k in range(self.blocks):
            a = getattr(self, f"h{k}_ln1")(x)
            a, _ = getattr(self, f"h{k}_attn")(a, a, a, attn_mask=mask, need_weights=False)
            x = x + a
            m = getattr(self, f"h{k}_ln2")(x)
            m = getattr(self, f"h{k}_proj")(F.gelu(getattr(self, f"h{k}_fc")(m)))
            x = x + m
        return self.head(self.ln_f(x))


def load(path, dtype=torch.float64):
    """The GPT of a cltrain checkpoint, loaded strictly, and its context T."""
    tensors, meta = read_safetensors(path)
    if "model" not in meta:
        raise ValueError(f"{path}: no model text in the checkpoint's metadata")
    layers = parse_model(meta["model"])
    kinds = {name: (kind, keys) for name, kind, keys, _ in layers}
    try:
        context = int(kinds["input"][1]["tokens"])
        vocab, dim = int(kinds["wte"][1]["vocab"]), int(kinds["wte"][1]["dim"])
        heads = int(kinds["h0_attn"][1]["heads"])
        eps = kinds["ln_f"][1].get("eps")
    except KeyError as e:
        raise ValueError(f"{path}: not a gpt-shaped model (no {e})") from None
    blocks = sum(1 for name, *_ in layers if name.endswith("_attn"))
    if int(kinds["wpe"][1]["max_len"]) != context:
        raise ValueError(f"{path}: posembed max_len differs from the context {context}")
    want = expected_layers(vocab, dim, heads, context, blocks, eps)
    # initialization keys (std=, out_std=) say how the weights started, not
    # what the module computes
    layers = [(n, k, {a: v for a, v in keys.items() if a not in ("std", "out_std")}, f)
              for n, k, keys, f in layers]
    if layers != want:
        diff = next(i for i, (a, b) in enumerate(zip(layers + [None] * len(want), want)) if a != b)
        raise ValueError(f"{path}: layer {diff} is {layers[diff] if diff < len(layers) else None}, "
                         f"the gpt shape has {want[diff]}")
    model = GPT(vocab, dim, heads, context, blocks, float(eps) if eps else 1e-5)
    state = {k: v for k, v in tensors.items() if not k.startswith("optimizer.")}
    for name, p in model.state_dict().items():
        if name in state and tuple(state[name].shape) != tuple(p.shape):
            raise ValueError(f"{name}: checkpoint shape {tuple(state[name].shape)}, "
                             f"PyTorch's {tuple(p.shape)}")
    model.load_state_dict(state, strict=True)
    return model.to(dtype).eval(), context


def text_windows(path, t, limit):
    """cltrain's text:PATH:seq=T windows (byte tokens), as (T, N) inputs and targets."""
    data = open(path, "rb").read()
    n = (len(data) - 1) // t
    if limit:
        n = min(n, limit)
    if n < 1:
        raise ValueError(f"{path}: {len(data)} bytes make no window of seq={t}")
    buf = torch.tensor(list(data[:n * t + 1]), dtype=torch.long)
    x = torch.stack([buf[k * t:k * t + t] for k in range(n)], dim=1)
    y = torch.stack([buf[k * t + 1:k * t + t + 1] for k in range(n)], dim=1)
    return x, y


def cmd_loss(args):
    model, t = load(args.ckpt)
    x, y = text_windows(args.text, t, args.limit)
    total = 0.0
    with torch.no_grad():
        for b in range(0, x.shape[1], 64):
            logits = model(x[:, b:b + 64])
            total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y[:, b:b + 64].reshape(-1),
                                     reduction="sum").item()
    loss = total / y.numel()
    print(f"pytorch loss {loss:.8f} nats per token over {x.shape[1]} windows of {t}")
    if args.cltrain_loss is not None:
        rel = abs(args.cltrain_loss - loss) / loss
        ok = rel <= args.rtol
        print(f"cltrain loss {args.cltrain_loss:.8f}  relative difference {rel:.2e} "
              f"({'within' if ok else 'OVER'} {args.rtol:g})")
        return 0 if ok else 1
    return 0


def cmd_model(args):
    tensors, meta = read_safetensors(args.ckpt)
    print(meta.get("model", ""), end="")
    model, _ = load(args.ckpt)
    for name, p in model.state_dict().items():
        print(f"{name} {tuple(p.shape)}")
    return 0


def cmd_logits(args):
    model, t = load(args.ckpt)
    if args.tokens:
        ids = [int(w) for w in open(args.tokens).read().split()]
        if len(ids) % t:
            raise ValueError(f"{args.tokens}: {len(ids)} ids is not a multiple of T = {t}")
        x = torch.tensor(ids, dtype=torch.long).reshape(t, len(ids) // t)
    else:
        g = torch.Generator().manual_seed(args.seed)
        x = torch.randint(0, model.wte.num_embeddings, (t, args.batch), generator=g)
    with torch.no_grad():
        logits = model(x)
    if args.out:
        with open(args.out, "wb") as f:
            f.write(logits.to(torch.float32).contiguous().numpy().tobytes())
    else:
        print(f"logits {tuple(logits.shape)} sum of squares {float((logits ** 2).sum()):.8g}")
    return 0


def write_safetensors(path, tensors, meta):
    """tensors {name: torch tensor} as float32 safetensors with string metadata."""
    header, blobs, off = {"__metadata__": meta}, [], 0
    for name, t in tensors.items():
        b = t.detach().to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def cmd_step(args):
    model, t = load(args.ckpt)
    x, y = text_windows(args.text, t, 0)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=args.weight_decay)
    losses = []
    for _ in range(args.steps):
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    if args.steps > 1:
        print("losses " + " ".join(f"{v:.10f}" for v in losses))
        if args.losses:
            with open(args.losses, "w") as f:
                f.write("".join(f"{v:.10f}\n" for v in losses))
    loss = torch.tensor(losses[0])
    meta = {"loss": f"{loss.item():.12g}", "lr": f"{args.lr:g}",
            "weight_decay": f"{args.weight_decay:g}", "windows": str(x.shape[1]),
            "context": str(t), "optimizer": "adamw"}
    write_safetensors(args.out, dict(model.state_dict()), meta)
    print(f"pytorch step: loss {loss.item():.10f} over {x.shape[1]} windows of {t}; "
          f"{sum(p.numel() for p in model.parameters())} parameters after one AdamW step -> {args.out}")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("model")
    m.add_argument("ckpt")
    lo = sub.add_parser("loss")
    lo.add_argument("ckpt")
    lo.add_argument("text")
    lo.add_argument("--limit", type=int, default=0)
    lo.add_argument("--cltrain-loss", type=float)
    lo.add_argument("--rtol", type=float, default=1e-4)
    lg = sub.add_parser("logits")
    lg.add_argument("ckpt")
    lg.add_argument("--tokens")
    lg.add_argument("--seed", type=int, default=0)
    lg.add_argument("--batch", type=int, default=4)
    lg.add_argument("--out")
    st = sub.add_parser("step")
    st.add_argument("ckpt")
    st.add_argument("text")
    st.add_argument("--out", required=True)
    st.add_argument("--lr", type=float, default=1e-3)
    st.add_argument("--weight-decay", type=float, default=0.01)
    st.add_argument("--steps", type=int, default=1, help="steps on the same batch (losses printed)")
    st.add_argument("--losses", help="with --steps: write each step's loss here, one per line")
    args = p.parse_args()
    torch.set_num_threads(2)
    try:
        return {"model": cmd_model, "loss": cmd_loss, "logits": cmd_logits,
                "step": cmd_step}[args.cmd](args)
    except (ValueError, OSError, RuntimeError) as e:
        print(f"pytorch_gpt: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
