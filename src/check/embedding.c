/*
 * embedding.c - checks of the embedding lookup (src/ops/embedding.c)
 * against src/ref/embedding.c.
 *
 * Tolerances: the forward is a copy of float values, so it must be exact
 * (atol = rtol = 0), NaN rows for out-of-range indices included. The
 * backward adds m = 1 + (occurrences of an index) float terms, each |t| <= 1
 * (dy and the prior dW in [-1, 1]); recursive float summation errs by at
 * most (m - 1) 2^-24 sum|t| <= m^2 2^-24, so atol = m^2 2^-24 with m the
 * largest count in the case, rtol 0: a tight bound that any dropped,
 * doubled or misplaced row (an error of about |dy| ~ 0.5) exceeds.
 *
 * At bf16 or fp16 precision random cases (odd n and D: no global size a
 * multiple of a work-group's) run again on the GPU class with y and dy
 * stored in the format. The forward is one rounding to nearest even of a
 * float weight, the rounding ck_round_act applies to the reference: exact
 * again (atol = rtol = 0; a bound of u16 = 2^-8 bf16, 2^-11 fp16 relative
 * plus fp16's subnormal half step would only hide a second rounding or a
 * truncation). The backward adds dy values exact in the format (ck_round_act
 * on the host) in float, so its bound is the float one above, unchanged.
 * The finite-difference check of the reference runs in the float pass.
 */
#include <math.h>
#include <stdlib.h>

#include "check/check.h"
#include "ops/embedding.h"
#include "ref/embedding.h"

#define IDX_GUARD_VALUE INT32_MIN /* an out-of-bounds read of idx yields NaN rows */

typedef struct emb_loss {
    const double *w, *dy;
    const int32_t *idx;
    double *y;
    size_t n, V, D;
} emb_loss;

/* sum(y * dy) over the rows with a valid index (the others are NaN) */
static double loss_of_w(void *user)
{
    emb_loss *l = user;
    ct_ref_embedding_forward(l->y, l->w, l->idx, l->n, l->V, l->D);
    double s = 0;
    for (size_t i = 0; i < l->n * l->D; i++)
        if (!isnan(l->y[i]))
            s += l->y[i] * l->dy[i];
    return s;
}

/* A device int32 copy of idx with guard bands, released by the caller after
 * ck_case_end (the harness tracks float buffers only). */
static ct_buf dev_idx(ct_check *c, const int32_t *idx, size_t n, cl_mem *mem)
{
    ct_buf b = { NULL, CK_GUARD };
    size_t total = n + 2 * CK_GUARD;
    int32_t *h = malloc(total * sizeof *h);
    if (!h) {
        ck_status(c, CT_ERR_NO_MEMORY, "index buffer");
        return b;
    }
    for (size_t i = 0; i < total; i++)
        h[i] = i >= CK_GUARD && i < CK_GUARD + n ? idx[i - CK_GUARD] : IDX_GUARD_VALUE;
    int st = ct_buffer_create(ck_ctx(c), total * sizeof *h, mem);
    if (!st)
        st = ct_buffer_write(ck_ctx(c), *mem, 0, total * sizeof *h, h);
    free(h);
    if (!ck_status(c, st, "index buffer"))
        b.mem = *mem;
    return b;
}

typedef struct emb_bench {
    ct_context *ctx;
    ct_buf y, w, idx, dy, dw, ws;
    size_t n, V, D;
} emb_bench;

static int bench_run(void *user)
{
    emb_bench *b = user;
    int st = ct_embedding_forward(b->ctx, b->y, b->w, b->idx, b->n, b->V, b->D);
    return st ? st : ct_embedding_backward(b->ctx, b->dw, b->dy, b->idx, b->ws, b->n, b->V, b->D);
}

/* `bad`: also place out-of-range indices (-1 and V). */
static void one_case(ct_check *c, size_t n, size_t V, size_t D, int bad, cl_mem *idx_mem)
{
    ct_context *ctx = ck_ctx(c);
    const int f = ck_act16(c);
    ck_case(c, "n=%zu V=%zu D=%zu%s%s", n, V, D, bad ? " with out-of-range indices" : "",
            f ? ", 16-bit activations" : "");
    double *w = ck_host(c, V * D), *y = ck_host(c, n * D), *dy = ck_host(c, n * D);
    double *dw0 = ck_host(c, V * D), *g = ck_host(c, V * D), *dw = ck_host(c, V * D);
    int32_t *idx = (int32_t *)(void *)ck_host(c, n); /* doubles are wide enough for int32 */
    size_t *count = (size_t *)(void *)ck_host(c, V);
    if (ck_failed(c))
        return;
    ck_fill(c, w, V * D, -1, 1);
    ck_fill(c, dy, n * D, -1, 1);
    ck_fill(c, dw0, V * D, -1, 1);
    for (size_t i = 0; i < V * D; i++) {
        w[i] = (double)(float)w[i];
        dw0[i] = (double)(float)dw0[i];
    }
    for (size_t i = 0; i < n * D; i++)
        dy[i] = (double)(float)dy[i];
    ck_round_act(c, dy, n * D);
    /* a small pool of rows half the time, so indices repeat heavily */
    int pool = ck_int(c, 0, 1) ? (int)V - 1 : ck_int(c, 0, (int)V - 1 < 3 ? (int)V - 1 : 3);
    for (size_t i = 0; i < n; i++)
        idx[i] = ck_int(c, 0, pool);
    if (bad && n > 0) {
        idx[ck_u32(c) % n] = -1;
        idx[ck_u32(c) % n] = (int32_t)V;
    }
    size_t m = 1;
    for (size_t i = 0; i < n; i++)
        if (idx[i] >= 0 && (size_t)idx[i] < V && ++count[idx[i]] + 1 > m)
            m = count[idx[i]] + 1;
    double atol = (double)m * (double)m * 0x1p-24;

    ct_ref_embedding_forward(y, w, idx, n, V, D);
    ck_round_act(c, y, n * D); /* the store's one rounding (NaN rows stay NaN) */
    ct_ref_embedding_backward(g, dy, idx, n, V, D);
    for (size_t i = 0; i < V * D; i++)
        dw[i] = dw0[i] + g[i];

    ct_buf d_w = ck_dev_in(c, w, V * D), d_dy = ck_act_in(c, dy, n * D);
    ct_buf d_y = ck_act_out(c, n * D), d_dw = ck_dev_in(c, dw0, V * D);
    ct_buf d_ws = ck_dev_out(c, ct_embedding_workspace_size(n) / sizeof(float));
    ct_buf d_idx = dev_idx(c, idx, n, idx_mem);
    if (ck_failed(c))
        return;
    /* ck_dev_in gives dW input guards of NaN: give it output guards by
     * comparing an accumulated copy instead */
    ct_buf d_acc = ck_dev_out(c, V * D);
    if (ck_failed(c) || ck_status(c, ct_copy(ctx, d_acc, d_dw, V * D), "copy"))
        return;
    if (ck_status(c, ct_embedding_forward(ctx, d_y, d_w, d_idx, n, V, D), "embedding forward"))
        return;
    ck_expect(c, "forward y", d_y, n * D, y, 0, 0);
    if (ck_status(c, ct_embedding_backward(ctx, d_acc, d_dy, d_idx, d_ws, n, V, D),
                  "embedding backward"))
        return;
    ck_expect(c, "backward dW (accumulated)", d_acc, V * D, dw, atol, 0);
    if (f)
        return; /* the reference's gradient is checked in the float pass */

    emb_loss l = { w, dy, idx, ck_host(c, n * D), n, V, D };
    ck_gradcheck(c, "reference dW", loss_of_w, &l, w, V * D, g, 48);
}

static void run_case(ct_check *c, size_t n, size_t V, size_t D, int bad)
{
    cl_mem idx_mem = NULL;
    one_case(c, n, V, D, bad, &idx_mem);
    ck_case_end(c);
    ct_buffer_release(&idx_mem);
}

static void bench(ct_check *c)
{
    /* a language-model batch: 32 x 128 tokens, 10k vocabulary, width 256 */
    size_t n = 4096, V = 10000, D = 256;
    cl_mem idx_mem = NULL;
    ck_case(c, "bench n=%zu V=%zu D=%zu", n, V, D);
    int32_t *idx = (int32_t *)(void *)ck_host(c, n);
    for (size_t i = 0; i < n && !ck_failed(c); i++)
        idx[i] = (int32_t)(ck_u32(c) % V);
    emb_bench b = { ck_ctx(c), ck_dev_out(c, n * D), ck_dev_const(c, V * D, 0.5),
                    dev_idx(c, idx, n, &idx_mem), ck_dev_const(c, n * D, 1),
                    ck_dev_const(c, V * D, 0), ck_dev_out(c, n), n, V, D };
    /* forward: read + write n D floats; backward: read n D dy, read-modify-
     * write up to n D of dW, plus the index and link arrays */
    double bytes = 4.0 * (2.0 * (double)(n * D) + 3.0 * (double)(n * D) + 4.0 * (double)n);
    if (!ck_failed(c))
        ck_bench(c, "n=4096 V=10000 D=256", (double)(n * D), bytes, bench_run, &b);
    ck_case_end(c);
    ct_buffer_release(&idx_mem);
}

void ct_check_embedding(ct_check *c)
{
    run_case(c, 1, 1, 1, 0);
    run_case(c, 5, 1, 3, 0); /* every index the same row */
    run_case(c, 7, 4, 1, 1);
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        size_t n = (size_t)ck_dim(c, 300), V = (size_t)ck_dim(c, 60), D = (size_t)ck_dim(c, 70);
        run_case(c, n, V, D, it % 3 == 2);
    }
    /* 16-bit storage, at bf16 or fp16 precision */
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        ck_act16_state s;
        if (!ck_act16_begin(c, &s))
            break;
        size_t n = (size_t)ck_dim(c, 300) | 1, V = (size_t)ck_dim(c, 60);
        size_t D = (size_t)ck_dim(c, 70) | 1;
        run_case(c, n, V, D, it % 3 == 2);
        ck_act16_end(c, &s);
    }
    if (ck_benchmarking(c) && !ck_failed(c))
        bench(c);
}
