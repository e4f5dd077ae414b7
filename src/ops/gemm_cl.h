/*
 * gemm_cl.h - cltrain's own OpenCL SGEMM for the GPU class
 * (cl_kernels/gemm.cl): row-major C = alpha op(A) op(B) + beta C as
 * ct_gemm computes it, with split-K for products whose C is too small to
 * fill a large GPU (the weight gradients of convolutions and of dense layers
 * at small batches): the k-slices' products go to a workspace the context
 * keeps, then one kernel sums them in slice order, so the bits depend only
 * on the device and the shape.
 */
#ifndef CT_OPS_GEMM_CL_H
#define CT_OPS_GEMM_CL_H

#include "cl/runtime.h"

/* The tile parameters, as cl_kernels/gemm.cl's defaults for CPU devices
 * (CT_DEVICE_IS_CPU) and for others (the two must agree; the launcher
 * checks the work-group size each kernel was compiled for). Each work-item
 * holds RM rows x RNV vectors of VN columns; a tile of C is (WM RM) x
 * (WN RNV VN) on WM x WN work-items, TK deep per local step. */
typedef struct ct_gemm_cl_params {
    size_t vn, tk, tk_mm; /* depth per local step: the convolution's, the SGEMM's */
    /* by ct_gemm_cl_tiles: big, small, narrow, huge (narrow: one vector
     * of columns per work-item) */
    size_t rm[4], rnv[4], wm[4], wn[4];
} ct_gemm_cl_params;

#define CT_GEMM_CL_PARAMS_CPU { 16, 16, 16, { 8, 8, 8, 8 }, { 2, 2, 1, 2 }, { 8, 2, 2, 8 }, { 4, 4, 1, 4 } }
#define CT_GEMM_CL_PARAMS_GPU { 4, 16, 32, { 4, 4, 4, 8 }, { 1, 1, 1, 2 }, { 16, 4, 8, 16 }, { 16, 8, 4, 16 } }

/* The tile sizes: big, and small (16 rows; at most 32 work-items, as
 * Mesa's llvmpipe allows). GPUs: 64 x 64 on 256 work-items and 16 x 32 on
 * 32; CPUs: 64 x 128 on 32 and 16 x 128 on 8. The implicit-GEMM
 * convolution also has narrow ones, one vector of columns per work-item
 * (GPUs 32 x 16 on 32, CPUs 16 x 16 on 2), for products of few columns.
 * The SGEMM also has huge ones on GPUs, 8 x 8 sums per work-item (128 x
 * 128 on 256), for products that fill the device with them (on CPUs they
 * are the big ones again). The values are the tuned table's "tiles". */
typedef enum ct_gemm_cl_tiles {
    CT_GEMM_CL_BIG,
    CT_GEMM_CL_SMALL,
    CT_GEMM_CL_NARROW,
    CT_GEMM_CL_HUGE,
    CT_GEMM_CL_REG,
    CT_GEMM_CL_VEC
} ct_gemm_cl_tiles;
/* CT_GEMM_CL_REG: cl_kernels/gemm_reg.cl's register tiles without local
 * memory, 16 x 32 on 4 x 8 work-items of 4 x 4 sums, 4 deep per step: every
 * product of the SGEMM on the devices ct_gemm_cl_reg_device names (there
 * any plan's tiles are taken as these). CT_GEMM_CL_VEC: gemm_reg.cl's
 * float16 register tiles, one work-item per group (NN 8 x 32, NT 4 x 4
 * summed along k, TN and TT 32 x 8), every product of the SGEMM on the
 * devices ct_gemm_cl_vec_device names (likewise). */

/* How one product runs: the tiles and the number of k-slices (1: no
 * split, C written directly). */
typedef struct ct_gemm_cl_plan {
    ct_gemm_cl_tiles tiles;
    size_t splits;
} ct_gemm_cl_plan;

/* One tile size on one device: C's tile (tm x tn), its depth, the
 * work-group (wm x wn). */
typedef struct ct_gemm_cl_tile {
    size_t tm, tn, tk, wm, wn;
} ct_gemm_cl_tile;

/* The plan for a shape on the context's device. */
ct_gemm_cl_plan ct_gemm_cl_plan_for(const ct_context *ctx, size_t m, size_t n, size_t k, int ta,
                                    int tb);

/* Whether cltrain's own tiled kernels (this SGEMM, the implicit-GEMM
 * convolution) suit the device: GPUs and pocl, not Mesa's llvmpipe, which
 * runs work-items in SIMD lanes (the SGEMM at 0.07-0.2x CLBlast there, the
 * convolution 10x slower than im2col + CLBlast). */
int ct_gemm_cl_device_ok(const ct_context *ctx);

/* Whether the SGEMM runs register tiles on this device: the CPU runtimes
 * other than pocl (Mesa's llvmpipe), which the tiled kernels do not suit
 * (ct_gemm_cl_device_ok); there they also computed wrong sums for NT
 * products of depth 3,136 and more. */
int ct_gemm_cl_reg_device(const ct_context *ctx);

/* Whether the SGEMM runs the float16 register tiles on this device: pocl's
 * CPU devices, which run a work-item's vector code as it is (the tiled
 * kernels ran 4-8x slower there: their tile copies and the sums saved at
 * every barrier). */
int ct_gemm_cl_vec_device(const ct_context *ctx);

/* Whether this kernel should run the shape rather than CLBlast (by what
 * was measured, docs/BENCHMARKS.md). */
int ct_gemm_cl_choose(const ct_context *ctx, size_t m, size_t n, size_t k, int ta, int tb);

/* The number of k-slices ct_gemm_cl runs the shape in (1: no split). */
size_t ct_gemm_cl_splits(const ct_context *ctx, size_t m, size_t n, size_t k, int ta, int tb);

/* C = alpha op(A) op(B) + beta C, row-major, as ct_gemm (beta = 0: C is not
 * read). Operands are not range-checked here (ct_gemm does that); sizes
 * and leading dimensions must be below 2^31.
 * a: op(A) (m, k); b: op(B) (k, n); c: (m, n), leading dimensions lda, ldb,
 * ldc as stored */
int ct_gemm_cl(ct_context *ctx, int trans_a, int trans_b, size_t m, size_t n, size_t k,
               float alpha, cl_mem a, size_t a_off, size_t lda, cl_mem b, size_t b_off,
               size_t ldb, float beta, cl_mem c, size_t c_off, size_t ldc);

/* ct_gemm_cl with a given plan (tests run every tile size and split). A
 * plan whose big tiles the device cannot launch runs the small ones. */
int ct_gemm_cl_run(ct_context *ctx, ct_gemm_cl_plan plan, int trans_a, int trans_b, size_t m,
                   size_t n, size_t k, float alpha, cl_mem a, size_t a_off, size_t lda, cl_mem b,
                   size_t b_off, size_t ldb, float beta, cl_mem c, size_t c_off, size_t ldc);

/* What the pass writing C adds: C = act(alpha op(A) op(B) + beta C + bias),
 * the bias (n) per column at bias_off when bias is not NULL, act an enum
 * ct_act (0: none); the same bits as the product followed by
 * bias_act_fwd_f32. */
typedef struct ct_gemm_cl_epi {
    cl_mem bias;
    size_t bias_off;
    int act;
    int s16; /* operands in the context's 16-bit activation storage: CT_S16_A | _B | _C */
} ct_gemm_cl_epi;

/* ct_gemm_cl_epi.s16's bits: A, B or C holds the activation storage's
 * 16-bit elements (ct_context_set_act16), its offset and leading
 * dimension counted in them; the others are float32. The own kernels only
 * (ct_gemm_epi refuses them elsewhere): a dense layer's input, output and
 * gradients go through its products without float copies. */
#define CT_S16_A 1
#define CT_S16_B 2
#define CT_S16_C 4

/* ct_gemm_cl_run with an epilogue (NULL: none). */
int ct_gemm_cl_run_epi(ct_context *ctx, ct_gemm_cl_plan plan, const ct_gemm_cl_epi *epi, int trans_a,
                       int trans_b, size_t m, size_t n, size_t k, float alpha, cl_mem a, size_t a_off,
                       size_t lda, cl_mem b, size_t b_off, size_t ldb, float beta, cl_mem c,
                       size_t c_off, size_t ldc);

/* ct_gemm with an epilogue where the product runs on cltrain's own kernel
 * (*fused = 1); elsewhere (the host path, CLBlast) the plain product, and
 * *fused = 0: the caller adds the bias and activation. */
int ct_gemm_epi(ct_context *ctx, int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha,
                cl_mem a, size_t a_off, size_t lda, cl_mem b, size_t b_off, size_t ldb, float beta,
                cl_mem c, size_t c_off, size_t ldc, const ct_gemm_cl_epi *epi, int *fused);

/* ct_gemm over a two-level batch of n1 x n2 products: product (i1, i2)
 * reads A at a_off + i1 as[0] + i2 as[1], B likewise, and writes C at c_off
 * + i1 cs[0] + i2 cs[1] (attention's samples and heads). Every operand is
 * range-checked and the Cs must not overlap. On the GPU class's devices
 * one launch of cltrain's own kernel (but on Mesa's llvmpipe, or with
 * CLTRAIN_GPU_GEMM=clblast: ct_gemm_batched's strided runs); on the host
 * path a loop. */
int ct_gemm_batched2(ct_context *ctx, int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha,
                     cl_mem a, size_t a_off, size_t lda, const size_t as[2], cl_mem b, size_t b_off,
                     size_t ldb, const size_t bs[2], float beta, cl_mem c, size_t c_off, size_t ldc,
                     const size_t cs[2], size_t n1, size_t n2);
/* The same with operands in the activation storage: s16 as
 * ct_gemm_cl_epi's (the own kernels only) */
int ct_gemm_batched2_s(ct_context *ctx, int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha,
                       cl_mem a, size_t a_off, size_t lda, const size_t as[2], cl_mem b, size_t b_off,
                       size_t ldb, const size_t bs[2], float beta, cl_mem c, size_t c_off, size_t ldc,
                       const size_t cs[2], size_t n1, size_t n2, int s16);

/* A two-level batch of n1 x n2 products in one launch (no k-slices):
 * product (i1, i2) reads A at a_off + i1 as[0] + i2 as[1], B at b_off + i1
 * bs[0] + i2 bs[1] and writes C at c_off + i1 cs[0] + i2 cs[1] (attention's
 * samples and heads). Operands are not range-checked here
 * (ct_gemm_batched2 does that), nor are the Cs checked for overlap. s16:
 * as ct_gemm_cl_epi's. */
int ct_gemm_cl_batched(ct_context *ctx, int trans_a, int trans_b, size_t m, size_t n, size_t k,
                       float alpha, cl_mem a, size_t a_off, size_t lda, const size_t as[2], cl_mem b,
                       size_t b_off, size_t ldb, const size_t bs[2], float beta, cl_mem c,
                       size_t c_off, size_t ldc, const size_t cs[2], size_t n1, size_t n2, int s16);

/* Whether the device has the huge tiles: GPUs whose local memory holds
 * them (32 deep: 33 KiB; Oclgrind, and GPUs of 32 KiB, do not). CPU devices
 * do not build them (cl_kernels/gemm.cl): there they would be the big tiles
 * again. A plan asking for them where there are none takes the big ones. */
int ct_gemm_cl_has_huge(const ct_context *ctx);

/* For kernels built on the same tiles (cl_kernels/conv_igemm.cl's
 * implicit-GEMM convolution, src/ops/conv_igemm.c): the kernel `name` of
 * tiles t in program base (CT_PROG_gemm or CT_PROG_conv_igemm; their
 * 16-bit variants at 16-bit precision) and the tiles it was compiled with;
 * the k-slices for an m x n product over k; the slice depth (a multiple
 * of tk) for *splits slices, which it may lower; the context's split-K
 * workspace; and split-K's second pass, C = act(alpha sum of the s slices
 * (s, m, n) in ws + beta C + bias) (cl_kernels/splitk.cl). */
int ct_gemm_cl_kernel(ct_context *ctx, int base, const char *name, ct_gemm_cl_tiles t,
                      ct_gemm_cl_tile *ti, ct_kernel_entry **e);
/* The kernel names[*tiles] checked against its tiles and the device's
 * work-group limit, in *ti; big tiles the device cannot launch fall back to
 * small ones (*tiles says which); an error where neither launches. */
int ct_gemm_cl_launchable(ct_context *ctx, int base, const char *const names[],
                          ct_gemm_cl_tiles *tiles, ct_gemm_cl_tile *ti);
size_t ct_gemm_cl_slices(const ct_context *ctx, ct_gemm_cl_tiles t, size_t m, size_t n, size_t k);
size_t ct_gemm_cl_slice_depth(size_t k, size_t tk, size_t *splits);
int ct_gemm_cl_workspace(ct_context *ctx, size_t floats, cl_mem *out);
int ct_gemm_cl_sum(ct_context *ctx, cl_mem ws, size_t s, size_t m, size_t n, float alpha,
                   float beta, cl_mem c, size_t c_off, size_t ldc, const ct_gemm_cl_epi *epi);

#endif /* CT_OPS_GEMM_CL_H */
