/*
 * gconv.cl - grouped 2-D convolution, NCHW, as PyTorch's Conv2d with
 * groups = G: input channels and output channels are cut into G groups of
 * Cg = C / G and Kg = K / G, and output channel k reads only the input
 * channels of its group g = k / Kg. Weights (K, Cg, kh, kw). Depthwise
 * convolutions (G = C, MobileNet's) are the case Cg = 1.
 *
 * A grouped layer's product is thin (Cg kh kw terms per output, Kg outputs
 * per input), so the kernels are direct, with no GEMM and no workspace:
 *   - forward: a work-item per output element in a 2-D range (output
 *     column, output row of a plane (n, k, oy)): neighbouring work-items
 *     write neighbouring addresses and read x with the stride's step;
 *   - input gradient: a work-item per input element gathers the outputs
 *     that read it (the taps whose offset divides by the stride): written,
 *     no atomics, the same bits every run;
 *   - weight gradient: a two-stage reduction over the (n, oy, ox)
 *     positions. Stage one: a work-group per (slice of positions, weight
 *     row (k, c), chunk of up to CT_GC_TAPS taps); each work-item walks the
 *     slice with the group's stride, reading dy once per position and x
 *     once per tap, keeping a sum per tap; the group's sums meet in one
 *     halving tree in local memory (a fixed order). Stage two adds each
 *     weight's slices in slice order into dw. One slice: stage one adds
 *     into dw itself.
 * Sizes travel as uint, indices below 2^32 (the launcher checks); the
 * divisions by invariants use ct_udiv with the host's multipliers.
 */

#define CT_GC_TAPS 16

__kernel void gconv_fwd_f32(__global float *y, ulong y_off, __global const float *x, ulong x_off,
                            __global const float *w, ulong w_off, __global const float *b, ulong b_off,
                            int has_bias, uint rows, uint C, uint K, uint Cg, uint2 div_oh, uint2 div_k,
                            uint2 div_kg, int h, int wd, int oh, int ow, int kh, int kw, int sh, int sw,
                            int ph, int pw, int dh, int dw)
{
    uint ox = get_global_id(0), row = get_global_id(1);
    if (ox >= (uint)ow || row >= rows)
        return;
    uint plane = ct_udiv(row, div_oh), img = ct_udiv(plane, div_k);
    uint k = plane - img * K, g = ct_udiv(k, div_kg);
    int oy = (int)(row - plane * (uint)oh);
    int iy0 = oy * sh - ph, ix0 = (int)ox * sw - pw;
    __global const float *xp = x + x_off + ((ulong)img * C + (ulong)g * Cg) * (uint)h * (uint)wd;
    __global const float *wp = w + w_off + (ulong)k * Cg * (uint)kh * (uint)kw;
    float s = has_bias ? b[b_off + k] : 0.0f;
    for (uint c = 0; c < Cg; c++) {
        for (int ky = 0; ky < kh; ky++) {
            int iy = iy0 + ky * dh;
            if (iy < 0 || iy >= h)
                continue;
            for (int kx = 0; kx < kw; kx++) {
                int ix = ix0 + kx * dw;
                if (ix >= 0 && ix < wd)
                    s += wp[ky * kw + kx] * xp[iy * wd + ix];
            }
        }
        xp += (uint)h * (uint)wd;
        wp += (uint)kh * (uint)kw;
    }
    y[y_off + (ulong)row * (uint)ow + ox] = s;
}

/* Input gradient: input (n, c, iy, ix) is read by output (k, oy, ox) of its
 * group through tap (ky, kx) when iy + ph - ky dh = oy sh (likewise x) */
__kernel void gconv_bwd_data_f32(__global float *dx, ulong dx_off, __global const float *dy, ulong dy_off,
                                 __global const float *w, ulong w_off, uint rows, uint C, uint K, uint Cg,
                                 uint Kg, uint2 div_h, uint2 div_c, uint2 div_cg, int h, int wd, int oh,
                                 int ow, int kh, int kw, int sh, int sw, int ph, int pw, int dh, int dw)
{
    uint ix = get_global_id(0), row = get_global_id(1);
    if (ix >= (uint)wd || row >= rows)
        return;
    uint plane = ct_udiv(row, div_h), img = ct_udiv(plane, div_c);
    uint c = plane - img * C, g = ct_udiv(c, div_cg), cl = c - g * Cg;
    int iy = (int)(row - plane * (uint)h);
    uint k0 = g * Kg;
    __global const float *dp = dy + dy_off + ((ulong)img * K + k0) * (uint)oh * (uint)ow;
    __global const float *wp = w + w_off + ((ulong)k0 * Cg + cl) * (uint)kh * (uint)kw;
    float s = 0.0f;
    for (uint k = 0; k < Kg; k++) {
        for (int ky = 0; ky < kh; ky++) {
            int ty = iy + ph - ky * dh;
            if (ty < 0 || ty % sh)
                continue;
            int oy = ty / sh;
            if (oy >= oh)
                continue;
            for (int kx = 0; kx < kw; kx++) {
                int tx = (int)ix + pw - kx * dw;
                if (tx < 0 || tx % sw)
                    continue;
                int ox = tx / sw;
                if (ox < ow)
                    s += wp[ky * kw + kx] * dp[oy * ow + ox];
            }
        }
        dp += (uint)oh * (uint)ow;
        wp += Cg * (uint)kh * (uint)kw;
    }
    dx[dx_off + (ulong)row * (uint)wd + ix] = s;
}

/*
 * Weight gradient, stage one. Work-group (s, r, q): slice s of the m =
 * n oh ow positions ([s L, min(s L + L, m))), weight row r = k Cg + c, tap
 * chunk q (taps [q T, min(q T + T, kh kw)), T = CT_GC_TAPS). Writes
 * part[s][r kh kw + t], or with S == 1 adds into dw (part is dw then).
 * red: (CT_GC_TAPS wg) floats. The grid is exactly (S wg, rows, chunks):
 * every work-item reaches the barriers.
 */
__kernel void gconv_bwd_w_part_f32(__global float *part, ulong part_off, __global const float *dy,
                                   ulong dy_off, __global const float *x, ulong x_off, uint C, uint K,
                                   uint Cg, uint Kg, uint m, uint L, uint nw, uint2 div_ohw, uint2 div_ow,
                                   uint2 div_cg, int h, int wd, int oh, int ow, int kh, int kw, int sh,
                                   int sw, int ph, int pw, int dh, int dw, __local float *red)
{
    uint s = get_group_id(0), S = get_num_groups(0), r = get_group_id(1), q = get_group_id(2);
    uint l = get_local_id(0), wg = get_local_size(0);
    uint k = ct_udiv(r, div_cg), c = r - k * Cg, g = k / Kg;
    int taps = kh * kw, t0 = (int)q * CT_GC_TAPS;
    int nt = min(taps - t0, CT_GC_TAPS);
    uint ohw = (uint)oh * (uint)ow, j1 = min(m, s * L + L);
    float acc[CT_GC_TAPS];
    int ty[CT_GC_TAPS], tx[CT_GC_TAPS]; /* the chunk's tap offsets */
    for (int t = 0; t < CT_GC_TAPS; t++) {
        int tap = min(t0 + t, taps - 1), ky = tap / kw;
        acc[t] = 0.0f;
        ty[t] = ky * dh;
        tx[t] = (tap - ky * kw) * dw;
    }
    for (uint j = s * L + l; j < j1; j += wg) {
        uint img = ct_udiv(j, div_ohw), p = j - img * ohw, oy = ct_udiv(p, div_ow), ox = p - oy * (uint)ow;
        float d = dy[dy_off + ((ulong)img * K + k) * ohw + p];
        __global const float *xp = x + x_off + ((ulong)img * C + g * Cg + c) * (uint)h * (uint)wd;
        int iy0 = (int)oy * sh - ph, ix0 = (int)ox * sw - pw;
        for (int t = 0; t < CT_GC_TAPS; t++) {
            if (t < nt) {
                int iy = iy0 + ty[t], ix = ix0 + tx[t];
                if (iy >= 0 && iy < h && ix >= 0 && ix < wd)
                    acc[t] += d * xp[iy * wd + ix];
            }
        }
    }
    for (int t = 0; t < CT_GC_TAPS; t++)
        red[(uint)t * wg + l] = acc[t];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint hs = wg / 2; hs > 0; hs >>= 1) {
        if (l < hs)
            for (int t = 0; t < nt; t++)
                red[(uint)t * wg + l] += red[(uint)t * wg + l + hs];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (uint t = l; t < (uint)nt; t += wg) { /* wg may be below nt */
        ulong o = part_off + (ulong)r * (uint)taps + (uint)t0 + t;
        if (S == 1)
            part[o] += red[t * wg];
        else
            part[o + (ulong)s * nw] = red[t * wg];
    }
}

/* Stage two: dw[i] += the S slices' sums of weight i, in slice order.
 * part: (S, nw); dw: (nw) */
__kernel void gconv_bwd_w_sum_f32(__global float *dw, ulong dw_off, __global const float *part, ulong part_off,
                                  uint nw, uint S)
{
    uint i = get_global_id(0);
    if (i >= nw)
        return;
    float s = 0.0f;
    for (uint k = 0; k < S; k++)
        s += part[part_off + (ulong)k * nw + i];
    dw[dw_off + i] += s;
}
