/*
 * conv_host512.c - the direct host convolution with AVX-512
 * (conv_host512.h): which form each convolution takes, and the forms that
 * bring the others to the "same" stride-1 tiles of conv_same512.c (16
 * output pixels per vector along the flattened plane, masked loads for the
 * padding: layout and tiles there).
 *
 * - "Same" stride-1 convolutions (output as wide as the input, 2 pw =
 *   kw - 1: every stride-1 convolution of the zoo) run on the tiles as they
 *   are, forward and input gradient; conv_host.c keeps the AVX2 kernels for
 *   the others.
 * - An unpadded strided 1x1 is the 1x1 of its subsampled input; its input
 *   gradient is scattered back.
 * - 1x1 convolutions on planes of fewer than 256 pixels (ResNet-50's 7x7
 *   and 14x14 ones) run instead as three GEMMs over the whole batch on
 *   channel-major copies of x and dy (gemm512.h), whose tiles stay full.
 * - Other strided convolutions, where that pays, run in phase form: a
 *   stride-1 convolution over subsampled phase planes, whose zero taps the
 *   tiles skip.
 *
 * The weight gradient is conv_dw512.c's (broadcast form, any stride).
 */
#include "host/conv_host512.h"
#include "host/conv_dw512.h"
#include "host/conv_same512.h"
#include "host/gemm512.h"

#include <stdlib.h>
#include <string.h>

/* Output planes (pixels) below which a 1x1 convolution runs as GEMMs on
 * channel-major copies (below). ResNet-50, `bench --profile`, forward +
 * backward ms: layer4's 7x7 1x1s 20-35 -> 13-15 each and the stride-2
 * downsample 56-64 -> 27; layer3's 14x14 ones about even or a little
 * faster (layer4_0_conv1 38 -> 27-30); layer2's 28x28 ones slower (25 ->
 * 38), so 14x14 is the largest plane that takes this form. */
#define GEMM_1X1_PLANE 256

static int strided_1x1(const ct_conv2d_desc *d)
{
    return d->kh == 1 && d->kw == 1 && d->pad_h == 0 && d->pad_w == 0 && d->dil_h == 1 &&
           d->dil_w == 1 && (d->stride_h != 1 || d->stride_w != 1);
}

/* A strided convolution other than an unpadded 1x1 one: it runs in its
 * phase form (below) where that pays; the phase kernel must fit the tiles
 * (<= 16 taps a side) and its planes stay well inside int range. */
static int phased(const ct_conv2d_desc *d)
{
    if ((d->stride_h == 1 && d->stride_w == 1) || strided_1x1(d) || d->dil_h != 1 || d->dil_w != 1)
        return 0;
    int oh, ow;
    if (ct_conv2d_out_shape(NULL, d, &oh, &ow))
        return 0;
    int kqh = (d->kh + d->stride_h - 1) / d->stride_h, kqw = (d->kw + d->stride_w - 1) / d->stride_w;
    size_t hq = (size_t)oh + (size_t)kqh - 1, wq = (size_t)ow + (size_t)kqw - 1;
    size_t cq = (size_t)d->c_in * d->stride_h * d->stride_w;
    size_t c = cq > (size_t)d->c_out ? cq : (size_t)d->c_out;
    /* Where it pays, measured: the forward and the input gradient skip the
     * zero taps, and the weight gradient reads x itself (conv_dw512.c), so
     * the form costs its copies; it wins for large kernels (AlexNet's 11x11
     * at 4, ResNet's 7x7 at 2) and for inputs of up to 256 channels.
     * ResNet-50's 3x3s at stride 2, `bench --profile` forward / backward
     * ms, im2col against phased, two runs: 128 channels 27-29 / 48-55
     * against 18 / 30, 256 channels 22-24 / 38-39 against 16 / 28, but 512
     * channels at 7x7 out 18-22 / 34-40 against 22 / 41-42. */
    long taps = (long)d->kh * d->kw, qtaps = (long)d->stride_h * d->stride_w * kqh * kqw;
    return kqh <= 16 && kqw <= 16 && c * hq * wq < ((size_t)1 << 30) &&
           (5 * qtaps <= 7 * taps || d->c_in <= 256);
}

int ct_conv512_applies(const ct_conv2d_desc *d)
{
    if (strided_1x1(d) || phased(d))
        return 1;
    return d->stride_h == 1 && d->stride_w == 1 && d->dil_h == 1 && d->dil_w == 1 &&
           2 * d->pad_w == d->kw - 1 && d->pad_h < d->kh && d->kw <= 16 && d->kh <= 16;
}

#ifdef CT_HOST_X86

/* A strided 1x1 convolution is the 1x1 convolution of the subsampled
 * input: (n, c, h, w) -> (n, c, oh, ow) at the strides, copied into a
 * shared buffer by image; its input gradient is the subsampled one
 * scattered back, zeros elsewhere. */
typedef struct subsample {
    const ct_conv2d_desc *d;
    int oh, ow;
    const float *src;
    float *dst;
    int scatter; /* dst (n, c, h, w) <- src (n, c, oh, ow) */
} subsample;

static void subsample_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const subsample *s = arg;
    const ct_conv2d_desc *d = s->d;
    size_t big = (size_t)d->c_in * d->h * d->w, small = (size_t)d->c_in * s->oh * s->ow;
    if (s->scatter) {
        float *dst = s->dst + item * big;
        const float *src = s->src + item * small;
        memset(dst, 0, big * sizeof(float));
        for (int c = 0; c < d->c_in; c++)
            for (int r = 0; r < s->oh; r++)
                for (int k = 0; k < s->ow; k++)
                    dst[((size_t)c * d->h + (size_t)r * d->stride_h) * d->w +
                        (size_t)k * d->stride_w] = *src++;
    } else {
        const float *src = s->src + item * big;
        float *dst = s->dst + item * small;
        for (int c = 0; c < d->c_in; c++)
            for (int r = 0; r < s->oh; r++)
                for (int k = 0; k < s->ow; k++)
                    *dst++ = src[((size_t)c * d->h + (size_t)r * d->stride_h) * d->w +
                                 (size_t)k * d->stride_w];
    }
}

static int strided_setup(ct_context *ctx, const ct_conv2d_desc *d, ct_conv2d_desc *d1,
                         ct_host_work **hw, subsample *s)
{
    memset(s, 0, sizeof *s);
    s->d = d;
    s->oh = (d->h - 1) / d->stride_h + 1;
    s->ow = (d->w - 1) / d->stride_w + 1;
    *d1 = *d;
    d1->h = s->oh, d1->w = s->ow, d1->stride_h = d1->stride_w = 1;
    return ct_host_work_get(ctx, 16, 16, 1, hw);
}

/*
 * A 1x1 unpadded convolution (any stride) over small planes as products on
 * channel-major copies: x (n, c_in, h, w), sampled at the strides, copied
 * to xc (c_in, n P) and dy (n, c_out, P) to dyc (c_out, n P), so that
 * y = w xc, dx = w^T dyc and dw += dyc xc^T are each one GEMM over the whole
 * batch (gemm512.h), whose tiles stay full where a plane of P pixels would
 * fill its vectors only partly (ResNet-50's layer4: 49 pixels in 4
 * vectors).
 */
static int gemm_1x1(const ct_conv2d_desc *d)
{
    if (d->kh != 1 || d->kw != 1 || d->pad_h || d->pad_w || d->dil_h != 1 || d->dil_w != 1)
        return 0;
    int oh, ow;
    if (ct_conv2d_out_shape(NULL, d, &oh, &ow))
        return 0;
    return (size_t)oh * ow < GEMM_1X1_PLANE;
}

/* An NCHW tensor (n, c, h, w) sampled at strides sh, sw into oh x ow
 * planes, and its channel-major copy (c, n oh ow); an item per image. */
typedef struct cmcopy {
    size_t n, c, h, w, sh, sw, oh, ow;
    const float *src;  /* to_cm: the NCHW tensor; from_cm: the copy */
    const float *bias; /* from_cm, stride 1: added per channel where set */
    float *dst;
} cmcopy;

static void to_cm_item(void *arg, size_t img, int thread)
{
    (void)thread;
    const cmcopy *q = arg;
    size_t P = q->oh * q->ow;
    for (size_t c = 0; c < q->c; c++) {
        const float *s = q->src + (img * q->c + c) * q->h * q->w;
        float *t = q->dst + c * q->n * P + img * P;
        if (q->sh == 1 && q->sw == 1) {
            memcpy(t, s, P * sizeof *t);
            continue;
        }
        for (size_t r = 0; r < q->oh; r++)
            for (size_t k = 0; k < q->ow; k++)
                *t++ = s[r * q->sh * q->w + k * q->sw];
    }
}

/* the copy back, zeros off the samples */
static void from_cm_item(void *arg, size_t img, int thread)
{
    (void)thread;
    const cmcopy *q = arg;
    size_t P = q->oh * q->ow;
    for (size_t c = 0; c < q->c; c++) {
        const float *s = q->src + c * q->n * P + img * P;
        float *t = q->dst + (img * q->c + c) * q->h * q->w;
        if (q->sh == 1 && q->sw == 1) {
            if (q->bias)
                for (size_t i = 0; i < P; i++)
                    t[i] = s[i] + q->bias[c];
            else
                memcpy(t, s, P * sizeof *t);
            continue;
        }
        memset(t, 0, q->h * q->w * sizeof *t);
        for (size_t r = 0; r < q->oh; r++)
            for (size_t k = 0; k < q->ow; k++)
                t[r * q->sh * q->w + k * q->sw] = *s++;
    }
}

static int gemm1x1_forward(ct_context *ctx, const ct_conv2d_desc *d, float *y, const float *x,
                           const float *w, const float *b)
{
    int oh, ow, st;
    ct_host_work *hw;
    float *xc, *yc;
    if ((st = ct_conv2d_out_shape(ctx, d, &oh, &ow)))
        return st;
    size_t n = (size_t)d->n, nP = n * oh * ow, ci = (size_t)d->c_in, co = (size_t)d->c_out;
    if ((st = ct_host_work_get(ctx, 16, 16, 1, &hw)) || (st = ct_host_work_big(ctx, hw, 0, ci * nP, &xc)) ||
        (st = ct_host_work_big(ctx, hw, 1, co * nP, &yc)))
        return st;
    cmcopy xq = { n, ci, (size_t)d->h, (size_t)d->w, (size_t)d->stride_h, (size_t)d->stride_w,
                  (size_t)oh, (size_t)ow, x, NULL, xc };
    ct_pool_run(hw->pool, n, to_cm_item, &xq);
    if ((st = ct_gemm512(ctx, hw, 0, 0, co, nP, ci, 1.0f, w, ci, xc, nP, 0.0f, yc, nP)))
        return st;
    cmcopy yq = { n, co, (size_t)oh, (size_t)ow, 1, 1, (size_t)oh, (size_t)ow, yc, b, y };
    ct_pool_run(hw->pool, n, from_cm_item, &yq);
    return CT_OK;
}

static int gemm1x1_backward(ct_context *ctx, const ct_conv2d_desc *d, float *dx, float *dw,
                            const float *dy, const float *x, const float *w)
{
    int oh, ow, st;
    ct_host_work *hw;
    float *dyc, *c2;
    if ((st = ct_conv2d_out_shape(ctx, d, &oh, &ow)))
        return st;
    size_t n = (size_t)d->n, nP = n * oh * ow, ci = (size_t)d->c_in, co = (size_t)d->c_out;
    if ((st = ct_host_work_get(ctx, 16, 16, 1, &hw)) || (st = ct_host_work_big(ctx, hw, 0, co * nP, &dyc)) ||
        (st = ct_host_work_big(ctx, hw, 1, ci * nP, &c2)))
        return st;
    cmcopy dyq = { n, co, (size_t)oh, (size_t)ow, 1, 1, (size_t)oh, (size_t)ow, dy, NULL, dyc };
    ct_pool_run(hw->pool, n, to_cm_item, &dyq);
    /* x's geometry; c2 holds dx's copy, then x's */
    cmcopy xq = { n, ci, (size_t)d->h, (size_t)d->w, (size_t)d->stride_h, (size_t)d->stride_w,
                  (size_t)oh, (size_t)ow, c2, NULL, dx };
    if (dx) { /* dx (c_in, n P) = w^T (c_in, c_out) . dyc (c_out, n P) */
        if ((st = ct_gemm512(ctx, hw, 1, 0, ci, nP, co, 1.0f, w, ci, dyc, nP, 0.0f, c2, nP)))
            return st;
        ct_pool_run(hw->pool, n, from_cm_item, &xq);
    }
    if (dw) { /* dw (c_out, c_in) += dyc (c_out, n P) . xc^T (n P, c_in) */
        xq.src = x, xq.dst = c2;
        ct_pool_run(hw->pool, n, to_cm_item, &xq);
        if ((st = ct_gemm512(ctx, hw, 0, 1, co, ci, nP, 1.0f, dyc, nP, c2, nP, 1.0f, dw, ci)))
            return st;
    }
    return CT_OK;
}

/*
 * The phase form of a strided convolution. With stride s and kernel k along
 * a dimension, tap i = s a + u (u < s) of output r reads input s (r + a) + u
 * - pad: for each phase u, a stride-1 read of the plane subsampled at
 * s R + u - pad. So the input becomes s_h s_w phase planes per channel,
 * xq (n, s_h s_w c_in, hq, wq), phase-major: plane (u s_w + v) c_in + c holds
 * x[c][s_h R + u - pad_h][s_w C + v - pad_w] (zero outside x), and the
 * convolution a stride-1, unpadded one over them with a kqh x kqw kernel,
 * kq = ceil(k / s): wq[o][(u, v, c)][a, b] = w[o][c][s_h a + u][s_w b + v].
 * Phase (u, v) has ceil((k_h - u) / s_h) x ceil((k_w - v) / s_w) real taps
 * (a prefix of rows and columns), the rest are zero: the forward tiles and
 * the input gradient's skip them (conv_same512.h's rc). The tiles need
 * the output as wide as the input: it is computed wq wide, hq = oh +
 * kqh - 1 rows of phase planes give oh rows, and the kqw - 1 extra
 * columns (reading zero-masked lanes past each row) are cropped off;
 * backward, dy is widened with zero columns, and the input gradient (the
 * transposed convolution, whose planes are xq's) scatters back through the
 * phases, each input element from exactly one phase element. The weight
 * gradient needs no phases (conv_dw512.c reads x at the strides).
 */
typedef struct phase {
    const ct_conv2d_desc *d;
    int oh, ow, kqh, kqw, hq, wq, cq;
    const float *src;
    float *dst;
    int dir; /* PH_IN, PH_DX, PH_CROP, PH_WIDEN */
} phase;

enum { PH_IN, PH_DX, PH_CROP, PH_WIDEN };

static void phase_setup(const ct_conv2d_desc *d, phase *q, ct_conv2d_desc *dq)
{
    memset(q, 0, sizeof *q);
    q->d = d;
    ct_conv2d_out_shape(NULL, d, &q->oh, &q->ow);
    q->kqh = (d->kh + d->stride_h - 1) / d->stride_h;
    q->kqw = (d->kw + d->stride_w - 1) / d->stride_w;
    q->hq = q->oh + q->kqh - 1;
    q->wq = q->ow + q->kqw - 1;
    q->cq = d->c_in * d->stride_h * d->stride_w;
    *dq = *d;
    dq->c_in = q->cq, dq->h = q->hq, dq->w = q->wq, dq->kh = q->kqh, dq->kw = q->kqw;
    dq->stride_h = dq->stride_w = 1, dq->pad_h = dq->pad_w = 0;
}

/* One image: x -> xq, dxq -> dx, y wide -> y, or dy -> dy wide. */
static void phase_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const phase *q = arg;
    const ct_conv2d_desc *d = q->d;
    int sh = d->stride_h, sw = d->stride_w;
    size_t x_img = (size_t)d->c_in * d->h * d->w, xq_img = (size_t)q->cq * q->hq * q->wq;
    size_t y_img = (size_t)d->c_out * q->oh * q->ow, yw_img = (size_t)d->c_out * q->oh * q->wq;
    if (q->dir == PH_IN) {
        const float *x = q->src + item * x_img;
        float *o = q->dst + item * xq_img;
        for (int u = 0; u < sh; u++)
            for (int v = 0; v < sw; v++)
                for (int c = 0; c < d->c_in; c++)
                    for (int R = 0; R < q->hq; R++, o += q->wq) {
                        int yy = sh * R + u - d->pad_h;
                        if (yy < 0 || yy >= d->h) {
                            memset(o, 0, (size_t)q->wq * sizeof(float));
                            continue;
                        }
                        const float *xr = x + ((size_t)c * d->h + (size_t)yy) * d->w;
                        for (int C = 0; C < q->wq; C++) {
                            int xx = sw * C + v - d->pad_w;
                            o[C] = xx >= 0 && xx < d->w ? xr[xx] : 0.0f;
                        }
                    }
    } else if (q->dir == PH_DX) {
        const float *g = q->src + item * xq_img;
        float *dx = q->dst + item * x_img;
        for (int c = 0; c < d->c_in; c++)
            for (int yy = 0; yy < d->h; yy++) {
                float *dr = dx + ((size_t)c * d->h + (size_t)yy) * d->w;
                int R = (yy + d->pad_h) / sh, u = (yy + d->pad_h) % sh;
                if (R >= q->hq) { /* below every window: no gradient */
                    memset(dr, 0, (size_t)d->w * sizeof(float));
                    continue;
                }
                for (int xx = 0; xx < d->w; xx++) {
                    int C = (xx + d->pad_w) / sw, v = (xx + d->pad_w) % sw;
                    dr[xx] = C < q->wq ? g[(((size_t)u * sw + (size_t)v) * d->c_in + (size_t)c) *
                                               q->hq * q->wq + (size_t)R * q->wq + (size_t)C]
                                       : 0.0f;
                }
            }
    } else if (q->dir == PH_CROP) {
        const float *yw = q->src + item * yw_img;
        float *y = q->dst + item * y_img;
        for (size_t r = 0; r < (size_t)d->c_out * q->oh; r++)
            memcpy(y + r * q->ow, yw + r * q->wq, (size_t)q->ow * sizeof(float));
    } else {
        const float *dy = q->src + item * y_img;
        float *yw = q->dst + item * yw_img;
        for (size_t r = 0; r < (size_t)d->c_out * q->oh; r++) {
            memcpy(yw + r * q->wq, dy + r * q->ow, (size_t)q->ow * sizeof(float));
            memset(yw + r * q->wq + q->ow, 0, (size_t)(q->wq - q->ow) * sizeof(float));
        }
    }
}

/* wq from w: an item per output channel, zeros at the taps past the kernel */
typedef struct phase_w {
    const phase *q;
    const float *src;
    float *dst;
} phase_w;

static void phase_w_item(void *arg, size_t o, int thread)
{
    (void)thread;
    const phase_w *pw = arg;
    const phase *q = pw->q;
    const ct_conv2d_desc *d = q->d;
    int sh = d->stride_h, sw = d->stride_w;
    size_t per_o = (size_t)d->c_in * d->kh * d->kw, per_oq = (size_t)q->cq * q->kqh * q->kqw;
    for (int c = 0; c < d->c_in; c++)
        for (int u = 0; u < sh; u++)
            for (int v = 0; v < sw; v++)
                for (int a = 0; a < q->kqh; a++)
                    for (int b = 0; b < q->kqw; b++) {
                        int i = sh * a + u, j = sw * b + v;
                        size_t kq = o * per_oq + ((((size_t)u * sw + (size_t)v) * d->c_in + (size_t)c) *
                                                      q->kqh + (size_t)a) * q->kqw + (size_t)b;
                        pw->dst[kq] = i < d->kh && j < d->kw
                                          ? pw->src[o * per_o + ((size_t)c * d->kh + (size_t)i) * d->kw + (size_t)j]
                                          : 0.0f;
                    }
}

/* The taps of each phase channel that are not zero (conv_same512.h's rc): phase
 * (u, v) has ceil((kh - u) / s_h) x ceil((kw - v) / s_w) of them. */
static int *phase_ranges(ct_context *ctx, const phase *q)
{
    const ct_conv2d_desc *d = q->d;
    int *r = malloc((size_t)q->cq * 4 * sizeof *r);
    if (!r) {
        ct_fail(ctx, CT_ERR_NO_MEMORY, "conv2d host path: out of host memory");
        return NULL;
    }
    for (int k = 0; k < q->cq; k++) {
        int ph = k / d->c_in, u = ph / d->stride_w, v = ph % d->stride_w;
        int *t = r + 4 * k;
        t[0] = 0, t[1] = d->kh > u ? (d->kh - u + d->stride_h - 1) / d->stride_h : 0;
        t[2] = 0, t[3] = d->kw > v ? (d->kw - v + d->stride_w - 1) / d->stride_w : 0;
    }
    return r;
}

static int phase_forward(ct_context *ctx, const ct_conv2d_desc *d, float *y, const float *x,
                         const float *w, const float *b)
{
    phase q;
    ct_conv2d_desc dq;
    phase_setup(d, &q, &dq);
    ct_host_work *hw;
    float *xq, *yw, *wq;
    size_t nwq = (size_t)d->c_out * q.cq * q.kqh * q.kqw;
    int st = ct_host_work_get(ctx, 16, 16, 1, &hw);
    if (st || (st = ct_host_work_big(ctx, hw, 0, (size_t)d->n * q.cq * q.hq * q.wq, &xq)) ||
        (st = ct_host_work_big(ctx, hw, 1, (size_t)d->n * d->c_out * q.oh * q.wq, &yw)) ||
        (st = ct_host_work_big(ctx, hw, 3, nwq, &wq)))
        return st;
    phase_w pw = { &q, w, wq };
    ct_pool_run(hw->pool, (size_t)d->c_out, phase_w_item, &pw);
    q.dir = PH_IN, q.src = x, q.dst = xq;
    ct_pool_run(hw->pool, (size_t)d->n, phase_item, &q);
    int *rc = phase_ranges(ctx, &q);
    if (!rc)
        return CT_ERR_NO_MEMORY;
    st = ct_conv512_same_forward(ctx, &dq, yw, xq, wq, b, rc);
    free(rc);
    if (st)
        return st;
    q.dir = PH_CROP, q.src = yw, q.dst = y;
    ct_pool_run(hw->pool, (size_t)d->n, phase_item, &q);
    return CT_OK;
}

/* dx of a phased convolution: dy widened, the transposed convolution over
 * the phase planes, scattered back */
static int phase_dx(ct_context *ctx, const ct_conv2d_desc *d, float *dx, const float *dy,
                    const float *w)
{
    phase q;
    ct_conv2d_desc dq;
    phase_setup(d, &q, &dq);
    ct_host_work *hw;
    float *dyw, *dxq, *wq;
    size_t nwq = (size_t)d->c_out * q.cq * q.kqh * q.kqw, nxq = (size_t)d->n * q.cq * q.hq * q.wq;
    int st = ct_host_work_get(ctx, 16, 16, 1, &hw);
    if (st || (st = ct_host_work_big(ctx, hw, 1, (size_t)d->n * d->c_out * q.oh * q.wq, &dyw)) ||
        (st = ct_host_work_big(ctx, hw, 3, nwq, &wq)) ||
        (st = ct_host_work_big(ctx, hw, 2, nxq, &dxq)))
        return st;
    q.dir = PH_WIDEN, q.src = dy, q.dst = dyw;
    ct_pool_run(hw->pool, (size_t)d->n, phase_item, &q);
    phase_w pw = { &q, w, wq };
    ct_pool_run(hw->pool, (size_t)d->c_out, phase_w_item, &pw);
    int *rc = phase_ranges(ctx, &q);
    if (!rc)
        return CT_ERR_NO_MEMORY;
    st = ct_conv512_same_dx(ctx, &dq, dxq, dyw, wq, rc);
    free(rc);
    if (st)
        return st;
    q.dir = PH_DX, q.src = dxq, q.dst = dx;
    ct_pool_run(hw->pool, (size_t)d->n, phase_item, &q);
    return CT_OK;
}

int ct_conv512_forward(ct_context *ctx, const ct_conv2d_desc *d, float *y, const float *x,
                       const float *w, const float *b)
{
    if (gemm_1x1(d))
        return gemm1x1_forward(ctx, d, y, x, w, b);
    if (phased(d))
        return phase_forward(ctx, d, y, x, w, b);
    if (!strided_1x1(d))
        return ct_conv512_same_forward(ctx, d, y, x, w, b, NULL);
    ct_conv2d_desc d1;
    ct_host_work *hw;
    subsample s;
    float *xs;
    int st = strided_setup(ctx, d, &d1, &hw, &s);
    if (st || (st = ct_host_work_big(ctx, hw, 0, (size_t)d->n * d->c_in * s.oh * s.ow, &xs)))
        return st;
    s.src = x, s.dst = xs;
    ct_pool_run(hw->pool, (size_t)d->n, subsample_item, &s);
    return ct_conv512_same_forward(ctx, &d1, y, xs, w, b, NULL);
}

/* dx through the forward tiles (phased, subsampled or direct), then dw in
 * broadcast form from x and dy as they are (conv_dw512.c) */
int ct_conv512_backward(ct_context *ctx, const ct_conv2d_desc *d, float *dx, float *dw,
                        const float *dy, const float *x, const float *w)
{
    if (gemm_1x1(d))
        return gemm1x1_backward(ctx, d, dx, dw, dy, x, w);
    int st = CT_OK;
    if (dx && phased(d)) {
        st = phase_dx(ctx, d, dx, dy, w);
    } else if (dx && !strided_1x1(d)) {
        st = ct_conv512_same_dx(ctx, d, dx, dy, w, NULL);
    } else if (dx) {
        ct_conv2d_desc d1;
        ct_host_work *hw;
        subsample s;
        float *dxs;
        if ((st = strided_setup(ctx, d, &d1, &hw, &s)) ||
            (st = ct_host_work_big(ctx, hw, 1, (size_t)d->n * d->c_in * s.oh * s.ow, &dxs)) ||
            (st = ct_conv512_same_dx(ctx, &d1, dxs, dy, w, NULL)))
            return st;
        s.src = dxs, s.dst = dx, s.scatter = 1;
        ct_pool_run(hw->pool, (size_t)d->n, subsample_item, &s);
    }
    if (!st && dw)
        st = ct_conv512_dw(ctx, d, dw, dy, x);
    return st;
}

#else /* !CT_HOST_X86 */

int ct_conv512_forward(ct_context *ctx, const ct_conv2d_desc *d, float *y, const float *x,
                       const float *w, const float *b)
{
    (void)d, (void)y, (void)x, (void)w, (void)b;
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "conv2d host path: AVX-512 not built for this CPU");
}

int ct_conv512_backward(ct_context *ctx, const ct_conv2d_desc *d, float *dx, float *dw,
                        const float *dy, const float *x, const float *w)
{
    (void)d, (void)dx, (void)dw, (void)dy, (void)x, (void)w;
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "conv2d host path: AVX-512 not built for this CPU");
}

#endif
