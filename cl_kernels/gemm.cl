/*
 * gemm.cl - cltrain's own SGEMM for the GPU class (src/ops/gemm_cl.c):
 * row-major C = act(alpha op(A) op(B) + beta C + bias), optionally over k-slices into a
 * workspace that a fixed-order sum kernel (splitk.cl's) then reduces
 * (split-K). The tiles,
 * their parameters and their products per step are gemm_tiles.cl's (compiled
 * in before this file).
 *
 * A's and B's tiles are copied with neighbouring work-items reading
 * neighbouring addresses of the operand's contiguous dimension whichever the
 * transposition. Edges are guarded: zeros are loaded past m, n and the
 * slice's end of k, and stores are masked.
 */

/* A's local tile is as (TK, TM + 1), B's bs (TK, TN + 1). The product of
 * one tile of C over k in [k0, k1) (the work-group's slice z), written to
 * c[c_off + z * c_stride + row * ldc + col]. Work-item (tx, ty) holds rows
 * ty + WM i and the vectors of columns (tx + WN j) VN + [0, VN). */
inline void ct_gemm_tile(const int ta, const int tb, const int WM, const int WN, const int RM,
                         const int RNV, __local float *as, __local float *bs,
                         __global const float *a, ulong a_off, uint lda,
                         __global const float *b, ulong b_off, uint ldb,
                         __global float *c, ulong c_off, uint ldc, ulong c_stride,
                         uint m, uint n, uint k, uint kc, float alpha, float beta,
                         __global const float *bias, ulong bias_off, int has_bias, int act,
                         uint z, int s16)
{
    const int TM = WM * RM, TN = WN * RNV * CT_GEMM_VN, TK = CT_GEMM_TK_MM;
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int lid = ty * WN + tx;
    const int WG = WM * WN;
    const uint m0 = get_group_id(1) * TM, n0 = get_group_id(0) * TN;
    const uint k0 = z * kc;
    const uint k1 = min(k, k0 + kc);
    ct_gvec acc[CT_GEMM_RM_MAX][CT_GEMM_RNV_MAX];
#pragma unroll
    for (int i = 0; i < RM; i++)
#pragma unroll
        for (int j = 0; j < RNV; j++)
            acc[i][j] = (ct_gvec)0.0f;
    const int ha = s16 & 1, hb = s16 & 2, hc = s16 & 4;

    for (uint kt = k0; kt < k1; kt += TK) {
        /* A's tile: element (r, p) = op(A)[m0 + r][kt + p]; work-items walk
         * the operand's contiguous dimension (p for A, r for A^T) */
        for (int idx = lid; idx < TM * TK; idx += WG) {
            const int r = ta ? idx % TM : idx / TK, p = ta ? idx / TM : idx % TK;
            const uint gr = m0 + r, gp = kt + p;
            float v = 0.0f;
            if (gr < m && gp < k1)
                v = ct_gld(a, a_off + (ta ? (ulong)gp * lda + gr : (ulong)gr * lda + gp), ha);
            as[p * (TM + 1) + r] = ct_op16(v);
        }
        /* B's tile: element (p, col) = op(B)[kt + p][n0 + col] */
        for (int idx = lid; idx < TK * TN; idx += WG) {
            const int col = tb ? idx / TK : idx % TN, p = tb ? idx % TK : idx / TN;
            const uint gc = n0 + col, gp = kt + p;
            float v = 0.0f;
            if (gc < n && gp < k1)
                v = ct_gld(b, b_off + (tb ? (ulong)gc * ldb + gp : (ulong)gp * ldb + gc), hb);
            bs[p * (TN + 1) + col] = ct_op16(v);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        ct_gemm_fma_tile(acc, as, bs, TM, TN, WM, WN, RM, RNV, TK, tx, ty, 0);
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    c_off += z * c_stride;
#pragma unroll
    for (int i = 0; i < RM; i++) {
        const uint row = m0 + ty + WM * i;
        if (row >= m)
            continue;
        __global float *cr = c + c_off + (ulong)row * ldc; /* (float C) */
        const ulong ci = c_off + (ulong)row * ldc;
#pragma unroll
        for (int j = 0; j < RNV; j++) {
            const uint col = n0 + (tx + WN * j) * CT_GEMM_VN;
            /* beta == 0: C is not read (NaNs there do not survive). The
             * epilogue (a bias per column, then an activation) rounds as a
             * separate bias_act_fwd_f32 pass over the product would. */
            if (col + CT_GEMM_VN <= n && !has_bias && !act && !hc) {
                ct_gvec v = alpha * acc[i][j];
                if (beta != 0.0f)
                    v = ct_fma((ct_gvec)beta, ct_gvload(0, cr + col), v);
                ct_gvstore(v, 0, cr + col);
            } else {
                float sums[CT_GEMM_VN];
                ct_gvstore(acc[i][j], 0, sums);
                for (int e = 0; e < CT_GEMM_VN && col + e < n; e++) {
                    float v = alpha * sums[e];
                    v = beta == 0.0f ? v : ct_fma(beta, ct_gld(c, ci + col + e, hc), v);
                    if (has_bias)
                        v += bias[bias_off + col + e];
                    ct_gst(c, ci + col + e, ct_act_f(act, v), hc);
                }
            }
        }
    }
}

/* One kernel per transposition and tile size: gemm_<size>_<ta><tb>.
 * Global size (ceil(n / TN) * WN, ceil(m / TM) * WM, groups along z). With
 * zs set, z is a k-slice: slice z covers k in [z kc, min(k, (z + 1) kc)),
 * kc a multiple of TK, written c_stride apart. Otherwise z is a product of
 * a two-level batch (zs = 0, kc = k): z = i1 nb2 + i2 offsets A by i1 as1
 * + i2 as2, B and C likewise (attention's samples and heads in one launch).
 * a: op(A) (m, k), lda; b: op(B) (k, n), ldb; c: (slices, m, n) at c_off
 * with slices c_stride apart, ldc */
#define CT_GEMM_KERNEL(NAME, TA, TB, WM, WN, RM, RNV)                                             \
    __kernel __attribute__((reqd_work_group_size(WN, WM, 1))) void NAME(                          \
        CT_GEMM_PARAMS)                                                                           \
    {                                                                                             \
        __local float as[CT_GEMM_TK_MM * ((WM) * (RM) + 1)];                                      \
        __local float bs[CT_GEMM_TK_MM * ((WN) * (RNV) * CT_GEMM_VN + 1)];                        \
        const uint g = get_group_id(2), i1 = g / nb2, i2 = g - i1 * nb2;                          \
        ct_gemm_tile(TA, TB, WM, WN, RM, RNV, as, bs, a, a_off + i1 * as1 + i2 * as2, lda, b,      \
                     b_off + i1 * bs1 + i2 * bs2, ldb, c, c_off + i1 * cs1 + i2 * cs2, ldc,       \
                     c_stride, m, n, k, kc, alpha, beta, bias, bias_off, has_bias, act,           \
                     zs ? g : 0, s16);                                                            \
    }

/* gemm_<size>_{nn,nt,tn,tt}: one tile size in the four transpositions */
#define CT_GEMM_KERNELS(SIZE, WM, WN, RM, RNV)                                                    \
    CT_GEMM_KERNEL(gemm_##SIZE##_nn, 0, 0, WM, WN, RM, RNV)                                       \
    CT_GEMM_KERNEL(gemm_##SIZE##_nt, 0, 1, WM, WN, RM, RNV)                                       \
    CT_GEMM_KERNEL(gemm_##SIZE##_tn, 1, 0, WM, WN, RM, RNV)                                       \
    CT_GEMM_KERNEL(gemm_##SIZE##_tt, 1, 1, WM, WN, RM, RNV)

CT_GEMM_KERNELS(big, CT_GEMM_BIG_WM, CT_GEMM_BIG_WN, CT_GEMM_RM, CT_GEMM_RNV)
CT_GEMM_KERNELS(small, CT_GEMM_SMALL_WM, CT_GEMM_SMALL_WN, CT_GEMM_RM, CT_GEMM_RNV)
/* huge: 8 x 8 sums per work-item on GPUs, for products large enough to
 * fill the device with 128 x 128 tiles. On CPUs they would be the big ones
 * again, which the host takes instead (src/ops/gemm_cl.c): not built there
 * (a third of the program's compile time on pocl) */
#if !(CT_DEVICE_IS_CPU && !defined(CT_GEMM_GPU_TILES))
CT_GEMM_KERNELS(huge, CT_GEMM_HUGE_WM, CT_GEMM_HUGE_WN, CT_GEMM_HUGE_RM, CT_GEMM_HUGE_RNV)
#endif
