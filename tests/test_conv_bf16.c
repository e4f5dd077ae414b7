/*
 * test_conv_bf16 - conv2d's forward, input gradient and weight gradient
 * with bf16 and fp16 operands (ct_context_set_precision) on the CPU
 * class's host path: "same" stride-1 convolutions (odd channel counts: the
 * bf16 pairs' zero half; one input channel; 1x1, 3x3, 5x5), strided ones
 * in the phase form (3x3 at 2, 7x7 at 2, 11x11 at 4: the tiles' tap
 * ranges), a strided 1x1 and a convolution none of those forms take (its
 * products go through the bf16 GEMM); planes that cut the 16-pixel
 * vectors. With AVX512_BF16's dot products (pairs of channels or pixels)
 * (CLTRAIN_HOST_ISA=avx512bf16, which takes them where the CPU has them
 * even if they do not pay there) and without (CLTRAIN_HOST_ISA=avx512:
 * rounded operands, float32 FMAs), on AMX tiles where the CPU has them
 * (the default there: the same-width forward, input and weight gradients, the
 * products of the other forms), and fp16.
 *
 * Bounds, as test_gemm_bf16.c's: every output is a sum of K products of
 * rounded operands, each exact in float32, summed in float32 in some
 * order: |got - R| <= (K + 2) 2^-24 (S + |bias|), R the float64 sum of the
 * rounded operands' products, S the sum of their magnitudes (the bias is
 * added in float32 unrounded). Against the unrounded float64 sum E:
 * 2.03 u S + that (u = 2^-8 for bf16, 2^-11 for fp16, plus half's
 * subnormal steps). And somewhere each result must differ from E by more
 * than the float32 bound, or the operands were not rounded.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cl/runtime.h"
#include "host/host_work.h"
#include "ops/conv.h"
#include "tcheck.h"
#include "tround16.h"

static uint64_t rng = 11;
static float frand(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(rng >> 40) / (double)(1ull << 24)) * 2.0f - 1.0f;
}

static int half; /* fp16, else bf16 */

static double r16(float x)
{
    return tround16(x, half);
}

/* one output's three sums: of the rounded products, of their magnitudes,
 * of the exact products */
typedef struct acc {
    double r, s, e;
} acc;

static void add(acc *a, float p, float q)
{
    double v = r16(p) * r16(q);
    a->r += v, a->s += fabs(v), a->e += (double)p * q;
}

typedef struct res {
    int bad, rounded;
    const char *what;
} res;

/* got against the sums; K products */
static void judge(res *rs, const char *name, size_t i, float got, acc a, double bias, size_t K)
{
    double f32 = (double)(K + 2) * 0x1p-24 * (a.s + fabs(bias));
    double u = half ? 0x1p-11 : 0x1p-8, sub = half ? 2.0 * (double)K * 0x1p-25 : 0;
    double want = a.r + bias, exact = a.e + bias;
    if (!rs->bad && fabs(got - want) > f32 + 1e-30) {
        CHECK(0, "%s %s [%zu]: %.9g, rounded operands give %.9g (bound %.3g)", rs->what, name, i, got, want, f32);
        rs->bad = 1;
    }
    if (!rs->bad && fabs(got - exact) > 2.03 * u * a.s + sub + f32 + 1e-30) {
        CHECK(0, "%s %s [%zu]: %.9g beyond the 16-bit bound of %.9g", rs->what, name, i, got, exact);
        rs->bad = 1;
    }
    if (fabs(got - exact) > f32)
        rs->rounded |= 1;
}

static cl_mem upload(ct_context *ctx, const float *v, size_t n)
{
    cl_mem m = NULL;
    if (ct_buffer_create(ctx, n * 4, &m) || ct_buffer_write(ctx, m, 0, n * 4, v))
        ct_buffer_release(&m);
    return m;
}

/* One convolution: forward, then dx and dw; rounded: which results showed
 * the rounding (1 forward, 2 dx, 4 dw) */
static int one(ct_context *ctx, const ct_conv2d_desc *d, const char *what, int *rounded)
{
    int oh, ow;
    if (ct_conv2d_out_shape(ctx, d, &oh, &ow))
        return 0;
    size_t nx = (size_t)d->n * d->c_in * d->h * d->w, nw = (size_t)d->c_out * d->c_in * d->kh * d->kw;
    size_t ny = (size_t)d->n * d->c_out * oh * ow, nws = ct_conv2d_workspace(d);
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc((size_t)d->c_out * 4), *dy = malloc(ny * 4);
    float *y = malloc(ny * 4), *dx = malloc(nx * 4), *dw = calloc(nw, 4), *zero = calloc(nw, 4);
    if (!x || !w || !b || !dy || !y || !dx || !dw || !zero)
        return 0;
    for (size_t i = 0; i < nx; i++)
        x[i] = frand();
    for (size_t i = 0; i < nw; i++)
        w[i] = frand();
    for (int i = 0; i < d->c_out; i++)
        b[i] = frand();
    for (size_t i = 0; i < ny; i++)
        dy[i] = frand();
    cl_mem mx = upload(ctx, x, nx), mw = upload(ctx, w, nw), mb = upload(ctx, b, (size_t)d->c_out);
    cl_mem mdy = upload(ctx, dy, ny), my = upload(ctx, y, ny), mdx = upload(ctx, dx, nx);
    cl_mem mdw = upload(ctx, zero, nw), mws = NULL;
    int ok = mx && mw && mb && mdy && my && mdx && mdw && !ct_buffer_create(ctx, nws * 4, &mws);
    ct_buf none = { NULL, 0 };
    ok = ok &&
         !ct_conv2d_forward(ctx, d, (ct_buf){ my, 0 }, (ct_buf){ mx, 0 }, (ct_buf){ mw, 0 }, (ct_buf){ mb, 0 },
                            (ct_buf){ mws, 0 }, nws) &&
         !ct_conv2d_backward(ctx, d, (ct_buf){ mdx, 0 }, (ct_buf){ mdw, 0 }, none, (ct_buf){ mdy, 0 },
                             (ct_buf){ mx, 0 }, (ct_buf){ mw, 0 }, (ct_buf){ mws, 0 }, nws) &&
         !ct_buffer_read(ctx, my, 0, ny * 4, y) && !ct_buffer_read(ctx, mdx, 0, nx * 4, dx) &&
         !ct_buffer_read(ctx, mdw, 0, nw * 4, dw);
    CHECK(ok, "%s: %s", what, ct_context_last_error(ctx));
    res rf = { 0, 0, what }, rx = { 0, 0, what }, rw = { 0, 0, what };
    acc *ax = calloc(nx, sizeof *ax), *aw = calloc(nw, sizeof *aw);
    ok = ok && ax && aw;
    /* one walk over (image, output, input channel, tap): each product goes
     * to the output it serves, the input gradient and the weight gradient */
    for (int n = 0; ok && n < d->n; n++)
        for (int o = 0; o < d->c_out; o++)
            for (int r = 0; r < oh; r++)
                for (int q = 0; q < ow; q++) {
                    size_t iy = (((size_t)n * d->c_out + o) * oh + r) * ow + q;
                    acc ay = { 0, 0, 0 };
                    for (int c = 0; c < d->c_in; c++)
                        for (int i = 0; i < d->kh; i++)
                            for (int j = 0; j < d->kw; j++) {
                                int hi = r * d->stride_h - d->pad_h + i * d->dil_h;
                                int wi = q * d->stride_w - d->pad_w + j * d->dil_w;
                                if (hi < 0 || hi >= d->h || wi < 0 || wi >= d->w)
                                    continue;
                                size_t ix = (((size_t)n * d->c_in + c) * d->h + hi) * d->w + wi;
                                size_t iw = (((size_t)o * d->c_in + c) * d->kh + i) * d->kw + j;
                                add(&ay, x[ix], w[iw]);
                                add(&ax[ix], dy[iy], w[iw]);
                                add(&aw[iw], dy[iy], x[ix]);
                            }
                    judge(&rf, "forward", iy, y[iy], ay, b[o], (size_t)d->c_in * d->kh * d->kw);
                }
    for (size_t i = 0; ok && i < nx; i++)
        judge(&rx, "dx", i, dx[i], ax[i], 0, (size_t)d->c_out * d->kh * d->kw);
    for (size_t i = 0; ok && i < nw; i++)
        judge(&rw, "dw", i, dw[i], aw[i], 0, (size_t)d->n * oh * ow);
    *rounded |= rf.rounded | rx.rounded << 1 | rw.rounded << 2;
    cl_mem *ms[] = { &mx, &mw, &mb, &mdy, &my, &mdx, &mdw, &mws };
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
        ct_buffer_release(ms[i]);
    free(x), free(w), free(b), free(dy), free(y), free(dx), free(dw), free(zero), free(ax), free(aw);
    return ok && !rf.bad && !rx.bad && !rw.bad;
}

/* n, c_in, h, w, c_out, kh, kw, stride, pad */
static const int cases[][9] = {
    { 3, 5, 9, 7, 11, 3, 3, 1, 1 },    /* same 3x3, odd channels, planes of 63 pixels */
    { 2, 1, 12, 13, 3, 5, 5, 1, 2 },   /* one input channel: a pair with a zero half */
    { 2, 16, 6, 10, 16, 1, 1, 1, 0 },  /* same 1x1 */
    { 4, 33, 17, 17, 20, 3, 3, 1, 1 }, /* several channel blocks and pairs */
    { 2, 6, 15, 15, 9, 3, 3, 2, 1 },   /* phase form */
    { 2, 3, 20, 20, 8, 7, 7, 2, 3 },   /* a ResNet stem, phase form */
    { 1, 3, 35, 35, 10, 11, 11, 4, 2 },/* AlexNet's first layer, phase form with tap ranges */
    { 2, 7, 9, 9, 5, 1, 1, 2, 0 },     /* strided 1x1: subsampled */
    { 2, 4, 8, 8, 5, 3, 3, 1, 0 },     /* unpadded: im2col and the 16-bit GEMM */
    /* AMX (from 16 input channels): a ResNet-56 stage-one layer (blocks of 16 channels, rows of 32);
     * 8 x 8 planes whose padded rows of 10 cut the 16-pixel tiles, two
     * blocks of 16 channel pairs, 40 output channels (two blocks of 32,
     * the second mostly past c_out) */
    { 4, 16, 32, 32, 16, 3, 3, 1, 1 },
    { 1, 64, 8, 8, 40, 3, 3, 1, 1 },
    /* 20 input channels into 5 (the sums' tiles mostly past c_out; the
     * input gradient, from 5 channels, stays on the vector tiles) */
    { 3, 20, 7, 9, 5, 3, 3, 1, 1 },
};

static int run_all(ct_context *ctx, const char *mode)
{
    int rounded = 0, passed = 0, n = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < n; i++) {
        const int *c = cases[i];
        ct_conv2d_desc d = { c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[7], c[8], c[8], 1, 1 };
        char what[160];
        snprintf(what, sizeof what, "%s: %dx%dx%dx%d -> %d, %dx%d/%d pad %d", mode, c[0], c[1], c[2], c[3], c[4],
                 c[5], c[6], c[7], c[8]);
        passed += one(ctx, &d, what, &rounded);
    }
    CHECK(rounded & 1, "%s: no forward result shows the rounding", mode);
    CHECK(rounded & 2, "%s: no input gradient shows the rounding", mode);
    CHECK(rounded & 4, "%s: no weight gradient shows the rounding", mode);
    printf("%s: %d of %d convolutions within their bounds (forward, dx, dw)\n", mode, passed, n);
    return passed;
}

int main(void)
{
    ct_context_options o;
    ct_context_defaults(&o);
    o.lazy_kernels = 1;
    ct_context *ctx = NULL;
    if (ct_context_create(&o, &ctx) != CT_OK) {
        printf("no OpenCL device: %s\n", ct_last_error());
        return 77;
    }
    if (ct_gemm_set_path(ctx, CT_GEMM_HOST) != CT_OK || ct_context_set_precision(ctx, CT_PRECISION_BF16) != CT_OK) {
        printf("bf16 needs the host path on an AVX-512 CPU: %s\n", ct_context_last_error(ctx));
        ct_context_free(&ctx);
        return 77;
    }
    /* the dot products wherever the CPU has them, paying or not (the
     * default takes them only where they pay: host_work.h) */
    setenv("CLTRAIN_HOST_ISA", "avx512bf16", 1);
    run_all(ctx, ct_host_avx512_bf16() ? "bf16, AVX512_BF16 pairs" : "bf16 (no AVX512_BF16: rounded operands)");
    setenv("CLTRAIN_HOST_ISA", "avx512", 1);
    run_all(ctx, "bf16, CLTRAIN_HOST_ISA=avx512");
    unsetenv("CLTRAIN_HOST_ISA");
    /* the default: the same-width forward, input and weight gradients on AMX tiles
     * where the CPU has them and the kernel grants them */
    if (ct_host_amx())
        run_all(ctx, "bf16, AMX tiles (same-width forward, dx and dw)");
    else
        printf("bf16 on AMX tiles: not on this CPU (or not granted by the kernel); skipped\n");
    half = 1;
    CHECK(ct_context_set_precision(ctx, CT_PRECISION_FP16) == CT_OK, "fp16: %s", ct_context_last_error(ctx));
    run_all(ctx, "fp16");
    ct_context_free(&ctx);
    return tcheck_done("test_conv_bf16");
}
