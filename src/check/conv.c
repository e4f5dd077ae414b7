/*
 * conv.c - checks of conv2d (src/ops/conv.c) against src/ref/conv.c, over
 * random geometries (1x1 to 5x5 kernels, square or not, strides 1-3,
 * dilation 1-2, padding up to beyond the kernel, odd sizes) and all three
 * workspace regimes: one image per GEMM (direct, including the 1x1 path
 * without im2col), the recommended size, and room for two images so the
 * last chunk of three images is short. Each case runs either the im2col /
 * col2im kernels of the CPU class or the fine-grained ones of the GPU
 * class, by switching the context's class for the case, so both pairs are
 * checked whatever the device. Where the host GEMM path is active and the
 * CPU has AVX2 and FMA, stride-1 cases (with AVX-512, strided ones too)
 * also run the direct host convolution (src/ops/conv_host.c), with
 * batches on both sides of its
 * image-per-item split and widths that leave vector tails; on a CPU with
 * AVX-512 twice, once with its AVX-512 kernels (src/ops/conv_host512.c,
 * the "same" convolutions, and the strided ones through their phase form)
 * and once with CLTRAIN_HOST_ISA=avx2.
 *
 * Tolerances. Inputs are rounded to float first, so the error is the
 * device's float32 arithmetic only. A float32 sum of K products, in any
 * order, with or without FMA, is within K * u * sum|a*b| of the exact sum
 * (u = 2^-24; Higham's gamma_K bound to first order). sum|a*b| is computed
 * exactly by running the reference on |inputs|; atol = (K + 2) * u * its
 * maximum, the +2 for the bias add or the += into an accumulating gradient
 * and the final rounding. K per result:
 *   y:  c_in kh kw (one GEMM over the columns);
 *   dx: c_out + kh kw (a GEMM over c_out, then col2im adds up to kh kw of
 *       those partial sums); c_out kh kw on the implicit GEMM (one sum);
 *   dw: n oh ow + n (GEMM over each chunk's columns, += once per chunk;
 *       the implicit GEMM's k-slices are a regrouping of the same terms);
 *   db: n oh ow.
 * Inputs lie in [-1, 1]: a missing or misplaced term (~0.25) is orders of
 * magnitude above these bounds (~1e-4 at the sizes used here).
 *
 * 16-bit activation storage (runs at bf16 or fp16 precision): the implicit
 * GEMMs' cases run again with x, y, dy and dx stored in the format, x and
 * dy exact in it; y and dx are the products' sums (bounded as above)
 * rounded once more on store: unit roundoff u of the float result (2^-8
 * bf16, 2^-11 fp16) plus fp16's subnormal half step s = 2^-25 -> atol
 * (1 + u) times the product bound + s, rtol u. dw and db stay float (db
 * a float sum of dy's values, exact in the format: the float bound).
 */
#include <math.h>
#include <stdlib.h>

#include "check/check.h"
#include "ops/conv.h"
#include "ops/conv_igemm.h"
#include "ops/conv_lane.h"
#include "host/conv_host.h"
#include "host/host_work.h"
#include "ref/conv.h"

static void fill_f32(ct_check *c, double *x, size_t n)
{
    ck_fill(c, x, n, -1, 1);
    ck_round_f32(x, n);
}

typedef struct conv_loss {
    const ct_conv2d_desc *d;
    const double *x, *w, *b, *dy;
    double *y;
    size_t ny;
} conv_loss;

static double conv_loss_fn(void *user)
{
    conv_loss *l = user;
    ct_ref_conv2d_forward(l->d, l->y, l->x, l->w, l->b);
    return ck_dot(l->y, l->dy, l->ny);
}

enum { WS_MIN, WS_RECOMMENDED, WS_TWO_IMAGES };

static void conv_case_on(ct_check *c, const ct_conv2d_desc *d, int has_bias, int ws_mode);

enum { PATH_GPU_KERNELS, PATH_CPU_KERNELS, PATH_DIRECT_HOST, PATH_DIRECT_HOST_AVX2,
       PATH_GPU_IMPLICIT, PATH_GPU_LANE };

/* path: im2col with the GPU or the CPU kernels, the GPU class's implicit
 * GEMMs or its direct lane kernels (forced as CLTRAIN_CONV=lane does, so
 * they run on every device), or the direct host convolution (skipped where
 * it does not apply). */
static void conv_case(ct_check *c, const ct_conv2d_desc *d, int has_bias, int ws_mode, int path)
{
    ct_context *ctx = ck_ctx(c);
    int direct = ctx->conv_direct;
    if (path == PATH_DIRECT_HOST_AVX2) {
        /* only where it differs from PATH_DIRECT_HOST */
        if (!ct_host_avx512())
            return;
        setenv("CLTRAIN_HOST_ISA", "avx2", 1);
        conv_case(c, d, has_bias, ws_mode, PATH_DIRECT_HOST);
        unsetenv("CLTRAIN_HOST_ISA");
        return;
    }
    ctx->conv_direct = path == PATH_GPU_LANE ? 2 : path == PATH_DIRECT_HOST || path == PATH_GPU_IMPLICIT;
    if (path == PATH_DIRECT_HOST) {
        /* the class table decides: probe it as the case would run */
        ct_kernels real = ck_use_class(c, CT_KERNELS_CPU);
        int ok = ct_conv2d_host_ok(ctx, d);
        ctx->conv_direct = direct;
        ck_use_class(c, real);
        if (!ok)
            return;
        ctx->conv_direct = 1;
    }
    ck_case(c, "conv2d x (%d, %d, %d, %d) w (%d, %d, %d, %d) stride %dx%d pad %dx%d dil %dx%d "
            "bias=%d ws=%s path=%s", d->n, d->c_in, d->h, d->w, d->c_out, d->c_in, d->kh,
            d->kw, d->stride_h, d->stride_w, d->pad_h, d->pad_w, d->dil_h, d->dil_w, has_bias,
            ws_mode == WS_MIN ? "min" : ws_mode == WS_RECOMMENDED ? "recommended" : "two images",
            path == PATH_DIRECT_HOST ? (ct_host_avx512() ? "direct host avx512" : "direct host")
            : path == PATH_CPU_KERNELS ? "im2col cpu"
            : path == PATH_GPU_IMPLICIT ? "implicit gemm gpu"
            : path == PATH_GPU_LANE ? "direct lanes gpu" : "im2col gpu");
    int gpu = path == PATH_GPU_KERNELS || path == PATH_GPU_IMPLICIT || path == PATH_GPU_LANE;
    ct_kernels real = ck_use_class(c, gpu ? CT_KERNELS_GPU : CT_KERNELS_CPU);
    conv_case_on(c, d, has_bias, ws_mode);
    /* (where the device runs the implicit GEMMs: the others refuse 16-bit storage) */
    ck_act16_state s;
    if (path == PATH_GPU_IMPLICIT && ct_conv2d_igemm_ok(ctx, d) && ck_act16_begin(c, &s)) {
        ck_case(c, "conv2d x (%d, %d, %d, %d) w (%d, %d, %d, %d) stride %dx%d pad %dx%d dil %dx%d "
                "bias=%d, implicit gemm gpu, 16-bit activations", d->n, d->c_in, d->h, d->w, d->c_out,
                d->c_in, d->kh, d->kw, d->stride_h, d->stride_w, d->pad_h, d->pad_w, d->dil_h, d->dil_w,
                has_bias);
        conv_case_on(c, d, has_bias, ws_mode);
        ck_act16_end(c, &s);
    }
    ctx->conv_direct = direct;
    ck_use_class(c, real);
}

static void conv_case_on(ct_check *c, const ct_conv2d_desc *d, int has_bias, int ws_mode)
{
    ct_context *ctx = ck_ctx(c);
    int oh = 0, ow = 0;
    if (ck_status(c, ct_conv2d_out_shape(ctx, d, &oh, &ow), "conv2d output shape"))
        return;
    size_t K = (size_t)d->c_in * d->kh * d->kw, P = (size_t)oh * ow;
    size_t nx = (size_t)d->n * d->c_in * d->h * d->w, nw = (size_t)d->c_out * K;
    size_t ny = (size_t)d->n * d->c_out * P, nb = (size_t)d->c_out;
    size_t ws_elems = ws_mode == WS_MIN             ? K * P
                      : ws_mode == WS_RECOMMENDED ? ct_conv2d_workspace_for(ctx, d)
                                                  : 2 * (K + nb) * P + 5;
    double *x = ck_host(c, nx), *w = ck_host(c, nw), *b = ck_host(c, nb), *dy = ck_host(c, ny);
    double *y = ck_host(c, ny), *dx = ck_host(c, nx), *gw = ck_host(c, nw), *gb = ck_host(c, nb);
    double *dw = ck_host(c, nw), *db = ck_host(c, nb);
    double *ay = ck_host(c, ny), *adx = ck_host(c, nx), *adw = ck_host(c, nw), *adb = ck_host(c, nb);
    if (ck_failed(c))
        return;
    fill_f32(c, x, nx);
    fill_f32(c, w, nw);
    fill_f32(c, b, nb);
    fill_f32(c, dy, ny);
    ck_round_act(c, x, nx); /* activations in the storage's format (float: as they are) */
    ck_round_act(c, dy, ny);
    const int f = ck_act16(c);
    const double u = f ? ck_prec_u((ct_precision)f) : 0, sub = f ? ck_prec_sub((ct_precision)f) : 0;
    const double *bias = has_bias ? b : NULL;
    ct_ref_conv2d_forward(d, y, x, w, bias);
    ct_ref_conv2d_backward(d, dx, gw, gb, dy, x, w);
    /* on the device dw and db start at 0.5 and 0.25: they must accumulate */
    for (size_t i = 0; i < nw; i++)
        dw[i] = 0.5 + gw[i], adw[i] = 0.5;
    for (size_t i = 0; i < nb; i++)
        db[i] = 0.25 + gb[i], adb[i] = 0.25;
    double *ax = ck_abs(c, x, nx), *aw = ck_abs(c, w, nw), *ab = ck_abs(c, b, nb);
    double *ady = ck_abs(c, dy, ny);
    if (ck_failed(c))
        return;
    ct_ref_conv2d_forward(d, ay, ax, aw, has_bias ? ab : NULL);
    ct_ref_conv2d_backward(d, adx, adw, adb, ady, ax, aw);

    ct_buf d_x = ck_act_in(c, x, nx), d_w = ck_dev_in(c, w, nw), d_dy = ck_act_in(c, dy, ny);
    ct_buf d_b = has_bias ? ck_dev_in(c, b, nb) : (ct_buf){ NULL, 0 };
    ct_buf d_y = ck_act_out(c, ny), d_dx = ck_act_out(c, nx);
    ct_buf d_dw = ck_dev_const(c, nw, 0.5), d_db = ck_dev_const(c, nb, 0.25);
    /* the workspace starts as NaN: nothing may be read before it is written */
    ct_buf d_ws = ck_dev_out(c, ws_elems);
    if (ck_failed(c))
        return;
    if (ck_status(c, ct_conv2d_forward(ctx, d, d_y, d_x, d_w, d_b, d_ws, ws_elems),
                  "conv2d forward"))
        return;
    ck_expect(c, "forward y", d_y, ny, y, ck_prod_atol(c, K, ay, ny) * (1 + u) + sub, u);
    if (ck_status(c, ct_conv2d_backward(ctx, d, d_dx, d_dw, has_bias ? d_db : (ct_buf){ NULL, 0 },
                                        d_dy, d_x, d_w, d_ws, ws_elems), "conv2d backward"))
        return;
    /* im2col: a sum over c_out, then col2im's over kh kw; the implicit
     * GEMM and the lane kernels: one sum over c_out kh kw */
    size_t khw = (size_t)d->kh * d->kw;
    int one_sum = ct_conv2d_lane_ok(ctx, d) || (ct_conv2d_igemm_ok(ctx, d) && ct_conv2d_igemm_dx_ok(ctx, d));
    size_t k_dx = one_sum ? (size_t)d->c_out * khw : (size_t)d->c_out + khw;
    ck_expect(c, "backward dx", d_dx, nx, dx, ck_prod_atol(c, k_dx, adx, nx) * (1 + u) + sub, u);
    ck_expect(c, "backward dw", d_dw, nw, dw, ck_prod_atol(c, (size_t)d->n * (P + 1), adw, nw), 0);
    if (has_bias) /* (16 bits: dy exact in the format, a float sum) */
        ck_expect(c, "backward db", d_db, nb, db, ck_sum_atol((size_t)d->n * P, adb, nb), 0);

    conv_loss l = { d, x, w, bias, dy, ck_host(c, ny), ny };
    if (ck_failed(c))
        return;
    ck_gradcheck(c, "reference dx", conv_loss_fn, &l, x, nx, dx, 16);
    ck_gradcheck(c, "reference dw", conv_loss_fn, &l, w, nw, gw, 16);
    if (has_bias)
        ck_gradcheck(c, "reference db", conv_loss_fn, &l, b, nb, gb, 16);
}

/* Bad geometry and a short workspace must be refused with the right status. */
static void error_cases(ct_check *c)
{
    ct_context *ctx = ck_ctx(c);
    ck_case(c, "conv2d refuses an empty output and a short workspace");
    /* a dilated 3x3 (extent 5) on a 4x4 input without padding: no output */
    ct_conv2d_desc bad = { 1, 1, 4, 4, 1, 3, 3, 1, 1, 0, 0, 2, 2 };
    int oh = -1, ow = -1;
    int st = ct_conv2d_out_shape(ctx, &bad, &oh, &ow);
    if (st != CT_ERR_SHAPE || ct_conv2d_workspace(&bad) != 0)
        ck_status(c, CT_ERR_INTERNAL, "an empty conv2d output was not refused");
    ct_conv2d_desc ok = { 2, 2, 5, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1 };
    double one = 1;
    ct_buf t = ck_dev_in(c, &one, 1), ws = ck_dev_out(c, 2 * 9 * 25 - 1);
    ct_buf big = ck_dev_out(c, 2 * 3 * 25 + 2 * 2 * 25);
    if (ck_failed(c))
        return;
    st = ct_conv2d_forward(ctx, &ok, big, big, big, t, ws, 2 * 9 * 25 - 1);
    if (st != CT_ERR_INVALID_ARG)
        ck_status(c, CT_ERR_INTERNAL, "a workspace one float short was not refused");
}

typedef struct conv_bench {
    ct_context *ctx;
    ct_conv2d_desc d;
    ct_buf x, w, b, y, dy, dx, dw, db, ws;
    size_t ws_elems;
} conv_bench;

static int bench_run(void *user)
{
    conv_bench *b = user;
    int st = ct_conv2d_forward(b->ctx, &b->d, b->y, b->x, b->w, b->b, b->ws, b->ws_elems);
    return st ? st : ct_conv2d_backward(b->ctx, &b->d, b->dx, b->dw, b->db, b->dy, b->x, b->w,
                                        b->ws, b->ws_elems);
}

static int pick_kernel(ct_check *c)
{
    static const int k[] = { 1, 2, 3, 5 };
    return k[ck_int(c, 0, 3)];
}

void ct_check_conv(ct_check *c)
{
    /* fixed cases: size-1 everything, the golden shapes' kinds, each workspace regime */
    static const ct_conv2d_desc fixed[] = {
        { 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1 },
        { 2, 3, 5, 6, 2, 1, 1, 1, 1, 0, 0, 1, 1 },  /* 1x1: im2col-free when direct */
        { 3, 2, 7, 9, 4, 3, 3, 1, 1, 1, 1, 1, 1 },
        { 3, 2, 11, 8, 5, 5, 5, 2, 2, 2, 2, 1, 1 }, /* stride 2 */
        { 2, 3, 9, 9, 3, 3, 3, 1, 1, 2, 2, 2, 2 },  /* dilation 2 */
        { 3, 2, 5, 4, 2, 1, 3, 2, 1, 3, 4, 1, 2 },  /* padding beyond the kernel, non-square */
        { 1, 1, 1, 1, 3, 3, 3, 1, 1, 1, 1, 1, 1 },  /* 1x1 input, 3x3 kernel: padding only */
        { 2, 2, 19, 17, 3, 3, 3, 1, 1, 1, 1, 1, 1 }, /* P = 323: reorders span work-groups */
        { 2, 2, 1, 2, 3, 5, 5, 1, 1, 4, 4, 2, 2 },  /* kernel taps whose whole row is padding */
        { 2, 2, 3, 301, 3, 3, 3, 1, 1, 1, 1, 1, 1 }, /* rows wider than a work-group (256) */
        { 3, 2, 4, 263, 2, 1, 3, 1, 2, 0, 1, 1, 1 }, /* the same at stride 2: ow 132, w 263 */
        /* the direct host path: whole images per item (n >= 2 x threads), c_out not a
         * multiple of 4, widths with vector tails and tiles spanning rows */
        { 9, 5, 13, 11, 6, 3, 3, 1, 1, 1, 1, 1, 1 },
        { 2, 3, 9, 37, 7, 5, 5, 1, 1, 2, 2, 1, 1 },
        { 17, 4, 8, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1 },
        { 3, 6, 6, 19, 5, 2, 4, 1, 1, 0, 3, 1, 1 },
        /* strided 1x1: subsampled, then the 1x1 direct path (AVX-512) */
        { 5, 5, 9, 7, 10, 1, 1, 2, 2, 0, 0, 1, 1 },
        { 2, 3, 8, 11, 9, 1, 1, 3, 2, 0, 0, 1, 1 },
        /* other strided ones: the phase form on AVX-512 (AlexNet's 11x11 stride 4,
         * ResNet's 7x7 and 3x3 stride 2, unequal strides and kernels) */
        { 2, 3, 31, 27, 5, 11, 11, 4, 4, 2, 2, 1, 1 },
        { 3, 3, 23, 19, 9, 7, 7, 2, 2, 3, 3, 1, 1 },
        { 4, 9, 15, 14, 11, 3, 3, 2, 2, 1, 1, 1, 1 },
        { 2, 4, 13, 16, 7, 3, 5, 3, 2, 1, 2, 1, 1 },
        /* the AVX-512 weight gradient's output-channel tiles (16 channels a
         * vector): 2 vectors; 3 with 11 lanes past c_out; 2 + 2; 3 + 2 at
         * stride 2; tap counts that leave a last tap tile part-empty */
        { 2, 3, 9, 8, 20, 3, 3, 1, 1, 1, 1, 1, 1 },
        { 2, 5, 7, 6, 37, 3, 3, 1, 1, 1, 1, 1, 1 },
        { 2, 7, 5, 9, 64, 1, 1, 1, 1, 0, 0, 1, 1 },
        { 3, 4, 6, 5, 70, 3, 3, 2, 2, 1, 1, 1, 1 },
        /* and with the input channels along the lanes (x transposed: from 32
         * input channels, where that moves less memory): 3 vectors with 8
         * lanes past c_in and several chunks of rows; at stride 2; 1x1 */
        { 9, 40, 13, 11, 30, 3, 3, 1, 1, 1, 1, 1, 1 },
        { 2, 37, 5, 5, 70, 3, 3, 2, 2, 1, 1, 1, 1 },
        { 2, 36, 5, 7, 40, 1, 1, 1, 1, 0, 0, 1, 1 },
    };
    for (size_t f = 0; f < CT_ARRAY_LEN(fixed) && !ck_failed(c); f++)
        for (int mode = WS_MIN; mode <= WS_TWO_IMAGES && !ck_failed(c); mode++)
            for (int path = PATH_GPU_KERNELS; path <= PATH_GPU_LANE && !ck_failed(c); path++) {
                if (path >= PATH_DIRECT_HOST && mode != WS_MIN)
                    continue; /* it takes no workspace */
                /* small: one (workspace, kernels) pair per shape, the six pairs
                 * in turn; the batches of more than three images (there for the
                 * direct host path) with the recommended workspace: few GEMMs;
                 * and the implicit GEMMs on three small shapes (3x3, 5x5 at stride 2,
                 * padding beyond a non-square kernel), the lane kernels on
                 * the strided 5x5 and the dilated one whose taps lie wholly
                 * in the padding */
                int small_mode = fixed[f].n > 3 ? WS_RECOMMENDED : (int)(f % 3);
                /* small: of the shapes after the first eleven (there for
                 * the host paths, which the simulator never runs) only the
                 * 11x11 at stride 4 and the unequal strides and kernels:
                 * the others were three quarters of the simulator's time */
                if (ck_small(c) && f >= 11 && f != 17 && f != 20)
                    continue;
                if (ck_small(c) && (path == PATH_GPU_LANE ? f != 3 && f != 8
                                    : path == PATH_GPU_IMPLICIT ? f != 2 && f != 3 && f != 5
                                    : mode != small_mode || path != (int)(f % 2)))
                    continue;
                /* small: the wide rows with one image, channel and row
                 * pair (the simulator's time grows with the elements) */
                ct_conv2d_desc d = fixed[f];
                if (ck_small(c) && d.w > 256)
                    d.n = 1, d.c_in = 1, d.c_out = 2, d.h = d.kh;
                /* small: the direct host path's batches (more than three
                 * images) with two: the simulator never runs that path, and
                 * the nine images of 40 channels were over half its time */
                if (ck_small(c) && d.n > 3 && path != PATH_DIRECT_HOST && path != PATH_DIRECT_HOST_AVX2)
                    d.n = 2;
                conv_case(c, &d, (int)(f + (size_t)mode) % 2 == 0, mode, path);
                ck_case_end(c);
            }
    if (!ck_failed(c))
        error_cases(c);
    ck_case_end(c);
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        ct_conv2d_desc d;
        d.n = ck_dim(c, 3);
        d.c_in = ck_dim(c, 5);
        d.c_out = ck_dim(c, 6);
        d.kh = pick_kernel(c);
        d.kw = ck_int(c, 0, 2) ? d.kh : pick_kernel(c);
        d.stride_h = ck_int(c, 1, 3);
        d.stride_w = ck_int(c, 0, 1) ? d.stride_h : ck_int(c, 1, 3);
        d.dil_h = ck_int(c, 1, 2);
        d.dil_w = ck_int(c, 0, 1) ? d.dil_h : ck_int(c, 1, 2);
        d.pad_h = ck_int(c, 0, d.kh + 1);
        d.pad_w = ck_int(c, 0, 1) ? d.pad_h : ck_int(c, 0, d.kw + 1);
        /* sizes at least the dilated kernel's extent minus the padding */
        int min_h = d.dil_h * (d.kh - 1) + 1 - 2 * d.pad_h, min_w = d.dil_w * (d.kw - 1) + 1 - 2 * d.pad_w;
        d.h = ck_dim(c, 13);
        d.w = ck_dim(c, 13);
        d.h = d.h < min_h ? min_h : d.h;
        d.w = d.w < min_w ? min_w : d.w;
        int bias = ck_int(c, 0, 1), mode = ck_int(c, WS_MIN, WS_TWO_IMAGES);
        /* stride 1 half the time, so the direct host path gets its share */
        if (ck_int(c, 0, 1))
            d.stride_h = d.stride_w = d.dil_h = d.dil_w = 1;
        conv_case(c, &d, bias, mode, ck_int(c, PATH_GPU_KERNELS, PATH_GPU_LANE));
        ck_case_end(c);
    }

    if (ck_benchmarking(c) && !ck_failed(c)) {
        /* ResNet-56's first stage */
        conv_bench b = { .ctx = ck_ctx(c), .d = { 128, 16, 32, 32, 16, 3, 3, 1, 1, 1, 1, 1, 1 } };
        ck_case(c, "bench conv2d 128x16x32x32 3x3");
        size_t nx = (size_t)128 * 16 * 32 * 32, nw = 16 * 16 * 9;
        b.ws_elems = ct_conv2d_workspace(&b.d);
        b.x = ck_dev_const(c, nx, 0.5);
        b.w = ck_dev_const(c, nw, 0.01);
        b.b = ck_dev_const(c, 16, 0.1);
        b.y = ck_dev_out(c, nx);
        b.dy = ck_dev_const(c, nx, 1);
        b.dx = ck_dev_out(c, nx);
        b.dw = ck_dev_const(c, nw, 0);
        b.db = ck_dev_const(c, 16, 0);
        b.ws = ck_dev_out(c, b.ws_elems);
        /* three GEMMs of 2 c_out K n P flops; bytes: each pass's reads and
         * writes of x, y (or dy, dx), the columns and the reordered
         * products: 3 x + 6 columns + 8 y floats over forward + backward */
        double K = 16 * 9, nP = 128.0 * 32 * 32;
        double flops = 3 * 2 * 16 * K * nP;
        double bytes = 4 * (3.0 * (double)nx + 6 * K * nP + 8.0 * (double)nx);
        if (!ck_failed(c))
            ck_bench(c, "128x16x32x32 3x3", flops, bytes, bench_run, &b);
        ck_case_end(c);
    }
}
