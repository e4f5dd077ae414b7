/*
 * seqpool.c - checks of sequence pooling (src/ops/seqpool.c) against
 * src/ref/seqpool.c: mean, max and last over (T, N, F), with no mask, with
 * random padding (some samples all padding) and with sequences padded at
 * their end, forward (y and max's argmax record) and backward.
 *
 * Masked cases often put NaN in x at every padding position: a kernel
 * that reads padding into a result turns it into NaN and fails.
 *
 * Tolerances, with u = 2^-24 and inputs the device sees exactly:
 *   - max and last, forward and backward, and the argmax record: copies
 *     of float values (or zeros), exact (atol = rtol = 0);
 *   - mean forward: a float sum of c terms in ascending t errs by at most
 *     (c - 1) u sum|x|, then the division by c (OpenCL allows 2.5 ulp):
 *     atol (c + 2) u max(sum|x| / c) (ck_sum_atol over the mean of |x|),
 *     rtol 6u (3 ulp);
 *   - mean backward: dy / c, one division: atol 0, rtol 6u.
 * The references' gradients of mean and last are checked against central
 * finite differences of sum(y * dy); max's is not (a tie within the step
 * would move it), its routing is checked against the argmax.
 */
#include <math.h>
#include <stdlib.h>

#include "check/check.h"
#include "ops/seqpool.h"
#include "ref/seqpool.h"

#define U 5.9604644775390625e-8 /* 2^-24 */
#define INT_GUARD INT32_MIN     /* around int32 buffers; must survive */
#define AM_CANARY 0x7eadbeef    /* argmax before the forward: must be overwritten */

static const char *const mode_names[] = { "mean", "max", "last" };

enum mask_kind { MASK_NONE, MASK_RANDOM, MASK_TAIL, MASK_KINDS };
static const char *const mask_names[] = { "no mask", "random padding", "padded at the end" };

/* int32 device buffers with guard bands, which the harness (floats only)
 * does not track: released by the caller after ck_case_end */
typedef struct int_bufs {
    cl_mem tok, am;
} int_bufs;

/* A device copy of v (n int32, or n copies of fill when v is NULL) between
 * INT_GUARD bands; the ct_buf starts after the first band. */
static ct_buf dev_int(ct_check *c, const int32_t *v, int32_t fill, size_t n, cl_mem *mem)
{
    ct_buf b = { NULL, CK_GUARD };
    size_t total = n + 2 * CK_GUARD;
    int32_t *h = malloc(total * sizeof *h);
    if (!h) {
        ck_status(c, CT_ERR_NO_MEMORY, "int32 buffer");
        return b;
    }
    for (size_t i = 0; i < total; i++)
        h[i] = i < CK_GUARD || i >= CK_GUARD + n ? INT_GUARD : v ? v[i - CK_GUARD] : fill;
    int st = ct_buffer_create(ck_ctx(c), total * sizeof *h, mem);
    if (!st)
        st = ct_buffer_write(ck_ctx(c), *mem, 0, total * sizeof *h, h);
    free(h);
    if (!ck_status(c, st, "int32 buffer"))
        b.mem = *mem;
    return b;
}

/* Reads an int32 buffer made by dev_int and compares it with want exactly,
 * its guards included: both as floats (small integers and INT_GUARD are
 * exact), through ck_expect, which reports the first mismatch; its index
 * counts from the first guard (element i of the buffer is i - CK_GUARD). */
static void expect_int(ct_check *c, const char *what, cl_mem mem, const int32_t *want, size_t n)
{
    size_t total = n + 2 * CK_GUARD;
    double *got = ck_host(c, total), *ref = ck_host(c, total);
    int32_t *h = malloc(total * sizeof *h);
    if (!h || ck_failed(c)) {
        free(h);
        ck_status(c, CT_ERR_NO_MEMORY, what);
        return;
    }
    if (!ck_status(c, ct_buffer_read(ck_ctx(c), mem, 0, total * sizeof *h, h), what))
        for (size_t i = 0; i < total; i++) {
            got[i] = h[i];
            ref[i] = i < CK_GUARD || i >= CK_GUARD + n ? INT_GUARD : want[i - CK_GUARD];
        }
    free(h);
    ct_buf d = ck_dev_inout(c, got, total);
    if (!ck_failed(c))
        ck_expect(c, what, d, total, ref, 0, 0);
}

typedef struct sp_loss {
    ct_seqpool_mode mode;
    const double *x, *dy;
    const int32_t *tok;
    double *y;
    size_t T, N, F;
} sp_loss;

static double loss_of_x(void *user)
{
    sp_loss *l = user;
    ct_ref_seqpool_forward(l->mode, l->y, NULL, l->x, l->tok, l->T, l->N, l->F);
    return ck_dot(l->y, l->dy, l->N * l->F);
}

/* Token ids (T, N) for a mask kind: 0 is padding. Random padding leaves
 * one sample (of two or more) all padding; padded sequences have random
 * lengths 0 .. T, so some may be empty. */
static void make_tokens(ct_check *c, int32_t *tok, enum mask_kind mask, size_t T, size_t N)
{
    double p = ck_uniform(c, 0.1, 0.7);
    size_t empty = N > 1 ? (size_t)ck_int(c, 0, (int)N - 1) : N;
    for (size_t n = 0; n < N; n++) {
        size_t len = (size_t)ck_int(c, 0, (int)T);
        for (size_t t = 0; t < T; t++) {
            int pad = mask == MASK_TAIL ? t >= len : n == empty || ck_uniform(c, 0, 1) < p;
            tok[t * N + n] = pad ? 0 : ck_int(c, 1, 1000);
        }
    }
}

/* ties: x from a few values and -inf, so maxima repeat; poison: NaN at
 * every padding position */
static void one_case(ct_check *c, ct_seqpool_mode mode, enum mask_kind mask, size_t T, size_t N,
                     size_t F, int ties, int poison, int_bufs *ib)
{
    ct_context *ctx = ck_ctx(c);
    ck_case(c, "%s T=%zu N=%zu F=%zu, %s%s%s, %s class", mode_names[mode], T, N, F, mask_names[mask],
            ties ? ", ties and -inf" : "", poison ? ", NaN at padding" : "",
            ct_kernels_str(ct_context_kernels(ctx)));
    size_t nx = T * N * F, ny = N * F;
    double *x = ck_host(c, nx), *y = ck_host(c, ny), *dy = ck_host(c, ny), *dx = ck_host(c, nx);
    double *absx = ck_host(c, nx), *absmean = ck_host(c, ny);
    int32_t *tok = (int32_t *)(void *)ck_host(c, T * N + 1); /* doubles hold int32s */
    int32_t *am = (int32_t *)(void *)ck_host(c, ny + 1);
    if (ck_failed(c))
        return;
    ck_fill(c, x, nx, -1, 1);
    ck_fill(c, dy, ny, -1, 1);
    if (ties) {
        for (size_t i = 0; i < nx; i++)
            x[i] = ck_int(c, 0, 15) ? floor(x[i] * 3) / 3 : -INFINITY;
        /* one column all -inf: its max is -inf at its first real position */
        size_t n0 = (size_t)ck_int(c, 0, (int)N - 1), f0 = (size_t)ck_int(c, 0, (int)F - 1);
        for (size_t t = 0; t < T; t++)
            x[(t * N + n0) * F + f0] = -INFINITY;
    }
    ck_round_f32(x, nx);
    ck_round_f32(dy, ny);
    if (mask != MASK_NONE)
        make_tokens(c, tok, mask, T, N);
    const int32_t *mtok = mask != MASK_NONE ? tok : NULL;
    if (poison && mtok)
        for (size_t t = 0; t < T; t++)
            for (size_t n = 0; n < N; n++)
                for (size_t f = 0; f < F && !tok[t * N + n]; f++)
                    x[(t * N + n) * F + f] = NAN;

    ct_ref_seqpool_forward(mode, y, am, x, mtok, T, N, F);
    ct_ref_seqpool_backward(mode, dx, dy, x, mtok, T, N, F);
    size_t cmax = 0;
    for (size_t i = 0; i < nx; i++)
        absx[i] = fabs(x[i]);
    ct_ref_seqpool_forward(CT_SEQPOOL_MEAN, absmean, NULL, absx, mtok, T, N, F);
    for (size_t n = 0; n < N; n++) {
        size_t cnt = 0;
        for (size_t t = 0; t < T; t++)
            cnt += !mtok || mtok[t * N + n];
        cmax = cnt > cmax ? cnt : cmax;
    }

    ct_buf d_x = ck_dev_in(c, x, nx), d_dy = ck_dev_in(c, dy, ny);
    ct_buf d_y = ck_dev_out(c, ny), d_dx = ck_dev_out(c, nx);
    ct_buf d_tok = { NULL, 0 }, d_am = { NULL, 0 };
    if (mtok)
        d_tok = dev_int(c, tok, 0, T * N, &ib->tok);
    if (mode == CT_SEQPOOL_MAX)
        d_am = dev_int(c, NULL, AM_CANARY, ny, &ib->am);
    if (ck_failed(c))
        return;
    if (ck_status(c, ct_seqpool_forward(ctx, mode, d_y, d_am, d_x, d_tok, T, N, F), "seqpool forward"))
        return;
    if (mode == CT_SEQPOOL_MEAN)
        ck_expect(c, "forward y", d_y, ny, y, ck_sum_atol(cmax, absmean, ny), 6 * U);
    else
        ck_expect(c, "forward y", d_y, ny, y, 0, 0);
    if (mode == CT_SEQPOOL_MAX)
        expect_int(c, "forward argmax (int32, indexed from the first guard)", ib->am, am, ny);
    if (ck_status(c, ct_seqpool_backward(ctx, mode, d_dx, d_dy, d_am, d_tok, T, N, F),
                  "seqpool backward"))
        return;
    ck_expect(c, "backward dx", d_dx, nx, dx, 0, mode == CT_SEQPOOL_MEAN ? 6 * U : 0);

    if (mode != CT_SEQPOOL_MAX) {
        sp_loss l = { mode, x, dy, mtok, ck_host(c, ny), T, N, F };
        ck_gradcheck(c, "reference dx", loss_of_x, &l, x, nx, dx, 48);
    }
}

/* One case in the given class; both int32 buffers are released after the
 * case (the queue is drained by ck_case_end). */
static void run_case(ct_check *c, ct_seqpool_mode mode, enum mask_kind mask, size_t T, size_t N,
                     size_t F, int ties, int poison, int cpu)
{
    int_bufs ib = { NULL, NULL };
    ct_kernels real = ck_use_class(c, cpu ? CT_KERNELS_CPU : CT_KERNELS_GPU);
    if (!ck_failed(c))
        one_case(c, mode, mask, T, N, F, ties, poison, &ib);
    ck_case_end(c);
    ck_use_class(c, real);
    ct_buffer_release(&ib.tok);
    ct_buffer_release(&ib.am);
}

/* Arguments the launchers must refuse. */
static void bad_args(ct_check *c)
{
    ct_context *ctx = ck_ctx(c);
    ck_case(c, "refused arguments");
    ct_buf none = { NULL, 0 }, y = ck_dev_out(c, 4);
    if (ck_failed(c))
        return;
    if (ct_seqpool_forward(ctx, (ct_seqpool_mode)3, y, none, y, none, 1, 2, 2) != CT_ERR_INVALID_ARG ||
        ct_seqpool_backward(ctx, CT_SEQPOOL_MAX, y, y, none, none, 1, 2, 2) != CT_ERR_INVALID_ARG ||
        ct_seqpool_forward(ctx, CT_SEQPOOL_MEAN, y, none, y, none, (size_t)1 << 20, (size_t)1 << 13, 1) !=
            CT_ERR_INVALID_ARG)
        ck_status(c, CT_ERR_INTERNAL, "a bad mode, max backward without argmax or T N >= 2^32 was "
                  "accepted");
}

void ct_check_seqpool(ct_check *c)
{
    for (int cpu = 0; cpu < 2 && !ck_failed(c); cpu++)
        for (int m = 0; m < 3 && !ck_failed(c); m++) {
            run_case(c, (ct_seqpool_mode)m, MASK_NONE, 1, 1, 1, 0, 0, cpu);
            run_case(c, (ct_seqpool_mode)m, MASK_RANDOM, 5, 3, 7, 0, 1, cpu);
            run_case(c, (ct_seqpool_mode)m, MASK_TAIL, 6, 4, 33, m == CT_SEQPOOL_MAX, 1, cpu);
        }
    int small = ck_small(c);
    for (int it = 0; it < 3 * ck_iterations(c) && !ck_failed(c); it++) {
        size_t T = (size_t)ck_dim(c, small ? 9 : 40), N = (size_t)ck_dim(c, small ? 5 : 70);
        size_t F = (size_t)ck_dim(c, small ? 40 : 300);
        ct_seqpool_mode mode = (ct_seqpool_mode)(it % 3);
        enum mask_kind mask = (enum mask_kind)ck_int(c, 0, MASK_KINDS - 1);
        int ties = mode == CT_SEQPOOL_MAX && ck_int(c, 0, 2) == 0;
        run_case(c, mode, mask, T, N, F, ties, ck_int(c, 0, 1), (it / 3) % 2);
    }
    if (!ck_failed(c))
        bad_args(c);
    ck_case_end(c);
}
