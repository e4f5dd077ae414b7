/*
 * conv_igemm.cl - the implicit-GEMM convolution (src/ops/conv_igemm.c):
 * conv2d's three products on the SGEMM's tiles (gemm_tiles.cl, compiled in
 * before this file), their operands read in place from the NCHW
 * tensors, so no column matrix is written or read and the whole batch is
 * one launch per product. Geometry g: s0 n, s1 c_in, s2 h, s3 w, s4 c_out,
 * s5 kh, s6 kw, s7 stride_h, s8 stride_w, s9 pad_h, sa pad_w, sb dil_h,
 * sc dil_w, sd oh, se ow. K = c_in kh kw (taps (ci, ky, kx)), P = oh ow.
 *   forward  y  (c_out, n P)     = w (c_out, K) . cols (K, n P)
 *   input    dx (c_in, n h w)    = w' (c_in, c_out kh kw) . dy' (c_out kh kw, n h w)
 *            (dy' gathers, per tap, the dy pixel each input pixel fed, 0
 *            where the stride skips it: col2im's adjoint as a product)
 *   weights  dw (c_out, K)      += dy (c_out, n P) . cols^T (n P, K), split-K
 * C's columns (forward, input) land in NCHW. Index decompositions, which
 * would cost divisions per element, are made once per tile for C's columns
 * (a table of TN int4) and once per step for the TK indices of the step
 * (a double-buffered table of TK int4, the next step's filled while this
 * one loads), so the loads are adds and bounds tests.
 *
 * Activations (x, y, dy, dx) are ct_at (common.cl): 16 bits in the
 * program's CT_ACT16 variants (conv_igemm_sbf16, _sfp16, which also round
 * the weights as CT_OPS16 does), where the CPU devices' vector loads below
 * are left out; the weights, their gradient and split-K's slices are float.
 */
#if CT_DEVICE_IS_CPU && !defined(CT_GEMM_GPU_TILES) && !CT_ACT16
#define CT_CONV_VEC 1
#else
#define CT_CONV_VEC 0
#endif
#define CT_CONV_FWD 0
#define CT_CONV_DX 1
#define CT_CONV_DW 2
#define CT_CONV_FAR (1 << 29) /* a coordinate offset no bounds test passes */

/* An output pixel j = (i, oy, ox) of n P: (x offset of its window's corner,
 * that corner's row, its column, y offset); past `end`: no pixel. */
inline int4 ct_conv_pix(int j, int end, int16 g)
{
    if (j >= end)
        return (int4)(0, -CT_CONV_FAR, -CT_CONV_FAR, -1);
    const int P = g.sd * g.se, i = j / P, q = j - i * P, oy = q / g.se, ox = q - oy * g.se;
    const int iy0 = oy * g.s7 - g.s9, ix0 = ox * g.s8 - g.sa;
    return (int4)(i * g.s1 * g.s2 * g.s3 + iy0 * g.s3 + ix0, iy0, ix0, i * g.s4 * P + q);
}

/* A tap t = (ci, ky, kx) of K: (x offset, row offset, column offset, -). */
inline int4 ct_conv_tap(int t, int end, int16 g)
{
    if (t >= end)
        return (int4)(0, -CT_CONV_FAR, -CT_CONV_FAR, -1);
    const int khw = g.s5 * g.s6, ci = t / khw, r = t - ci * khw, ky = r / g.s6, kx = r - ky * g.s6;
    return (int4)(ci * g.s2 * g.s3 + ky * g.sb * g.s3 + kx * g.sc, ky * g.sb, kx * g.sc, 0);
}

/* x at a pixel's window and a tap, 0 in the padding */
inline float ct_conv_x(__global const ct_at *x, int4 pix, int4 tap, int16 g)
{
    const int iy = pix.y + tap.y, ix = pix.z + tap.z;
    return iy >= 0 && iy < g.s2 && ix >= 0 && ix < g.s3 ? ct_ld(x, pix.x + tap.x) : 0.0f;
}

/* An input pixel j = (i, iy, ix) of n h w: (dy offset of image i, iy + pad_h,
 * ix + pad_w, dx offset). */
inline int4 ct_conv_dxpix(int j, int end, int16 g)
{
    if (j >= end)
        return (int4)(0, -CT_CONV_FAR, -CT_CONV_FAR, -1);
    const int hw = g.s2 * g.s3, i = j / hw, r = j - i * hw, iy = r / g.s3, ix = r - iy * g.s3;
    return (int4)(i * g.s4 * g.sd * g.se, iy + g.s9, ix + g.sa, i * g.s1 * hw + r);
}

/* A tap u = (co, ky, kx) of c_out kh kw: (dy offset of channel co, ky dil_h,
 * kx dil_w, w offset less ci kh kw). */
inline int4 ct_conv_dxtap(int u, int end, int16 g)
{
    if (u >= end)
        return (int4)(0, CT_CONV_FAR, CT_CONV_FAR, -1);
    const int khw = g.s5 * g.s6, co = u / khw, r = u - co * khw, ky = r / g.s6, kx = r - ky * g.s6;
    return (int4)(co * g.sd * g.se, ky * g.sb, kx * g.sc, co * g.s1 * khw + r);
}

/* The dy pixel an input pixel fed through a tap, 0 where there is none */
inline float ct_conv_dy(__global const ct_at *dy, int4 pix, int4 tap, int16 g)
{
    int ty = pix.y - tap.y, tx = pix.z - tap.z; /* = oy stride_h, ox stride_w */
    if (ty < 0 || tx < 0)
        return 0.0f;
    const int oy = g.s7 == 1 ? ty : ty / g.s7, ox = g.s8 == 1 ? tx : tx / g.s8;
    if (oy * g.s7 != ty || ox * g.s8 != tx || oy >= g.sd || ox >= g.se)
        return 0.0f;
    return ct_ld(dy, pix.x + tap.x + oy * g.se + ox);
}

/* The index tables: a C column's (per tile) and a step index's */
inline int4 ct_conv_col_info(const int mode, int j, int end, int16 g)
{
    return mode == CT_CONV_FWD ? ct_conv_pix(j, end, g)
           : mode == CT_CONV_DX ? ct_conv_dxpix(j, end, g) : ct_conv_tap(j, end, g);
}

inline int4 ct_conv_step_info(const int mode, int t, int end, int16 g)
{
    return mode == CT_CONV_FWD ? ct_conv_tap(t, end, g)
           : mode == CT_CONV_DX ? ct_conv_dxtap(t, end, g) : ct_conv_pix(t, end, g);
}

#if CT_CONV_VEC
/* CPUs: VN consecutive floats src[off + e] of one image row, zero where
 * the row's column c0 + e falls outside [0, width); 0 (the caller loads
 * element by element) where the vector would leave the buffer of `total`
 * floats. */
inline int ct_conv_vload(__global const float *src, int off, int c0, int width, uint total,
                         ct_gvec *out)
{
    if (off < 0 || (uint)off + CT_GEMM_VN > total)
        return 0;
    ct_gvec v = ct_gvload(0, src + off);
    if (c0 < 0 || c0 + CT_GEMM_VN > width) {
        float tmp[CT_GEMM_VN];
        ct_gvstore(v, 0, tmp);
        for (int e = 0; e < CT_GEMM_VN; e++)
            if (c0 + e < 0 || c0 + e >= width)
                tmp[e] = 0.0f;
        v = ct_gvload(0, tmp);
    }
    *out = v;
    return 1;
}

/* Whether the pixels of a table's entries a and z (VN - 1 apart) are VN
 * consecutive floats of one image row (stride 1) */
inline int ct_conv_run(int4 a, int4 z)
{
    return a.w >= 0 && z.w - a.w == CT_GEMM_VN - 1 && a.y == z.y && z.z - a.z == CT_GEMM_VN - 1;
}

/* How the VN pixels j0 .. j0 + VN - 1 (of `end`; dx: input pixels, else
 * output pixels) lie in memory: 1, one run (ct_conv_run); 2 + e, two runs
 * of consecutive pixels, lanes [0, e) in one row and [e, VN) in the next
 * (rows narrower than a vector); 0, neither. */
inline int ct_conv_runs(int dx, int j0, int end, int16 g)
{
    const int4 a = dx ? ct_conv_dxpix(j0, end, g) : ct_conv_pix(j0, end, g);
    const int4 z = dx ? ct_conv_dxpix(j0 + CT_GEMM_VN - 1, end, g) : ct_conv_pix(j0 + CT_GEMM_VN - 1, end, g);
    if (ct_conv_run(a, z))
        return 1;
#if CT_GEMM_VN == 16
    if (a.w < 0 || z.w < 0)
        return 0;
    int e = 1;
    int4 b = a;
    for (; e < CT_GEMM_VN; e++) {
        b = dx ? ct_conv_dxpix(j0 + e, end, g) : ct_conv_pix(j0 + e, end, g);
        if (b.y != a.y)
            break;
    }
    const int4 l = dx ? ct_conv_dxpix(j0 + e - 1, end, g) : ct_conv_pix(j0 + e - 1, end, g);
    if (e < CT_GEMM_VN && l.w - a.w == e - 1 && l.z - a.z == e - 1 && z.y == b.y &&
        z.w - b.w == CT_GEMM_VN - 1 - e && z.z - b.z == CT_GEMM_VN - 1 - e)
        return 2 + e;
#endif
    return 0;
}

#if CT_GEMM_VN == 16
/* The VN values of two runs (flag 2 + es of ct_conv_runs) through tap t:
 * lanes [0, es) from pixel info c0's row, [es, VN) from c1's, each a
 * masked vector load (lanes off the image zeroed). fw: x through a forward
 * tap, else dy through an input-gradient tap. *done = 0 (the caller loads
 * element by element) where a load would leave the buffer of `total`. */
inline float16 ct_conv_vload2(__global const float *src, int es, int4 c0, int4 c1, int4 t, int fw,
                              int16 g, uint total, int *done)
{
    const int hh = fw ? g.s2 : g.sd, ww = fw ? g.s3 : g.se;
    const int y1 = fw ? c0.y + t.y : c0.y - t.y, x1 = fw ? c0.z + t.z : c0.z - t.z;
    const int y2 = fw ? c1.y + t.y : c1.y - t.y, x2 = fw ? c1.z + t.z : c1.z - t.z;
    const int o1 = fw ? c0.x + t.x : c0.x + t.x + y1 * ww + x1;
    const int o2 = (fw ? c1.x + t.x : c1.x + t.x + y2 * ww + x2) - es;
    const int16 lane = (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const int16 k1 = x1 + lane, k2 = x2 - es + lane;
    const int16 m1 = lane < es && k1 >= 0 && k1 < ww && (int16)(y1 >= 0 && y1 < hh);
    const int16 m2 = lane >= es && k2 >= 0 && k2 < ww && (int16)(y2 >= 0 && y2 < hh);
    float16 v = (float16)0.0f;
    *done = 1;
    if (any(m1)) {
        if (o1 >= 0 && (uint)o1 + 16 <= total)
            v = select(v, vload16(0, src + o1), m1);
        else
            *done = 0;
    }
    if (*done && any(m2)) {
        if (o2 >= 0 && (uint)o2 + 16 <= total)
            v = select(v, vload16(0, src + o2), m2);
        else
            *done = 0;
    }
    return v;
}
#endif
#endif

/* One tile of C for a conv product, as ct_gemm_tile. a: w (forward,
 * input: af) or dy (weights: ah); b: x (forward, weights) or dy (input);
 * c: y, dx (ch) or dw (or split-K's slices, c_stride apart: cf). The
 * forward's epilogue adds bias[row]; the weights' product is C = beta C +
 * sum. */
inline void ct_conv_tile(const int mode, const int WM, const int WN, const int RNV, __local float *as,
                         __local float *bs, __local int4 *ctab, __local int4 *stab,
                         __local int *gflag, __local int *sflag,
                         __global const float *af, __global const ct_at *ah,
                         __global const ct_at *b, __global float *cf, __global ct_at *ch,
                         ulong c_stride, uint ldc, uint m, uint n, uint k, uint kc, float beta,
                         __global const float *bias, int has_bias, int16 g)
{
    const int TM = WM * CT_GEMM_RM, TN = WN * RNV * CT_GEMM_VN, TK = CT_GEMM_TK;
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int lid = ty * WN + tx;
    const int WG = WM * WN;
    const uint m0 = get_group_id(1) * TM, n0 = get_group_id(0) * TN;
    const uint z = get_group_id(2);
    const uint k0 = z * kc;
    const uint k1 = min(k, k0 + kc);
    const int khw = g.s5 * g.s6, P = g.sd * g.se;
    ct_gvec acc[CT_GEMM_RM_MAX][CT_GEMM_RNV_MAX];
#pragma unroll
    for (int i = 0; i < CT_GEMM_RM; i++)
#pragma unroll
        for (int j = 0; j < RNV; j++)
            acc[i][j] = (ct_gvec)0.0f;

    for (int i = lid; i < TN; i += WG)
        ctab[i] = ct_conv_col_info(mode, n0 + i, n, g);
#if CT_CONV_VEC
    /* groups of VN columns whose pixels are consecutive in memory: the
     * same image and row, stride 1 (forward: unit stride_w; the input
     * gradient's pixels always are) */
    for (int i = lid; i < TN / CT_GEMM_VN; i += WG) {
        int f = mode != CT_CONV_DW ? ct_conv_runs(mode == CT_CONV_DX, n0 + i * CT_GEMM_VN, n, g) : 0;
        gflag[i] = f;
    }
    /* the weights' steps: whether a step's TK pixels are consecutive */
    if (mode == CT_CONV_DW && lid == 0)
        sflag[0] = ct_conv_runs(0, k0, k1, g);
#endif
    for (int i = lid; i < TK; i += WG)
        stab[i] = ct_conv_step_info(mode, k0 + i, k1, g);
    barrier(CLK_LOCAL_MEM_FENCE);
    int s = 0;
    for (uint kt = k0; kt < k1; kt += TK, s ^= 1) {
        __local const int4 *st = stab + s * TK;
        /* the next step's indices, into the other half (last read before
         * the previous step's barriers) */
        for (int i = lid; i < TK; i += WG)
            stab[(s ^ 1) * TK + i] = ct_conv_step_info(mode, kt + TK + i, k1, g);
#if CT_CONV_VEC
        if (mode == CT_CONV_DW && lid == 0)
            sflag[s ^ 1] = ct_conv_runs(0, kt + TK, k1, g);
#endif
        /* A's tile (r, p): neighbouring work-items along p, which is
         * contiguous in w (forward, input: taps) and in dy (weights: pixels) */
        for (int idx = lid; idx < TM * TK; idx += WG) {
            const int r = idx / TK, p = idx % TK;
            const uint gr = m0 + r;
            float v = 0.0f;
            if (mode == CT_CONV_FWD) {
                if (gr < m && kt + p < k1)
                    v = af[(ulong)gr * k + kt + p];
            } else {
                const int4 t = st[p];
                if (gr < m && t.w >= 0)
                    v = mode == CT_CONV_DX ? af[t.w + (int)gr * khw] : ct_ld(ah, t.w + (int)gr * P);
            }
            as[p * (TM + 1) + r] = v;
        }
#if CT_CONV_VEC
        /* CPUs: one vector load per VN pixels that are consecutive in
         * memory (one image row, stride 1), lanes past the row's ends
         * zeroed, instead of VN gathers; the rest element by element.
         * Forward and input gradient: per (p, group of VN columns);
         * weights: per column, over the step's VN = TK pixels. */
        if (mode != CT_CONV_DW) {
            const uint total = mode == CT_CONV_FWD ? (uint)(g.s0 * g.s1 * g.s2 * g.s3)
                                                   : (uint)(g.s0 * g.s4 * g.sd * g.se);
            for (int pr = lid; pr < TK * (TN / CT_GEMM_VN); pr += WG) {
                const int p = pr / (TN / CT_GEMM_VN), g0 = (pr % (TN / CT_GEMM_VN)) * CT_GEMM_VN;
                const int4 c0 = ctab[g0], t = st[p];
                __local float *dst = bs + p * (TN + 1) + g0;
                int done = 0;
                const int f = gflag[g0 / CT_GEMM_VN];
#if CT_GEMM_VN == 16
                if (f >= 2) {
                    /* two rows' runs, each a masked vector load, merged */
                    const float16 v = ct_conv_vload2(b, f - 2, c0, ctab[g0 + f - 2], t,
                                                     mode == CT_CONV_FWD, g, total, &done);
                    if (done)
                        vstore16(v, 0, dst);
                }
#endif
                if (f == 1) {
                    const int y = mode == CT_CONV_FWD ? c0.y + t.y : c0.y - t.y;
                    const int x0 = mode == CT_CONV_FWD ? c0.z + t.z : c0.z - t.z;
                    const int hh = mode == CT_CONV_FWD ? g.s2 : g.sd, ww = mode == CT_CONV_FWD ? g.s3 : g.se;
                    ct_gvec v = (ct_gvec)0.0f;
                    done = y < 0 || y >= hh || x0 >= ww || x0 + CT_GEMM_VN <= 0 ||
                           ct_conv_vload(b, mode == CT_CONV_FWD ? c0.x + t.x : c0.x + t.x + y * ww + x0,
                                         x0, ww, total, &v);
                    if (done)
                        ct_gvstore(v, 0, dst);
                }
                if (!done)
                    for (int e = 0; e < CT_GEMM_VN; e++)
                        dst[e] = mode == CT_CONV_FWD ? ct_conv_x(b, ctab[g0 + e], t, g)
                                                     : ct_conv_dy(b, ctab[g0 + e], t, g);
            }
        } else if (CT_GEMM_TK == CT_GEMM_VN && sflag[s]) {
            const uint total = (uint)(g.s0 * g.s1 * g.s2 * g.s3);
            const int4 p0 = st[0];
            const int f = sflag[s];
            for (int col = lid; col < TN; col += WG) {
                const int4 t = ctab[col];
                const int y = p0.y + t.y, x0 = p0.z + t.z;
                ct_gvec v = (ct_gvec)0.0f;
                int done = 0;
#if CT_GEMM_VN == 16
                if (f >= 2)
                    v = ct_conv_vload2(b, f - 2, p0, st[f - 2], t, 1, g, total, &done);
                else
#endif
                    done = y < 0 || y >= g.s2 || x0 >= g.s3 || x0 + CT_GEMM_VN <= 0 ||
                           ct_conv_vload(b, p0.x + t.x, x0, g.s3, total, &v);
                if (done) {
                    float tmp[CT_GEMM_VN];
                    ct_gvstore(v, 0, tmp);
                    for (int e = 0; e < CT_GEMM_VN; e++)
                        bs[e * (TN + 1) + col] = tmp[e];
                } else {
                    for (int e = 0; e < CT_GEMM_TK; e++)
                        bs[e * (TN + 1) + col] = ct_conv_x(b, st[e], t, g);
                }
            }
        } else
#endif
        /* B's tile (p, col): neighbouring work-items along the pixels
         * (C's columns; the weights' p), neighbouring in x and dy */
        for (int idx = lid; idx < TK * TN; idx += WG) {
            const int col = mode == CT_CONV_DW ? idx / TK : idx % TN;
            const int p = mode == CT_CONV_DW ? idx % TK : idx / TN;
            float v;
            if (mode == CT_CONV_FWD)
                v = ct_conv_x(b, ctab[col], st[p], g);
            else if (mode == CT_CONV_DX)
                v = ct_conv_dy(b, ctab[col], st[p], g);
            else
                v = ct_conv_x(b, st[p], ctab[col], g);
            bs[p * (TN + 1) + col] = v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* 16-bit operands (common.cl): rounded as the products read the
         * tiles (an in-place pass over them cost a barrier per step: the
         * convolutions 1.3-1.8x slower on pocl) */
        ct_gemm_fma_tile(acc, as, bs, TM, TN, WM, WN, CT_GEMM_RM, RNV, CT_GEMM_TK, tx, ty, CT_OPS16 != 0);
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    /* forward: y (i, row, q); input: dx (i, row, pixel); weights: C
     * row-major (or slice z) */
    const int plane = mode == CT_CONV_FWD ? P : g.s2 * g.s3;
    cf += z * c_stride;
#pragma unroll
    for (int i = 0; i < CT_GEMM_RM; i++) {
        const uint row = m0 + ty + WM * i;
        if (row >= m)
            continue;
        const float bv = mode == CT_CONV_FWD && has_bias ? bias[row] : 0.0f;
#pragma unroll
        for (int j = 0; j < RNV; j++) {
            const int col = (tx + WN * j) * CT_GEMM_VN;
            float sums[CT_GEMM_VN];
            ct_gvstore(acc[i][j], 0, sums);
            for (int e = 0; e < CT_GEMM_VN; e++) {
                if (mode == CT_CONV_DW) {
                    if (n0 + col + e < n) {
                        __global float *q = cf + (ulong)row * ldc + n0 + col + e;
                        *q = beta == 0.0f ? sums[e] : ct_fma(beta, *q, sums[e]);
                    }
                } else {
                    const int o = ctab[col + e].w;
                    if (o >= 0)
                        ct_st(ch, o + (int)row * plane, sums[e] + bv);
                }
            }
        }
    }
}

/* conv_igemm_<tiles>_<fwd|dx|dw>: global size (ceil(n / TN) WN, ceil(m /
 * TM) WM, slices); m, n, k as in the comment above. a and c come typed
 * float and are viewed as either type (a: the weights or dy; c: y, dx or
 * the weights' gradient), each offset in its own elements. */
#define CT_CONV_KERNEL(NAME, MODE, WM, WN, RNV)                                                        \
    __kernel __attribute__((reqd_work_group_size(WN, WM, 1))) void NAME(                          \
        __global const float *a, ulong a_off, __global const ct_at *b, ulong b_off,               \
        __global float *c, ulong c_off, ulong c_stride, uint ldc, uint m, uint n, uint k,         \
        uint kc, float beta, __global const float *bias, ulong bias_off, int has_bias, int16 g)   \
    {                                                                                             \
        __local float as[CT_GEMM_TK * ((WM) * CT_GEMM_RM + 1)];                                   \
        __local float bs[CT_GEMM_TK * ((WN) * (RNV) * CT_GEMM_VN + 1)];                          \
        __local int4 ctab[(WN) * (RNV) * CT_GEMM_VN];                                             \
        __local int4 stab[2 * CT_GEMM_TK];                                                        \
        __local int gflag[(WN) * (RNV)];                                                          \
        __local int sflag[2];                                                                     \
        ct_conv_tile(MODE, WM, WN, RNV, as, bs, ctab, stab, gflag, sflag, a + a_off,              \
                     (__global const ct_at *)a + a_off, b + b_off, c + c_off,                     \
                     (__global ct_at *)c + c_off, c_stride, ldc, m, n, k, kc, beta,               \
                     bias + bias_off, has_bias, g);                                               \
    }

CT_CONV_KERNEL(conv_igemm_big_fwd, CT_CONV_FWD, CT_GEMM_BIG_WM, CT_GEMM_BIG_WN, CT_GEMM_RNV)
CT_CONV_KERNEL(conv_igemm_big_dx, CT_CONV_DX, CT_GEMM_BIG_WM, CT_GEMM_BIG_WN, CT_GEMM_RNV)
CT_CONV_KERNEL(conv_igemm_big_dw, CT_CONV_DW, CT_GEMM_BIG_WM, CT_GEMM_BIG_WN, CT_GEMM_RNV)
CT_CONV_KERNEL(conv_igemm_small_fwd, CT_CONV_FWD, CT_GEMM_SMALL_WM, CT_GEMM_SMALL_WN, CT_GEMM_RNV)
CT_CONV_KERNEL(conv_igemm_small_dx, CT_CONV_DX, CT_GEMM_SMALL_WM, CT_GEMM_SMALL_WN, CT_GEMM_RNV)
CT_CONV_KERNEL(conv_igemm_small_dw, CT_CONV_DW, CT_GEMM_SMALL_WM, CT_GEMM_SMALL_WN, CT_GEMM_RNV)
/* narrow tiles, one vector of columns per work-item: products with few
 * columns (the weight gradient of a layer with few taps) */
CT_CONV_KERNEL(conv_igemm_narrow_fwd, CT_CONV_FWD, CT_GEMM_NARROW_WM, CT_GEMM_NARROW_WN, 1)
CT_CONV_KERNEL(conv_igemm_narrow_dx, CT_CONV_DX, CT_GEMM_NARROW_WM, CT_GEMM_NARROW_WN, 1)
CT_CONV_KERNEL(conv_igemm_narrow_dw, CT_CONV_DW, CT_GEMM_NARROW_WM, CT_GEMM_NARROW_WN, 1)
