/*
 * shortcut.c - checks of the option-A shortcut (src/ops/shortcut.c)
 * against src/ref/shortcut.c.
 *
 * Tolerance: both passes copy floats or write zeros, with no arithmetic,
 * so they must match exactly: atol 0, rtol 0. At bf16 or fp16 precision
 * each case runs again on the GPU class with 16-bit activation storage,
 * its inputs exact in the format: exact too.
 */
#include "check/check.h"
#include "ref/shortcut.h"

typedef struct sc_shape {
    int n, c, h, w, stride, co;
} sc_shape;

typedef struct sc_loss {
    const sc_shape *s;
    const double *x, *w;
    double *y;
    size_t ny;
} sc_loss;

static double loss_of_x(void *user)
{
    sc_loss *l = user;
    const sc_shape *s = l->s;
    ct_ref_shortcut_a_forward(l->y, l->x, s->n, s->c, s->h, s->w, s->stride, s->co);
    return ck_dot(l->y, l->w, l->ny);
}

static void one_case(ct_check *c, const sc_shape *s)
{
    ct_context *ctx = ck_ctx(c);
    ck_case(c, "shortcut_a x (%d, %d, %d, %d) stride %d to %d channels%s", s->n, s->c, s->h, s->w,
            s->stride, s->co, ck_act16(c) ? ", 16-bit activations" : "");
    size_t oh = (size_t)ct_shortcut_a_out_dim(s->h, s->stride);
    size_t ow = (size_t)ct_shortcut_a_out_dim(s->w, s->stride);
    size_t nx = (size_t)s->n * (size_t)s->c * (size_t)s->h * (size_t)s->w;
    size_t ny = (size_t)s->n * (size_t)s->co * oh * ow;
    double *x = ck_host(c, nx), *y = ck_host(c, ny), *dy = ck_host(c, ny), *dx = ck_host(c, nx);
    if (ck_failed(c))
        return;
    ck_fill(c, x, nx, -1, 1);
    ck_fill(c, dy, ny, -1, 1);
    for (size_t i = 0; i < nx; i++)
        x[i] = (double)(float)x[i];
    for (size_t i = 0; i < ny; i++)
        dy[i] = (double)(float)dy[i];
    ck_round_act(c, x, nx);
    ck_round_act(c, dy, ny);
    ct_ref_shortcut_a_forward(y, x, s->n, s->c, s->h, s->w, s->stride, s->co);
    ct_ref_shortcut_a_backward(dx, dy, s->n, s->c, s->h, s->w, s->stride, s->co);

    ct_buf d_x = ck_act_in(c, x, nx), d_dy = ck_act_in(c, dy, ny);
    ct_buf d_y = ck_act_out(c, ny), d_dx = ck_act_out(c, nx);
    if (ck_failed(c))
        return;
    if (ck_status(c, ct_shortcut_a_forward(ctx, d_y, d_x, s->n, s->c, s->h, s->w, s->stride, s->co),
                  "shortcut forward"))
        return;
    ck_expect(c, "forward y", d_y, ny, y, 0, 0);
    if (ck_status(c, ct_shortcut_a_backward(ctx, d_dx, d_dy, s->n, s->c, s->h, s->w, s->stride,
                                            s->co),
                  "shortcut backward"))
        return;
    ck_expect(c, "backward dx", d_dx, nx, dx, 0, 0);

    sc_loss l = { s, x, dy, ck_host(c, ny), ny };
    ck_gradcheck(c, "reference dx", loss_of_x, &l, x, nx, dx, 32);
}

/* The case, and at 16-bit precision again on the GPU class with
 * activations stored in that format */
static void case_both(ct_check *c, const sc_shape *s)
{
    one_case(c, s);
    ck_act16_state st;
    if (ck_act16_begin(c, &st)) {
        one_case(c, s);
        ck_act16_end(c, &st);
    }
}

typedef struct sc_bench {
    ct_context *ctx;
    sc_shape s;
    ct_buf x, y, dy, dx;
} sc_bench;

static int bench_run(void *user)
{
    sc_bench *b = user;
    const sc_shape *s = &b->s;
    int st = ct_shortcut_a_forward(b->ctx, b->y, b->x, s->n, s->c, s->h, s->w, s->stride, s->co);
    return st ? st : ct_shortcut_a_backward(b->ctx, b->dx, b->dy, s->n, s->c, s->h, s->w,
                                            s->stride, s->co);
}

static void rejects(ct_check *c)
{
    ck_case(c, "invalid shortcut shapes");
    ct_context *ctx = ck_ctx(c);
    ct_buf none = { NULL, 0 };
    if (ct_shortcut_a_forward(ctx, none, none, 1, 4, 2, 2, 2, 3) != CT_ERR_SHAPE ||
        ct_shortcut_a_backward(ctx, none, none, 1, 4, 2, 2, 0, 8) != CT_ERR_INVALID_ARG ||
        ct_shortcut_a_forward(ctx, none, none, 0, 4, 2, 2, 2, 8) != CT_ERR_SHAPE)
        ck_status(c, CT_ERR_INTERNAL, "an invalid shortcut shape was accepted");
}

void ct_check_shortcut(ct_check *c)
{
    rejects(c);
    ck_case_end(c);

    /* edges: 1x1 input, an identity (stride 1, no new channels), a stride
     * larger than the input, odd extents (the last row and column kept) */
    static const sc_shape edges[] = {
        { 1, 1, 1, 1, 2, 2 }, { 2, 3, 4, 5, 1, 3 }, { 1, 2, 3, 2, 4, 5 }, { 2, 3, 7, 8, 2, 8 },
        /* past CT_ELTWISE_HOST_MIN (the CPU class's host loops): both
         * passes, the backward only (a forward of 3276), an identity */
        { 4, 6, 33, 31, 2, 11 }, { 2, 5, 40, 37, 3, 9 }, { 3, 8, 32, 32, 1, 8 },
    };
    for (size_t e = 0; e < CT_ARRAY_LEN(edges) && !ck_failed(c); e++) {
        case_both(c, &edges[e]);
        ck_case_end(c);
    }
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        sc_shape s = { ck_dim(c, 3), ck_dim(c, 13), ck_dim(c, 21), ck_dim(c, 19), ck_int(c, 1, 3),
                       0 };
        s.co = s.c + (ck_int(c, 0, 3) ? ck_int(c, 1, s.c + 2) : 0);
        case_both(c, &s);
        ck_case_end(c);
    }

    if (ck_benchmarking(c) && !ck_failed(c)) {
        /* the CIFAR ResNet's first downsampling: 16 -> 32 channels, 32x32 -> 16x16 */
        sc_bench b = { ck_ctx(c), { 128, 16, 32, 32, 2, 32 }, { 0 }, { 0 }, { 0 }, { 0 } };
        size_t nx = (size_t)128 * 16 * 32 * 32, ny = (size_t)128 * 32 * 16 * 16;
        ck_case(c, "bench shortcut_a 128x16x32x32 -> 32 channels");
        b.x = ck_dev_const(c, nx, 0.5);
        b.y = ck_dev_out(c, ny);
        b.dy = ck_dev_const(c, ny, 1);
        b.dx = ck_dev_out(c, nx);
        /* no arithmetic; bytes: forward writes y and reads the quarter of x
         * on the stride-2 grid (ny/2 floats), backward writes dx and reads
         * the copied channels of dy (ny/2) */
        double bytes = 4.0 * ((double)ny + (double)ny / 2 + (double)nx + (double)ny / 2);
        if (!ck_failed(c))
            ck_bench(c, "shortcut_a 128x16x32x32 s2 -> 32", 0.0, bytes, bench_run, &b);
        ck_case_end(c);
    }
}
