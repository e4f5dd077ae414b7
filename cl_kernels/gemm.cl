/*
 * gemm.cl - cltrain's own SGEMM for the GPU class (src/ops/gemm_cl.c):
 * row-major C = act(alpha op(A) op(B) + beta C + bias), optionally over k-slices into a
 * workspace that a fixed-order sum kernel then reduces (split-K).
 *
 * A work-group computes a tile of C on WM x WN work-items, each owning RM
 * rows (ty + WM i) by RNV vectors of VN columns ((tx + WN j) VN + [0, VN)):
 * neighbouring work-items (tx) touch neighbouring vectors of C and of B's
 * local tile, so global stores and local reads are coalesced on GPUs, and
 * A's values are broadcasts. Per step of TK along k, the work-group copies
 * A's and B's tiles into local memory (k-major, rows padded by one float so
 * the transposing copies write with an odd stride), neighbouring work-items
 * reading neighbouring addresses of the operand's contiguous dimension
 * whichever the transposition. Edges are guarded: zeros are loaded past m,
 * n and the slice's end of k, and stores are masked.
 *
 * On pocl (CPU devices), which runs a work-group as loops over its
 * work-items, the copies are scalar loops it vectorizes across work-items,
 * and the products are each work-item's own AVX-512-wide vector code.
 *
 * The tile sizes are compile-time parameters (CT_GEMM_*, defaults per
 * device kind below; the host mirrors them in src/ops/gemm_cl.h): "big"
 * tiles, and "small" ones of 16 rows on at most 32 work-items (products of
 * few rows, and devices such as Mesa's llvmpipe that allow no more).
 */

/* Tile parameters (the host mirrors them in src/ops/gemm_cl.h). Each
 * work-item holds RM rows x RNV vectors of VN columns; a tile of C is
 * (WM RM) x (WN RNV VN) on WM x WN work-items, TK deep per local step. CPUs
 * (pocl) get vectors as wide as AVX-512's and few, fat work-items (pocl
 * runs a work-item's vector code as it is); GPUs float4 and 4 x 4 sums per
 * work-item on 16 x 16 (big) or 4 x 8 (small) work-items. */
#if CT_DEVICE_IS_CPU && !defined(CT_GEMM_GPU_TILES) /* -DCT_GEMM_GPU_TILES: test GPUs' on CPUs */
#define CT_GEMM_DEF_VN 16
#define CT_GEMM_DEF_RM 8
#define CT_GEMM_DEF_RNV 2
#define CT_GEMM_DEF_BIG_WM 8
#define CT_GEMM_DEF_BIG_WN 4
#define CT_GEMM_DEF_SMALL_WM 2
#define CT_GEMM_DEF_SMALL_WN 4
#else
#define CT_GEMM_DEF_VN 4
#define CT_GEMM_DEF_RM 4
#define CT_GEMM_DEF_RNV 1
#define CT_GEMM_DEF_BIG_WM 16
#define CT_GEMM_DEF_BIG_WN 16
#define CT_GEMM_DEF_SMALL_WM 4
#define CT_GEMM_DEF_SMALL_WN 8
#endif
#ifndef CT_GEMM_VN
#define CT_GEMM_VN CT_GEMM_DEF_VN /* 4, 8 or 16 */
#endif
#ifndef CT_GEMM_RM
#define CT_GEMM_RM CT_GEMM_DEF_RM
#endif
#ifndef CT_GEMM_RNV
#define CT_GEMM_RNV CT_GEMM_DEF_RNV
#endif
#ifndef CT_GEMM_TK
#define CT_GEMM_TK 16
#endif
#ifndef CT_GEMM_BIG_WM
#define CT_GEMM_BIG_WM CT_GEMM_DEF_BIG_WM
#endif
#ifndef CT_GEMM_BIG_WN
#define CT_GEMM_BIG_WN CT_GEMM_DEF_BIG_WN
#endif
#ifndef CT_GEMM_SMALL_WM
#define CT_GEMM_SMALL_WM CT_GEMM_DEF_SMALL_WM
#endif
#ifndef CT_GEMM_SMALL_WN
#define CT_GEMM_SMALL_WN CT_GEMM_DEF_SMALL_WN
#endif

#define CT_GEMM_CAT2(a, b) a##b
#define CT_GEMM_CAT(a, b) CT_GEMM_CAT2(a, b)
#define ct_gvec CT_GEMM_CAT(float, CT_GEMM_VN)
#define ct_gvload CT_GEMM_CAT(vload, CT_GEMM_VN)
#define ct_gvstore CT_GEMM_CAT(vstore, CT_GEMM_VN)
#define CT_GEMM_RN (CT_GEMM_RNV * CT_GEMM_VN)

/* A's local tile is as (TK, TM + 1), B's bs (TK, TN + 1). The product of
 * one tile of C over k in [k0, k1) (the work-group's slice z), written to
 * c[c_off + z * c_stride + row * ldc + col]. Work-item (tx, ty) holds rows
 * ty + WM i and the vectors of columns (tx + WN j) VN + [0, VN). */
inline void ct_gemm_tile(const int ta, const int tb, const int WM, const int WN,
                         __local float *as, __local float *bs,
                         __global const float *a, ulong a_off, uint lda,
                         __global const float *b, ulong b_off, uint ldb,
                         __global float *c, ulong c_off, uint ldc, ulong c_stride,
                         uint m, uint n, uint k, uint kc, float alpha, float beta,
                         __global const float *bias, ulong bias_off, int has_bias, int act)
{
    const int TM = WM * CT_GEMM_RM, TN = WN * CT_GEMM_RN, TK = CT_GEMM_TK;
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int lid = ty * WN + tx;
    const int WG = WM * WN;
    const uint m0 = get_group_id(1) * TM, n0 = get_group_id(0) * TN;
    const uint z = get_group_id(2);
    const uint k0 = z * kc;
    const uint k1 = min(k, k0 + kc);
    ct_gvec acc[CT_GEMM_RM][CT_GEMM_RNV];
#pragma unroll
    for (int i = 0; i < CT_GEMM_RM; i++)
#pragma unroll
        for (int j = 0; j < CT_GEMM_RNV; j++)
            acc[i][j] = (ct_gvec)0.0f;
    a += a_off;
    b += b_off;

    for (uint kt = k0; kt < k1; kt += TK) {
        /* A's tile: element (r, p) = op(A)[m0 + r][kt + p]; work-items walk
         * the operand's contiguous dimension (p for A, r for A^T) */
        for (int idx = lid; idx < TM * TK; idx += WG) {
            const int r = ta ? idx % TM : idx / TK, p = ta ? idx / TM : idx % TK;
            const uint gr = m0 + r, gp = kt + p;
            float v = 0.0f;
            if (gr < m && gp < k1)
                v = ta ? a[(ulong)gp * lda + gr] : a[(ulong)gr * lda + gp];
            as[p * (TM + 1) + r] = v;
        }
        /* B's tile: element (p, col) = op(B)[kt + p][n0 + col] */
        for (int idx = lid; idx < TK * TN; idx += WG) {
            const int col = tb ? idx / TK : idx % TN, p = tb ? idx % TK : idx / TN;
            const uint gc = n0 + col, gp = kt + p;
            float v = 0.0f;
            if (gc < n && gp < k1)
                v = tb ? b[(ulong)gc * ldb + gp] : b[(ulong)gp * ldb + gc];
            bs[p * (TN + 1) + col] = v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
        for (int p = 0; p < CT_GEMM_TK; p++) {
            ct_gvec bv[CT_GEMM_RNV];
#pragma unroll
            for (int j = 0; j < CT_GEMM_RNV; j++)
                bv[j] = ct_gvload(0, bs + p * (TN + 1) + (tx + WN * j) * CT_GEMM_VN);
#pragma unroll
            for (int i = 0; i < CT_GEMM_RM; i++) {
                const ct_gvec av = (ct_gvec)as[p * (TM + 1) + ty + WM * i];
#pragma unroll
                for (int j = 0; j < CT_GEMM_RNV; j++)
                    acc[i][j] = fma(av, bv[j], acc[i][j]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    c += c_off + z * c_stride;
#pragma unroll
    for (int i = 0; i < CT_GEMM_RM; i++) {
        const uint row = m0 + ty + WM * i;
        if (row >= m)
            continue;
        __global float *cr = c + (ulong)row * ldc;
#pragma unroll
        for (int j = 0; j < CT_GEMM_RNV; j++) {
            const uint col = n0 + (tx + WN * j) * CT_GEMM_VN;
            /* beta == 0: C is not read (NaNs there do not survive). The
             * epilogue (a bias per column, then an activation) rounds as a
             * separate bias_act_fwd_f32 pass over the product would. */
            if (col + CT_GEMM_VN <= n && !has_bias && !act) {
                ct_gvec v = alpha * acc[i][j];
                if (beta != 0.0f)
                    v = fma((ct_gvec)beta, ct_gvload(0, cr + col), v);
                ct_gvstore(v, 0, cr + col);
            } else {
                float sums[CT_GEMM_VN];
                ct_gvstore(acc[i][j], 0, sums);
                for (int e = 0; e < CT_GEMM_VN && col + e < n; e++) {
                    float v = alpha * sums[e];
                    v = beta == 0.0f ? v : fma(beta, cr[col + e], v);
                    if (has_bias)
                        v += bias[bias_off + col + e];
                    cr[col + e] = ct_act_f(act, v);
                }
            }
        }
    }
}

/* One kernel per transposition and tile size: gemm_<size>_<ta><tb>.
 * Global size (ceil(n / TN) * WN, ceil(m / TM) * WM, slices); slice z covers
 * k in [z kc, min(k, (z + 1) kc)), kc a multiple of TK.
 * a: op(A) (m, k), lda; b: op(B) (k, n), ldb; c: (slices, m, n) at c_off
 * with slices c_stride apart, ldc */
#define CT_GEMM_KERNEL(NAME, TA, TB, WM, WN)                                                      \
    __kernel __attribute__((reqd_work_group_size(WN, WM, 1))) void NAME(                          \
        __global const float *a, ulong a_off, uint lda, __global const float *b, ulong b_off,     \
        uint ldb, __global float *c, ulong c_off, uint ldc, ulong c_stride, uint m, uint n,       \
        uint k, uint kc, float alpha, float beta, __global const float *bias, ulong bias_off,    \
        int has_bias, int act)                                                                    \
    {                                                                                             \
        __local float as[CT_GEMM_TK * ((WM) * CT_GEMM_RM + 1)];                                   \
        __local float bs[CT_GEMM_TK * ((WN) * CT_GEMM_RN + 1)];                                   \
        ct_gemm_tile(TA, TB, WM, WN, as, bs, a, a_off, lda, b, b_off, ldb, c, c_off, ldc,         \
                     c_stride, m, n, k, kc, alpha, beta, bias, bias_off, has_bias, act);          \
    }

CT_GEMM_KERNEL(gemm_big_nn, 0, 0, CT_GEMM_BIG_WM, CT_GEMM_BIG_WN)
CT_GEMM_KERNEL(gemm_big_nt, 0, 1, CT_GEMM_BIG_WM, CT_GEMM_BIG_WN)
CT_GEMM_KERNEL(gemm_big_tn, 1, 0, CT_GEMM_BIG_WM, CT_GEMM_BIG_WN)
CT_GEMM_KERNEL(gemm_big_tt, 1, 1, CT_GEMM_BIG_WM, CT_GEMM_BIG_WN)
CT_GEMM_KERNEL(gemm_small_nn, 0, 0, CT_GEMM_SMALL_WM, CT_GEMM_SMALL_WN)
CT_GEMM_KERNEL(gemm_small_nt, 0, 1, CT_GEMM_SMALL_WM, CT_GEMM_SMALL_WN)
CT_GEMM_KERNEL(gemm_small_tn, 1, 0, CT_GEMM_SMALL_WM, CT_GEMM_SMALL_WN)
CT_GEMM_KERNEL(gemm_small_tt, 1, 1, CT_GEMM_SMALL_WM, CT_GEMM_SMALL_WN)

/* Split-K's second pass: c = act(alpha * sum over the slices of w + beta c
 * + bias), the slices summed in order (deterministic); the epilogue as in
 * ct_gemm_tile. w: (slices, m, n); c: (m, n) at c_off, ldc; bias: (n).
 * Global size (n, m). */
__kernel void gemm_splitk_sum(__global const float *w, uint slices, __global float *c,
                              ulong c_off, uint ldc, uint m, uint n, float alpha, float beta,
                              __global const float *bias, ulong bias_off, int has_bias, int act)
{
    const uint j = get_global_id(0), i = get_global_id(1);
    if (i >= m || j >= n)
        return;
    const ulong mn = (ulong)m * n;
    __global const float *p = w + (ulong)i * n + j;
    float s = 0.0f;
    for (uint z = 0; z < slices; z++)
        s += p[z * mn];
    __global float *q = c + c_off + (ulong)i * ldc + j;
    float v = beta == 0.0f ? alpha * s : fma(alpha, s, beta * *q);
    if (has_bias)
        v += bias[bias_off + j];
    *q = ct_act_f(act, v);
}
