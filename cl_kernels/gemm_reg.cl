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

/* p at four (clamped) indices: four scalar loads, no branch. A runtime
 * that runs work-items as SIMD lanes gathers a float4 load per component
 * anyway; a GPU's neighbouring work-items still read neighbouring
 * addresses. */
inline float4 ct_greg_row(__global const float *p, uint i0, uint i1, uint i2, uint i3)
{
    return (float4)(p[i0], p[i1], p[i2], p[i3]);
}

#define CT_GREG_FMA4(acc, a4, b0, b1, b2, b3)                                                     \
    acc = ct_fma((float4)(a4).x, b0, acc);                                                           \
    acc = ct_fma((float4)(a4).y, b1, acc);                                                           \
    acc = ct_fma((float4)(a4).z, b2, acc);                                                           \
    acc = ct_fma((float4)(a4).w, b3, acc)

inline void ct_greg_tile(const int ta, const int tb, __global const float *a, ulong a_off, uint lda,
                         __global const float *b, ulong b_off, uint ldb, __global float *c, ulong c_off,
                         uint ldc, ulong c_stride, uint m, uint n, uint k, uint kc, float alpha, float beta,
                         __global const float *bias, ulong bias_off, int has_bias, int act, uint z)
{
    const uint r0 = (get_group_id(1) * CT_GREG_WM + get_local_id(1)) * 4;
    const uint c0 = (get_group_id(0) * CT_GREG_WN + get_local_id(0)) * 4;
    if (r0 >= m || c0 >= n)
        return; /* no barrier below */
    const uint k0 = z * kc, k1 = min(k, k0 + kc);
    a += a_off;
    b += b_off;
    /* op(A)'s rows and op(B)'s columns, clamped */
    const uint ra0 = r0, ra1 = min(r0 + 1, m - 1), ra2 = min(r0 + 2, m - 1), ra3 = min(r0 + 3, m - 1);
    const uint cb0 = c0, cb1 = min(c0 + 1, n - 1), cb2 = min(c0 + 2, n - 1), cb3 = min(c0 + 3, n - 1);
    float4 acc0 = 0.0f, acc1 = 0.0f, acc2 = 0.0f, acc3 = 0.0f;
    uint p = k0;
    for (; p + 4 <= k1; p += 4) {
        /* b0..b3: op(B)'s rows p .. p + 3 over columns c0 .. c0 + 3 */
        float4 b0, b1, b2, b3;
        if (!tb) {
            b0 = ct_greg_row(b + (ulong)p * ldb, cb0, cb1, cb2, cb3);
            b1 = ct_greg_row(b + (ulong)(p + 1) * ldb, cb0, cb1, cb2, cb3);
            b2 = ct_greg_row(b + (ulong)(p + 2) * ldb, cb0, cb1, cb2, cb3);
            b3 = ct_greg_row(b + (ulong)(p + 3) * ldb, cb0, cb1, cb2, cb3);
        } else {
            const float4 u0 = vload4(0, b + (ulong)cb0 * ldb + p), u1 = vload4(0, b + (ulong)cb1 * ldb + p);
            const float4 u2 = vload4(0, b + (ulong)cb2 * ldb + p), u3 = vload4(0, b + (ulong)cb3 * ldb + p);
            b0 = (float4)(u0.x, u1.x, u2.x, u3.x);
            b1 = (float4)(u0.y, u1.y, u2.y, u3.y);
            b2 = (float4)(u0.z, u1.z, u2.z, u3.z);
            b3 = (float4)(u0.w, u1.w, u2.w, u3.w);
        }
        /* a0..a3: op(A)'s rows r0 .. r0 + 3 over k p .. p + 3 */
        float4 a0, a1, a2, a3;
        if (!ta) {
            a0 = vload4(0, a + (ulong)ra0 * lda + p);
            a1 = vload4(0, a + (ulong)ra1 * lda + p);
            a2 = vload4(0, a + (ulong)ra2 * lda + p);
            a3 = vload4(0, a + (ulong)ra3 * lda + p);
        } else {
            const float4 t0 = ct_greg_row(a + (ulong)p * lda, ra0, ra1, ra2, ra3);
            const float4 t1 = ct_greg_row(a + (ulong)(p + 1) * lda, ra0, ra1, ra2, ra3);
            const float4 t2 = ct_greg_row(a + (ulong)(p + 2) * lda, ra0, ra1, ra2, ra3);
            const float4 t3 = ct_greg_row(a + (ulong)(p + 3) * lda, ra0, ra1, ra2, ra3);
            a0 = (float4)(t0.x, t1.x, t2.x, t3.x);
            a1 = (float4)(t0.y, t1.y, t2.y, t3.y);
            a2 = (float4)(t0.z, t1.z, t2.z, t3.z);
            a3 = (float4)(t0.w, t1.w, t2.w, t3.w);
        }
        CT_GREG_FMA4(acc0, a0, b0, b1, b2, b3);
        CT_GREG_FMA4(acc1, a1, b0, b1, b2, b3);
        CT_GREG_FMA4(acc2, a2, b0, b1, b2, b3);
        CT_GREG_FMA4(acc3, a3, b0, b1, b2, b3);
    }
    for (; p < k1; p++) {
        const float4 bv = tb ? (float4)(b[(ulong)cb0 * ldb + p], b[(ulong)cb1 * ldb + p], b[(ulong)cb2 * ldb + p],
                                        b[(ulong)cb3 * ldb + p])
                             : ct_greg_row(b + (ulong)p * ldb, cb0, cb1, cb2, cb3);
        const float4 av = ta ? ct_greg_row(a + (ulong)p * lda, ra0, ra1, ra2, ra3)
                             : (float4)(a[(ulong)ra0 * lda + p], a[(ulong)ra1 * lda + p], a[(ulong)ra2 * lda + p],
                                        a[(ulong)ra3 * lda + p]);
        acc0 = ct_fma((float4)av.x, bv, acc0);
        acc1 = ct_fma((float4)av.y, bv, acc1);
        acc2 = ct_fma((float4)av.z, bv, acc2);
        acc3 = ct_fma((float4)av.w, bv, acc3);
    }
    c += c_off + z * c_stride;
    float4 accs[4] = { acc0, acc1, acc2, acc3 };
    for (int i = 0; i < 4 && r0 + i < m; i++) {
        __global float *cr = c + (ulong)(r0 + i) * ldc;
        /* beta == 0: C is not read; the epilogue as in gemm.cl's ct_gemm_tile */
        if (c0 + 4 <= n && !has_bias && !act) {
            float4 v = alpha * accs[i];
            if (beta != 0.0f)
                v = ct_fma((float4)beta, vload4(0, cr + c0), v);
            vstore4(v, 0, cr + c0);
        } else {
            float sums[4];
            vstore4(accs[i], 0, sums);
            for (int e = 0; e < 4 && c0 + e < n; e++) {
                float v = alpha * sums[e];
                v = beta == 0.0f ? v : ct_fma(beta, cr[c0 + e], v);
                if (has_bias)
                    v += bias[bias_off + c0 + e];
                cr[c0 + e] = ct_act_f(act, v);
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
        ct_greg_tile(TA, TB, a, a_off + i1 * as1 + i2 * as2, lda, b, b_off + i1 * bs1 + i2 * bs2, \
                     ldb, c, c_off + i1 * cs1 + i2 * cs2, ldc, c_stride, m, n, k, kc, alpha, beta,  \
                     bias, bias_off, has_bias, act, zs ? g : 0);                                  \
    }

CT_GREG_KERNEL(gemm_reg_nn, 0, 0)
CT_GREG_KERNEL(gemm_reg_nt, 0, 1)
CT_GREG_KERNEL(gemm_reg_tn, 1, 0)
CT_GREG_KERNEL(gemm_reg_tt, 1, 1)
