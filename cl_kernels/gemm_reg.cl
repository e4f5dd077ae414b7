/*
 * gemm_reg.cl - cltrain's own SGEMM in register tiles without local memory
 * (src/ops/gemm_cl.c): the same products, arguments, split-K and batches as
 * cl_kernels/gemm.cl's tiled kernels, for runtimes where those are slow.
 */

/*
 * gemm_reg_<ta><tb>: for runtimes that
 * run a work-group's work-items as SIMD lanes with barriers as coroutine
 * switches and local memory as gathers (Mesa's llvmpipe), where the tiles
 * above ran at 0.07-0.2x CLBlast. Each work-item computes 4 rows x 4
 * columns of C straight from global memory, four k at a time: 4 float4
 * loads of op(A) and 4 of op(B) (along each operand's contiguous
 * dimension, whichever the transposition) feed 64 multiply-adds. A
 * work-group of CT_GREG_WN x CT_GREG_WM work-items covers 16 rows x 32
 * columns; neighbouring work-items take neighbouring column blocks. Rows
 * and columns past m and n read clamped indices and are not stored; k's
 * last k mod 4 values run one at a time. Each sum runs over k in ascending
 * order (deterministic); split-K and two-level batches as above.
 */
#define CT_GREG_WM 4
#define CT_GREG_WN 8

/* p at base + four (clamped) indices: four scalar loads, no branch. A
 * runtime that runs work-items as SIMD lanes gathers a float4 load per
 * component anyway; a GPU's neighbouring work-items still read
 * neighbouring addresses. */
inline float4 ct_greg_row(__global const float *p, uint base, uint i0, uint i1, uint i2, uint i3, int h)
{
    return (float4)(ct_gld(p, base + i0, h), ct_gld(p, base + i1, h), ct_gld(p, base + i2, h),
                    ct_gld(p, base + i3, h));
}

#define CT_GREG_FMA4(acc, a4, b0, b1, b2, b3)                                                     \
    acc = ct_fma((float4)(a4).x, b0, acc);                                                           \
    acc = ct_fma((float4)(a4).y, b1, acc);                                                           \
    acc = ct_fma((float4)(a4).z, b2, acc);                                                           \
    acc = ct_fma((float4)(a4).w, b3, acc)

/* Indices are 32-bit, the offsets folded into them (the host gives these
 * kernels only buffers below 2^32 floats: reg_fits in src/ops/gemm_cl.c): on
 * llvmpipe a pointer moved by a 64-bit offset, or a 64-bit index, made each
 * lane's load several times dearer (2.6x on the lane convolutions). */
inline void ct_greg_tile(const int ta, const int tb, __global const float *a, uint ao, uint lda,
                         __global const float *b, uint bo, uint ldb, __global float *c, ulong c_off,
                         uint ldc, ulong c_stride, uint m, uint n, uint k, uint kc, float alpha, float beta,
                         __global const float *bias, ulong bias_off, int has_bias, int act, uint z, int s16)
{
    const int ha = s16 & 1, hb = s16 & 2, hc = s16 & 4;
    const uint r0 = (get_group_id(1) * CT_GREG_WM + get_local_id(1)) * 4;
    const uint c0 = (get_group_id(0) * CT_GREG_WN + get_local_id(0)) * 4;
    if (r0 >= m || c0 >= n)
        return; /* no barrier below */
    const uint k0 = z * kc, k1 = min(k, k0 + kc);
    /* op(A)'s rows and op(B)'s columns, clamped */
    const uint ra0 = r0, ra1 = min(r0 + 1, m - 1), ra2 = min(r0 + 2, m - 1), ra3 = min(r0 + 3, m - 1);
    const uint cb0 = c0, cb1 = min(c0 + 1, n - 1), cb2 = min(c0 + 2, n - 1), cb3 = min(c0 + 3, n - 1);
    float4 acc0 = 0.0f, acc1 = 0.0f, acc2 = 0.0f, acc3 = 0.0f;
    uint p = k0;
    for (; p + 4 <= k1; p += 4) {
        /* b0..b3: op(B)'s rows p .. p + 3 over columns c0 .. c0 + 3 */
        float4 b0, b1, b2, b3;
        if (!tb) {
            b0 = ct_greg_row(b, bo + p * ldb, cb0, cb1, cb2, cb3, hb);
            b1 = ct_greg_row(b, bo + (p + 1) * ldb, cb0, cb1, cb2, cb3, hb);
            b2 = ct_greg_row(b, bo + (p + 2) * ldb, cb0, cb1, cb2, cb3, hb);
            b3 = ct_greg_row(b, bo + (p + 3) * ldb, cb0, cb1, cb2, cb3, hb);
        } else {
            const float4 u0 = ct_gld4(b, bo + cb0 * ldb + p, hb), u1 = ct_gld4(b, bo + cb1 * ldb + p, hb);
            const float4 u2 = ct_gld4(b, bo + cb2 * ldb + p, hb), u3 = ct_gld4(b, bo + cb3 * ldb + p, hb);
            b0 = (float4)(u0.x, u1.x, u2.x, u3.x);
            b1 = (float4)(u0.y, u1.y, u2.y, u3.y);
            b2 = (float4)(u0.z, u1.z, u2.z, u3.z);
            b3 = (float4)(u0.w, u1.w, u2.w, u3.w);
        }
        /* a0..a3: op(A)'s rows r0 .. r0 + 3 over k p .. p + 3 */
        float4 a0, a1, a2, a3;
        if (!ta) {
            a0 = ct_gld4(a, ao + ra0 * lda + p, ha);
            a1 = ct_gld4(a, ao + ra1 * lda + p, ha);
            a2 = ct_gld4(a, ao + ra2 * lda + p, ha);
            a3 = ct_gld4(a, ao + ra3 * lda + p, ha);
        } else {
            const float4 t0 = ct_greg_row(a, ao + p * lda, ra0, ra1, ra2, ra3, ha);
            const float4 t1 = ct_greg_row(a, ao + (p + 1) * lda, ra0, ra1, ra2, ra3, ha);
            const float4 t2 = ct_greg_row(a, ao + (p + 2) * lda, ra0, ra1, ra2, ra3, ha);
            const float4 t3 = ct_greg_row(a, ao + (p + 3) * lda, ra0, ra1, ra2, ra3, ha);
            a0 = (float4)(t0.x, t1.x, t2.x, t3.x);
            a1 = (float4)(t0.y, t1.y, t2.y, t3.y);
            a2 = (float4)(t0.z, t1.z, t2.z, t3.z);
            a3 = (float4)(t0.w, t1.w, t2.w, t3.w);
        }
#if CT_OPS16
        a0 = ct_op16_4(a0), a1 = ct_op16_4(a1), a2 = ct_op16_4(a2), a3 = ct_op16_4(a3);
        b0 = ct_op16_4(b0), b1 = ct_op16_4(b1), b2 = ct_op16_4(b2), b3 = ct_op16_4(b3);
#endif
        CT_GREG_FMA4(acc0, a0, b0, b1, b2, b3);
        CT_GREG_FMA4(acc1, a1, b0, b1, b2, b3);
        CT_GREG_FMA4(acc2, a2, b0, b1, b2, b3);
        CT_GREG_FMA4(acc3, a3, b0, b1, b2, b3);
    }
    for (; p < k1; p++) {
        const float4 bv = ct_op16_4(tb ? ct_greg_row(b, bo + p, cb0 * ldb, cb1 * ldb, cb2 * ldb, cb3 * ldb, hb)
                                       : ct_greg_row(b, bo + p * ldb, cb0, cb1, cb2, cb3, hb));
        const float4 av = ct_op16_4(ta ? ct_greg_row(a, ao + p * lda, ra0, ra1, ra2, ra3, ha)
                                       : ct_greg_row(a, ao + p, ra0 * lda, ra1 * lda, ra2 * lda, ra3 * lda, ha));
        acc0 = ct_fma((float4)av.x, bv, acc0);
        acc1 = ct_fma((float4)av.y, bv, acc1);
        acc2 = ct_fma((float4)av.z, bv, acc2);
        acc3 = ct_fma((float4)av.w, bv, acc3);
    }
    c_off += z * c_stride;
    float4 accs[4] = { acc0, acc1, acc2, acc3 };
    for (int i = 0; i < 4 && r0 + i < m; i++) {
        const ulong ci = c_off + (ulong)(r0 + i) * ldc;
        __global float *cr = c + ci; /* (float C) */
        /* beta == 0: C is not read; the epilogue as in gemm.cl's ct_gemm_tile */
        if (c0 + 4 <= n && !has_bias && !act && !hc) {
            float4 v = alpha * accs[i];
            if (beta != 0.0f)
                v = ct_fma((float4)beta, vload4(0, cr + c0), v);
            vstore4(v, 0, cr + c0);
        } else {
            float sums[4];
            vstore4(accs[i], 0, sums);
            for (int e = 0; e < 4 && c0 + e < n; e++) {
                float v = alpha * sums[e];
                v = beta == 0.0f ? v : ct_fma(beta, ct_gld(c, ci + c0 + e, hc), v);
                if (has_bias)
                    v += bias[bias_off + c0 + e];
                ct_gst(c, ci + c0 + e, ct_act_f(act, v), hc);
            }
        }
    }
}

/* Arguments, global size and z as gemm.cl's CT_GEMM_KERNEL, with tiles of
 * 16 x 32 */
#define CT_GREG_KERNEL(NAME, TA, TB)                                                              \
    __kernel __attribute__((reqd_work_group_size(CT_GREG_WN, CT_GREG_WM, 1))) void NAME(          \
        CT_GEMM_PARAMS)                                                                           \
    {                                                                                             \
        const uint g = get_group_id(2), i1 = g / nb2, i2 = g - i1 * nb2;                          \
        ct_greg_tile(TA, TB, a, (uint)(a_off + i1 * as1 + i2 * as2), lda, b,                       \
                     (uint)(b_off + i1 * bs1 + i2 * bs2),                                         \
                     ldb, c, c_off + i1 * cs1 + i2 * cs2, ldc, c_stride, m, n, k, kc, alpha, beta,  \
                     bias, bias_off, has_bias, act, zs ? g : 0, s16);                             \
    }

CT_GREG_KERNEL(gemm_reg_nn, 0, 0)
CT_GREG_KERNEL(gemm_reg_nt, 0, 1)
CT_GREG_KERNEL(gemm_reg_tn, 1, 0)
CT_GREG_KERNEL(gemm_reg_tt, 1, 1)

/*
 * gemm_vec_<ta><tb>: for CPU runtimes that run a work-item's vector code as
 * it is (pocl), the same products without local memory or barriers, one
 * work-item per work-group, each computing a block of C in AVX-512-wide
 * float16 sums kept in registers, straight from global memory (the cache):
 *   NN: 8 rows x 32 columns; per k, two float16 loads of B's row and 8
 *       broadcasts of A's column feed 16 multiply-adds;
 *   NT: 4 rows x 4 columns with the sums along k (16 k per step): 4 + 4
 *       float16 loads of A's and B's rows feed 16 multiply-adds; the lanes
 *       are added pairwise at the end, then the k mod 16 tail in order;
 *   TN, TT: 32 rows x 8 columns; per k, two float16 loads of A^T's row
 *       and 8 broadcasts of B's feed 16 multiply-adds.
 * pocl's tiled kernels (gemm.cl) spend most of their time copying tiles
 * into local memory and saving each work-item's sums at every barrier;
 * these ran 4-8x their speed on the zoo's products (2 Zen 4 cores:
 * docs/BENCHMARKS_GPU.md). Rows and columns past m and n read clamped
 * indices and are not stored; edge blocks take a clamped gather for the
 * vector loads. Each sum runs over the slice's k in ascending order (NT:
 * in 16 interleaved lanes), so results are deterministic; split-K and
 * two-level batches as gemm.cl's kernels.
 */

/* p[at + j0 .. at + j0 + 16) with the indices j clamped below lim; h: in
 * 16 bits (ct_gld) */
inline float16 ct_gvec_load(__global const float *p, ulong at, uint j0, uint lim, int h)
{
    if (j0 + 16 <= lim)
        return ct_gld16(p, at + j0, h);
    float t[16];
    for (int e = 0; e < 16; e++)
        t[e] = ct_gld(p, at + min(j0 + e, lim - 1), h);
    return vload16(0, t);
}

/* The epilogue's arguments: alpha, beta, the bias, the activation, and
 * whether C is in 16 bits */
typedef struct ct_gvec_epi {
    float alpha, beta;
    __global const float *bias;
    ulong bias_off;
    int has_bias, act, hc;
} ct_gvec_epi;

/* C[ci + col] from the sum v: alpha v (+ beta C) (+ bias), the activation;
 * the rounding of gemm.cl's epilogue */
inline void ct_gvec_put(__global float *c, ulong ci, uint col, float v, const ct_gvec_epi *e)
{
    v = e->alpha * v;
    v = e->beta == 0.0f ? v : ct_fma(e->beta, ct_gld(c, ci + col, e->hc), v);
    if (e->has_bias)
        v += e->bias[e->bias_off + col];
    ct_gst(c, ci + col, ct_act_f(e->act, v), e->hc);
}

/* 16 sums s of columns col .. col + 15 of the row at ci, those below n */
inline void ct_gvec_put16(__global float *c, ulong ci, uint col, uint n, float16 s, const ct_gvec_epi *e)
{
    if (col + 16 <= n && !e->has_bias && !e->act && !e->hc) {
        float16 v = e->alpha * s;
        if (e->beta != 0.0f)
            v = ct_fma((float16)e->beta, vload16(0, c + ci + col), v);
        vstore16(v, 0, c + ci + col);
        return;
    }
    float t[16];
    vstore16(s, 0, t);
    for (int i = 0; i < 16 && col + i < n; i++)
        ct_gvec_put(c, ci, col + i, t[i], e);
}

/* one k of NN: B's row p (two float16, LOAD) into the 8 rows' sums */
#define CT_GVEC_NN_STEP(LOAD)                                                                     \
    {                                                                                             \
        const ulong bp = bo + (ulong)p * ldb;                                                     \
        const float16 b0 = ct_op16_16(LOAD(b, bp, c0, n, hb));                                    \
        const float16 b1 = ct_op16_16(LOAD(b, bp, c0 + 16, n, hb));                               \
        _Pragma("unroll") for (int i = 0; i < 8; i++)                                             \
        {                                                                                         \
            const float16 av = (float16)ct_op16(ct_gld(a, ar[i] + p, ha));                        \
            acc[i][0] = ct_fma(av, b0, acc[i][0]);                                                \
            acc[i][1] = ct_fma(av, b1, acc[i][1]);                                                \
        }                                                                                         \
    }
#define CT_GVEC_VLOAD(p, at, j0, lim, h) ct_gld16(p, (at) + (j0), h)

/* The three blocks' arguments: A at ao, B at bo, C at co (offsets in each
 * operand's elements), k in [k0, k1), s16 as CT_GEMM_PARAMS' */
#define CT_GVEC_ARGS                                                                              \
    __global const float *a, ulong ao, uint lda, __global const float *b, ulong bo, uint ldb,     \
        __global float *c, ulong co, uint ldc, uint m, uint n, uint k0, uint k1, int s16,         \
        const ct_gvec_epi *e

inline void ct_gvec_nn(CT_GVEC_ARGS)
{
    const int ha = s16 & 1, hb = s16 & 2;
    const uint c0 = get_global_id(0) * 32, r0 = get_global_id(1) * 8;
    ulong ar[8];
    float16 acc[8][2];
#pragma unroll
    for (int i = 0; i < 8; i++) {
        ar[i] = ao + (ulong)min(r0 + i, m - 1) * lda;
        acc[i][0] = acc[i][1] = (float16)0.0f;
    }
    if (c0 + 32 <= n) {
        for (uint p = k0; p < k1; p++)
            CT_GVEC_NN_STEP(CT_GVEC_VLOAD)
    } else {
        for (uint p = k0; p < k1; p++)
            CT_GVEC_NN_STEP(ct_gvec_load)
    }
    for (int i = 0; i < 8 && r0 + i < m; i++) {
        const ulong ci = co + (ulong)(r0 + i) * ldc;
        ct_gvec_put16(c, ci, c0, n, acc[i][0], e);
        if (c0 + 16 < n)
            ct_gvec_put16(c, ci, c0 + 16, n, acc[i][1], e);
    }
}

/* the lanes of v added pairwise (lane e + lane e + 8, then + 4, + 2, + 1)
 * through private memory: Oclgrind takes .lo / .hi of a float16 for
 * uninitialized values */
inline float ct_gvec_hsum(float16 v)
{
    float t[16];
    vstore16(v, 0, t);
    for (int w = 8; w > 0; w >>= 1)
        for (int i = 0; i < w; i++)
            t[i] += t[i + w];
    return t[0];
}

inline void ct_gvec_nt(CT_GVEC_ARGS)
{
    const int ha = s16 & 1, hb = s16 & 2;
    const uint c0 = get_global_id(0) * 4, r0 = get_global_id(1) * 4;
    ulong ar[4], bc[4];
    float16 acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        ar[i] = ao + (ulong)min(r0 + i, m - 1) * lda;
        bc[i] = bo + (ulong)min(c0 + i, n - 1) * ldb;
#pragma unroll
        for (int j = 0; j < 4; j++)
            acc[i][j] = (float16)0.0f;
    }
    uint p = k0;
    for (; p + 16 <= k1; p += 16) {
        float16 av[4], bv[4];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            av[i] = ct_op16_16(ct_gld16(a, ar[i] + p, ha));
            bv[i] = ct_op16_16(ct_gld16(b, bc[i] + p, hb));
        }
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < 4; j++)
                acc[i][j] = ct_fma(av[i], bv[j], acc[i][j]);
    }
    float s[4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
            s[i][j] = ct_gvec_hsum(acc[i][j]);
    for (; p < k1; p++)
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < 4; j++)
                s[i][j] = ct_fma(ct_op16(ct_gld(a, ar[i] + p, ha)), ct_op16(ct_gld(b, bc[j] + p, hb)), s[i][j]);
    for (int i = 0; i < 4 && r0 + i < m; i++)
        for (int j = 0; j < 4 && c0 + j < n; j++)
            ct_gvec_put(c, co + (ulong)(r0 + i) * ldc, c0 + j, s[i][j], e);
}

/* one k of TN / TT: A^T's row p (two float16, LOAD) times B's 8 values */
#define CT_GVEC_TX_STEP(LOAD, TB)                                                                 \
    {                                                                                             \
        const ulong ap = ao + (ulong)p * lda;                                                     \
        const float16 a0 = ct_op16_16(LOAD(a, ap, r0, m, ha));                                    \
        const float16 a1 = ct_op16_16(LOAD(a, ap, r0 + 16, m, ha));                               \
        _Pragma("unroll") for (int j = 0; j < 8; j++)                                             \
        {                                                                                         \
            const float16 bv =                                                                    \
                (float16)ct_op16(ct_gld(b, TB ? bc[j] + p : bo + (ulong)p * ldb + cj[j], hb));    \
            acc[j][0] = ct_fma(a0, bv, acc[j][0]);                                                \
            acc[j][1] = ct_fma(a1, bv, acc[j][1]);                                                \
        }                                                                                         \
    }

inline void ct_gvec_tx(const int tb, CT_GVEC_ARGS)
{
    const int ha = s16 & 1, hb = s16 & 2;
    const uint c0 = get_global_id(0) * 8, r0 = get_global_id(1) * 32;
    ulong bc[8];
    uint cj[8];
    float16 acc[8][2];
#pragma unroll
    for (int j = 0; j < 8; j++) {
        cj[j] = min(c0 + j, n - 1);
        bc[j] = bo + (ulong)cj[j] * ldb;
        acc[j][0] = acc[j][1] = (float16)0.0f;
    }
    if (r0 + 32 <= m) {
        for (uint p = k0; p < k1; p++)
            CT_GVEC_TX_STEP(CT_GVEC_VLOAD, tb)
    } else {
        for (uint p = k0; p < k1; p++)
            CT_GVEC_TX_STEP(ct_gvec_load, tb)
    }
    /* the block transposed through private memory: a row's 8 columns in
     * one store (with k of tens, scalar stores down the columns were most
     * of the kernel) */
    float t[8][32];
#pragma unroll
    for (int j = 0; j < 8; j++) {
        vstore16(acc[j][0], 0, t[j]);
        vstore16(acc[j][1], 0, t[j] + 16);
    }
    for (int i = 0; i < 32 && r0 + i < m; i++) {
        const ulong ci = co + (ulong)(r0 + i) * ldc;
        if (c0 + 8 <= n && !e->has_bias && !e->act && !e->hc) {
            float8 v = e->alpha * (float8)(t[0][i], t[1][i], t[2][i], t[3][i], t[4][i], t[5][i], t[6][i],
                                           t[7][i]);
            if (e->beta != 0.0f)
                v = ct_fma((float8)e->beta, vload8(0, c + ci + c0), v);
            vstore8(v, 0, c + ci + c0);
        } else {
            for (int j = 0; j < 8 && c0 + j < n; j++)
                ct_gvec_put(c, ci, c0 + j, t[j][i], e);
        }
    }
}

/* Arguments and z as gemm.cl's CT_GEMM_KERNEL; global size (ceil(n / TN),
 * ceil(m / TM), groups along z) with the tiles above, work-groups of one */
#define CT_GVEC_KERNEL(NAME, TA, TB)                                                              \
    __kernel __attribute__((reqd_work_group_size(1, 1, 1))) void NAME(CT_GEMM_PARAMS)             \
    {                                                                                             \
        const uint g = get_group_id(2), i1 = g / nb2, i2 = g - i1 * nb2, z = zs ? g : 0;          \
        const uint k0 = z * kc, k1 = min(k, k0 + kc);                                             \
        const ulong ao = a_off + i1 * as1 + i2 * as2, bo = b_off + i1 * bs1 + i2 * bs2;           \
        const ulong co = c_off + i1 * cs1 + i2 * cs2 + z * c_stride;                              \
        const ct_gvec_epi e = { alpha, beta, bias, bias_off, has_bias, act, s16 & 4 };            \
        if (TA)                                                                                   \
            ct_gvec_tx(TB, a, ao, lda, b, bo, ldb, c, co, ldc, m, n, k0, k1, s16, &e);            \
        else if (TB)                                                                              \
            ct_gvec_nt(a, ao, lda, b, bo, ldb, c, co, ldc, m, n, k0, k1, s16, &e);                \
        else                                                                                      \
            ct_gvec_nn(a, ao, lda, b, bo, ldb, c, co, ldc, m, n, k0, k1, s16, &e);                \
    }

CT_GVEC_KERNEL(gemm_vec_nn, 0, 0)
CT_GVEC_KERNEL(gemm_vec_nt, 0, 1)
CT_GVEC_KERNEL(gemm_vec_tn, 1, 0)
CT_GVEC_KERNEL(gemm_vec_tt, 1, 1)
