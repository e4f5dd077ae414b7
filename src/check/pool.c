/*
 * pool.c - checks of max, average and global average pooling
 * (src/ops/pool.c) against src/ref/pool.c.
 *
 * Tolerances, with u = 2^-24 (half a float ulp, relative) and inputs and
 * upstream gradients in [-1, 1], which the device sees exactly:
 *   - max pool forward: a copy of one input, exact (atol 0, rtol 0);
 *   - max pool backward: a float sum, in a fixed order, of the dy of the
 *     m <= ceil(kh/sh) ceil(kw/sw) windows that picked the element; each of
 *     the m - 1 additions rounds by at most u |partial sum| <= u m, so
 *     atol m^2 u, rtol 0 (exact when windows do not overlap);
 *   - average pool forward: cnt <= kh kw terms summed (error <= (cnt - 1)
 *     cnt u, at most (cnt - 1) u after dividing by the divisor >= cnt) and
 *     one OpenCL division (<= 2.5 ulp of |y| <= 1, i.e. 5u): atol
 *     (kh kw + 5) u, rtol 0;
 *   - average pool backward: m quotients dy/divisor (5u each) summed
 *     (m^2 u): atol (m^2 + 5m) u, rtol 0;
 *   - global average forward: hw terms summed ((hw - 1) hw u, scaled by
 *     1/hw) and two roundings of the scale and the product: atol
 *     (hw + 3) u, rtol 0;
 *   - global average backward: dy times 1/hw rounded on the host: two
 *     roundings, |err| <= ((1 + u)^2 - 1) |dx| < 4u |dx|: atol 0, rtol 4u.
 * Each bound is what float arithmetic can lose, no more; a wrong window,
 * divisor or tie rule is off by whole input values.
 *
 * At bf16 or fp16 precision every case runs again on the GPU class with
 * 16-bit activation storage (inputs exact in the format), each output
 * rounded once more on store: unit roundoff u16 (2^-8 bf16, 2^-11 fp16)
 * of the float result, fp16's subnormal half step s = 2^-25:
 *   - global average: forward atol (1 + u16) (hw + 3) u + s, rtol u16;
 *     backward atol s, rtol 4u + u16 (1 + 4u);
 *   - max pool forward: exact, a copy of a 16-bit input; backward exact
 *     where windows do not overlap (m = 1: dy or 0), else every one of the
 *     m - 1 additions is also rounded to the format, |partial| <= m:
 *     atol m^2 (u + u16) + s, rtol 0;
 *   - average pool: the float bounds above plus one rounding: atol
 *     (1 + u16) atol32 + s, rtol u16.
 * The finite-difference check of the reference runs in the float pass
 * only (rounding to 16 bits can make distinct inputs tie).
 */
#include <float.h>
#include <math.h>

#include "check/check.h"
#include "ref/pool.h"

#define U 5.9604644775390625e-8 /* 2^-24 */

typedef enum pool_kind { POOL_MAX, POOL_AVG } pool_kind;
typedef enum input_mode { INPUT_DISTINCT, INPUT_TIES, INPUT_SPECIAL } input_mode;

typedef struct pool_loss {
    pool_kind kind;
    const ct_pool2d *p;
    const double *x, *w;
    double *y;
    size_t ny;
} pool_loss;

static double loss_of_x(void *user)
{
    pool_loss *l = user;
    if (l->kind == POOL_MAX)
        ct_ref_maxpool_forward(l->p, l->y, l->x);
    else
        ct_ref_avgpool_forward(l->p, l->y, l->x);
    return ck_dot(l->y, l->w, l->ny);
}

static void global_case_on(ct_check *c, int n, int ch, int h, int w);

/* The case, and at 16-bit precision again on the GPU class with
 * activations stored in that format */
static void global_case(ct_check *c, int n, int ch, int h, int w)
{
    global_case_on(c, n, ch, h, w);
    ck_act16_state s;
    if (ck_act16_begin(c, &s)) {
        global_case_on(c, n, ch, h, w);
        ck_act16_end(c, &s);
    }
}

typedef struct global_loss {
    const double *x, *w;
    double *y;
    int n, c, h, w_;
} global_loss;

static double global_loss_of_x(void *user)
{
    global_loss *l = user;
    ct_ref_global_avgpool_forward(l->y, l->x, l->n, l->c, l->h, l->w_);
    return ck_dot(l->y, l->w, (size_t)l->n * (size_t)l->c);
}

/* Fills x with a shuffle of distinct values in (-1, 1), one jittered
 * point per cell of an even grid, so any two differ by at least 0.4/n
 * (>= 6e-5 at the largest shapes here, far above the finite-difference
 * step): finite differences never flip a window's maximum. With
 * INPUT_TIES, values are snapped to a coarse grid instead so that windows
 * hold equal maxima and the first-maximum rule is exercised; INPUT_SPECIAL
 * also scatters NaN (a window with NaNs picks its last) and +-FLT_MAX
 * (infinities would be the real test, but ck_expect cannot compare them:
 * inf - inf is NaN). */
static void fill_pool_input(ct_check *c, double *x, size_t n, int mode)
{
    for (size_t i = 0; i < n; i++)
        x[i] = -1.0 + (2.0 * (double)i + 1.0 + ck_uniform(c, -0.8, 0.8)) / (double)n;
    for (size_t i = n; i > 1; i--) {
        size_t j = ck_u32(c) % i;
        double t = x[i - 1];
        x[i - 1] = x[j];
        x[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        x[i] = mode != INPUT_DISTINCT ? round(x[i] * 2.0) / 2.0 : (double)(float)x[i];
    if (mode == INPUT_SPECIAL)
        for (size_t i = 0; i < n; i++)
            switch (ck_int(c, 0, 11)) {
            case 0: x[i] = NAN; break;
            case 1: x[i] = -FLT_MAX; break;
            case 2: x[i] = FLT_MAX; break;
            default: break;
            }
}

/* The most windows one input element can belong to. */
static int max_overlap(const ct_pool2d *p)
{
    return ((p->kh + p->sh - 1) / p->sh) * ((p->kw + p->sw - 1) / p->sw);
}

static void pool_case_on(ct_check *c, pool_kind kind, const ct_pool2d *p, input_mode mode,
                         const char *kernels);

/* Max pool cases run with the device presented as a GPU and as a CPU, so
 * whichever kernels a device type gets are checked; the forward on the
 * host GEMM path is the host's (src/host/pool_host.c), on the CLBlast path
 * the kernel (checkcl runs both paths in CI). */
static void pool_case(ct_check *c, pool_kind kind, const ct_pool2d *p, input_mode mode)
{
    for (int cpu = 0; cpu <= (kind == POOL_MAX) && !ck_failed(c); cpu++) {
        ct_kernels real = ck_use_class(c, cpu ? CT_KERNELS_CPU : CT_KERNELS_GPU);
        pool_case_on(c, kind, p, mode, kind != POOL_MAX ? "" : cpu ? ", as a cpu" : ", as a gpu");
        if (!cpu && kind == POOL_MAX)
            ck_case_end(c);
        ck_use_class(c, real);
    }
    ck_act16_state s;
    if (ck_act16_begin(c, &s)) {
        pool_case_on(c, kind, p, mode, ", 16-bit activations");
        ck_act16_end(c, &s);
    }
}

static void pool_case_on(ct_check *c, pool_kind kind, const ct_pool2d *p, input_mode mode,
                         const char *kernels)
{
    ct_context *ctx = ck_ctx(c);
    const char *name = kind == POOL_MAX           ? "maxpool"
                       : p->count_include_pad ? "avgpool"
                                              : "avgpool(count_include_pad=false)";
    ck_case(c, "%s x (%d, %d, %d, %d) kernel %dx%d stride %dx%d pad %dx%d%s%s", name, p->n, p->c,
            p->h, p->w, p->kh, p->kw, p->sh, p->sw, p->ph, p->pw,
            mode == INPUT_TIES      ? " with ties"
            : mode == INPUT_SPECIAL ? " with ties, NaN, +-FLT_MAX"
                                    : "", kernels);
    int oh = ct_pool_out_dim(p->h, p->kh, p->sh, p->ph);
    int ow = ct_pool_out_dim(p->w, p->kw, p->sw, p->pw);
    size_t nx = (size_t)p->n * (size_t)p->c * (size_t)p->h * (size_t)p->w;
    size_t ny = (size_t)p->n * (size_t)p->c * (size_t)oh * (size_t)ow;
    double *x = ck_host(c, nx), *y = ck_host(c, ny), *dy = ck_host(c, ny), *dx = ck_host(c, nx);
    if (ck_failed(c))
        return;
    fill_pool_input(c, x, nx, mode);
    ck_fill(c, dy, ny, -1, 1);
    for (size_t i = 0; i < ny; i++)
        dy[i] = (double)(float)dy[i];
    const int f = ck_act16(c);
    const double u16 = f ? ck_prec_u((ct_precision)f) : 0, s16 = f ? ck_prec_sub((ct_precision)f) : 0;
    ck_round_act(c, x, nx);
    ck_round_act(c, dy, ny);
    int m = max_overlap(p);
    double atol_y, atol_dx, rtol = 0;
    if (kind == POOL_MAX) {
        ct_ref_maxpool_forward(p, y, x);
        ct_ref_maxpool_backward(p, dx, dy, x);
        atol_y = 0;
        atol_dx = (double)m * m * U;
        if (f)
            atol_dx = m > 1 ? (double)m * m * (U + u16) + s16 : 0;
    } else {
        ct_ref_avgpool_forward(p, y, x);
        ct_ref_avgpool_backward(p, dx, dy);
        atol_y = (p->kh * p->kw + 5) * U;
        atol_dx = ((double)m * m + 5.0 * m) * U;
        if (f) {
            atol_y = (1 + u16) * atol_y + s16;
            atol_dx = (1 + u16) * atol_dx + s16;
            rtol = u16;
        }
    }

    ct_buf d_x = ck_act_in(c, x, nx), d_dy = ck_act_in(c, dy, ny);
    ct_buf d_y = ck_act_out(c, ny), d_dx = ck_act_out(c, nx);
    /* the argmax record (int32, the size of floats) only where the
     * backward needs it, so the forward runs with and without it */
    ct_buf d_am = { NULL, 0 };
    if (kind == POOL_MAX && ct_maxpool_overlaps(p))
        d_am = ck_dev_out(c, ny);
    if (ck_failed(c))
        return;
    int st = kind == POOL_MAX ? ct_maxpool_forward(ctx, p, d_y, d_x, d_am) :
                                ct_avgpool_forward(ctx, p, d_y, d_x);
    if (ck_status(c, st, "pool forward"))
        return;
    ck_expect(c, "forward y", d_y, ny, y, atol_y, rtol);
    st = kind == POOL_MAX ? ct_maxpool_backward(ctx, p, d_dx, d_dy, d_x, d_am) :
                            ct_avgpool_backward(ctx, p, d_dx, d_dy);
    if (ck_status(c, st, "pool backward"))
        return;
    ck_expect(c, "backward dx", d_dx, nx, dx, atol_dx, rtol);

    /* at a tie the loss has a kink: finite differences see half of each side */
    if (mode == INPUT_DISTINCT && !f) {
        pool_loss l = { kind, p, x, dy, ck_host(c, ny), ny };
        ck_gradcheck(c, "reference dx", loss_of_x, &l, x, nx, dx, 32);
    }
}

static void global_case_on(ct_check *c, int n, int ch, int h, int w)
{
    ct_context *ctx = ck_ctx(c);
    ck_case(c, "global_avgpool x (%d, %d, %d, %d)%s", n, ch, h, w,
            ck_act16(c) ? ", 16-bit activations" : "");
    const int f = ck_act16(c);
    const double u16 = f ? ck_prec_u((ct_precision)f) : 0, s16 = f ? ck_prec_sub((ct_precision)f) : 0;
    size_t ny = (size_t)n * (size_t)ch, hw = (size_t)h * (size_t)w, nx = ny * hw;
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
    ct_ref_global_avgpool_forward(y, x, n, ch, h, w);
    ct_ref_global_avgpool_backward(dx, dy, n, ch, h, w);

    ct_buf d_x = ck_act_in(c, x, nx), d_dy = ck_act_in(c, dy, ny);
    ct_buf d_y = ck_act_out(c, ny), d_dx = ck_act_out(c, nx);
    if (ck_failed(c))
        return;
    if (ck_status(c, ct_global_avgpool_forward(ctx, d_y, d_x, n, ch, h, w), "global forward"))
        return;
    ck_expect(c, "forward y", d_y, ny, y, (1 + u16) * ((double)hw + 3) * U + s16, u16);
    if (ck_status(c, ct_global_avgpool_backward(ctx, d_dx, d_dy, n, ch, h, w), "global backward"))
        return;
    ck_expect(c, "backward dx", d_dx, nx, dx, s16, 4 * U + u16 * (1 + 4 * U));

    global_loss l = { x, dy, ck_host(c, ny), n, ch, h, w };
    ck_gradcheck(c, "reference dx", global_loss_of_x, &l, x, nx, dx, 32);
}

/* A random valid geometry: windows up to 5, strides up to 3, padding up
 * to half the window, inputs at least as large as the padded window needs. */
static ct_pool2d random_geometry(ct_check *c, int count_include_pad)
{
    ct_pool2d p;
    p.n = ck_dim(c, 3);
    p.c = ck_dim(c, 5);
    p.kh = ck_int(c, 1, 5);
    p.kw = ck_int(c, 0, 2) ? ck_int(c, 1, 5) : p.kh;
    p.sh = ck_int(c, 1, 3);
    p.sw = ck_int(c, 0, 2) ? ck_int(c, 1, 3) : p.sh;
    p.ph = ck_int(c, 0, p.kh / 2);
    p.pw = ck_int(c, 0, p.kw / 2);
    p.h = ck_dim(c, 19);
    p.w = ck_dim(c, 23);
    if (p.h + 2 * p.ph < p.kh)
        p.h = p.kh - 2 * p.ph;
    if (p.w + 2 * p.pw < p.kw)
        p.w = p.kw - 2 * p.pw;
    p.count_include_pad = count_include_pad;
    return p;
}

typedef struct pool_bench {
    ct_context *ctx;
    ct_pool2d p;
    ct_buf x, y, dy, dx, am;
} pool_bench;

static int bench_run(void *user)
{
    pool_bench *b = user;
    int st = ct_maxpool_forward(b->ctx, &b->p, b->y, b->x, b->am);
    return st ? st : ct_maxpool_backward(b->ctx, &b->p, b->dx, b->dy, b->x, b->am);
}

/* Invalid geometries must be refused with a status, never launched. */
static void rejects(ct_check *c)
{
    ck_case(c, "invalid geometries");
    ct_context *ctx = ck_ctx(c);
    ct_buf none = { NULL, 0 };
    ct_pool2d bad_pad = ct_pool2d_square(1, 1, 8, 8, 3, 1, 2);
    ct_pool2d too_small = ct_pool2d_square(1, 1, 2, 2, 5, 1, 1);
    ct_pool2d zero_stride = ct_pool2d_square(1, 1, 8, 8, 2, 0, 0);
    ct_pool2d overlapping = ct_pool2d_square(1, 1, 8, 8, 3, 2, 0);
    if (ct_maxpool_forward(ctx, &bad_pad, none, none, none) != CT_ERR_INVALID_ARG ||
        ct_avgpool_forward(ctx, &too_small, none, none) != CT_ERR_SHAPE ||
        ct_maxpool_backward(ctx, &zero_stride, none, none, none, none) != CT_ERR_INVALID_ARG ||
        ct_maxpool_backward(ctx, &overlapping, none, none, none, none) != CT_ERR_INVALID_ARG ||
        ct_global_avgpool_forward(ctx, none, none, 1, 0, 1, 1) != CT_ERR_SHAPE)
        ck_status(c, CT_ERR_INTERNAL, "an invalid pooling geometry was accepted");
}

void ct_check_pool(ct_check *c)
{
    rejects(c);
    ck_case_end(c);

    /* edges: 1x1 inputs, a window overhanging a 1x1 input on both sides,
     * a 1-row input with a wide window, non-overlapping strides (exact
     * fit; strides beyond the window with padding and ragged edges, where
     * some inputs lie in no window; 2x2/2 rows wider than 16 windows) */
    const ct_pool2d edges[] = {
        { 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1 },
        { 1, 1, 1, 1, 2, 2, 1, 1, 1, 1, 1 },
        { 2, 3, 1, 7, 1, 3, 1, 2, 0, 1, 1 },
        { 1, 2, 6, 6, 2, 2, 2, 2, 0, 0, 1 },
        { 1, 2, 5, 7, 3, 3, 2, 2, 1, 1, 1 },
        { 2, 3, 7, 8, 2, 3, 3, 4, 1, 1, 1 },
        /* 2x2/2 as the CPU class's AVX-512 backward takes it: a row of 14
         * windows, and 18 (16 + 2) with a stretched last row and column */
        { 2, 3, 28, 28, 2, 2, 2, 2, 0, 0, 1 },
        { 2, 2, 9, 37, 2, 2, 2, 2, 0, 0, 1 },
    };
    for (size_t e = 0; e < CT_ARRAY_LEN(edges) && !ck_failed(c); e++) {
        ct_pool2d p = edges[e];
        for (int kind = POOL_MAX; kind <= POOL_AVG && !ck_failed(c); kind++) {
            pool_case(c, (pool_kind)kind, &p, INPUT_DISTINCT);
            ck_case_end(c);
        }
        p.count_include_pad = 0;
        pool_case(c, POOL_AVG, &p, INPUT_DISTINCT);
        ck_case_end(c);
        pool_case(c, POOL_MAX, &p, INPUT_TIES);
        ck_case_end(c);
        pool_case(c, POOL_MAX, &p, INPUT_SPECIAL);
        ck_case_end(c);
    }
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        ct_pool2d p = random_geometry(c, 1);
        int r = ck_int(c, 0, 5);
        pool_case(c, POOL_MAX, &p, r == 0 ? INPUT_TIES : r == 1 ? INPUT_SPECIAL : INPUT_DISTINCT);
        ck_case_end(c);
        p = random_geometry(c, ck_int(c, 0, 1));
        pool_case(c, POOL_AVG, &p, INPUT_DISTINCT);
        ck_case_end(c);
    }

    if (!ck_failed(c)) {
        global_case(c, 1, 1, 1, 1);
        ck_case_end(c);
    }
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        global_case(c, ck_dim(c, 4), ck_dim(c, 17), ck_dim(c, 13), ck_dim(c, 11));
        ck_case_end(c);
    }

    if (ck_benchmarking(c) && !ck_failed(c)) {
        /* the ResNet-50 stem pooling: 3x3, stride 2, pad 1 on 64 x 112 x 112 */
        pool_bench b = { ck_ctx(c), ct_pool2d_square(8, 64, 112, 112, 3, 2, 1), { 0 }, { 0 },
                         { 0 }, { 0 }, { 0 } };
        size_t nx = (size_t)8 * 64 * 112 * 112, ny = (size_t)8 * 64 * 56 * 56;
        ck_case(c, "bench maxpool 8x64x112x112 k3 s2 p1");
        b.x = ck_dev_const(c, nx, 0.5);
        b.y = ck_dev_out(c, ny);
        b.dy = ck_dev_const(c, ny, 1);
        b.dx = ck_dev_out(c, nx);
        b.am = ck_dev_out(c, ny);
        /* flops: compares, 9 per output forward, and one index compare per window
         * holding each input backward (2.25 on average); bytes: x, y, argmax forward;
         * argmax, dy, dx backward. x is constant: every window is one big tie. */
        double flops = 9.0 * (double)ny + 2.25 * (double)nx;
        double bytes = 4.0 * ((double)nx + 2.0 * (double)ny + 2.0 * (double)ny + (double)nx);
        if (!ck_failed(c))
            ck_bench(c, "maxpool 8x64x112x112 k3s2p1", flops, bytes, bench_run, &b);
        ck_case_end(c);
    }
}
