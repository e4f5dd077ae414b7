/*
 * gemm_host.h - the host products' scheduling on the context's thread pool
 * (gemm_host.c): the host's CBLAS run single-threaded on the pool's
 * threads, and batches of products spread over the pool.
 *
 * Why: OpenBLAS's own worker threads spin (sched_yield) for a long while
 * after each call, and between two BLAS calls of a training step the host
 * pool runs the AVX-512 GEMM, batch norm, the losses...: on two cores the
 * spinning threads took a fifth of the cycles and the gpt step's median
 * went from 388 to 480-550 ms. With every BLAS call made by the pool's
 * threads at one OpenBLAS thread each, OpenBLAS's workers get no work and
 * sleep.
 */
#ifndef CT_HOST_GEMM_HOST_H
#define CT_HOST_GEMM_HOST_H

#include "ops/ops.h"

/* C (m x n, ldc) = alpha op(A) op(B) + beta C on host memory through the
 * host's CBLAS: blocks of C's rows (or columns, where n > m), their
 * boundaries decided by the shape alone, one single-threaded BLAS call
 * each on the pool (OpenBLAS's thread count set to 1 for the call and then
 * restored). Another CBLAS than OpenBLAS: one call on this thread. */
int ct_host_blas(ct_context *ctx, int ta, int tb, size_t m, size_t n, size_t k, float alpha, const float *a,
                 size_t lda, const float *b, size_t ldb, float beta, float *c, size_t ldc);

/* count products C_i = alpha op(A_i) op(B_i) + beta C_i of one shape, A_i
 * at a + a_off[i] - a_lo (likewise B, C), each whole on one of the pool's
 * threads: the AVX-512 GEMM serially (own) or one single-threaded BLAS
 * call. For batches of at least CT_HOST_BATCH_MIN small products
 * (attention's heads); ct_gemm_batched runs others one by one. */
#define CT_HOST_BATCH_MIN 8
int ct_host_gemm_batch(ct_context *ctx, int own, int ta, int tb, size_t m, size_t n, size_t k, float alpha,
                       const float *a, const size_t *a_off, size_t a_lo, size_t lda, const float *b,
                       const size_t *b_off, size_t b_lo, size_t ldb, float beta, float *c,
                       const size_t *c_off, size_t c_lo, size_t ldc, size_t count);

#endif /* CT_HOST_GEMM_HOST_H */
