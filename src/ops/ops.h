/*
 * ops.h - what every op launcher shares.
 *
 * Conventions (each family in src/ops/<family>.c with its header, kernels in
 * cl_kernels/<family>.cl, host reference in src/ref/<family>.c, checks in
 * src/check/<family>.c):
 *   - launchers are <op>_forward / <op>_backward, kernels <op>_fwd_f32 /
 *     <op>_bwd_f32; every buffer argument is a ct_buf and says its shape in
 *     a comment: // (N, C, H, W);
 *   - parameter gradients accumulate (+=, the trainer zeroes them once per
 *     step); input gradients are written (=) unless a launcher says otherwise;
 *   - launchers only enqueue work: no clFinish, no host reads;
 *   - sizes travel to kernels as uint, offsets as ulong (elements); the
 *     lane convolutions (conv_lane.c) take int offsets, whose 64-bit
 *     pointer arithmetic made every load dearer on llvmpipe.
 */
#ifndef CT_OPS_OPS_H
#define CT_OPS_OPS_H

#include "cl/runtime.h"
#include "tensor.h"

/* The two kernel arguments of a ct_buf: the buffer and its element offset. */
#define CT_BUF(b) CT_ARG((b).mem), CT_ARG((b).off)

/* a / b rounded up (b > 0): blocks or work-groups covering a */
static inline size_t ct_cdiv(size_t a, size_t b)
{
    return (a + b - 1) / b;
}

/* Division by an invariant divisor in kernels (cl_kernels/common.cl,
 * ct_udiv): for 0 <= x < 2^31 and 1 <= d < 2^31, x / d = mul_hi(x, m) >> s
 * with m = ceil(2^(31 + l) / d), s = l - 1, l = ceil(log2 d) (Granlund and
 * Montgomery's round-up method: m d - 2^(31 + l) < d <= 2^l bounds the error
 * below one for x < 2^31); m = 0 marks d = 1. A kernel's integer division
 * is a routine of tens of instructions on GPUs and a scalar idiv per lane
 * where work-items are SIMD lanes (Mesa's llvmpipe). */
cl_uint2 ct_fastdiv(uint32_t d);

/* x[0..n) = value */
int ct_fill(ct_context *ctx, ct_buf x, size_t n, float value);
/* A device vector of at least n ones, kept by the context (grown on
 * demand), for sums computed as matrix products. */
int ct_ones(ct_context *ctx, size_t n, ct_buf *out);
/* The slices of a two-stage reduction: S slices of L of `total` (the last
 * may be shorter, none empty), at most `want`, each at least `least` long
 * unless total is shorter. The shape alone decides them, so the summation
 * order is the same on every run. */
void ct_slices(size_t total, size_t want, size_t least, size_t *S, size_t *L);
/* R rows of F features for the row kernels (layer and RMS norm), which
 * index r F + f with uint factors: F > 0 and R F below 2^32, else
 * CT_ERR_SHAPE naming `who`. */
int ct_rows_check(ct_context *ctx, const char *who, size_t R, size_t F);
/* A device buffer of at least n floats that the context keeps for one
 * user, `kind` (a static ct_ext_kind whose release is ct_scratch_release):
 * grown on demand (powers of two from `least`), released with the context.
 * For the workspaces of ops whose callers plan none (the bias gradient's
 * partials, split-K's slices). */
int ct_scratch(ct_context *ctx, const ct_ext_kind *kind, size_t n, size_t least, cl_mem *out);
void ct_scratch_release(void *state);
/* A 2-D range of `rows` rows of `wd` work-items for kernel `name` of
 * program `prog` (the row kernels: pooling, upsampling, the convolutions'
 * per-element passes): work-groups of up to 256 work-items (or the
 * kernel's limit), l[0] along the row, l[1] rows; g (may be NULL) the
 * range rounded up to whole work-groups. */
int ct_row_range(ct_context *ctx, int prog, const char *name, size_t wd, size_t rows, size_t g[2], size_t l[2]);
/* dst[0..n) = src[0..n) */
int ct_copy(ct_context *ctx, ct_buf dst, ct_buf src, size_t n);

#endif /* CT_OPS_OPS_H */
