/*
 * gemm512.h - row-major SGEMM on host memory with AVX-512, on the host
 * thread pool (host_work.h): what ct_gemm's host path runs where
 * ct_host_avx512() says so, in place of the host's CBLAS, and the products
 * of the host convolution's small-plane 1x1s (conv_host512.c).
 *
 * Blocked as usual: B in slices of KC x NC packed into panels of NR columns,
 * A in slices of all m rows x KC packed into panels of MR rows, then tiles of
 * MR x NR sums, each the k products of one slice added in k order. Work items
 * are blocks of C, so every element of C sums its products in the same order
 * whatever the thread count: results are bit-identical across thread counts.
 */
#ifndef CT_HOST_GEMM512_H
#define CT_HOST_GEMM512_H

#include <stddef.h>

#include "core/pool.h"
#include "host/host_work.h"

/* The operands' precision: float32, or bf16 (products of operands rounded
 * to bf16, sums in float32) through AVX512_BF16's dot products or, without
 * them, through the float32 FMAs on rounded panels; or fp16 (rounded to
 * IEEE half through F16C's conversions, the float32 FMAs). */
enum { CT_GEMM512_F32, CT_GEMM512_BF16_ROUND, CT_GEMM512_BF16_DOT, CT_GEMM512_FP16_ROUND, CT_GEMM512_BF16_AMX };

/* The mode ctx's precision (ct_context_set_precision) asks for on this
 * CPU: bf16 on AMX tiles where ct_host_amx() says so */
int ct_gemm512_mode(const ct_context *ctx);

/* The same without AMX (the vector modes): what the direct convolutions,
 * which have vector tiles only, run */
int ct_gemm512_vec_mode(const ct_context *ctx);

/* Floats of packed A (*na) and packed B (*nb) that ct_gemm512_run needs. */
void ct_gemm512_pack_size(size_t m, size_t n, size_t k, int mode, size_t *na, size_t *nb);

/* C (m x n, ldc) = alpha op(A) op(B) + beta C; op(A) is m x k (A k x m with
 * lda when ta), op(B) k x n (B n x k with ldb when tb). beta = 0 does not
 * read C. pa, pb: 64-byte aligned, of ct_gemm512_pack_size's sizes. Call
 * only where ct_host_avx512() is true; k > 0. */
void ct_gemm512_run(ct_pool *pool, int mode, int ta, int tb, size_t m, size_t n, size_t k, float alpha,
                    const float *a, size_t lda, const float *b, size_t ldb, float beta, float *c,
                    size_t ldc, float *pa, float *pb);

/* ct_gemm512_run on hw's pool in ctx's mode, packing into hw's shared
 * buffers CT_HOST_BIG_GEMM_A and _B. */
int ct_gemm512(ct_context *ctx, ct_host_work *hw, int ta, int tb, size_t m, size_t n, size_t k,
               float alpha, const float *a, size_t lda, const float *b, size_t ldb, float beta,
               float *c, size_t ldc);

#endif /* CT_HOST_GEMM512_H */
