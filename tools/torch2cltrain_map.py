#!/usr/bin/python3
"""torch2cltrain_map.py - the fx graph of a torch.nn.Module as cltrain
layers (docs/MODEL_FORMAT.md), for tools/torch2cltrain.py: each PyTorch
idiom's cltrain layer, and the refusals of those that have none.

What maps onto what:
  nn.Conv2d (square kernel, equal stride/padding/dilation, zero padding,
    padding='same' at stride 1, groups)                  conv2d
  nn.ConvTranspose2d (as Conv2d, one group)              conv_transpose2d
  nn.BatchNorm2d / BatchNorm1d (affine, running stats)   batchnorm
  ReLU, ReLU6, LeakyReLU(0.01), SiLU, Hardswish, GELU (erf), Sigmoid, Tanh
    (modules, torch.* and F.* functions, Tensor methods) relu, relu6, ...;
    one after a convolution or a dense layer whose output nothing else
    reads is fused as act=, and ReLU after batch norm as act=relu
  nn.MaxPool2d, nn.AvgPool2d (and F.*)                   maxpool, avgpool
  AdaptiveAvgPool2d(1) / F.adaptive_avg_pool2d(x, 1) / x.mean((2, 3))
                                                         global_avgpool, or
    avgpool kernel=H when convolutions read the pooled (C, 1, 1) tensor
    (squeeze-and-excitation); an adaptive pool to the input's own size is
    nothing, to an integer fraction of it avgpool
  torch.flatten(x, 1), nn.Flatten(), x.view(x.size(0), -1)
                                                         flatten (nothing
    after global_avgpool)
  nn.Linear on feature vectors, and on sequences (each step)
                                                         dense
  nn.Dropout (p kept)                                    dropout
  x + y, torch.add                                       add
  torch.cat(dim=1) of images or vectors                  concat (over 8
    tensors: a chain of concats)
  x * gate, torch.mul (equal shapes, or a (C, 1, 1) gate) mul
  nn.Upsample, F.interpolate (integer scale, nearest or bilinear with
    align_corners=False)                                 upsample
  nn.LayerNorm over feature vectors and over each step of a sequence
                                                         layernorm
  nn.Identity, x.contiguous()                            nothing
Sequences, a vision transformer's (cltrain's are time-major, (T, N, E);
PyTorch's either that or batch-first (N, T, E), tracked through the graph):
  x.flatten(2) of an image (C, H, W), then .permute(2, 0, 1) or
    .transpose(1, 2) (torch.* too)                       to_sequence
  a sequence's transpose or permute to the other layout  nothing
  x + m.weight[...] (a module's weight, indexed or reshaped to its first
    T rows broadcast over the batch: m.weight[:, None, :], m.weight[:T][None])
                                                         posembed, named m
  nn.MultiheadAttention(x, x, x)[0] (self-attention, no mask, biases, no
    dropout, batch_first as the sequence's layout)       attention
                                                         causal=false
  x.mean(0) (time-major) or x.mean(1) (batch-first)      seqpool mode=mean
The logits, (K) per sample or K class planes (K, H, W) of the input's
height and width (a label per pixel), end in softmax_cross_entropy.
Anything else (another module, a function, a method, a constant operand, a
module with parameters called twice, torch.cat of sequences: cltrain's
concat joins their steps) is refused with the fx node's name and target and
the module it sits in, and nothing is written.
"""
import math
import operator

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F


class Refused(Exception):
    """The module uses something cltrain has no layer for."""


class PathTracer(fx.Tracer):
    """fx's tracer, recording in each node the module whose forward made it."""

    def __init__(self):
        super().__init__()
        self.stack = []

    def call_module(self, m, forward, args, kwargs):
        self.stack.append(self.path_of_module(m))
        try:
            return super().call_module(m, forward, args, kwargs)
        finally:
            self.stack.pop()

    def create_node(self, *args, **kwargs):
        node = super().create_node(*args, **kwargs)
        node.meta["module_path"] = self.stack[-1] if self.stack else ""
        return node


ACTS = {  # cltrain activation name for modules, functions and methods
    nn.ReLU: "relu", nn.ReLU6: "relu6", nn.SiLU: "silu", nn.Hardswish: "hardswish", nn.GELU: "gelu",
    nn.Sigmoid: "sigmoid", nn.Tanh: "tanh", nn.LeakyReLU: "leaky_relu",
    F.relu: "relu", torch.relu: "relu", F.relu6: "relu6", F.silu: "silu", F.hardswish: "hardswish",
    F.gelu: "gelu", torch.sigmoid: "sigmoid", F.sigmoid: "sigmoid", torch.tanh: "tanh", F.tanh: "tanh",
    F.leaky_relu: "leaky_relu",
    "relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh", "relu_": "relu",
}
FUSES = {"conv2d": set(ACTS.values()), "conv_transpose2d": set(ACTS.values()), "dense": set(ACTS.values()),
         "batchnorm": {"relu"}}
PARAMS = {  # the tensors a cltrain layer type saves, in order
    "conv2d": ["weight", "bias"], "conv_transpose2d": ["weight", "bias"], "dense": ["weight", "bias"],
    "layernorm": ["weight", "bias"], "posembed": ["weight"],
    "attention": ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"],
    "batchnorm": ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"],
}


def pair(v, what):
    """A square size from an int or an (a, a) tuple."""
    if isinstance(v, int):
        return v
    if isinstance(v, (tuple, list)) and len(v) == 2 and v[0] == v[1]:
        return int(v[0])
    raise Refused(f"{what} {v!r} is not square (cltrain's windows are)")


class Converter:
    def __init__(self, module, gm, shape):
        self.module, self.gm, self.shape = module, gm, shape
        self.mods = dict(module.named_modules())
        self.layers = []   # [name, type, keys (dict), inputs (names)]
        self.out = {}      # fx node -> (cltrain layer name, cltrain shape per sample)
        self.axes = {}     # fx node of a sequence -> its PyTorch axes: ("T", "N", "E") or ("N", "T", "E")
        self.pending = {}  # fx node of x.flatten(2) -> the image x, until a permute makes it a sequence
        self.tables = {}   # fx node -> (module path, value, weight): a parameter `<path>.weight`, indexed
        self.node = None
        param_mods = {n.target for n in gm.graph.nodes if n.op == "call_module"
                      and any(True for _ in self.mods[n.target].parameters(recurse=False))}
        table_mods = {n.target.rpartition(".")[0] for n in gm.graph.nodes if n.op == "get_attr"}
        self.taken = set(param_mods) | table_mods | {"input", "loss"}
        self.names = set()

    # ---- naming and emitting ----

    def where(self, node=None):
        n = node or self.node
        path = n.meta.get("module_path", "")
        kind = type(self.mods[path]).__name__ if path in self.mods else "?"
        target = n.target if isinstance(n.target, str) else getattr(n.target, "__name__", str(n.target))
        return f"fx node '{n.name}' ({n.op} {target}) in module '{path or '<top>'}' ({kind})"

    def refuse(self, why):
        raise Refused(f"{self.where()}: {why}")

    def layer_name(self):
        n = self.node
        if n.op == "call_module":
            m = self.mods[n.target]
            if any(True for _ in m.parameters(recurse=False)):
                if n.target in self.names:
                    self.refuse(f"module '{n.target}' is called twice: cltrain layers do not share parameters")
                return n.target
            base = n.target
        else:
            base = n.name
        name, k = base, 0
        while name in self.names or name in self.taken:
            k += 1
            name = f"{base}_{k}"
        return name

    def add_layer(self, name, ltype, keys, input_names):
        if not all(c.isalnum() or c in "._-" for c in name) or len(name) > 63:
            self.refuse(f"the name '{name}' is not a cltrain layer name (letters, digits, _, - and dots, "
                        "at most 63 characters)")
        self.names.add(name)
        self.layers.append([name, ltype, keys, input_names])

    def emit(self, ltype, keys, inputs, shape, name=None):
        name = name or self.layer_name()
        self.add_layer(name, ltype, keys, [self.out[i][0] for i in inputs])
        self.out[self.node] = (name, shape)
        if len(shape) == 2 and inputs[0] in self.axes:  # a sequence keeps its input's PyTorch layout
            self.axes[self.node] = self.axes[inputs[0]]

    def alias(self, src, shape=None):
        name, s = self.out[src]
        self.out[self.node] = (name, shape if shape is not None else s)
        if src in self.axes:
            self.axes[self.node] = self.axes[src]

    # ---- helpers ----

    def arg(self, i, name, default=None):
        n = self.node
        if i is not None and len(n.args) > i:
            return n.args[i]
        return n.kwargs.get(name, default)

    def tensor_in(self, v):
        if not isinstance(v, fx.Node) or v not in self.out:
            self.refuse(f"operand {v!r} is not a tensor the network computed (constants and "
                        "buffers as operands have no cltrain layer)")
        return v

    def cshape(self, v):
        return self.out[v][1]

    def tshape(self, node=None):
        meta = (node or self.node).meta.get("tensor_meta")
        if meta is None or not hasattr(meta, "shape"):
            self.refuse("its result is not one tensor")
        return tuple(meta.shape[1:])

    def image_in(self, v):
        s = self.cshape(v)
        if len(s) != 3:
            self.refuse(f"needs an image (C, H, W), its input is {s}")
        return s

    def seq_in(self, v):
        s = self.cshape(v)
        if len(s) != 2:
            self.refuse(f"needs a sequence (T, E), its input is {s}")
        return s

    def readers(self, name):
        """How many fx nodes read cltrain layer `name`'s output (through any alias)."""
        return sum(len(v.users) for v, (n, _) in self.out.items() if n == name and v.op != "placeholder")

    # ---- the mapping ----

    def convert(self):
        for node in self.gm.graph.nodes:
            self.node = node
            if node.op == "placeholder":
                if self.out:
                    self.refuse("a second input (cltrain models take one)")
                self.layers.append(["input", "input", {"shape": "x".join(map(str, self.shape))}, []])
                self.names.add("input")
                self.out[node] = ("input", tuple(self.shape))
            elif node.op == "output":
                res = node.args[0]
                if not isinstance(res, fx.Node) or res not in self.out:
                    self.refuse("the module must return one tensor of logits")
                name, s = self.out[res]
                if len(s) == 3 and s[1:] != self.shape[1:]:
                    self.refuse(f"the output has shape {s} per sample: class planes (K, H, W) score the "
                                f"input's pixels, {self.shape[1]}x{self.shape[2]}")
                if len(s) not in (1, 3):
                    self.refuse(f"the output has shape {s} per sample; logits are (K,) for a class per "
                                "sample, or (K, H, W) for a class per pixel")
                self.layers.append(["loss", "softmax_cross_entropy", {}, [name]])
            elif node.op == "call_module":
                self.call_module(self.mods[node.target])
            elif node.op == "call_function":
                self.call_function(node.target)
            elif node.op == "call_method":
                self.call_method(node.target)
            elif node.op == "get_attr":
                self.get_attr(node.target)
            else:
                self.refuse(f"{node.op} is not supported")
        return self.layers

    def call_module(self, m):
        if type(m) is nn.MultiheadAttention:
            return self.attention(m)
        x = self.tensor_in(self.node.args[0]) if self.node.args else self.refuse("no input")
        if len(self.node.args) != 1 or self.node.kwargs:
            self.refuse("more than one argument")
        t = type(m)
        if t in (nn.Conv2d, nn.ConvTranspose2d):
            return self.conv2d(m, x)
        if t in (nn.BatchNorm2d, nn.BatchNorm1d):
            return self.batchnorm(m, x)
        if t in ACTS:
            if t is nn.LeakyReLU and m.negative_slope != 0.01:
                self.refuse(f"LeakyReLU slope {m.negative_slope} (cltrain's leaky_relu has 0.01)")
            if t is nn.GELU and m.approximate != "none":
                self.refuse(f"GELU approximate='{m.approximate}' (cltrain's gelu is erf's)")
            return self.act(ACTS[t], x)
        if t is nn.MaxPool2d:
            return self.pool("maxpool", x, m.kernel_size, m.stride, m.padding, m.dilation, m.ceil_mode,
                             return_indices=m.return_indices)
        if t is nn.AvgPool2d:
            return self.pool("avgpool", x, m.kernel_size, m.stride, m.padding, 1, m.ceil_mode,
                             count_include_pad=m.count_include_pad, divisor=m.divisor_override)
        if t is nn.AdaptiveAvgPool2d:
            return self.adaptive(x, m.output_size)
        if t is nn.Flatten:
            if m.start_dim != 1 or m.end_dim != -1:
                self.refuse(f"Flatten({m.start_dim}, {m.end_dim}) (cltrain flattens from dimension 1 on)")
            return self.flatten(x)
        if t is nn.Linear:
            s = self.cshape(x)
            if len(s) not in (1, 2):
                self.refuse(f"Linear on a {s} tensor applies to its last dimension; cltrain's dense reads "
                            "feature vectors and each step of a sequence (flatten first)")
            keys = {"out": m.out_features}
            if m.bias is None:
                keys["bias"] = "false"
            return self.emit("dense", keys, [x], s[:-1] + (m.out_features,))
        if t is nn.Dropout:
            return self.emit("dropout", {"p": m.p}, [x], self.cshape(x))
        if t is nn.Identity:
            return self.alias(x)
        if t is nn.Upsample:
            return self.upsample(x, m.mode, m.align_corners)
        if t is nn.LayerNorm:
            s = self.cshape(x)
            if len(s) not in (1, 2) or tuple(m.normalized_shape) != s[-1:] or not m.elementwise_affine:
                self.refuse(f"LayerNorm{tuple(m.normalized_shape)} on {s}: cltrain's layernorm normalizes "
                            "feature vectors and each step of a sequence, with weight and bias")
            return self.emit("layernorm", {"eps": m.eps} if m.eps != 1e-5 else {}, [x], s)
        self.refuse(f"module type {t.__module__}.{t.__name__} has no cltrain layer")

    def call_function(self, f):
        n = self.node
        if f not in (operator.add, torch.add) and self.table_op():
            return
        if f in ACTS:
            if f is F.gelu and self.arg(1, "approximate", "none") != "none":
                self.refuse("gelu approximate='tanh' (cltrain's gelu is erf's)")
            if f is F.leaky_relu and self.arg(1, "negative_slope", 0.01) != 0.01:
                self.refuse("leaky_relu slope other than 0.01")
            return self.act(ACTS[f], self.tensor_in(n.args[0]))
        if f in (operator.add, operator.iadd, torch.add):
            if self.arg(None, "alpha", 1) != 1:
                self.refuse("add with alpha")
            return self.add(n.args[0], n.args[1])
        if f in (operator.mul, operator.imul, torch.mul):
            return self.mul(n.args[0], n.args[1])
        if f is torch.cat:
            return self.cat(self.arg(0, "tensors"), self.arg(1, "dim", 0))
        if f is torch.flatten:
            return self.flatten_from(self.tensor_in(n.args[0]), self.arg(1, "start_dim", 0),
                                     self.arg(2, "end_dim", -1))
        if f is torch.permute:
            return self.reorder(n.args[0], self.arg(1, "dims"))
        if f is torch.transpose:
            return self.reorder(n.args[0], None, (self.arg(1, "dim0"), self.arg(2, "dim1")))
        if f is operator.getitem:
            a = n.args[0]
            if a in self.out and a.op == "call_module" and isinstance(self.mods[a.target], nn.MultiheadAttention):
                return self.alias(a)  # [0], the attention's output: attention() checked its readers
            self.refuse(f"indexing {n.args[1]!r} has no cltrain layer")
        if f in (F.adaptive_avg_pool2d,):
            return self.adaptive(self.tensor_in(n.args[0]), self.arg(1, "output_size"))
        if f in (F.max_pool2d, torch.max_pool2d):
            k = self.arg(1, "kernel_size")
            return self.pool("maxpool", self.tensor_in(n.args[0]), k, self.arg(2, "stride", None) or k,
                             self.arg(3, "padding", 0), self.arg(4, "dilation", 1), self.arg(5, "ceil_mode", False),
                             return_indices=self.arg(6, "return_indices", False))
        if f in (F.avg_pool2d, torch._C._nn.avg_pool2d):
            k = self.arg(1, "kernel_size")
            return self.pool("avgpool", self.tensor_in(n.args[0]), k, self.arg(2, "stride", None) or k,
                             self.arg(3, "padding", 0), 1, self.arg(4, "ceil_mode", False),
                             count_include_pad=self.arg(5, "count_include_pad", True),
                             divisor=self.arg(6, "divisor_override", None))
        if f is F.interpolate:
            return self.upsample(self.tensor_in(n.args[0]), self.arg(3, "mode", "nearest"),
                                 self.arg(4, "align_corners", None))
        if f is F.dropout:
            self.refuse("functional dropout (its training flag is traced as a constant); use nn.Dropout")
        if f is torch.mean:
            return self.mean(self.tensor_in(n.args[0]), self.arg(1, "dim"), self.arg(2, "keepdim", False))
        self.refuse(f"function {getattr(f, '__module__', '')}.{getattr(f, '__name__', f)} has no cltrain layer")

    def call_method(self, meth):
        n = self.node
        if meth not in ("add", "__add__", "__radd__") and self.table_op():
            return
        if meth == "permute":
            dims = n.args[1:] if len(n.args) > 2 or not n.args[1:] else n.args[1]
            return self.reorder(n.args[0], dims or self.arg(None, "dims"))
        if meth == "transpose":
            return self.reorder(n.args[0], None, (self.arg(1, "dim0"), self.arg(2, "dim1")))
        x = self.tensor_in(n.args[0])
        if meth == "contiguous":
            return self.alias(x)
        if meth in ACTS:
            return self.act(ACTS[meth], x)
        if meth in ("add", "add_", "__add__"):
            return self.add(x, n.args[1])
        if meth in ("mul", "mul_", "__mul__"):
            return self.mul(x, n.args[1])
        if meth == "flatten":
            return self.flatten_from(x, self.arg(1, "start_dim", 0), self.arg(2, "end_dim", -1))
        if meth == "mean":
            return self.mean(x, self.arg(1, "dim"), self.arg(2, "keepdim", False))
        if meth == "size" and all(u.op == "call_method" and u.target in ("view", "reshape") for u in n.users):
            return  # x.size(0) read by x.view(x.size(0), -1)
        if meth in ("view", "reshape"):
            rest = n.args[1:]
            if len(rest) == 1 and isinstance(rest[0], (tuple, list)):
                rest = rest[0]
            first = rest[0] if rest else None
            batch = isinstance(first, fx.Node) and first.op == "call_method" and first.target == "size" \
                and first.args[0] is x and first.args[1:] == (0,)
            if len(rest) == 2 and batch and rest[1] == -1:
                return self.flatten(x)
            self.refuse(f"{meth}{tuple(rest)}: only x.{meth}(x.size(0), -1), a flatten, has a cltrain layer")
        self.refuse(f"method Tensor.{meth} has no cltrain layer")

    def conv2d(self, m, x):
        c, h, w = self.image_in(x)
        if m.padding_mode != "zeros":
            self.refuse(f"padding_mode '{m.padding_mode}' (cltrain pads with zeros)")
        k = pair(m.kernel_size, "kernel")
        s, d = pair(m.stride, "stride"), pair(m.dilation, "dilation")
        if m.transposed and isinstance(m.padding, str):
            self.refuse(f"transposed convolution with padding='{m.padding}'")
        if m.padding == "valid":
            p = 0
        elif m.padding == "same":
            if s != 1 or d * (k - 1) % 2:
                self.refuse("padding='same' with a stride or an even window")
            p = d * (k - 1) // 2
        else:
            p = pair(m.padding, "padding")
        keys = {"out": m.out_channels, "kernel": k}
        op = pair(m.output_padding, "output_padding") if m.transposed else 0
        if m.transposed and m.groups > 1:
            self.refuse(f"transposed convolution with groups={m.groups} (cltrain's conv_transpose2d has one group)")
        for key, v, default in (("stride", s, 1), ("pad", p, 0), ("output_padding", op, 0), ("dilation", d, 1),
                                ("groups", m.groups, 1)):
            if v != default:
                keys[key] = v
        if m.bias is None:
            keys["bias"] = "false"
        self.emit("conv_transpose2d" if m.transposed else "conv2d", keys, [x], self.tshape())

    def batchnorm(self, m, x):
        s = self.cshape(x)
        if not m.affine or not m.track_running_stats:
            self.refuse("batch norm without affine weights or running statistics")
        if m.momentum is None:
            self.refuse("batch norm with momentum=None (a cumulative average; cltrain's is exponential)")
        if len(s) != (3 if isinstance(m, nn.BatchNorm2d) else 1):
            self.refuse(f"{type(m).__name__} on {s}")
        keys = {}
        if m.eps != 1e-5:
            keys["eps"] = m.eps
        if m.momentum != 0.1:
            keys["momentum"] = m.momentum
        self.emit("batchnorm", keys, [x], s)

    def act(self, name, x):
        prev = self.layers[-1]
        if (self.out[x][0] == prev[0] and name in FUSES.get(prev[1], ()) and "act" not in prev[2]
                and self.readers(prev[0]) == 1):
            prev[2]["act"] = name  # fused; the activation has no parameters to name
            return self.alias(x)
        self.emit(name, {}, [x], self.cshape(x))

    def pool(self, ltype, x, k, s, p, d, ceil, return_indices=False, count_include_pad=True, divisor=None):
        self.image_in(x)
        k, s, p = pair(k, "kernel"), pair(s if s else k, "stride"), pair(p, "padding")
        extra = [f"{key}={v}" for key, v, plain in (("dilation", pair(d, "dilation"), 1), ("ceil_mode", ceil, False),
                                                    ("return_indices", return_indices, False),
                                                    ("divisor_override", divisor, None)) if v != plain]
        if extra:
            self.refuse(f"pooling with {', '.join(extra)} (cltrain's pools have none of these)")
        if p > k // 2:
            self.refuse(f"padding {p} over half the window {k}")
        keys = {"kernel": k}
        if s != k:
            keys["stride"] = s
        if p:
            keys["pad"] = p
        if ltype == "avgpool" and not count_include_pad:
            keys["count_include_pad"] = "false"
        self.emit(ltype, keys, [x], self.tshape())

    def global_pool(self, x, keepdim):
        c, h, w = self.image_in(x)
        readers = [u for u in self.node.users]
        as_image = keepdim and any(not (u.op == "call_module" and isinstance(self.mods[u.target], nn.Flatten))
                                   and not (u.op in ("call_function", "call_method") and u.target in
                                            (torch.flatten, "flatten", operator.mul, torch.mul, "mul"))
                                   for u in readers)
        if as_image:  # read as (C, 1, 1) by convolutions: squeeze-and-excitation
            if h != w:
                self.refuse(f"a global pool of a non-square {h}x{w} image read as an image")
            return self.emit("avgpool", {"kernel": h}, [x], (c, 1, 1))
        self.emit("global_avgpool", {}, [x], (c,))

    def adaptive(self, x, size):
        c, h, w = self.image_in(x)
        o = (size, size) if isinstance(size, int) else tuple(size)
        if o == (1, 1):
            return self.global_pool(x, True)
        if o == (h, w):
            return self.alias(x)
        if len(o) == 2 and o[0] == o[1] and h == w and h % o[0] == 0:
            return self.emit("avgpool", {"kernel": h // o[0]}, [x], (c, o[0], o[0]))
        self.refuse(f"adaptive pooling of {h}x{w} to {o}")

    def mean(self, x, dim, keepdim):
        dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
        if len(self.cshape(x)) == 2:  # a sequence: the mean over its steps
            t = self.axes[x].index("T")
            if len(dims) != 1 or not isinstance(dims[0], int) or dims[0] % 3 != t or keepdim:
                self.refuse(f"mean over {dim} (keepdim={keepdim}) of a sequence {self.axes[x]}: only over "
                            f"its steps, dimension {t}, has a cltrain layer (seqpool)")
            return self.emit("seqpool", {"mode": "mean"}, [x], self.cshape(x)[1:])
        if len(self.cshape(x)) != 3 or sorted(d % 4 for d in dims) != [2, 3]:
            self.refuse(f"mean over {dim} (only over height and width, a global average pool)")
        return self.global_pool(x, keepdim)

    def flatten_from(self, x, start, end):
        if start == 2 and end == -1:  # a vision transformer's patches, on their way to a sequence
            self.image_in(x)
            for u in self.node.users:
                if u.target not in ("permute", "transpose", torch.permute, torch.transpose):
                    self.refuse(f"x.flatten(2) read by fx node '{u.name}': only a permute or transpose of "
                                "it to a sequence, (H*W, N, C) or (N, H*W, C), has a cltrain layer (to_sequence)")
            self.pending[self.node] = x
            return
        if start != 1 or end != -1:
            self.refuse(f"flatten from dimension {start} to {end} (cltrain flattens from 1 on, or an "
                        "image's pixels from 2 on into a sequence)")
        self.flatten(x)

    def flatten(self, x):
        s = self.cshape(x)
        if len(s) == 1:
            return self.alias(x)
        if len(s) == 2:
            self.refuse(f"flatten of a sequence {self.axes[x]} (cltrain keeps sequences time-major; pool "
                        "its steps first)")
        self.emit("flatten", {}, [x], (math.prod(s),))

    def add(self, a, b):
        if b in self.tables:
            a, b = b, a
        if a in self.tables:
            return self.posembed(self.tensor_in(b), a)
        a, b = self.tensor_in(a), self.tensor_in(b)
        if self.cshape(a) != self.cshape(b) or self.axes.get(a) != self.axes.get(b):
            self.refuse(f"add of {self.cshape(a)} and {self.cshape(b)} (cltrain adds equal shapes)")
        self.emit("add", {}, [a, b], self.cshape(a))

    def mul(self, a, b):
        a, b = self.tensor_in(a), self.tensor_in(b)
        sa, sb = self.cshape(a), self.cshape(b)
        def gates(img, g):
            return len(img) == 3 and img != g and g in ((img[0],), (img[0], 1, 1))
        if gates(sb, sa):
            a, b, sa, sb = b, a, sb, sa  # the image first, the gate second
        gate = gates(sa, sb)
        if (sa != sb and not gate) or self.axes.get(a) != self.axes.get(b):
            self.refuse(f"mul of {sa} and {sb} (equal shapes, or an image and a per-channel gate)")
        self.emit("mul", {}, [a, b], sa)

    def cat(self, tensors, dim):
        xs = [self.tensor_in(t) for t in tensors]
        if len(xs) == 1:
            return self.alias(xs[0])
        shapes = [self.cshape(t) for t in xs]
        nd = len(shapes[0])
        if nd == 2:
            self.refuse(f"cat of sequences {shapes} (cltrain's concat gives sequences (sum T, E), not their "
                        "steps' features joined)")
        if dim not in (1, 1 - (nd + 1)) or any(len(s) != nd or s[1:] != shapes[0][1:] for s in shapes):
            self.refuse(f"cat of {shapes} along {dim} (cltrain concatenates along the channels, the rest equal)")
        name, names, k = self.layer_name(), [self.out[t][0] for t in xs], 0
        while len(names) > 8:  # concat takes 2 to 8: a chain of them (DenseNet's blocks), exactly the same
            k += 1
            part = f"{name}_part{k}"
            while part in self.names or part in self.taken:
                part += "_"
            self.add_layer(part, "concat", {}, names[:8])
            names = [part] + names[8:]
        self.add_layer(name, "concat", {}, names)
        self.out[self.node] = (name, (sum(s[0] for s in shapes),) + tuple(shapes[0][1:]))

    def upsample(self, x, mode, align_corners):
        c, h, w = self.image_in(x)
        oc, oh, ow = self.tshape()
        if mode not in ("nearest", "bilinear") or (mode == "bilinear" and align_corners):
            self.refuse(f"upsampling mode '{mode}' align_corners={align_corners} (nearest, or bilinear "
                        "with align_corners=False)")
        if oh % h or ow % w or oh // h != ow // w or not 1 <= oh // h <= 64:
            self.refuse(f"upsampling {h}x{w} to {oh}x{ow} (an integer factor 1 to 64 of both)")
        keys = {}
        if mode != "nearest":
            keys["mode"] = mode
        if oh // h != 2:
            keys["scale"] = oh // h
        self.emit("upsample", keys, [x], (c, oh, ow))

    # ---- sequences: a vision transformer's idioms ----

    def reorder(self, v, dims, swap=None):
        """x.permute(dims) or x.transpose(*swap): of x.flatten(2), a sequence
        (to_sequence); of a sequence, the same one in the other layout."""
        if v in self.pending:
            axes = ("N", "E", "T")  # (N, C, H*W): the channels become the features, the pixels the steps
        elif isinstance(v, fx.Node) and v in self.axes:
            axes = self.axes[v]
        else:
            self.refuse(f"a permute or transpose of {self.cshape(self.tensor_in(v))} (only of sequences, and "
                        "of an image's x.flatten(2))")
        if swap is not None and all(isinstance(d, int) for d in swap):
            dims = list(range(3))
            dims[swap[0] % 3], dims[swap[1] % 3] = dims[swap[1] % 3], dims[swap[0] % 3]
        if dims is None or not all(isinstance(d, int) for d in dims) or sorted(d % 3 for d in dims) != [0, 1, 2]:
            self.refuse(f"dimensions {swap if swap is not None else dims} of a 3-dimensional tensor")
        new = tuple(axes[d % 3] for d in dims)
        if new not in (("T", "N", "E"), ("N", "T", "E")):
            self.refuse(f"axes {new}: cltrain's sequences are (T, N, E) or batch-first (N, T, E), features last")
        if v in self.pending:
            c, h, w = self.cshape(self.pending[v])
            self.emit("to_sequence", {}, [self.pending[v]], (h * w, c))
        else:
            self.alias(v)
        self.axes[self.node] = new

    def get_attr(self, target):
        params = dict(self.module.named_parameters())
        path, _, leaf = target.rpartition(".")
        if target not in params or leaf != "weight" or params[target].dim() != 2:
            self.refuse(f"the tensor '{target}' read directly: only a module's (max_len, E) weight added to a "
                        "sequence as its position table has a cltrain layer (posembed, saving '<module>.weight')")
        self.tables[self.node] = (path, params[target].detach(), params[target].detach())

    def table_op(self):
        """Indexing or reshaping a position table (`pos.weight[:, None, :]`):
        computed here; posembed() checks that the rows are the table's."""
        n, nodes = self.node, []
        fx.node.map_arg((n.args, n.kwargs), nodes.append)
        tables = [v for v in nodes if v in self.tables]
        if not tables:
            return False
        if len(tables) != len(nodes) or len({self.tables[v][0] for v in tables}) > 1:
            self.refuse(f"'{self.tables[tables[0]][0]}.weight' with other tensors: a position table only adds "
                        "to a sequence (posembed)")
        args, kwargs = fx.node.map_arg((n.args, n.kwargs), lambda v: self.tables[v][1])
        with torch.no_grad():
            val = n.target(*args, **kwargs) if n.op == "call_function" else getattr(args[0], n.target)(
                *args[1:], **kwargs)
        path, _, weight = self.tables[tables[0]]
        self.tables[n] = (path, val, weight)
        return True

    def posembed(self, x, table):
        """x + table: posembed named as the table's module, when the table
        broadcast over the batch is the weight's first T rows, step by step."""
        t, e = self.seq_in(x)
        path, val, weight = self.tables[table]
        want = (t, 1, e) if self.axes[x] == ("T", "N", "E") else (1, t, e)
        v = val.reshape((1,) * (3 - val.dim()) + tuple(val.shape)) if val.dim() <= 3 else val
        if (tuple(v.shape) != want or weight.shape[1] != e or weight.shape[0] < t
                or not torch.equal(v.reshape(t, e), weight[:t])):
            self.refuse(f"a sequence {self.axes[x]} {(t, e)} plus {tuple(val.shape)} from '{path}.weight' "
                        f"{tuple(weight.shape)}: posembed adds the table's rows 0 to T-1 (row t to step t), "
                        f"shaped {want}")
        if path in self.names:
            self.refuse(f"'{path}.weight' used twice: cltrain layers do not share parameters")
        self.emit("posembed", {"max_len": weight.shape[0]}, [x], (t, e), name=path)

    def attention(self, m):
        """nn.MultiheadAttention(x, x, x)[0] on a sequence: attention causal=false."""
        n = self.node
        q, k, v = (self.arg(i, name) for i, name in enumerate(("query", "key", "value")))
        if not (q is k is v):
            self.refuse("query, key and value differ (cltrain's attention is self-attention: one sequence "
                        "is all three)")
        t, e = self.seq_in(self.tensor_in(q))
        for i, name in ((3, "key_padding_mask"), (5, "attn_mask"), (7, "is_causal")):
            if self.arg(i, name):
                self.refuse(f"{name} given (cltrain's attention takes no mask; causal=true is its only one)")
        why = [what for what, bad in (
            (f"kdim/vdim {m.kdim}/{m.vdim}", not m._qkv_same_embed_dim), ("bias=False", m.in_proj_bias is None),
            ("add_bias_kv", m.bias_k is not None), ("add_zero_attn", m.add_zero_attn),
            (f"dropout {m.dropout}", m.dropout != 0),
            (f"batch_first={m.batch_first} on a sequence {self.axes[q]}",
             m.batch_first != (self.axes[q] == ("N", "T", "E")))) if bad]
        if why:
            self.refuse(f"MultiheadAttention with {', '.join(why)} (cltrain's attention has biases, one width, "
                        "no dropout, and reads sequences in either layout)")
        for u in n.users:
            if u.target is not operator.getitem or u.args[1] != 0:
                self.refuse(f"fx node '{u.name}' reads more than the attention's output [0] (cltrain's "
                            "attention gives no weights)")
        self.emit("attention", {"heads": m.num_heads, "causal": "false"}, [q], (t, e))
