/*
 * dropout.c - checks of dropout (src/ops/dropout.c) against src/ref/dropout.c.
 *
 * The mask must match the host Philox exactly: a dropped element must be
 * exactly 0 (atol 0), a kept one x * scale with the same float scale, which
 * the device rounds once (rtol FLT_EPSILON = 2 half-ulps). Any element whose
 * keep decision differs is off by |x * scale| >> that, so the comparison is
 * an exact mask comparison. Separately, over n = 2^20 elements (2^14 in a
 * small run) the kept count must lie within 6 binomial standard deviations
 * of n q, q the exact keep probability of the 24-bit uniform
 * (2^24 - ceil(p 2^24)) / 2^24: a correct generator misses that with
 * probability ~2e-9, a biased or correlated one (a wrong word, a stuck
 * counter) does not pass it.
 *
 * At bf16 or fp16 precision random cases run again on the GPU class with
 * activations stored in the format (inputs exact in it, p in {0.1, 0.5,
 * 0.9} so that x * scale stays inside fp16's range): a kept element is
 * the float product rounded once more, to unit roundoff u16 (2^-8 bf16,
 * 2^-11 fp16): rtol FLT_EPSILON (1 + u16) + u16, atol fp16's subnormal
 * half step 2^-25; a dropped one stays exactly 0.
 */
#include <float.h>
#include <math.h>

#include "check/check.h"
#include "ref/dropout.h"

typedef struct dropout_loss {
    const double *x, *w;
    double *y;
    size_t n;
    float p;
    uint64_t seed;
    uint32_t stream;
} dropout_loss;

static double loss_of_x(void *user)
{
    dropout_loss *l = user;
    ct_ref_dropout_forward(l->y, l->x, l->n, l->p, l->seed, l->stream);
    return ck_dot(l->y, l->w, l->n);
}

typedef struct dropout_bench {
    ct_context *ctx;
    ct_buf x, y, dy, dx;
    size_t n;
} dropout_bench;

static int bench_run(void *user)
{
    dropout_bench *b = user;
    int st = ct_dropout_forward(b->ctx, b->y, b->x, b->n, 0.5f, 42, 7);
    return st ? st : ct_dropout_backward(b->ctx, b->dx, b->dy, b->n, 0.5f, 42, 7);
}

static uint64_t seed64(ct_check *c)
{
    return (uint64_t)ck_u32(c) << 32 | ck_u32(c);
}

static void one_case(ct_check *c, size_t n, float p, uint64_t seed, uint32_t stream)
{
    ct_context *ctx = ck_ctx(c);
    const int f = ck_act16(c);
    const double u16 = f ? ck_prec_u((ct_precision)f) : 0, s16 = f ? ck_prec_sub((ct_precision)f) : 0;
    const double rtol = FLT_EPSILON * (1 + u16) + u16;
    ck_case(c, "dropout n=%zu p=%g seed=%llu stream=%u%s", n, (double)p, (unsigned long long)seed,
            stream, f ? ", 16-bit activations" : "");
    double *x = ck_host(c, n), *y = ck_host(c, n), *dy = ck_host(c, n), *dx = ck_host(c, n);
    if (ck_failed(c))
        return;
    ck_fill(c, x, n, -2, 2);
    ck_fill(c, dy, n, -1, 1);
    for (size_t i = 0; i < n; i++) {
        x[i] = (double)(float)x[i]; /* the device sees these exact values */
        dy[i] = (double)(float)dy[i];
    }
    ck_round_act(c, x, n);
    ck_round_act(c, dy, n);
    ct_ref_dropout_forward(y, x, n, p, seed, stream);
    ct_ref_dropout_backward(dx, dy, n, p, seed, stream);

    ct_buf d_x = ck_act_in(c, x, n), d_dy = ck_act_in(c, dy, n);
    ct_buf d_y = ck_act_out(c, n), d_dx = ck_act_out(c, n);
    if (ck_failed(c))
        return;
    if (ck_status(c, ct_dropout_forward(ctx, d_y, d_x, n, p, seed, stream), "dropout forward"))
        return;
    ck_expect(c, "forward y", d_y, n, y, s16, rtol);
    if (ck_status(c, ct_dropout_backward(ctx, d_dx, d_dy, n, p, seed, stream), "dropout backward"))
        return;
    ck_expect(c, "backward dx", d_dx, n, dx, s16, rtol);
    if (f)
        return; /* the reference's gradient is checked in the float pass */

    dropout_loss l = { x, dy, ck_host(c, n), n, p, seed, stream };
    ck_gradcheck(c, "reference dx", loss_of_x, &l, x, n, dx, 32);
}

/* The device's kept fraction over a large n (see the top of the file). */
static void fraction_case(ct_check *c, float p)
{
    ct_context *ctx = ck_ctx(c);
    size_t n = (size_t)1 << (ck_small(c) ? 14 : 20);
    uint64_t seed = seed64(c);
    uint32_t stream = ck_u32(c);
    ck_case(c, "dropout kept fraction n=%zu p=%g seed=%llu", n, (double)p, (unsigned long long)seed);
    double *ones = ck_host(c, n), *ref = ck_host(c, n);
    float *got = (float *)ck_host(c, (n + 1) / 2); /* n floats */
    if (ck_failed(c))
        return;
    for (size_t i = 0; i < n; i++)
        ones[i] = 1.0;
    ct_ref_dropout_forward(ref, ones, n, p, seed, stream);
    ct_buf d_x = ck_dev_in(c, ones, n), d_y = ck_dev_out(c, n);
    if (ck_failed(c) ||
        ck_status(c, ct_dropout_forward(ctx, d_y, d_x, n, p, seed, stream), "dropout forward"))
        return;
    /* exact: y is the mask times the float scale */
    if (!ck_expect(c, "mask of a ones input", d_y, n, ref, 0.0, 0.0))
        return;
    if (ck_status(c, ct_buffer_read(ctx, d_y.mem, d_y.off * sizeof(float), n * sizeof(float), got),
                  "reading the mask"))
        return;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        kept += got[i] != 0.0f;
    double q = (16777216.0 - ceil((double)p * 16777216.0)) / 16777216.0;
    double mean = (double)n * q, sigma = sqrt((double)n * q * (1 - q));
    if (fabs((double)kept - mean) > 6 * sigma)
        ck_status(c, ct_fail(ctx, CT_ERR_CORRUPT, "dropout kept %zu of %zu elements at p=%g; "
                             "expected %.1f +- 6 * %.1f", kept, n, (double)p, mean, sigma),
                  "kept-fraction test");
}

void ct_check_dropout(ct_check *c)
{
    /* edges: a single element; nothing dropped; everything dropped */
    one_case(c, 1, 0.5f, 1, 0);
    ck_case_end(c);
    if (!ck_failed(c))
        one_case(c, 1000, 0.0f, seed64(c), 3);
    ck_case_end(c);
    if (!ck_failed(c))
        one_case(c, 1000, 1.0f, seed64(c), 3);
    ck_case_end(c);
    static const float ps[] = { 0.1f, 0.5f, 0.9f };
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        float p = it % 4 == 3 ? (float)ck_uniform(c, 0, 1) : ps[it % 4];
        one_case(c, (size_t)ck_dim(c, 5000), p, seed64(c), ck_u32(c));
        ck_case_end(c);
    }
    /* 16-bit storage, at bf16 or fp16 precision */
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c) && ct_context_precision(ck_ctx(c)); it++) {
        ck_act16_state s;
        if (!ck_act16_begin(c, &s))
            break;
        one_case(c, (size_t)ck_dim(c, 5000), ps[it % 3], seed64(c), ck_u32(c));
        ck_case_end(c);
        ck_act16_end(c, &s);
    }
    if (!ck_failed(c))
        fraction_case(c, 0.3f);
    ck_case_end(c);
    if (ck_benchmarking(c) && !ck_failed(c)) {
        size_t n = (size_t)1 << 22;
        ck_case(c, "bench dropout n=%zu", n);
        dropout_bench b = { ck_ctx(c), ck_dev_const(c, n, 0.5), ck_dev_out(c, n),
                            ck_dev_const(c, n, 1), ck_dev_out(c, n), n };
        /* one multiply per element and pass; Philox's ~30 integer ops per
         * element per pass are not counted as FLOPs. Bytes: read + write, twice. */
        if (!ck_failed(c))
            ck_bench(c, "dropout 4M p=0.5", 2.0 * (double)n, 4.0 * 4 * (double)n, bench_run, &b);
        ck_case_end(c);
    }
}
