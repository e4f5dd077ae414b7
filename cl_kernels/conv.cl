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
 * padding. One work-item per column-matrix row segment (k, i, oy), so the
 * index arithmetic is paid once per row: the kernel for GPUs and other
 * non-CPU devices (CPUs use conv_im2col_plane_f32 below).
 * x: (nb, c_in, h, w); col: (c_in * kh * kw, nb * oh * ow) */
__kernel void conv_im2col_f32(__global float *col, ulong col_off, __global const float *x,
                              ulong x_off, int nb, int c_in, int h, int w, int kh, int kw, int sh,
                              int sw, int ph, int pw, int dh, int dw, int oh, int ow)
{
    int idx = get_global_id(0);
    int rows = nb * oh, K = c_in * kh * kw;
    if (idx >= K * rows)
        return;
    int k = idx / rows, r = idx - k * rows;
    int i = r / oh, oy = r - i * oh;
    int ci = k / (kh * kw), t = k - ci * (kh * kw);
    int ky = t / kw, kx = t - ky * kw;
    int iy = oy * sh - ph + ky * dh, ix0 = kx * dw - pw;
    __global float *out = col + col_off + (ulong)k * rows * ow + (ulong)r * ow;
    if (iy < 0 || iy >= h) {
        for (int ox = 0; ox < ow; ox++)
            out[ox] = 0.0f;
        return;
    }
    __global const float *xr = x + x_off + (((ulong)i * c_in + ci) * h + iy) * w;
    int lo, hi;
    ct_conv_ox_range(ix0, sw, w, ow, &lo, &hi);
    for (int ox = 0; ox < lo; ox++)
        out[ox] = 0.0f;
    for (int ox = lo; ox < hi; ox++)
        out[ox] = xr[ox * sw + ix0];
    for (int ox = hi > lo ? hi : lo; ox < ow; ox++)
        out[ox] = 0.0f;
}

/* dx[i][ci][iy][ix] = sum of the col entries im2col copied that pixel to
 * (non-CPU devices; CPUs use conv_col2im_plane_f32 below).
 * One work-item per input row (i, ci, iy) gathers its own contributions:
 * no atomics, and each element sums in the fixed (ky, kx) order, so the
 * result is the same every run. Within one (ky, kx) distinct ox reach
 * distinct ix, so the inner loop is a plain strided update.
 * col: (c_in * kh * kw, nb * oh * ow); dx: (nb, c_in, h, w), written */
__kernel void conv_col2im_f32(__global float *dx, ulong dx_off, __global const float *col,
                              ulong col_off, int nb, int c_in, int h, int w, int kh, int kw,
                              int sh, int sw, int ph, int pw, int dh, int dw, int oh, int ow)
{
    int idx = get_global_id(0);
    if (idx >= nb * c_in * h)
        return;
    int iy = idx % h, t = idx / h;
    int ci = t % c_in, i = t / c_in;
    int P = oh * ow, ncols = nb * P;
    __global float *dr = dx + dx_off + (ulong)idx * w;
    for (int ix = 0; ix < w; ix++)
        dr[ix] = 0.0f;
    for (int ky = 0; ky < kh; ky++) {
        int ty = iy + ph - ky * dh; /* = oy * sh */
        if (ty < 0)
            break; /* ty only falls as ky grows */
        int oy = ty / sh;
        if (oy * sh != ty || oy >= oh)
            continue;
        for (int kx = 0; kx < kw; kx++) {
            int ix0 = kx * dw - pw, lo, hi;
            ct_conv_ox_range(ix0, sw, w, ow, &lo, &hi);
            __global const float *cr = col + col_off +
                                       (((ulong)ci * kh + ky) * kw + kx) * ncols +
                                       (ulong)i * P + (ulong)oy * ow;
            for (int ox = lo; ox < hi; ox++)
                dr[ox * sw + ix0] += cr[ox];
        }
    }
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
 * range, p along dimension 0 and the (i, co) pair along 1, keeps the
 * per-element work free of divisions.
 * t: (c_out, nb * P); b: (c_out); y: (nb, c_out, P) */
__kernel void conv_scatter_f32(__global float *y, ulong y_off, __global const float *t,
                               ulong t_off, __global const float *b, ulong b_off, int has_bias,
                               int nb, int c_out, int P)
{
    int p = get_global_id(0), r = get_global_id(1);
    if (p >= P || r >= nb * c_out)
        return;
    int i = r / c_out, co = r - i * c_out;
    float v = t[t_off + ((ulong)co * nb + i) * P + p];
    y[y_off + (ulong)r * P + p] = has_bias ? v + b[b_off + co] : v;
}

/* t[co][i * P + p] = dy[i][co][p], the same 2-D range.
 * dy: (nb, c_out, P); t: (c_out, nb * P) */
__kernel void conv_gather_f32(__global float *t, ulong t_off, __global const float *dy,
                              ulong dy_off, int nb, int c_out, int P)
{
    int p = get_global_id(0), r = get_global_id(1);
    if (p >= P || r >= nb * c_out)
        return;
    int i = r / c_out, co = r - i * c_out;
    t[t_off + ((ulong)co * nb + i) * P + p] = dy[dy_off + (ulong)r * P + p];
}
