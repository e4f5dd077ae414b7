/*
 * bench_conv - conv2d forward and backward at ResNet-56's three stage
 * shapes on the chosen GEMM path, and the GEMM paths themselves: ct_gemm's
 * host path against a direct cblas_sgemm on host memory (what mapping the
 * buffers costs), and CLBlast on the device.
 *
 *   bench_conv [--gemm host|clblast] [--reps N] [--ws-min] [--conv-only] [--device SEL]
 *
 * (without --gemm: the context's default path; --ws-min: the smallest
 * workspace, one image per GEMM, instead of ct_conv2d_workspace's).
 *
 * Every figure is the median of --reps runs (default 5) after a warm-up.
 * Compared variants run interleaved, one rep of each in turn, so a busy
 * shared machine slows both sides alike.
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cl/runtime.h"
#include "ops/conv.h"
#include "host/conv_host.h"
#include "ops/ops.h"

#define MAX_REPS 64

static int make_buf(ct_context *ctx, size_t n, float value, ct_buf *b)
{
    b->off = 0;
    b->mem = NULL;
    int st = ct_buffer_create(ctx, (n ? n : 1) * sizeof(float), &b->mem);
    return st ? st : ct_fill(ctx, *b, n, value);
}

typedef struct conv_bufs {
    ct_conv2d_desc d;
    ct_buf x, w, b, y, dy, dx, dw, db, ws;
    size_t ws_elems;
} conv_bufs;

static void conv_release(conv_bufs *c)
{
    ct_buf *all[] = { &c->x, &c->w, &c->b, &c->y, &c->dy, &c->dx, &c->dw, &c->db, &c->ws };
    for (size_t i = 0; i < CT_ARRAY_LEN(all); i++)
        ct_buffer_release(&all[i]->mem);
}

static int conv_setup(ct_context *ctx, conv_bufs *c, int n, int ch, int hw, int ws_min)
{
    ct_conv2d_desc d = { n, ch, hw, hw, ch, 3, 3, 1, 1, 1, 1, 1, 1 };
    memset(c, 0, sizeof *c);
    c->d = d;
    size_t nx = (size_t)n * ch * hw * hw, nw = (size_t)ch * ch * 9;
    c->ws_elems = ws_min ? (size_t)ch * 9 * hw * hw : ct_conv2d_workspace(&d);
    int st;
    if ((st = make_buf(ctx, nx, 0.5f, &c->x)) || (st = make_buf(ctx, nw, 0.01f, &c->w)) ||
        (st = make_buf(ctx, (size_t)ch, 0.1f, &c->b)) || (st = make_buf(ctx, nx, 0, &c->y)) ||
        (st = make_buf(ctx, nx, 1, &c->dy)) || (st = make_buf(ctx, nx, 0, &c->dx)) ||
        (st = make_buf(ctx, nw, 0, &c->dw)) || (st = make_buf(ctx, (size_t)ch, 0, &c->db)) ||
        (st = make_buf(ctx, c->ws_elems, 0, &c->ws)))
        return st;
    return ct_context_finish(ctx);
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One timed forward (which 0) or backward (1), finished: wall seconds, and
 * the CPU seconds of all the process's threads (on a busy machine the wall
 * time grows with the load, the CPU time much less). */
static int conv_once(ct_context *ctx, conv_bufs *c, int which, double *sec, double *cpu)
{
    double t0 = ct_now(), c0 = cpu_now();
    int st = which == 0 ? ct_conv2d_forward(ctx, &c->d, c->y, c->x, c->w, c->b, c->ws, c->ws_elems)
                        : ct_conv2d_backward(ctx, &c->d, c->dx, c->dw, c->db, c->dy, c->x, c->w,
                                             c->ws, c->ws_elems);
    if (!st)
        st = ct_context_finish(ctx);
    *sec = ct_now() - t0;
    *cpu = cpu_now() - c0;
    return st;
}

/* Both convolution paths on a CPU device that shares host memory (the
 * direct host convolution and im2col + GEMM), interleaved rep by rep;
 * elsewhere only the path the context takes. */
static int bench_convs(ct_context *ctx, int reps, int ws_min)
{
    static const int shapes[3][2] = { { 16, 32 }, { 32, 16 }, { 64, 8 } };
    int direct = ctx->conv_direct;
    ct_conv2d_desc probe = { 128, 16, 32, 32, 16, 3, 3, 1, 1, 1, 1, 1, 1 };
    int both = ct_conv2d_host_ok(ctx, &probe);
    const char *names[2] = { "im2col", "direct" };
    printf("conv2d 3x3 pad 1, N=128, GEMM path %s, %s, median of %d%s:\n",
           ct_gemm_path_str(ct_gemm_get_path(ctx)),
           ws_min ? "one image per GEMM (--ws-min)" : "recommended workspace", reps,
           both ? ", im2col + GEMM and the direct host convolution interleaved" : "");
    int st = CT_OK;
    for (int s = 0; s < 3 && !st; s++) {
        conv_bufs c;
        st = conv_setup(ctx, &c, 128, shapes[s][0], shapes[s][1], ws_min);
        double tf[2][MAX_REPS], tb[2][MAX_REPS], cf[2][MAX_REPS], cb[2][MAX_REPS], dummy, dc;
        for (int r = -1; r < reps && !st; r++) /* r = -1: warm-up */
            for (int m = both ? 0 : 1; m < 2 && !st; m++) {
                ctx->conv_direct = both ? m : direct;
                st = conv_once(ctx, &c, 0, r < 0 ? &dummy : &tf[m][r], r < 0 ? &dc : &cf[m][r]);
                if (!st)
                    st = conv_once(ctx, &c, 1, r < 0 ? &dummy : &tb[m][r], r < 0 ? &dc : &cb[m][r]);
            }
        ctx->conv_direct = direct;
        if (st) {
            fprintf(stderr, "bench_conv: %s\n", ct_context_last_error(ctx));
            conv_release(&c);
            return st;
        }
        double K = 9.0 * shapes[s][0], nP = 128.0 * shapes[s][1] * shapes[s][1];
        double gemm_flop = 2 * shapes[s][0] * K * nP;
        for (int m = both ? 0 : 1; m < 2; m++) {
            double f = ct_median(tf[m], (size_t)reps), b = ct_median(tb[m], (size_t)reps);
            double fc = ct_median(cf[m], (size_t)reps), bc = ct_median(cb[m], (size_t)reps);
            printf("  C=%-3d %2dx%-2d %-6s forward %8.2f ms (%6.2f GFLOP/s, cpu %7.2f ms)   "
                   "backward %8.2f ms (%6.2f GFLOP/s, cpu %7.2f ms)\n", shapes[s][0],
                   shapes[s][1], shapes[s][1], both ? names[m] : "", f * 1e3,
                   gemm_flop / f * 1e-9, fc * 1e3, b * 1e3, 2 * gemm_flop / b * 1e-9, bc * 1e3);
        }
        conv_release(&c);
    }
    return st;
}

static void fill_host(float *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        a[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
}

/* ct_gemm on the host path against cblas_sgemm on malloc'd memory, n x n x n. */
static int bench_host_gemm(ct_context *ctx, int reps)
{
    static const int sizes[] = { 512, 1024, 2048 };
    int st = ct_gemm_set_path(ctx, CT_GEMM_HOST);
    if (st) {
        printf("ct_gemm host path: not available on this device (%s)\n", ct_context_last_error(ctx));
        return CT_OK;
    }
    printf("SGEMM n x n x n, GFLOP/s, median of %d, interleaved:\n", reps);
    for (size_t s = 0; s < CT_ARRAY_LEN(sizes) && !st; s++) {
        size_t n = (size_t)sizes[s], nn = n * n;
        float *ha = malloc(nn * sizeof *ha), *hb = malloc(nn * sizeof *hb), *hc = malloc(nn * sizeof *hc);
        ct_buf a = { 0 }, b = { 0 }, c = { 0 };
        if (!ha || !hb || !hc) {
            st = CT_ERR_NO_MEMORY;
            goto done;
        }
        fill_host(ha, nn);
        fill_host(hb, nn);
        if ((st = make_buf(ctx, nn, 0.5f, &a)) || (st = make_buf(ctx, nn, 0.25f, &b)) ||
            (st = make_buf(ctx, nn, 0, &c)) || (st = ct_context_finish(ctx)))
            goto done;
        double tc[MAX_REPS], th[MAX_REPS];
        for (int r = -1; r < reps && !st; r++) {
            double t0 = ct_now();
            st = ct_gemm(ctx, 0, 0, n, n, n, 1.0f, a.mem, 0, n, b.mem, 0, n, 0.0f, c.mem, 0, n);
            if (!st)
                st = ct_context_finish(ctx);
            double t1 = ct_now();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0f,
                        ha, (int)n, hb, (int)n, 0.0f, hc, (int)n);
            double t2 = ct_now();
            if (r >= 0) {
                tc[r] = t1 - t0;
                th[r] = t2 - t1;
            }
        }
        if (!st) {
            double flop = 2.0 * (double)n * (double)n * (double)n;
            printf("  %4zu  ct_gemm host %7.2f   cblas_sgemm direct %7.2f\n", n,
                   flop / ct_median(tc, (size_t)reps) * 1e-9, flop / ct_median(th, (size_t)reps) * 1e-9);
        }
    done:
        free(ha);
        free(hb);
        free(hc);
        ct_buffer_release(&a.mem);
        ct_buffer_release(&b.mem);
        ct_buffer_release(&c.mem);
    }
    return st;
}

static int bench_clblast_gemm(ct_context *ctx, int reps)
{
    static const int sizes[] = { 512, 1024 };
    int st = ct_gemm_set_path(ctx, CT_GEMM_CLBLAST);
    printf("SGEMM via CLBlast on %s, GFLOP/s, median of %d:\n", ct_context_device(ctx)->name, reps);
    for (size_t s = 0; s < CT_ARRAY_LEN(sizes) && !st; s++) {
        size_t n = (size_t)sizes[s], nn = n * n;
        ct_buf a = { 0 }, b = { 0 }, c = { 0 };
        double t[MAX_REPS];
        if (!(st = make_buf(ctx, nn, 0.5f, &a)) && !(st = make_buf(ctx, nn, 0.25f, &b)) &&
            !(st = make_buf(ctx, nn, 0, &c)) && !(st = ct_context_finish(ctx)))
            for (int r = -1; r < reps && !st; r++) { /* the warm-up also compiles CLBlast's kernels */
                double t0 = ct_now();
                st = ct_gemm(ctx, 0, 0, n, n, n, 1.0f, a.mem, 0, n, b.mem, 0, n, 0.0f, c.mem, 0, n);
                if (!st)
                    st = ct_context_finish(ctx);
                if (r >= 0)
                    t[r] = ct_now() - t0;
            }
        if (!st)
            printf("  %4zu  %7.2f\n", n, 2.0 * (double)nn * (double)n / ct_median(t, (size_t)reps) * 1e-9);
        ct_buffer_release(&a.mem);
        ct_buffer_release(&b.mem);
        ct_buffer_release(&c.mem);
    }
    return st;
}

int main(int argc, char **argv)
{
    const char *gemm = NULL, *device = NULL;
    int reps = 5, ws_min = 0, conv_only = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--gemm") && v) gemm = v, i++;
        else if (!strcmp(argv[i], "--reps") && v) reps = atoi(v), i++;
        else if (!strcmp(argv[i], "--device") && v) device = v, i++;
        else if (!strcmp(argv[i], "--ws-min")) ws_min = 1;
        else if (!strcmp(argv[i], "--conv-only")) conv_only = 1;
        else {
            fprintf(stderr, "usage: bench_conv [--gemm host|clblast] [--reps N] [--ws-min] "
                    "[--conv-only] [--device SEL]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > MAX_REPS || (gemm && strcmp(gemm, "host") && strcmp(gemm, "clblast"))) {
        fprintf(stderr, "bench_conv: --reps 1..%d, --gemm host or clblast\n", MAX_REPS);
        return 2;
    }
    ct_context_options o;
    ct_context_defaults(&o);
    o.device = device;
    o.lazy_kernels = 1;
    ct_context *ctx = NULL;
    if (ct_context_create(&o, &ctx)) {
        fprintf(stderr, "bench_conv: %s\n", ct_last_error());
        return 1;
    }
    /* without --gemm, the context's default path (host where memory is shared) */
    int st = !gemm ? CT_OK : ct_gemm_set_path(ctx, !strcmp(gemm, "host") ? CT_GEMM_HOST
                                                                         : CT_GEMM_CLBLAST);
    if (!st)
        st = bench_convs(ctx, reps, ws_min);
    if (!st && !conv_only)
        st = bench_host_gemm(ctx, reps);
    if (!st && !conv_only)
        st = bench_clblast_gemm(ctx, reps);
    if (st)
        fprintf(stderr, "bench_conv: %s\n", ct_context_last_error(ctx));
    ct_context_free(&ctx);
    return st ? 1 : 0;
}
