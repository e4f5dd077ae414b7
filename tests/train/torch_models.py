"""torch_models.py - modules for tests/train/test_torch2cltrain.sh, each
built as tools/torch2cltrain.py builds MODULE:CALLABLE.

The torchvision models are randomly initialized (weights=None) from a fixed
seed, and their batch norms get random affine parameters, running
statistics of their own (PyTorch starts them at 1, 0, 0 and 1, which would
make a wrong use of them invisible) and a step count; so do those of
`unet`, tools/pytorch_zoo.py's twin of the zoo's unet, and `vit`, the
zoo's vit, gets layer norms and attention biases away from their initial
ones in the same spirit. `Refused` and
`RefusedModule` hold a function and a module cltrain has no layer for,
inside a submodule."""
import torch
import torch.nn as nn
import torchvision


def randomized(model, shape=(3, 64, 64)):
    """Random batch-norm weights and biases, then running statistics
    measured on random images of `shape` (cumulative averages over one
    batch, as a trained network's would be: the activations stay near unit
    scale), and a random step count."""
    g = torch.Generator().manual_seed(7)
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    for m in bns:
        c = m.num_features
        m.weight.data = 0.5 + torch.rand(c, generator=g)
        m.bias.data = 0.2 * torch.randn(c, generator=g)
        m.reset_running_stats()
        m.momentum = None
    model.train()
    with torch.no_grad():
        model(torch.randn((8,) + tuple(shape), generator=g))
    for m in bns:
        m.momentum = 0.1
        m.num_batches_tracked.fill_(int(torch.randint(1, 1000, (1,), generator=g)))
    return model.eval()


def resnet18(**kwargs):
    torch.manual_seed(1)
    return randomized(torchvision.models.resnet18(weights=None, **kwargs))


def resnet50(**kwargs):
    torch.manual_seed(2)
    return randomized(torchvision.models.resnet50(weights=None, **kwargs))


def mobilenet_v2(**kwargs):
    torch.manual_seed(3)
    return randomized(torchvision.models.mobilenet_v2(weights=None, **kwargs))


def unet(**kwargs):
    """tools/pytorch_zoo.py's UNet, its batch norms randomized."""
    import pytorch_zoo
    torch.manual_seed(5)
    return randomized(pytorch_zoo.UNet(**kwargs), (1, 32, 32))


def vit(**kwargs):
    """tools/pytorch_zoo.py's ViT with its layer norms' weights and biases
    and its attention biases moved off their initial 1 and 0."""
    import pytorch_zoo
    torch.manual_seed(6)
    model = pytorch_zoo.ViT(**kwargs)
    g = torch.Generator().manual_seed(6)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.add_(0.3 * torch.randn(m.weight.shape, generator=g))
                m.bias.add_(0.2 * torch.randn(m.bias.shape, generator=g))
            if isinstance(m, nn.MultiheadAttention):
                m.in_proj_bias.add_(0.2 * torch.randn(m.in_proj_bias.shape, generator=g))
                m.out_proj.bias.add_(0.2 * torch.randn(m.out_proj.bias.shape, generator=g))
    return model.eval()


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return torch.logsumexp(self.conv(x), dim=1, keepdim=True)


class Refused(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.fc = nn.Linear(64, 3)

    def forward(self, x):
        return self.fc(torch.flatten(self.block(x), 1))


class ActBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.act = nn.ELU()

    def forward(self, x):
        return self.act(self.conv(x))


class RefusedModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = ActBlock()
        self.fc = nn.Linear(256, 3)

    def forward(self, x):
        return self.fc(torch.flatten(self.block(x), 1))


class SE(nn.Module):
    """torchvision's SqueezeExcitation in miniature: 1x1 convolutions on the
    pooled (C, 1, 1) tensor, a sigmoid gate multiplied in."""

    def __init__(self, c):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(c, c // 2, 1)
        self.act = nn.SiLU()
        self.fc2 = nn.Conv2d(c // 2, c, 1)
        self.gate = nn.Sigmoid()

    def forward(self, x):
        return self.gate(self.fc2(self.act(self.fc1(self.avgpool(x))))) * x


class Idioms(nn.Module):
    """The other idioms the tool maps: convolutions with dilation and
    'same' padding, a transposed convolution, fused and separate
    activations, pools, concatenation, upsampling, squeeze-and-excitation,
    a view flatten, layer norm, dropout and GELU on feature vectors."""

    def __init__(self, num_classes=5):
        super().__init__()
        torch.manual_seed(4)
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU6())
        self.branch = nn.Conv2d(8, 8, 3, padding="same", dilation=2, bias=False)
        self.pool = nn.MaxPool2d(2)
        self.avg = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.se = SE(16)
        self.deconv = nn.ConvTranspose2d(16, 16, 3, padding=1)
        self.head = nn.Conv2d(16, 8, 1)
        self.norm = nn.LayerNorm(8 * 8 * 8)
        self.drop = nn.Dropout(0.2)
        self.fc1 = nn.Linear(8 * 8 * 8, 32)
        self.fc2 = nn.Linear(32, num_classes)

    def forward(self, x):
        x = self.stem(x)
        y = torch.nn.functional.hardswish(self.branch(x))
        x = torch.cat([x, torch.tanh(y)], dim=1)
        x = self.up(self.avg(self.pool(x)))
        x = torch.relu(self.deconv(self.se(x)))
        h = self.head(x)
        x = torch.sigmoid(h) + torch.nn.functional.interpolate(h, scale_factor=1)
        x = torch.nn.functional.max_pool2d(x, 2)
        x = self.norm(x.view(x.size(0), -1))
        return self.fc2(self.drop(torch.nn.functional.gelu(self.fc1(x))))


class SeqIdioms(nn.Module):
    """A batch-first transformer's idioms on 3x8x8 images: patches by
    x.flatten(2).transpose(1, 2), a position table of more rows than steps
    sliced and unsqueezed, layer norm with its own eps, attention with
    batch_first=True (its weights asked for but not read), the sequence
    turned time-major by transpose and permute, .contiguous(), a residual
    add, a GELU module and the mean over the steps."""

    def __init__(self, num_classes=3):
        super().__init__()
        torch.manual_seed(8)
        self.patch = nn.Conv2d(3, 16, 2, stride=2)
        self.pos = nn.Embedding(20, 16)
        self.norm = nn.LayerNorm(16, eps=1e-6)
        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)
        self.fc = nn.Linear(16, 24)
        self.act = nn.GELU()
        self.head = nn.Linear(24, num_classes)
        with torch.no_grad():
            self.attn.in_proj_bias.normal_(0, 0.2)
            self.attn.out_proj.bias.normal_(0, 0.2)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2) + self.pos.weight[:16].unsqueeze(0)
        h = self.norm(x)
        a = self.attn(h, h, h)[0].transpose(0, 1)
        x = x.permute(1, 0, 2).contiguous() + a
        return self.head(self.act(self.fc(x)).mean(0))


class RefusedTable(nn.Module):
    """A position table that is a bare parameter, not a module's weight."""

    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(3, 8, 2, stride=2)
        self.pos_embed = nn.Parameter(torch.zeros(1, 16, 8))
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head((self.patch(x).flatten(2).transpose(1, 2) + self.pos_embed).mean(1))
