/*
 * gemm_tiles.cl - what cltrain's own tiled products share: the SGEMM
 * (gemm.cl) and the implicit-GEMM convolution (conv_igemm.cl). Not a
 * program of its own: src/cl/program.c compiles it into those two, after
 * common.cl.
 *
 * A work-group computes a tile of C on WM x WN work-items, each owning RM
 * rows (ty + WM i) by RNV vectors of VN columns ((tx + WN j) VN + [0, VN)):
 * neighbouring work-items (tx) touch neighbouring vectors of C and of B's
 * local tile, so global stores and local reads are coalesced on GPUs, and
 * A's values are broadcasts. Per step of TK along k, the work-group copies
 * A's and B's tiles into local memory (k-major, rows padded by one float so
 * the transposing copies write with an odd stride).
 *
 * On pocl (CPU devices), which runs a work-group as loops over its
 * work-items, the copies are scalar loops it vectorizes across work-items,
 * and the products are each work-item's own AVX-512-wide vector code.
 *
 * The tile sizes are compile-time parameters (CT_GEMM_*, defaults per
 * device kind below; the host mirrors them in src/ops/gemm_cl.h): "big"
 * tiles, "small" ones of 16 rows on at most 32 work-items (products of
 * few rows, and devices such as Mesa's llvmpipe that allow no more), the
 * convolution's "narrow" ones, and on GPUs the SGEMM's "huge" ones of 8 x 8
 * sums per work-item (128 x 128 on 256) for products that fill the device
 * with them.
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
#define CT_GEMM_DEF_NARROW_WM 2
#define CT_GEMM_DEF_NARROW_WN 1
#define CT_GEMM_DEF_HUGE_RM 8 /* CPUs: the big tiles again (the host never picks them there) */
#define CT_GEMM_DEF_HUGE_RNV 2
#define CT_GEMM_DEF_HUGE_WM 8
#define CT_GEMM_DEF_HUGE_WN 4
#define CT_GEMM_DEF_TK_MM 16
#else
#define CT_GEMM_DEF_VN 4
#define CT_GEMM_DEF_RM 4
#define CT_GEMM_DEF_RNV 1
#define CT_GEMM_DEF_BIG_WM 16
#define CT_GEMM_DEF_BIG_WN 16
#define CT_GEMM_DEF_SMALL_WM 4
#define CT_GEMM_DEF_SMALL_WN 8
#define CT_GEMM_DEF_NARROW_WM 8
#define CT_GEMM_DEF_NARROW_WN 4
#define CT_GEMM_DEF_HUGE_RM 8
#define CT_GEMM_DEF_HUGE_RNV 2
#define CT_GEMM_DEF_HUGE_WM 16
#define CT_GEMM_DEF_HUGE_WN 16
#define CT_GEMM_DEF_TK_MM 32 /* the SGEMM's depth per local step; the convolution's is CT_GEMM_TK */
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
#ifndef CT_GEMM_TK_MM
#define CT_GEMM_TK_MM CT_GEMM_DEF_TK_MM
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
#ifndef CT_GEMM_NARROW_WM
#define CT_GEMM_NARROW_WM CT_GEMM_DEF_NARROW_WM
#endif
#ifndef CT_GEMM_NARROW_WN
#define CT_GEMM_NARROW_WN CT_GEMM_DEF_NARROW_WN
#endif
#ifndef CT_GEMM_HUGE_RM
#define CT_GEMM_HUGE_RM CT_GEMM_DEF_HUGE_RM
#endif
#ifndef CT_GEMM_HUGE_RNV
#define CT_GEMM_HUGE_RNV CT_GEMM_DEF_HUGE_RNV
#endif
#ifndef CT_GEMM_HUGE_WM
#define CT_GEMM_HUGE_WM CT_GEMM_DEF_HUGE_WM
#endif
#ifndef CT_GEMM_HUGE_WN
#define CT_GEMM_HUGE_WN CT_GEMM_DEF_HUGE_WN
#endif
/* the sums' array holds the larger set; a kernel of the smaller one leaves
 * the rest unused (constant indices after unrolling: no registers) */
#if CT_GEMM_HUGE_RM > CT_GEMM_RM
#define CT_GEMM_RM_MAX CT_GEMM_HUGE_RM
#else
#define CT_GEMM_RM_MAX CT_GEMM_RM
#endif
#if CT_GEMM_HUGE_RNV > CT_GEMM_RNV
#define CT_GEMM_RNV_MAX CT_GEMM_HUGE_RNV
#else
#define CT_GEMM_RNV_MAX CT_GEMM_RNV
#endif

#define CT_GEMM_CAT2(a, b) a##b
#define CT_GEMM_CAT(a, b) CT_GEMM_CAT2(a, b)
#define ct_gvec CT_GEMM_CAT(float, CT_GEMM_VN)
#define ct_gvload CT_GEMM_CAT(vload, CT_GEMM_VN)
#define ct_gvstore CT_GEMM_CAT(vstore, CT_GEMM_VN)
#define ct_op16_gvec CT_GEMM_CAT(ct_op16_, CT_GEMM_VN)

/* The products of one step of TK along k: each work-item's RM rows (ty +
 * WM i) by RNV vectors of columns ((tx + WN j) VN) of the local tiles as
 * (TK, TM + 1) and bs (TK, TN + 1) added into its sums acc; rnd: the tiles
 * hold float32 operands that 16-bit products round here, as they are read
 * (the convolution's tiles, loaded in many forms; the SGEMM's are rounded
 * as they are stored) */
inline void ct_gemm_fma_tile(ct_gvec acc[CT_GEMM_RM_MAX][CT_GEMM_RNV_MAX], __local const float *as,
                             __local const float *bs, const int TM, const int TN, const int WM,
                             const int WN, const int RM, const int RNV, const int TK, const int tx,
                             const int ty, const int rnd)
{
#pragma unroll
    for (int p = 0; p < TK; p++) {
        ct_gvec bv[CT_GEMM_RNV_MAX];
#pragma unroll
        for (int j = 0; j < RNV; j++) {
            bv[j] = ct_gvload(0, bs + p * (TN + 1) + (tx + WN * j) * CT_GEMM_VN);
            if (rnd)
                bv[j] = ct_op16_gvec(bv[j]);
        }
#pragma unroll
        for (int i = 0; i < RM; i++) {
            const float a = as[p * (TM + 1) + ty + WM * i];
            const ct_gvec av = (ct_gvec)(rnd ? ct_op16(a) : a);
#pragma unroll
            for (int j = 0; j < RNV; j++)
                acc[i][j] = ct_fma(av, bv[j], acc[i][j]);
        }
    }
}
