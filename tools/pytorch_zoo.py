#!/usr/bin/python3
"""pytorch_zoo.py - PyTorch twins of the zoo's unet and vit whose parameter
names are the cltrain checkpoint's tensor names (`<layer>.<parameter>`), so
a checkpoint's tensors load into them by name: the modules that
tools/record_zoo_step.py takes a reference step with. Each layer of the
zoo's text is a submodule named as the layer; the forward is the text's
graph (`cltrain zoo unet`, `cltrain zoo vit`).

Not part of the library: Debian's python3-torch.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class UNet(nn.Module):
    """The zoo's unet: 1x32x32 images, 4 classes per pixel."""

    def __init__(self, classes=4):
        super().__init__()

        def conv(i, o):
            return nn.Conv2d(i, o, 3, padding=1, bias=False)

        plan = [("enc1a", 1, 16), ("enc1b", 16, 16), ("enc2a", 16, 32), ("enc2b", 32, 32), ("mida", 32, 64),
                ("midb", 64, 64), ("dec2a", 64, 32), ("dec2b", 32, 32), ("dec1a", 32, 16), ("dec1b", 16, 16)]
        # each convolution's batch norm: "<conv>_bn", or the block's name for the second one
        bn = {"enc1a": "enc1a_bn", "enc1b": "enc1", "enc2a": "enc2a_bn", "enc2b": "enc2", "mida": "mida_bn",
              "midb": "mid", "dec2a": "dec2a_bn", "dec2b": "dec2", "dec1a": "dec1a_bn", "dec1b": "dec1"}
        self.bn_of = bn
        for name, i, o in plan:
            setattr(self, name, conv(i, o))
            setattr(self, bn[name], nn.BatchNorm2d(o))
        self.up2 = nn.ConvTranspose2d(64, 32, 2, stride=2)
        self.up1 = nn.ConvTranspose2d(32, 16, 2, stride=2)
        self.head = nn.Conv2d(16, classes, 1)

    def block(self, a, b, x):
        x = F.relu(getattr(self, self.bn_of[a])(getattr(self, a)(x)))
        return F.relu(getattr(self, self.bn_of[b])(getattr(self, b)(x)))

    def forward(self, x):
        e1 = self.block("enc1a", "enc1b", x)
        e2 = self.block("enc2a", "enc2b", F.max_pool2d(e1, 2))
        m = self.block("mida", "midb", F.max_pool2d(e2, 2))
        d2 = self.block("dec2a", "dec2b", torch.cat([self.up2(m), e2], 1))
        d1 = self.block("dec1a", "dec1b", torch.cat([self.up1(d2), e1], 1))
        return self.head(d1)


class ViT(nn.Module):
    """The zoo's vit: 28x28 images as 49 patches of 4x4, width 64, 4 pre-LN
    blocks of 4 heads, mean pool, 10 classes."""

    def __init__(self, width=64, heads=4, blocks=4, mlp=128, classes=10, patches=49):
        super().__init__()
        self.blocks = blocks
        self.patch = nn.Conv2d(1, width, 4, stride=4)
        self.pos = nn.Embedding(patches, width)  # posembed: weight (max_len, E)
        for b in range(blocks):
            setattr(self, f"b{b}_ln1", nn.LayerNorm(width))
            setattr(self, f"b{b}_attn", nn.MultiheadAttention(width, heads))
            setattr(self, f"b{b}_ln2", nn.LayerNorm(width))
            setattr(self, f"b{b}_fc1", nn.Linear(width, mlp))
            setattr(self, f"b{b}_fc2", nn.Linear(mlp, width))
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).permute(2, 0, 1)  # (T, N, E), as cltrain keeps sequences
        x = x + self.pos.weight[:, None, :]
        for b in range(self.blocks):
            g = lambda n: getattr(self, f"b{b}_{n}")  # noqa: E731
            h = g("ln1")(x)
            x = x + g("attn")(h, h, h, need_weights=False)[0]
            x = x + g("fc2")(F.gelu(g("fc1")(g("ln2")(x))))
        return self.head(self.ln(x).mean(0))


TWINS = {"unet": UNet, "vit": ViT}
