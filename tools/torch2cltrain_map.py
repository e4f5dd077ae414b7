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
  nn.Linear on feature vectors                           dense
  nn.Dropout (p kept)                                    dropout
  x + y, torch.add                                       add
  torch.cat(dim=1)                                       concat (over 8
    tensors: a chain of concats)
  x * gate, torch.mul (equal shapes, or a (C, 1, 1) gate) mul
  nn.Upsample, F.interpolate (integer scale, nearest or bilinear with
    align_corners=False)                                 upsample
  nn.LayerNorm over feature vectors                      layernorm
  nn.Identity                                            nothing
The logits end in softmax_cross_entropy. Anything else (another module, a
function, a method, a constant operand, a module with parameters called
twice) is refused with the fx node's name and target and the module it sits
in, and nothing is written.
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
    "layernorm": ["weight", "bias"],
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
        self.node = None
        param_mods = {n.target for n in gm.graph.nodes if n.op == "call_module"
                      and any(True for _ in self.mods[n.target].parameters(recurse=False))}
        self.taken = set(param_mods) | {"input", "loss"}
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

    def emit(self, ltype, keys, inputs, shape):
        name = self.layer_name()
        self.add_layer(name, ltype, keys, [self.out[i][0] for i in inputs])
        self.out[self.node] = (name, shape)

    def alias(self, src, shape=None):
        name, s = self.out[src]
        self.out[self.node] = (name, shape if shape is not None else s)

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
                if len(s) != 1:
                    self.refuse(f"the output has shape {s} per sample; a classifier's logits are (K,)")
                self.layers.append(["loss", "softmax_cross_entropy", {}, [name]])
            elif node.op == "call_module":
                self.call_module(self.mods[node.target])
            elif node.op == "call_function":
                self.call_function(node.target)
            elif node.op == "call_method":
                self.call_method(node.target)
            else:
                self.refuse(f"{node.op} is not supported")
        return self.layers

    def call_module(self, m):
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
            if len(s) != 1:
                self.refuse(f"Linear on a {s} tensor applies to its last dimension; cltrain's dense reads "
                            "feature vectors (flatten first)")
            keys = {"out": m.out_features}
            if m.bias is None:
                keys["bias"] = "false"
            return self.emit("dense", keys, [x], (m.out_features,))
        if t is nn.Dropout:
            return self.emit("dropout", {"p": m.p}, [x], self.cshape(x))
        if t is nn.Identity:
            return self.alias(x)
        if t is nn.Upsample:
            return self.upsample(x, m.mode, m.align_corners)
        if t is nn.LayerNorm:
            s = self.cshape(x)
            if len(s) != 1 or tuple(m.normalized_shape) != s or not m.elementwise_affine:
                self.refuse(f"LayerNorm{tuple(m.normalized_shape)} on {s}: cltrain's layernorm normalizes "
                            "feature vectors, with weight and bias")
            return self.emit("layernorm", {"eps": m.eps} if m.eps != 1e-5 else {}, [x], s)
        self.refuse(f"module type {t.__module__}.{t.__name__} has no cltrain layer")

    def call_function(self, f):
        n = self.node
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
            if self.arg(1, "start_dim", 0) != 1 or self.arg(2, "end_dim", -1) != -1:
                self.refuse("flatten other than flatten(x, 1)")
            return self.flatten(self.tensor_in(n.args[0]))
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
        x = self.tensor_in(n.args[0])
        if meth in ACTS:
            return self.act(ACTS[meth], x)
        if meth in ("add", "add_", "__add__"):
            return self.add(x, n.args[1])
        if meth in ("mul", "mul_", "__mul__"):
            return self.mul(x, n.args[1])
        if meth == "flatten":
            if self.arg(1, "start_dim", 0) != 1 or self.arg(2, "end_dim", -1) != -1:
                self.refuse("flatten other than x.flatten(1)")
            return self.flatten(x)
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
        if len(self.cshape(x)) != 3 or sorted(d % 4 for d in dims) != [2, 3]:
            self.refuse(f"mean over {dim} (only over height and width, a global average pool)")
        return self.global_pool(x, keepdim)

    def flatten(self, x):
        s = self.cshape(x)
        if len(s) == 1:
            return self.alias(x)
        self.emit("flatten", {}, [x], (math.prod(s),))

    def add(self, a, b):
        a, b = self.tensor_in(a), self.tensor_in(b)
        if self.cshape(a) != self.cshape(b):
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
        if sa != sb and not gate:
            self.refuse(f"mul of {sa} and {sb} (equal shapes, or an image and a per-channel gate)")
        self.emit("mul", {}, [a, b], sa)

    def cat(self, tensors, dim):
        xs = [self.tensor_in(t) for t in tensors]
        if len(xs) == 1:
            return self.alias(xs[0])
        shapes = [self.cshape(t) for t in xs]
        nd = len(shapes[0])
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
