/*
 * bench_conv_gpu - three ways to run a convolution's forward on the GPU
 * class (CLBlast, work-group kernels), timed side by side at the conv
 * shapes of the zoo networks, each checked against the first:
 *
 *   current   ct_conv2d_forward: on the GPU class the implicit GEMM
 *             (src/ops/conv_igemm.c: one kernel reading NCHW in place, the
 *             bias in its epilogue; where the device keeps im2col, or with
 *             CLTRAIN_CONV=im2col: im2col of a chunk of nb images into the
 *             workspace (K, nb P), one SGEMM (c_out, nb P, K) into the
 *             workspace, a scatter (with the bias) into NCHW)
 *   convgemm  CLBlastSconvgemm: one CLBlast kernel reading the image
 *             through im2col indices (an implicit GEMM; CLBlast 1.5's
 *             single-kernel method, no column matrix), NCHW out, then the
 *             bias in a second pass
 *   batched   the same im2col chunks, then CLBlastSgemmStridedBatched:
 *             image i's product (c_out, P) = w . col[:, i P : (i+1) P]
 *             written straight into NCHW (no product buffer, no scatter),
 *             then the bias; a 1x1, stride-1, unpadded convolution takes
 *             the images themselves as columns (no im2col, no workspace)
 *
 *   bench_conv_gpu [--reps N] [--batch N] [--shape NAME] [--device SEL]
 *
 * (--batch: every shape at this batch instead of its own small default;
 * --shape: one shape, by the name printed).
 *
 * The context takes the GPU class on whatever device is chosen (as
 * CLTRAIN_KERNELS=gpu does), so pocl runs the code a GPU runs. CLBlast compiles each
 * routine the first time it runs (seconds on pocl): the first call of each
 * variant is reported as "first" and left out of the medians. Variants run
 * interleaved, one rep of each in turn. Exit 1 if a variant's output
 * differs from the current path's by more than 1e-4 of the output's
 * largest magnitude (plus 1e-5).
 */
#include "cl/runtime.h" /* first: sets the OpenCL target version */

#include <clblast_c.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv.h"
#include "ops/conv_igemm.h"
#include "ops/dense.h"
#include "ops/ops.h"

#define MAX_REPS 64
#define NVAR 3

typedef struct shape {
    const char *name, *net;
    int n; /* default batch (small: pocl runs this) */
    ct_conv2d_desc d;
    int bias;
} shape;

/* { n, c_in, h, w, c_out, kh, kw, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w } */
static const shape shapes[] = {
    { "r56-3x3-c16", "resnet56", 32, { 0, 16, 32, 32, 16, 3, 3, 1, 1, 1, 1, 1, 1 }, 0 },
    { "r56-3x3-c32", "resnet56", 32, { 0, 32, 16, 16, 32, 3, 3, 1, 1, 1, 1, 1, 1 }, 0 },
    { "r56-3x3-c64", "resnet56", 32, { 0, 64, 8, 8, 64, 3, 3, 1, 1, 1, 1, 1, 1 }, 0 },
    { "r56-3x3s2-c32", "resnet56", 32, { 0, 16, 32, 32, 32, 3, 3, 2, 2, 1, 1, 1, 1 }, 0 },
    { "alex-11x11s4", "alexnet-s", 4, { 0, 3, 224, 224, 64, 11, 11, 4, 4, 2, 2, 1, 1 }, 1 },
    { "alex-5x5-c192", "alexnet-s", 4, { 0, 64, 27, 27, 192, 5, 5, 1, 1, 2, 2, 1, 1 }, 1 },
    { "r50-7x7s2", "resnet50", 4, { 0, 3, 224, 224, 64, 7, 7, 2, 2, 3, 3, 1, 1 }, 0 },
    { "r50-1x1-64-256", "resnet50", 4, { 0, 64, 56, 56, 256, 1, 1, 1, 1, 0, 0, 1, 1 }, 0 },
    { "r50-1x1-1024-256", "resnet50", 4, { 0, 1024, 14, 14, 256, 1, 1, 1, 1, 0, 0, 1, 1 }, 0 },
    { "r50-1x1s2-256-512", "resnet50", 4, { 0, 256, 56, 56, 512, 1, 1, 2, 2, 0, 0, 1, 1 }, 0 },
};

static const char *const var_names[NVAR] = { "current", "convgemm", "batched" };

/* a buffer of n floats, filled with uniform values in [-scale, scale) */
static int make_buf(ct_context *ctx, size_t n, float scale, unsigned seed, ct_buf *b)
{
    b->off = 0;
    b->mem = NULL;
    int st = ct_buffer_create(ctx, (n ? n : 1) * sizeof(float), &b->mem);
    if (st || !n)
        return st;
    float *h = malloc(n * sizeof *h);
    if (!h)
        return CT_ERR_NO_MEMORY;
    unsigned long long s = 0x9e3779b97f4a7c15ull * (seed + 1);
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        h[i] = scale * ((float)(s >> 40) * (2.0f / 16777216.0f) - 1.0f);
    }
    st = ct_buffer_write(ctx, b->mem, 0, n * sizeof *h, h);
    free(h);
    return st;
}

typedef struct geom {
    ct_conv2d_desc d;
    int oh, ow, nb, identity; /* identity: 1x1, stride 1, no padding (x is the columns) */
    size_t K, P, in_img, out_img;
    size_t ws_cur, ws_bat; /* workspace floats of the current and batched variants */
} geom;

static int clblast_status(ct_context *ctx, CLBlastStatusCode s, const char *what)
{
    if (s == CLBlastSuccess)
        return CT_OK;
    return ct_fail(ctx, (int)s, "%s failed: %s", what, ct_status_str((int)s));
}

/* the fine-grained im2col of cnt images (the GPU class's kernel): col (K, cnt P) */
static int im2col(ct_context *ctx, const geom *g, ct_buf col, ct_buf x, int cnt)
{
    return ct_conv2d_im2col(ctx, &g->d, col, g->ws_cur > g->ws_bat ? g->ws_cur : g->ws_bat, x, cnt);
}

static int run_convgemm(ct_context *ctx, const geom *g, ct_buf y, ct_buf x, ct_buf w, ct_buf b)
{
    const ct_conv2d_desc *d = &g->d;
    cl_command_queue q = ctx->queue;
    CLBlastStatusCode s = CLBlastSconvgemm(
        CLBlastKernelModeCrossCorrelation, (size_t)d->c_in, (size_t)d->h, (size_t)d->w,
        (size_t)d->kh, (size_t)d->kw, (size_t)d->pad_h, (size_t)d->pad_w, (size_t)d->stride_h,
        (size_t)d->stride_w, (size_t)d->dil_h, (size_t)d->dil_w, (size_t)d->c_out, (size_t)d->n,
        x.mem, x.off, w.mem, w.off, y.mem, y.off, &q, NULL);
    int st = clblast_status(ctx, s, "CLBlastSconvgemm");
    if (!st && b.mem)
        st = ct_bias_act_forward(ctx, y, y, b, d->n, d->c_out, (int)g->P, CT_ACT_NONE);
    return st;
}

static int run_batched(ct_context *ctx, const geom *g, ct_buf y, ct_buf x, ct_buf w, ct_buf b,
                       ct_buf ws)
{
    const ct_conv2d_desc *d = &g->d;
    cl_command_queue q = ctx->queue;
    int st = CT_OK;
    int nb = g->identity ? d->n : g->nb;
    for (int n0 = 0; n0 < d->n && !st; n0 += nb) {
        int cnt = d->n - n0 < nb ? d->n - n0 : nb;
        ct_buf xi = ct_buf_at(x, (size_t)n0 * g->in_img), yi = ct_buf_at(y, (size_t)n0 * g->out_img);
        /* image i's columns: col (K, cnt P)[:, i P : (i + 1) P], or x_i (c_in, P) itself */
        ct_buf col = g->identity ? xi : ws;
        size_t ldb = g->identity ? g->P : (size_t)cnt * g->P, sb = g->identity ? g->in_img : g->P;
        if (!g->identity && (st = im2col(ctx, g, ws, xi, cnt)))
            break;
        /* y_i (c_out, P) = w (c_out, K) . col_i (K, P), for every i in one launch */
        CLBlastStatusCode s = CLBlastSgemmStridedBatched(
            CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, (size_t)d->c_out, g->P,
            g->K, 1.0f, w.mem, w.off, g->K, 0, col.mem, col.off, ldb, sb, 0.0f, yi.mem, yi.off,
            g->P, g->out_img, (size_t)cnt, &q, NULL);
        st = clblast_status(ctx, s, "CLBlastSgemmStridedBatched");
    }
    if (!st && b.mem)
        st = ct_bias_act_forward(ctx, y, y, b, d->n, d->c_out, (int)g->P, CT_ACT_NONE);
    return st;
}

typedef struct bufs {
    ct_buf x, w, b, y[NVAR], ws;
} bufs;

static int run_var(ct_context *ctx, const geom *g, bufs *B, int v)
{
    ct_buf b = B->b; /* mem NULL: no bias */
    switch (v) {
    case 0: return ct_conv2d_forward(ctx, &g->d, B->y[0], B->x, B->w, b, B->ws, g->ws_cur);
    case 1: return run_convgemm(ctx, g, B->y[1], B->x, B->w, b);
    default: return run_batched(ctx, g, B->y[2], B->x, B->w, b, B->ws);
    }
}

/* max |a - b| and max |a| over n floats read back from two buffers */
static int compare(ct_context *ctx, ct_buf a, ct_buf b, size_t n, double *err, double *mag)
{
    float *ha = malloc(n * sizeof *ha), *hb = malloc(n * sizeof *hb);
    int st = !ha || !hb ? CT_ERR_NO_MEMORY : CT_OK;
    if (!st)
        st = ct_buffer_read(ctx, a.mem, a.off * sizeof(float), n * sizeof(float), ha);
    if (!st)
        st = ct_buffer_read(ctx, b.mem, b.off * sizeof(float), n * sizeof(float), hb);
    *err = 0;
    *mag = 0;
    for (size_t i = 0; !st && i < n; i++) {
        double e = fabs((double)ha[i] - (double)hb[i]);
        if (!(e <= *err)) /* NaN counts as an infinite error */
            *err = e == e ? e : INFINITY;
        if (fabs((double)ha[i]) > *mag)
            *mag = fabs((double)ha[i]);
    }
    free(ha);
    free(hb);
    return st;
}

static int bench_shape(ct_context *ctx, const shape *s, int batch, int reps, int *mismatch)
{
    geom g;
    memset(&g, 0, sizeof g);
    g.d = s->d;
    g.d.n = batch > 0 ? batch : s->n;
    int st = ct_conv2d_out_shape(ctx, &g.d, &g.oh, &g.ow);
    if (st)
        return st;
    const ct_conv2d_desc *d = &g.d;
    g.K = (size_t)d->c_in * d->kh * d->kw;
    g.P = (size_t)g.oh * g.ow;
    g.in_img = (size_t)d->c_in * d->h * d->w;
    g.out_img = (size_t)d->c_out * g.P;
    g.ws_cur = ct_conv2d_workspace(d);
    /* the current path's chunk: as many images as its workspace holds with products */
    g.nb = g.ws_cur > g.K * g.P ? (int)(g.ws_cur / ((g.K + (size_t)d->c_out) * g.P)) : 1;
    g.identity = d->kh == 1 && d->kw == 1 && d->stride_h == 1 && d->stride_w == 1 &&
                 d->pad_h == 0 && d->pad_w == 0;
    g.ws_bat = g.identity ? 0 : (size_t)g.nb * g.K * g.P;
    size_t nx = (size_t)d->n * g.in_img, ny = (size_t)d->n * g.out_img;
    size_t nw = (size_t)d->c_out * g.K;

    bufs B;
    memset(&B, 0, sizeof B);
    if ((st = make_buf(ctx, nx, 1.0f, 1, &B.x)) ||
        (st = make_buf(ctx, nw, 1.0f / sqrtf((float)g.K), 2, &B.w)) ||
        (s->bias && (st = make_buf(ctx, (size_t)d->c_out, 0.5f, 3, &B.b))) ||
        (st = make_buf(ctx, g.ws_cur > g.ws_bat ? g.ws_cur : g.ws_bat, 0, 4, &B.ws)))
        goto done;
    for (int v = 0; v < NVAR && !st; v++)
        if (!(st = make_buf(ctx, ny, 0, 5, &B.y[v])))
            st = ct_fill(ctx, B.y[v], ny, NAN); /* every output element must be written */
    if (st || (st = ct_context_finish(ctx)))
        goto done;

    double t[NVAR][MAX_REPS], first[NVAR];
    for (int r = -1; r < reps && !st; r++) /* r = -1: the first call (compiles CLBlast's kernels) */
        for (int v = 0; v < NVAR && !st; v++) {
            double t0 = ct_now();
            if (!(st = run_var(ctx, &g, &B, v)))
                st = ct_context_finish(ctx);
            double dt = ct_now() - t0;
            if (st)
                fprintf(stderr, "bench_conv_gpu: %s: %s: %s\n", s->name, var_names[v],
                        ct_context_last_error(ctx));
            else if (r < 0)
                first[v] = dt;
            else
                t[v][r] = dt;
        }
    if (st)
        goto done;

    double N = d->n, K = (double)g.K, P = (double)g.P, co = d->c_out, gflop = 2 * co * K * P * N * 1e-9;
    /* bytes an ideal kernel moves to and from memory: every tensor once */
    double in = N * (double)g.in_img, out = N * co * P, cols = N * K * P, bias = s->bias ? 2 * out : 0;
    int implicit = ct_conv2d_igemm_ok(ctx, d);
    double mb[NVAR] = { 4e-6 * (implicit ? in + out : in + 2 * cols + 3 * out), 4e-6 * (in + out + bias),
                        4e-6 * (g.identity ? in + out + bias : in + 2 * cols + out + bias) };
    double wsmb[NVAR] = { 4e-6 * (double)g.ws_cur, 0, 4e-6 * (double)g.ws_bat };
    printf("%s (%s): N=%d C=%d->%d %dx%d k%dx%d s%d p%d -> %dx%d, K=%zu P=%zu, %.3f GFLOP, "
           "%d image%s per chunk\n", s->name, s->net, d->n, d->c_in, d->c_out, d->h, d->w, d->kh,
           d->kw, d->stride_h, d->pad_h, g.oh, g.ow, g.K, g.P, gflop, g.nb, g.nb > 1 ? "s" : "");
    for (int v = 0; v < NVAR; v++) {
        double err = 0, mag = 0;
        if (v > 0 && (st = compare(ctx, B.y[0], B.y[v], ny, &err, &mag)))
            goto done;
        int bad = v > 0 && !(err <= 1e-4 * mag + 1e-5);
        *mismatch |= bad;
        double m = ct_median(t[v], (size_t)reps);
        printf("  %-9s %9.2f ms  %7.2f GFLOP/s  first %8.1f ms  ideal bytes %8.1f MB  "
               "workspace %7.1f MB", var_names[v], m * 1e3, gflop / m, first[v] * 1e3, mb[v],
               wsmb[v]);
        if (v > 0)
            printf("  max|err| %.2e (max|y| %.2f)%s", err, mag, bad ? "  MISMATCH" : "");
        printf("\n");
    }
done:
    ct_buffer_release(&B.x.mem);
    ct_buffer_release(&B.w.mem);
    ct_buffer_release(&B.b.mem);
    ct_buffer_release(&B.ws.mem);
    for (int v = 0; v < NVAR; v++)
        ct_buffer_release(&B.y[v].mem);
    return st;
}

int main(int argc, char **argv)
{
    const char *device = NULL, *only = NULL;
    int reps = 3, batch = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--reps") && v) reps = atoi(v), i++;
        else if (!strcmp(argv[i], "--batch") && v) batch = atoi(v), i++;
        else if (!strcmp(argv[i], "--shape") && v) only = v, i++;
        else if (!strcmp(argv[i], "--device") && v) device = v, i++;
        else {
            fprintf(stderr, "usage: bench_conv_gpu [--reps N] [--batch N] [--shape NAME] "
                    "[--device SEL]\nshapes:");
            for (size_t s = 0; s < CT_ARRAY_LEN(shapes); s++)
                fprintf(stderr, " %s", shapes[s].name);
            fprintf(stderr, "\n");
            return 2;
        }
    }
    if (reps < 1 || reps > MAX_REPS || batch < 0) {
        fprintf(stderr, "bench_conv_gpu: --reps 1..%d, --batch >= 1\n", MAX_REPS);
        return 2;
    }
    ct_context_options o;
    ct_context_defaults(&o);
    o.device = device;
    o.lazy_kernels = 1;
    o.kernels = CT_KERNELS_GPU;
    ct_context *ctx = NULL;
    if (ct_context_create(&o, &ctx)) {
        fprintf(stderr, "bench_conv_gpu: %s\n", ct_last_error());
        return 1;
    }
    int st = ct_gemm_set_path(ctx, CT_GEMM_CLBLAST), mismatch = 0, ran = 0;
    printf("conv2d forward on %s, %s class, GEMM %s, median of %d, variants interleaved\n",
           ct_context_device(ctx)->name, ct_kernels_str(ct_context_kernels(ctx)),
           ct_gemm_path_str(ct_gemm_get_path(ctx)), reps);
    for (size_t s = 0; s < CT_ARRAY_LEN(shapes) && !st; s++)
        if (!only || !strcmp(only, shapes[s].name)) {
            st = bench_shape(ctx, &shapes[s], batch, reps, &mismatch);
            ran++;
            fflush(stdout);
        }
    if (st)
        fprintf(stderr, "bench_conv_gpu: %s\n", ct_context_last_error(ctx));
    else if (!ran)
        fprintf(stderr, "bench_conv_gpu: no shape is called %s\n", only);
    ct_context_free(&ctx);
    return st || !ran || mismatch ? 1 : 0;
}
