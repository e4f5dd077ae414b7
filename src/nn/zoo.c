/*
 * zoo.c - the built-in models. Small ones are written out; the ResNets,
 * MobileNetV2 and gpt are generated (tens to hundreds of lines of text), once,
 * on first use.
 *
 * The seed benchmark networks follow Shi et al. 2017 ("Benchmarking
 * State-of-the-Art Deep Learning Software Tools") and their dlbench code;
 * alexnet-s and resnet50 are torchvision's AlexNet and ResNet-50 (v1.5:
 * stride in the 3x3 convolution). resnet18 and mobilenetv2 are torchvision's
 * resnet18 and mobilenet_v2 (width 1.0), their layers named after the
 * modules, so that checkpoints carry the state_dict's keys;
 * tests/train/test_zoo_step.sh checks a training step of each against
 * PyTorch's. gpt is nanoGPT's pre-LN decoder block
 * (x + attn(ln_1(x)), x + mlp(ln_2(x))) on bytes; tools/pytorch_gpt.py is the
 * same module in PyTorch, with the checkpoint's tensor names.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/model.h"

static const char mlp_text[] =
    "# 784-256-128-10 multi-layer perceptron for 28x28 images\n"
    "input shape=1x28x28\n"
    "fc1: dense out=256 act=relu\n"
    "fc2: dense out=128 act=relu\n"
    "fc3: dense out=10\n"
    "loss: softmax_cross_entropy\n";

static const char cnn_small_text[] =
    "# two convolutions and two dense layers for 28x28 images\n"
    "input shape=1x28x28\n"
    "conv1: conv2d out=32 kernel=3 pad=1 act=relu\n"
    "pool1: maxpool kernel=2\n"
    "conv2: conv2d out=64 kernel=3 pad=1 act=relu\n"
    "pool2: maxpool kernel=2\n"
    "fc1: dense out=128 act=relu\n"
    "fc2: dense out=10\n"
    "loss: softmax_cross_entropy\n";

static const char unet_text[] =
    "# a small U-Net for 1x32x32 images and 4 classes per pixel (segmentation): two 2x2 pools down,\n"
    "# two 2x2/2 transposed convolutions up, skip connections by concatenation\n"
    "input shape=1x32x32\n"
    "enc1a: conv2d out=16 kernel=3 pad=1 bias=false\n"
    "enc1a_bn: batchnorm act=relu\n"
    "enc1b: conv2d out=16 kernel=3 pad=1 bias=false\n"
    "enc1: batchnorm act=relu\n"
    "pool1: maxpool kernel=2\n"
    "enc2a: conv2d out=32 kernel=3 pad=1 bias=false\n"
    "enc2a_bn: batchnorm act=relu\n"
    "enc2b: conv2d out=32 kernel=3 pad=1 bias=false\n"
    "enc2: batchnorm act=relu\n"
    "pool2: maxpool kernel=2\n"
    "mida: conv2d out=64 kernel=3 pad=1 bias=false\n"
    "mida_bn: batchnorm act=relu\n"
    "midb: conv2d out=64 kernel=3 pad=1 bias=false\n"
    "mid: batchnorm act=relu\n"
    "up2: conv_transpose2d out=32 kernel=2 stride=2\n"
    "cat2: concat from=up2,enc2\n"
    "dec2a: conv2d out=32 kernel=3 pad=1 bias=false\n"
    "dec2a_bn: batchnorm act=relu\n"
    "dec2b: conv2d out=32 kernel=3 pad=1 bias=false\n"
    "dec2: batchnorm act=relu\n"
    "up1: conv_transpose2d out=16 kernel=2 stride=2\n"
    "cat1: concat from=up1,enc1\n"
    "dec1a: conv2d out=16 kernel=3 pad=1 bias=false\n"
    "dec1a_bn: batchnorm act=relu\n"
    "dec1b: conv2d out=16 kernel=3 pad=1 bias=false\n"
    "dec1: batchnorm act=relu\n"
    "head: conv2d out=4 kernel=1\n"
    "loss: softmax_cross_entropy\n";

static const char vit_text[] =
    "# a tiny vision transformer for 28x28 images: 4x4 patches (a strided convolution) as 49 tokens of\n"
    "# width 64, learned positions, 4 pre-LN encoder blocks (4 heads, non-causal attention, GELU MLP of\n"
    "# 128), mean pool over the tokens, a linear head\n"
    "input shape=1x28x28\n"
    "patch: conv2d out=64 kernel=4 stride=4\n"
    "tokens: to_sequence\n"
    "pos: posembed max_len=49 std=0.02\n"
    "b0_ln1: layernorm from=pos\n"
    "b0_attn: attention heads=4 causal=false\n"
    "b0_res1: add from=b0_attn,pos\n"
    "b0_ln2: layernorm\n"
    "b0_fc1: dense out=128 act=gelu\n"
    "b0_fc2: dense out=64\n"
    "b0_res2: add from=b0_fc2,b0_res1\n"
    "b1_ln1: layernorm from=b0_res2\n"
    "b1_attn: attention heads=4 causal=false\n"
    "b1_res1: add from=b1_attn,b0_res2\n"
    "b1_ln2: layernorm\n"
    "b1_fc1: dense out=128 act=gelu\n"
    "b1_fc2: dense out=64\n"
    "b1_res2: add from=b1_fc2,b1_res1\n"
    "b2_ln1: layernorm from=b1_res2\n"
    "b2_attn: attention heads=4 causal=false\n"
    "b2_res1: add from=b2_attn,b1_res2\n"
    "b2_ln2: layernorm\n"
    "b2_fc1: dense out=128 act=gelu\n"
    "b2_fc2: dense out=64\n"
    "b2_res2: add from=b2_fc2,b2_res1\n"
    "b3_ln1: layernorm from=b2_res2\n"
    "b3_attn: attention heads=4 causal=false\n"
    "b3_res1: add from=b3_attn,b2_res2\n"
    "b3_ln2: layernorm\n"
    "b3_fc1: dense out=128 act=gelu\n"
    "b3_fc2: dense out=64\n"
    "b3_res2: add from=b3_fc2,b3_res1\n"
    "ln: layernorm\n"
    "pool: seqpool mode=mean\n"
    "head: dense out=10\n"
    "loss: softmax_cross_entropy\n";

static const char cnn_text[] =
    "# the default model: two convolutions with batch normalization for 28x28 images\n"
    "input shape=1x28x28\n"
    "conv1: conv2d out=32 kernel=3 pad=1 bias=false\n"
    "bn1: batchnorm act=relu\n"
    "pool1: maxpool kernel=2\n"
    "conv2: conv2d out=64 kernel=3 pad=1 bias=false\n"
    "bn2: batchnorm act=relu\n"
    "pool2: maxpool kernel=2\n"
    "fc1: dense out=128 act=relu\n"
    "fc2: dense out=10\n"
    "loss: softmax_cross_entropy\n";

static const char fcn_r_text[] =
    "# FCN-R (Shi et al. 2017): 784-2048-4096-1024-10, sigmoid hidden units, MNIST shapes\n"
    "input features=784\n"
    "fc1: dense out=2048 act=sigmoid\n"
    "fc2: dense out=4096 act=sigmoid\n"
    "fc3: dense out=1024 act=sigmoid\n"
    "fc4: dense out=10\n"
    "loss: softmax_cross_entropy\n";

static const char fcn_s_text[] =
    "# FCN-S (Shi et al. 2017): 26752-2048-2048-2048-26752, sigmoid hidden units\n"
    "input features=26752\n"
    "fc1: dense out=2048 act=sigmoid\n"
    "fc2: dense out=2048 act=sigmoid\n"
    "fc3: dense out=2048 act=sigmoid\n"
    "fc4: dense out=26752\n"
    "loss: softmax_cross_entropy\n";

static const char alexnet_r_text[] =
    "# AlexNet-R (Shi et al. 2017): the cuda-convnet CIFAR-10 network\n"
    "input shape=3x32x32\n"
    "conv1: conv2d out=32 kernel=5 pad=2\n"
    "pool1: maxpool kernel=3 stride=2\n"
    "relu1: relu\n"
    "norm1: lrn size=3 alpha=5e-05 beta=0.75 k=1\n"
    "conv2: conv2d out=32 kernel=5 pad=2 act=relu\n"
    "pool2: maxpool kernel=3 stride=2\n"
    "norm2: lrn size=3 alpha=5e-05 beta=0.75 k=1\n"
    "conv3: conv2d out=64 kernel=5 pad=2 act=relu\n"
    "pool3: maxpool kernel=3 stride=2\n"
    "norm3: lrn size=3 alpha=5e-05 beta=0.75 k=1\n"
    "fc: dense out=10\n"
    "loss: softmax_cross_entropy\n";

static const char alexnet_s_text[] =
    "# AlexNet-S: torchvision's AlexNet on 3x224x224 inputs, 1000 classes\n"
    "input shape=3x224x224\n"
    "conv1: conv2d out=64 kernel=11 stride=4 pad=2 act=relu\n"
    "pool1: maxpool kernel=3 stride=2\n"
    "conv2: conv2d out=192 kernel=5 pad=2 act=relu\n"
    "pool2: maxpool kernel=3 stride=2\n"
    "conv3: conv2d out=384 kernel=3 pad=1 act=relu\n"
    "conv4: conv2d out=256 kernel=3 pad=1 act=relu\n"
    "conv5: conv2d out=256 kernel=3 pad=1 act=relu\n"
    "pool5: maxpool kernel=3 stride=2\n"
    "drop6: dropout p=0.5\n"
    "fc6: dense out=4096 act=relu\n"
    "drop7: dropout p=0.5\n"
    "fc7: dense out=4096 act=relu\n"
    "fc8: dense out=1000\n"
    "loss: softmax_cross_entropy\n";

static const char lstm_text[] =
    "# LSTM (Shi et al. 2017): a word-level language model with PTB's shapes\n"
    "# (vocabulary 10000, 2 layers of 256, sequence 32, next-word prediction)\n"
    "input tokens=32\n"
    "embed: embedding vocab=10000 dim=256\n"
    "lstm: lstm hidden=256 layers=2\n"
    "decoder: dense out=10000\n"
    "loss: softmax_cross_entropy\n";

static const char textcls_text[] =
    "# a byte-level text classifier: UTF-8 bytes of up to 128 per text, an LSTM\n"
    "# over them, the mean of its outputs over the text's real (non-padding)\n"
    "# positions, and 8 classes (the 8-language identification of docs/TEXT.md;\n"
    "# copy it and change fc's out= for another number of classes)\n"
    "input tokens=128\n"
    "embed: embedding vocab=256 dim=32\n"
    "lstm: lstm hidden=128\n"
    "pool: seqpool mode=mean\n"
    "fc: dense out=8\n"
    "loss: softmax_cross_entropy\n";

static const char bytelm_text[] =
    "# a byte-level language model: the next UTF-8 byte of every position of 64,\n"
    "# from an LSTM of 2 layers of 256 (docs/TEXT.md)\n"
    "input tokens=64\n"
    "embed: embedding vocab=256 dim=64\n"
    "lstm: lstm hidden=256 layers=2\n"
    "decoder: dense out=256\n"
    "loss: softmax_cross_entropy\n";

/* ---- generated ---- */

typedef struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) CT_PRINTF(2, 3);
static void put(sbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (w < 0) {
            b->oom = 1;
            return;
        }
        if (b->p && b->n + (size_t)w < b->cap) {
            b->n += (size_t)w;
            return;
        }
        size_t cap = (b->cap ? b->cap * 2 : 8192) + (size_t)w;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
}

static char *resnet56_make(void)
{
    sbuf b = { 0 };
    put(&b, "# ResNet-56 (He et al. 2016) for CIFAR-10: 3 stages x 9 basic blocks,\n"
            "# option-A shortcuts (stride-2 subsampling, zero-padded channels)\n"
            "input shape=3x32x32\n"
            "conv1: conv2d out=16 kernel=3 pad=1 bias=false\n"
            "bn1: batchnorm act=relu\n");
    const char *in = "bn1";
    char prev[32];
    int cin = 16;
    for (int s = 1; s <= 3; s++) {
        int c = 16 << (s - 1);
        for (int k = 1; k <= 9; k++) {
            int stride = (s > 1 && k == 1) ? 2 : 1;
            char p[16];
            snprintf(p, sizeof p, "s%db%d", s, k);
            put(&b, "%s_conv1: conv2d out=%d kernel=3 stride=%d pad=1 bias=false from=%s\n", p, c,
                stride, in);
            put(&b, "%s_bn1: batchnorm act=relu\n", p);
            put(&b, "%s_conv2: conv2d out=%d kernel=3 pad=1 bias=false\n", p, c);
            put(&b, "%s_bn2: batchnorm\n", p);
            if (stride != 1 || cin != c) {
                put(&b, "%s_short: shortcut_a stride=%d out=%d from=%s\n", p, stride, c, in);
                put(&b, "%s_add: add from=%s_bn2,%s_short\n", p, p, p);
            } else {
                put(&b, "%s_add: add from=%s_bn2,%s\n", p, p, in);
            }
            put(&b, "%s_out: relu\n", p);
            snprintf(prev, sizeof prev, "%s_out", p);
            in = prev;
            cin = c;
        }
    }
    put(&b, "pool: global_avgpool\nfc: dense out=10\nloss: softmax_cross_entropy\n");
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

static char *resnet50_make(void)
{
    sbuf b = { 0 };
    put(&b, "# ResNet-50: torchvision's resnet50 (v1.5) on 3x224x224 inputs, 1000 classes\n"
            "input shape=3x224x224\n"
            "conv1: conv2d out=64 kernel=7 stride=2 pad=3 bias=false\n"
            "bn1: batchnorm act=relu\n"
            "maxpool: maxpool kernel=3 stride=2 pad=1\n");
    const int blocks[4] = { 3, 4, 6, 3 };
    char in[48] = "maxpool";
    for (int s = 0; s < 4; s++) {
        int w = 64 << s;
        for (int k = 0; k < blocks[s]; k++) {
            int stride = (s > 0 && k == 0) ? 2 : 1;
            char p[32];
            snprintf(p, sizeof p, "layer%d_%d", s + 1, k);
            put(&b, "%s_conv1: conv2d out=%d kernel=1 bias=false from=%s\n", p, w, in);
            put(&b, "%s_bn1: batchnorm act=relu\n", p);
            put(&b, "%s_conv2: conv2d out=%d kernel=3 stride=%d pad=1 bias=false\n", p, w, stride);
            put(&b, "%s_bn2: batchnorm act=relu\n", p);
            put(&b, "%s_conv3: conv2d out=%d kernel=1 bias=false\n", p, 4 * w);
            put(&b, "%s_bn3: batchnorm\n", p);
            if (k == 0) {
                put(&b, "%s_down: conv2d out=%d kernel=1 stride=%d bias=false from=%s\n", p, 4 * w,
                    stride, in);
                put(&b, "%s_downbn: batchnorm\n", p);
                put(&b, "%s_add: add from=%s_bn3,%s_downbn\n", p, p, p);
            } else {
                put(&b, "%s_add: add from=%s_bn3,%s\n", p, p, in);
            }
            put(&b, "%s_out: relu\n", p);
            snprintf(in, sizeof in, "%s_out", p);
        }
    }
    put(&b, "pool: global_avgpool\nfc: dense out=1000\nloss: softmax_cross_entropy\n");
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

static char *resnet18_make(void)
{
    sbuf b = { 0 };
    put(&b, "# ResNet-18: torchvision's resnet18 on 3x224x224 inputs, 1000 classes: 4 stages of\n"
            "# 2 basic blocks, a 1x1/2 convolution + batch norm shortcut where the width doubles;\n"
            "# layers named after the modules, so the checkpoint's tensors are the state_dict's\n"
            "input shape=3x224x224\n"
            "conv1: conv2d out=64 kernel=7 stride=2 pad=3 bias=false\n"
            "bn1: batchnorm act=relu\n"
            "maxpool: maxpool kernel=3 stride=2 pad=1\n");
    char in[48] = "maxpool";
    for (int s = 0; s < 4; s++) {
        int w = 64 << s;
        for (int k = 0; k < 2; k++) {
            int stride = (s > 0 && k == 0) ? 2 : 1;
            char p[32];
            snprintf(p, sizeof p, "layer%d.%d", s + 1, k);
            put(&b, "%s.conv1: conv2d out=%d kernel=3 stride=%d pad=1 bias=false from=%s\n", p, w,
                stride, in);
            put(&b, "%s.bn1: batchnorm act=relu\n", p);
            put(&b, "%s.conv2: conv2d out=%d kernel=3 pad=1 bias=false\n", p, w);
            put(&b, "%s.bn2: batchnorm\n", p);
            if (stride != 1) {
                put(&b, "%s.downsample.0: conv2d out=%d kernel=1 stride=%d bias=false from=%s\n", p,
                    w, stride, in);
                put(&b, "%s.downsample.1: batchnorm\n", p);
                put(&b, "%s.add: add from=%s.bn2,%s.downsample.1\n", p, p, p);
            } else {
                put(&b, "%s.add: add from=%s.bn2,%s\n", p, p, in);
            }
            put(&b, "%s.relu: relu\n", p);
            snprintf(in, sizeof in, "%s.relu", p);
        }
    }
    put(&b, "avgpool: global_avgpool\nfc: dense out=1000\nloss: softmax_cross_entropy\n");
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/* torchvision's mobilenet_v2 (width 1.0) for side x side inputs and `classes`
 * classes; cifar: stride 1 in the stem and in the first stride-2 stage (24
 * channels), as the common CIFAR ports have it. Layers are named after
 * torchvision's modules (features.2.conv.1.0: block 2's depthwise
 * convolution), so the checkpoint's tensors are its state_dict's. */
static char *mobilenetv2_make(int side, int classes, int cifar)
{
    /* expansion t, width c, blocks n, stride s of the first block */
    static const int setting[7][4] = { { 1, 16, 1, 1 },  { 6, 24, 2, 2 },  { 6, 32, 3, 2 },
                                       { 6, 64, 4, 2 },  { 6, 96, 3, 1 },  { 6, 160, 3, 2 },
                                       { 6, 320, 1, 1 } };
    sbuf b = { 0 };
    if (cifar)
        put(&b, "# MobileNetV2 for CIFAR-10: torchvision's mobilenet_v2 (width 1.0) on 3x32x32\n"
                "# inputs, 10 classes, with stride 1 in the stem and in the first stride-2 stage\n"
                "# (the 24-channel one), so the last feature map is 4x4 rather than 1x1\n");
    else
        put(&b, "# MobileNetV2: torchvision's mobilenet_v2 (width 1.0) on 3x224x224 inputs,\n"
                "# 1000 classes\n");
    put(&b, "# inverted residual blocks: 1x1 expansion + bn + relu6, 3x3 depthwise + bn + relu6,\n"
            "# 1x1 projection + bn, added to the block's input where the stride is 1 and the\n"
            "# width stays; layers named after torchvision's modules (features.2.conv.1.0:\n"
            "# block 2's depthwise convolution), so the checkpoint's tensors are its state_dict's\n"
            "input shape=3x%dx%d\n"
            "features.0.0: conv2d out=32 kernel=3 stride=%d pad=1 bias=false\n"
            "features.0.1: batchnorm\n"
            "features.0.2: relu6\n",
        side, side, cifar ? 1 : 2);
    char in[48] = "features.0.2";
    int cin = 32, f = 1;
    for (int g = 0; g < 7; g++) {
        int t = setting[g][0], c = setting[g][1];
        for (int k = 0; k < setting[g][2]; k++, f++) {
            int stride = k == 0 ? setting[g][3] : 1;
            if (cifar && g == 1)
                stride = 1;
            int hidden = cin * t, at = 0;
            char p[32];
            snprintf(p, sizeof p, "features.%d.conv", f);
            if (t != 1) {
                put(&b, "%s.0.0: conv2d out=%d kernel=1 bias=false from=%s\n", p, hidden, in);
                put(&b, "%s.0.1: batchnorm\n%s.0.2: relu6\n", p, p);
                at = 1;
                put(&b, "%s.1.0: conv2d out=%d kernel=3 stride=%d pad=1 groups=%d bias=false\n", p,
                    hidden, stride, hidden);
            } else {
                put(&b, "%s.0.0: conv2d out=%d kernel=3 stride=%d pad=1 groups=%d bias=false "
                        "from=%s\n", p, hidden, stride, hidden, in);
            }
            put(&b, "%s.%d.1: batchnorm\n%s.%d.2: relu6\n", p, at, p, at);
            put(&b, "%s.%d: conv2d out=%d kernel=1 bias=false\n", p, at + 1, c);
            put(&b, "%s.%d: batchnorm\n", p, at + 2);
            if (stride == 1 && cin == c) {
                put(&b, "features.%d.add: add from=%s.%d,%s\n", f, p, at + 2, in);
                snprintf(in, sizeof in, "features.%d.add", f);
            } else {
                snprintf(in, sizeof in, "%s.%d", p, at + 2);
            }
            cin = c;
        }
    }
    put(&b, "features.%d.0: conv2d out=1280 kernel=1 bias=false from=%s\n"
            "features.%d.1: batchnorm\n"
            "features.%d.2: relu6\n"
            "pool: global_avgpool\n"
            "classifier.0: dropout p=0.2\n"
            "classifier.1: dense out=%d\n"
            "loss: softmax_cross_entropy\n",
        f, in, f, f, classes);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

static char *gpt_make(void)
{
    enum { layers = 4, heads = 4, dim = 192, context = 128, vocab = 256 };
    /* GPT-2's initialization: N(0, 0.02^2) weights and zero biases, the
     * projections that end a residual branch scaled by 1/sqrt(2 layers) */
    const char *std = "0.02", *res_std = "0.00707";
    sbuf b = { 0 };
    put(&b, "# a GPT-style byte-level language model: nanoGPT's pre-LN decoder,\n"
            "# %d blocks of x + attn(ln1(x)) (%d heads, causal) and x + proj(gelu(fc(ln2(x)))),\n"
            "# width %d, context %d, a final layer norm and a dense head over %d bytes;\n"
            "# GPT-2's initialization (std %s, %s = %s/sqrt(2 x %d) on the residual projections)\n"
            "input tokens=%d\n"
            "wte: embedding vocab=%d dim=%d std=%s\n"
            "wpe: posembed max_len=%d std=%s\n",
        layers, heads, dim, context, vocab, std, res_std, std, layers, context, vocab, dim, std,
        context, std);
    char in[16] = "wpe";
    for (int k = 0; k < layers; k++) {
        put(&b, "h%d_ln1: layernorm from=%s\n", k, in);
        put(&b, "h%d_attn: attention heads=%d causal=true std=%s out_std=%s\n", k, heads, std, res_std);
        put(&b, "h%d_add1: add from=h%d_attn,%s\n", k, k, in);
        put(&b, "h%d_ln2: layernorm\n", k);
        put(&b, "h%d_fc: dense out=%d act=gelu std=%s\n", k, 4 * dim, std);
        put(&b, "h%d_proj: dense out=%d std=%s\n", k, dim, res_std);
        put(&b, "h%d_add2: add from=h%d_proj,h%d_add1\n", k, k, k);
        snprintf(in, sizeof in, "h%d_add2", k);
    }
    put(&b, "ln_f: layernorm\nhead: dense out=%d std=%s\nloss: softmax_cross_entropy\n", vocab, std);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

static char *resnet56_text, *resnet50_text, *resnet18_text, *mobilenetv2_text, *mobilenetv2_32_text,
    *gpt_text;
static pthread_once_t generated_once = PTHREAD_ONCE_INIT;

static void generate(void)
{
    resnet56_text = resnet56_make();
    resnet50_text = resnet50_make();
    resnet18_text = resnet18_make();
    mobilenetv2_text = mobilenetv2_make(224, 1000, 0);
    mobilenetv2_32_text = mobilenetv2_make(32, 10, 1);
    gpt_text = gpt_make();
}

typedef struct zoo_entry {
    const char *name;
    const char *description;
    const char *text;        /* NULL: generated */
    char **generated;
} zoo_entry;

static const zoo_entry zoo[] = {
    { "cnn", "the default: 2 convolutions + batch norm, for 28x28 images (Fashion-MNIST)", cnn_text, NULL },
    { "cnn-small", "2 convolutions, 2 dense layers, for 28x28 images", cnn_small_text, NULL },
    { "mlp", "784-256-128-10 perceptron for 28x28 images", mlp_text, NULL },
    { "fcn-r", "seed benchmark FCN-R: 784-2048-4096-1024-10, sigmoid (batch 1024)", fcn_r_text, NULL },
    { "fcn-s", "seed benchmark FCN-S: 26752-2048-2048-2048-26752, sigmoid (batch 64)", fcn_s_text, NULL },
    { "alexnet-r", "seed benchmark AlexNet-R: cuda-convnet CIFAR-10 net (batch 1024)", alexnet_r_text, NULL },
    { "alexnet-s", "seed benchmark AlexNet-S: torchvision AlexNet, 224x224 (batch 16)", alexnet_s_text, NULL },
    { "resnet56", "seed benchmark ResNet-56: CIFAR ResNet, option-A shortcuts (batch 128)", NULL, &resnet56_text },
    { "resnet50", "seed benchmark ResNet-50: torchvision ResNet-50, 224x224 (batch 16)", NULL, &resnet50_text },
    { "resnet18", "ResNet-18: torchvision resnet18, 224x224, 1000 classes", NULL, &resnet18_text },
    { "mobilenetv2", "MobileNetV2: torchvision mobilenet_v2 (width 1.0), 224x224, 1000 classes", NULL,
      &mobilenetv2_text },
    { "mobilenetv2-32", "MobileNetV2 for 32x32 (CIFAR-10): mobilenet_v2 with stride 1 in the stem and "
      "the 24-channel stage, 10 classes", NULL, &mobilenetv2_32_text },
    { "lstm", "seed benchmark LSTM: word-level LM, 10000 words, 2x256, sequence 32 (batch 128)", lstm_text, NULL },
    { "textcls", "byte-level text classifier: embedding 32, LSTM 128, mean pool, 8 classes", textcls_text, NULL },
    { "bytelm", "byte-level language model: embedding 64, LSTM 2x256, sequence 64", bytelm_text, NULL },
    { "gpt", "GPT-style byte-level language model: 4 pre-LN decoder blocks, 4 heads, width 192, context 128",
      NULL, &gpt_text },
    { "unet", "small U-Net: 1x32x32 images, 4 classes per pixel, 16-64 channels, 2 levels", unet_text, NULL },
    { "vit", "tiny vision transformer for 28x28 images: 4x4 patches, width 64, 4 blocks, 4 heads, mean pool",
      vit_text, NULL },
};

static const char *const zoo_names[] = { "cnn", "cnn-small", "mlp", "fcn-r", "fcn-s", "alexnet-r",
                                         "alexnet-s", "resnet56", "resnet50", "resnet18",
                                         "mobilenetv2", "mobilenetv2-32", "lstm", "textcls", "bytelm",
                                         "gpt", "unet", "vit", NULL };

const char *const *ct_zoo_names(void)
{
    return zoo_names;
}

static const zoo_entry *find(const char *name)
{
    for (size_t i = 0; name && i < CT_ARRAY_LEN(zoo); i++)
        if (!strcmp(zoo[i].name, name))
            return &zoo[i];
    return NULL;
}

const char *ct_zoo_description(const char *name)
{
    const zoo_entry *e = find(name);
    return e ? e->description : NULL;
}

const char *ct_zoo_text(const char *name)
{
    const zoo_entry *e = find(name);
    if (!e)
        return NULL;
    if (e->text)
        return e->text;
    pthread_once(&generated_once, generate);
    return *e->generated;
}

int ct_model_from_zoo(const char *name, ct_model **out)
{
    CT_VALIDATE(NULL, name && out);
    *out = NULL;
    const zoo_entry *e = find(name);
    if (!e) {
        char list[256];
        int at = 0;
        for (size_t i = 0; i < CT_ARRAY_LEN(zoo) && at >= 0 && (size_t)at < sizeof list; i++)
            at += snprintf(list + at, sizeof list - (size_t)at, "%s%s", i ? ", " : "", zoo[i].name);
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "no model '%s' in the zoo (%s). HINT: `cltrain zoo` "
                       "lists them; a model file is given by its path", name, list);
    }
    const char *text = ct_zoo_text(name);
    if (!text)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory generating model %s", name);
    char source[64];
    snprintf(source, sizeof source, "zoo:%s", name);
    return ct_model_from_text(text, source, out);
}

int ct_model_open(const char *name_or_path, ct_model **out)
{
    CT_VALIDATE(NULL, name_or_path && out);
    if (find(name_or_path))
        return ct_model_from_zoo(name_or_path, out);
    return ct_model_from_file(name_or_path, out);
}
