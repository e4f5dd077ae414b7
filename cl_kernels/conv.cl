/*
 * conv.cl - the data movement around conv2d's GEMMs (src/ops/conv.c):
 * im2col, its deterministic adjoint col2im, and the reorders between the
 * image-major NCHW layout and the channel-major layout a GEMM over several
 * images produces and consumes.
 *
 * Column layout: col (K, ncols) with K = c_in * kh * kw rows ordered
 * (ci, ky, kx) as the weights (c_out, c_in, kh, kw) are, and ncols = nb * P
 * columns ordered (image, oy, ox), P = oh * ow.
 */

/* The output columns ox of one row whose input column ix = ox * sw + ix0
 * lies inside [0, w): [*lo, *hi), with lo <= ow (the span is empty when
 * hi <= lo; padding wider than the kernel can put all of a row in it). */
inline void ct_conv_ox_range(int ix0, int sw, int w, int ow, int *lo, int *hi)
{
    int a = ix0 >= 0 ? 0 : (-ix0 + sw - 1) / sw;
    int b = w - 1 - ix0 < 0 ? 0 : (w - 1 - ix0) / sw + 1;
    *lo = a < ow ? a : ow;
    *hi = b < ow ? b : ow;
}

/* col[(ci, ky, kx)][i * P + oy * ow + ox] = x[i][ci][iy][ix], or 0 in the
 * padding: the kernel for GPUs and other non-CPU devices (CPUs use
 * conv_im2col_plane_f32 below). One work-item per column-matrix element in
 * a 2-D range: dimension 0 the output column ox, dimension 1 the row
 * (k, i, oy) of the column matrix seen as (K, nb, oh, ow), so an element's
 * flat index is row * ow + ox. Work-groups span whole rows (ow wide), so
 * neighbouring work-items write neighbouring floats and read neighbouring
 * pixels of an input row (sw apart); all the index arithmetic but the
 * bounds test is per row.
 * x: (nb, c_in, h, w); col: (c_in * kh * kw, nb * oh * ow) */
__kernel void conv_im2col_f32(__global float *col, ulong col_off, __global const float *x,
                              ulong x_off, int nb, int c_in, int h, int w, int kh, int kw, int sh,
                              int sw, int ph, int pw, int dh, int dw, int oh, int ow, uint2 by_oh,
                              uint2 by_nb, uint2 by_khw, uint2 by_kw)
{
    int ox = get_global_id(0), row = get_global_id(1);
    int khw = kh * kw;
    /* ox past ow reads in bounds (ix is checked) and stores nothing;
     * returning for it here made this kernel 7x slower on pocl */
    if (row >= c_in * khw * nb * oh)
        return;
    /* the row's (k, i, oy) by multiplies (ct_udiv): four divisions per
     * element were most of this kernel on llvmpipe, a scalar idiv per lane */
    int z = (int)ct_udiv((uint)row, by_oh), oy = row - z * oh;
    int k = (int)ct_udiv((uint)z, by_nb), i = z - k * nb;
    int ci = (int)ct_udiv((uint)k, by_khw), t = k - ci * khw;
    int ky = (int)ct_udiv((uint)t, by_kw), kx = t - ky * kw;
    int iy = oy * sh - ph + ky * dh, ix = ox * sw - pw + kx * dw;
    float v = 0.0f;
    if (iy >= 0 && iy < h && ix >= 0 && ix < w)
        v = x[x_off + (((ulong)i * c_in + ci) * h + iy) * w + ix];
    if (ox < ow)
        col[col_off + (ulong)row * ow + ox] = v;
}

/* dx[i][ci][iy][ix] = sum of the col entries im2col copied that pixel to
 * (non-CPU devices; CPUs use conv_col2im_plane_f32 below). One work-item
 * per dx element, a 2-D range as im2col's: dimension 0 the column ix,
 * dimension 1 the NCHW row (i, ci, iy). Each element gathers its own
 * contributions: no atomics, and it sums from 0 in the fixed (ky, kx)
 * order (the order conv_col2im_plane_f32 uses, so the two give the same
 * bits). Neighbouring work-items write neighbouring floats and, for one
 * tap, read neighbouring columns.
 * col: (c_in * kh * kw, nb * oh * ow); dx: (nb, c_in, h, w), written */
__kernel void conv_col2im_f32(__global float *dx, ulong dx_off, __global const float *col,
                              ulong col_off, int nb, int c_in, int h, int w, int kh, int kw,
                              int sh, int sw, int ph, int pw, int dh, int dw, int oh, int ow,
                              uint2 by_h, uint2 by_cin, uint2 by_sh, uint2 by_sw)
{
    int ix = get_global_id(0), row = get_global_id(1);
    if (row >= nb * c_in * h)
        return; /* ix past w reads in bounds (ox < ow) and stores nothing */
    /* divisions by multiplies (ct_udiv), as im2col's */
    int plane = (int)ct_udiv((uint)row, by_h), iy = row - plane * h;
    int i = (int)ct_udiv((uint)plane, by_cin), ci = plane - i * c_in;
    ulong ncols = (ulong)nb * oh * ow;
    __global const float *cp = col + col_off + (ulong)ci * kh * kw * ncols + (ulong)i * oh * ow;
    float acc = 0.0f;
    for (int ky = 0; ky < kh; ky++) {
        int ty = iy + ph - ky * dh; /* = oy * sh */
        if (ty < 0)
            break; /* ty only falls as ky grows */
        int oy = sh == 1 ? ty : (int)ct_udiv((uint)ty, by_sh);
        if (oy * sh != ty || oy >= oh)
            continue;
        for (int kx = 0; kx < kw; kx++) {
            int tx = ix + pw - kx * dw; /* = ox * sw */
            if (tx < 0)
                break;
            int ox = sw == 1 ? tx : (int)ct_udiv((uint)tx, by_sw);
            if (ox * sw != tx || ox >= ow)
                continue;
            acc += cp[(ulong)(ky * kw + kx) * ncols + oy * ow + ox];
        }
    }
    if (ix < w)
        dx[dx_off + (ulong)row * w + ix] = acc;
}

/* im2col for CPU devices: one work-item per input plane and kernel row
 * (i, ci, ky) writes that plane's kw column rows for ky, each a contiguous
 * P-long segment, while the plane it reads stays in L1. Per-element
 * work-items (the GPU kernel above) pay the index arithmetic per short row
 * and scatter their writes, which on a CPU costs several times the copy
 * itself; splitting by ky keeps the cores busy when there are few planes
 * (a 3-channel input layer). Same output as conv_im2col_f32.
 * x: (nb, c_in, h, w); col: (c_in * kh * kw, nb * oh * ow) */
__kernel void conv_im2col_plane_f32(__global float *restrict col, ulong col_off,
                                    __global const float *restrict x, ulong x_off, int nb,
                                    int c_in, int h, int w, int kh, int kw, int sh, int sw,
                                    int ph, int pw, int dh, int dw, int oh, int ow)
{
    int idx = get_global_id(0);
    if (idx >= nb * c_in * kh)
        return;
    int plane = idx / kh, ky = idx - plane * kh;
    int i = plane / c_in, ci = plane - i * c_in;
    ulong P = (ulong)oh * ow, ncols = (ulong)nb * P;
    __global const float *xp = x + x_off + (ulong)plane * h * w;
    /* the output rows oy whose input row lies inside [0, h): [ylo, yhi) */
    int ylo, yhi;
    ct_conv_ox_range(ky * dh - ph, sh, h, oh, &ylo, &yhi);
    if (yhi < ylo)
        yhi = ylo;
    for (int kx = 0; kx < kw; kx++) {
        int ix0 = kx * dw - pw, lo, hi;
        ct_conv_ox_range(ix0, sw, w, ow, &lo, &hi);
        if (hi < lo)
            hi = lo;
        __global float *out = col + col_off + (((ulong)ci * kh + ky) * kw + kx) * ncols +
                              (ulong)i * P;
        for (ulong j = 0; j < (ulong)ylo * ow; j++)
            out[j] = 0.0f;
        for (int oy = ylo; oy < yhi; oy++) {
            __global float *o = out + (ulong)oy * ow;
            __global const float *xr = xp + (oy * sh - ph + ky * dh) * w + ix0;
            for (int ox = 0; ox < lo; ox++)
                o[ox] = 0.0f;
            if (sw == 1)
                for (int ox = lo; ox < hi; ox++)
                    o[ox] = xr[ox];
            else
                for (int ox = lo; ox < hi; ox++)
                    o[ox] = xr[ox * sw];
            for (int ox = hi; ox < ow; ox++)
                o[ox] = 0.0f;
        }
        for (ulong j = (ulong)yhi * ow; j < P; j++)
            out[j] = 0.0f;
    }
}

/* col2im for CPU devices: one work-item per input plane (i, ci), which
 * stays in L1 while the plane's kh * kw column rows stream through it.
 * Each element gathers its contributions in the (ky, kx) order
 * conv_col2im_f32 uses, so the two give the same bits.
 * col: (c_in * kh * kw, nb * oh * ow); dx: (nb, c_in, h, w), written */
__kernel void conv_col2im_plane_f32(__global float *restrict dx, ulong dx_off,
                                    __global const float *restrict col, ulong col_off, int nb,
                                    int c_in, int h, int w, int kh, int kw, int sh, int sw,
                                    int ph, int pw, int dh, int dw, int oh, int ow)
{
    int idx = get_global_id(0);
    if (idx >= nb * c_in)
        return;
    int i = idx / c_in, ci = idx - i * c_in;
    ulong P = (ulong)oh * ow, ncols = (ulong)nb * P;
    __global float *dp = dx + dx_off + (ulong)idx * h * w;
    for (int j = 0; j < h * w; j++)
        dp[j] = 0.0f;
    for (int ky = 0; ky < kh; ky++) {
        int ylo, yhi;
        ct_conv_ox_range(ky * dh - ph, sh, h, oh, &ylo, &yhi);
        for (int kx = 0; kx < kw; kx++) {
            int ix0 = kx * dw - pw, lo, hi;
            ct_conv_ox_range(ix0, sw, w, ow, &lo, &hi);
            __global const float *cr = col + col_off +
                                       (((ulong)ci * kh + ky) * kw + kx) * ncols + (ulong)i * P;
            for (int oy = ylo; oy < yhi; oy++) {
                __global float *dr = dp + (oy * sh - ph + ky * dh) * w + ix0;
                __global const float *c = cr + (ulong)oy * ow;
                if (sw == 1)
                    for (int ox = lo; ox < hi; ox++)
                        dr[ox] += c[ox];
                else
                    for (int ox = lo; ox < hi; ox++)
                        dr[ox * sw] += c[ox];
            }
        }
    }
}

/* y[i][co][p] = t[co][i * P + p] + b[co] (b only when has_bias). A 2-D
 * range, p along dimension 0 and the (i, co) pair along 1 (work-groups of
 * whole rows where P <= 256), keeps the per-element work free of
 * divisions (the row's pair by a multiply, ct_udiv); both sides are read and written along p, so they coalesce.
 * t: (c_out, nb * P); b: (c_out); y: (nb, c_out, P) */
__kernel void conv_scatter_f32(__global float *y, ulong y_off, __global const float *t,
                               ulong t_off, __global const float *b, ulong b_off, int has_bias,
                               int nb, int c_out, int P, uint2 by_cout)
{
    int p = get_global_id(0), r = get_global_id(1);
    if (r >= nb * c_out)
        return; /* p past P (rows wider than a work-group): no load, no store */
    int i = (int)ct_udiv((uint)r, by_cout), co = r - i * c_out;
    float v = p < P ? t[t_off + ((ulong)co * nb + i) * P + p] : 0.0f;
    if (p < P)
        y[y_off + (ulong)r * P + p] = has_bias ? v + b[b_off + co] : v;
}

/* t[co][i * P + p] = dy[i][co][p], the same 2-D range.
 * dy: (nb, c_out, P); t: (c_out, nb * P) */
__kernel void conv_gather_f32(__global float *t, ulong t_off, __global const float *dy,
                              ulong dy_off, int nb, int c_out, int P, uint2 by_cout)
{
    int p = get_global_id(0), r = get_global_id(1);
    if (r >= nb * c_out)
        return; /* p past P: no load, no store, as in conv_scatter_f32 */
    int i = (int)ct_udiv((uint)r, by_cout), co = r - i * c_out;
    float v = p < P ? dy[dy_off + (ulong)r * P + p] : 0.0f;
    if (p < P)
        t[t_off + ((ulong)co * nb + i) * P + p] = v;
}
