/*
 * gemm_host.c - host products on the pool's threads (gemm_host.h).
 *
 * Determinism: the blocks of a BLAS product and the batch's products are
 * fixed by the shape, each block or product computed whole by one call,
 * so the results do not depend on the thread count or on which thread
 * took which item.
 */
#include "host/gemm_host.h"

#include <cblas.h>

#include "core/blasctl.h"
#include "host/gemm512.h"
#include "host/host_work.h"

/* BLAS blocks: up to BH_BLOCKS along the longer side of C, each at least
 * BH_LEAST rows or columns; products below BH_SERIAL multiply-adds are one
 * call (the pool's hand-over costs more than it saves). */
#define BH_BLOCKS 16
#define BH_LEAST 64
#define BH_SERIAL ((size_t)1 << 18)

static void sgemm(int ta, int tb, size_t m, size_t n, size_t k, float alpha, const float *a, size_t lda,
                  const float *b, size_t ldb, float beta, float *c, size_t ldc)
{
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
}

typedef struct bh {
    int ta, tb, own, rows; /* rows: blocks of C's rows, else of its columns */
    int mode;              /* own: ct_gemm512_mode */
    size_t m, n, k, lda, ldb, ldc, block;
    float alpha, beta;
    const float *a, *b;
    float *c;
    /* batches */
    const size_t *a_off, *b_off, *c_off;
    size_t a_lo, b_lo, c_lo, pack_a;
    ct_host_work *hw;
} bh;

static void block_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const bh *h = arg;
    size_t i0 = item * h->block;
    if (h->rows) {
        size_t mb = h->m - i0 < h->block ? h->m - i0 : h->block;
        sgemm(h->ta, h->tb, mb, h->n, h->k, h->alpha, h->a + (h->ta ? i0 : i0 * h->lda), h->lda, h->b, h->ldb,
              h->beta, h->c + i0 * h->ldc, h->ldc);
    } else {
        size_t nb = h->n - i0 < h->block ? h->n - i0 : h->block;
        sgemm(h->ta, h->tb, h->m, nb, h->k, h->alpha, h->a, h->lda, h->b + (h->tb ? i0 * h->ldb : i0), h->ldb,
              h->beta, h->c + i0, h->ldc);
    }
}

int ct_host_blas(ct_context *ctx, int ta, int tb, size_t m, size_t n, size_t k, float alpha, const float *a,
                 size_t lda, const float *b, size_t ldb, float beta, float *c, size_t ldc)
{
    size_t side = m >= n ? m : n;
    size_t block = (side + BH_BLOCKS - 1) / BH_BLOCKS;
    block = block < BH_LEAST ? BH_LEAST : (block + 15) / 16 * 16;
    size_t blocks = (side + block - 1) / block;
    ct_host_work *hw = NULL;
    int prev = ct_blas_single();
    if (prev && blocks > 1 && (double)m * (double)n * (double)k >= (double)BH_SERIAL) {
        int st = ct_host_work_get(ctx, 16, 16, 1, &hw);
        if (st) {
            ct_blas_restore(prev);
            return st;
        }
    }
    if (!hw) {
        /* one call: OpenBLAS single-threaded here too (its workers would
         * spin after it), or another CBLAS as it threads itself. The
         * shape alone decides (a pool of one thread runs the blocks one
         * after the other), so the bits do not depend on the thread count. */
        sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        ct_blas_restore(prev);
        return CT_OK;
    }
    bh h = { .ta = ta, .tb = tb, .rows = m >= n, .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc,
             .block = block, .alpha = alpha, .beta = beta, .a = a, .b = b, .c = c };
    ct_pool_run(hw->pool, blocks, block_item, &h);
    ct_blas_restore(prev);
    return CT_OK;
}

static void batch_item(void *arg, size_t i, int thread)
{
    const bh *h = arg;
    const float *a = h->a + (h->a_off[i] - h->a_lo), *b = h->b + (h->b_off[i] - h->b_lo);
    float *c = h->c + (h->c_off[i] - h->c_lo);
    if (!h->own) {
        sgemm(h->ta, h->tb, h->m, h->n, h->k, h->alpha, a, h->lda, b, h->ldb, h->beta, c, h->ldc);
        return;
    }
    float *pa = h->hw->scratch[thread], *pb = pa + h->pack_a;
    ct_gemm512_run(NULL, h->mode, h->ta, h->tb, h->m, h->n, h->k, h->alpha, a, h->lda, b, h->ldb, h->beta, c, h->ldc,
                   pa, pb);
}

int ct_host_gemm_batch(ct_context *ctx, int own, int ta, int tb, size_t m, size_t n, size_t k, float alpha,
                       const float *a, const size_t *a_off, size_t a_lo, size_t lda, const float *b,
                       const size_t *b_off, size_t b_lo, size_t ldb, float beta, float *c,
                       const size_t *c_off, size_t c_lo, size_t ldc, size_t count)
{
    if (!own && !ct_blas_is_openblas()) {
        /* another CBLAS threads each call itself: one after the other */
        for (size_t i = 0; i < count; i++)
            sgemm(ta, tb, m, n, k, alpha, a + (a_off[i] - a_lo), lda, b + (b_off[i] - b_lo), ldb, beta,
                  c + (c_off[i] - c_lo), ldc);
        return CT_OK;
    }
    size_t na = 0, nb = 0;
    int mode = ct_gemm512_mode(ctx);
    if (own) {
        ct_gemm512_pack_size(m, n, k, mode, &na, &nb);
        na = (na + 15) / 16 * 16; /* pb stays 64-byte aligned */
    }
    ct_host_work *hw;
    int st = ct_host_work_get(ctx, na + nb + 16, 16, 1, &hw);
    if (st)
        return st;
    int prev = own ? 0 : ct_blas_single();
    bh h = { .ta = ta, .tb = tb, .own = own, .mode = mode, .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc,
             .alpha = alpha, .beta = beta, .a = a, .b = b, .c = c, .a_off = a_off, .b_off = b_off,
             .c_off = c_off, .a_lo = a_lo, .b_lo = b_lo, .c_lo = c_lo, .pack_a = na, .hw = hw };
    ct_pool_run(hw->pool, count, batch_item, &h);
    ct_blas_restore(prev);
    return CT_OK;
}
