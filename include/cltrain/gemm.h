/*
 * cltrain/gemm.h - single-precision matrix product on device buffers.
 *
 *   C = alpha * op(A) * op(B) + beta * C,  row-major, op(X) = X or X^T
 *
 * with op(A) m x k, op(B) k x n and C m x n. Operands are (cl_mem, offset)
 * pairs with offsets and leading dimensions in elements, so views into one
 * large buffer need no sub-buffers.
 *
 * Two paths compute it: CLBlast on the device, and on CPU devices (such as
 * pocl's, which share host memory) the host's BLAS on mapped buffers, an
 * order of magnitude faster there. The device class decides (CPU class:
 * host; GPU class: CLBlast); CLTRAIN_GEMM=clblast|host or ct_gemm_set_path
 * forces one within what the class allows.
 */
#ifndef CLTRAIN_GEMM_H
#define CLTRAIN_GEMM_H

#include <stddef.h>

#include "cltrain/common.h"
#include "cltrain/context.h"
#include "cltrain/opencl.h"

#ifdef __cplusplus
extern "C" {
#endif

CT_API int ct_gemm(ct_context *ctx, int trans_a, int trans_b, size_t m, size_t n, size_t k,
                   float alpha, cl_mem a, size_t a_offset, size_t lda,
                   cl_mem b, size_t b_offset, size_t ldb,
                   float beta, cl_mem c, size_t c_offset, size_t ldc);

/* `count` products of one shape at once: for b in [0, count)
 *   C_b = alpha * op(A_b) * op(B_b) + beta * C_b
 * with A_b at a_offsets[b] in a (and likewise B_b, C_b), each with the
 * given leading dimension. The C_b must not overlap. One CLBlast batched
 * routine, or on the host path one mapping of the three buffers for all
 * of them. Each result is what ct_gemm gives on the host path; CLBlast's
 * batched kernel may round differently from its single one. */
CT_API int ct_gemm_batched(ct_context *ctx, int trans_a, int trans_b, size_t m, size_t n, size_t k,
                           float alpha, cl_mem a, const size_t *a_offsets, size_t lda,
                           cl_mem b, const size_t *b_offsets, size_t ldb,
                           float beta, cl_mem c, const size_t *c_offsets, size_t ldc, size_t count);

/* The path ct_gemm takes in this context, and a way to force one
 * (CT_GEMM_HOST fails with CT_ERR_UNSUPPORTED on a device without shared
 * host memory). */
CT_API ct_gemm_path ct_gemm_get_path(const ct_context *ctx);
CT_API int ct_gemm_set_path(ct_context *ctx, ct_gemm_path path);
CT_API const char *ct_gemm_path_str(ct_gemm_path path);

/* The host BLAS's kernel set as OpenBLAS names it ("Haswell" for AVX2,
 * "SkylakeX" or "Cooperlake" for AVX-512, ...), or "unknown" for another
 * BLAS. OpenBLAS picks it when it loads; OPENBLAS_CORETYPE overrides. */
CT_API const char *ct_host_blas_core(void);

/* What runs the host path's larger products (CPU devices): "avx512"
 * (cltrain's own SGEMM, on a CPU with AVX-512; products under 256 rows, 64
 * columns or depth 16 still go to the host BLAS unless ct_host_gemm_all)
 * or "blas" (all of them; also forced by CLTRAIN_HOST_GEMM=blas). */
CT_API const char *ct_host_gemm_str(void);

/* 1 when every host product runs cltrain's own SGEMM, the small ones too:
 * CLTRAIN_HOST_GEMM=avx512, or the host BLAS runs kernels without AVX2
 * (ct_host_blas_core names an SSE-era or AVX1 core). */
CT_API int ct_host_gemm_all(void);

/* Whether bf16 products use AVX512_BF16's dot products on this CPU (1) or
 * the FMAs on rounded operands (0); *speed (may be NULL): the dot
 * products' multiply-adds per second over the FMA's, measured once per
 * process (0 where the CPU has no AVX512_BF16). */
CT_API int ct_host_bf16_dot(double *speed);

/* Whether bf16 matrix products run on AMX tiles on this CPU (1): the CPU
 * has AMX-TILE and AMX-BF16, the kernel grants them, CLTRAIN_HOST_ISA
 * does not keep the vector kernels. The same-width stride-1 direct
 * convolutions take them too; the other direct convolutions keep their
 * vector tiles (ct_host_bf16_dot's choice). */
CT_API int ct_host_bf16_amx(void);

#ifdef __cplusplus
}
#endif

#endif /* CLTRAIN_GEMM_H */
