/*
 * pool.cl - 2-D max and average pooling (NCHW, PyTorch semantics, floor
 * output size) and global average pooling, forward and backward.
 *
 * Backward passes gather: one work-item per input element visits the
 * windows that contain it in a fixed order (output row, then column), so
 * results are deterministic without atomics. Max pool backward decides
 * from x whether each window picked the element instead of storing
 * indices, keeping the forward free of a side buffer; both passes apply
 * PyTorch's rule (the last NaN, else the first maximum), so ties go to the
 * first maximum. When windows do not overlap (stride >= kernel, the usual
 * 2x2/2) max pool backward scatters instead: one work-item per window finds
 * its argmax once and writes its whole tile, where the gather would rescan
 * the window for every element in it.
 *
 * Geometry arguments: planes = N*C, input h x w, output oh x ow, kernel
 * kh x kw, stride sh x sw, padding ph x pw.
 */

/* The first output index whose window (start o*s - p, length k) reaches
 * input index i: the smallest o with o*s - p + k > i. */
inline int ct_pool_first(int i, int k, int s, int p)
{
    int t = i + p - k;
    return t < 0 ? 0 : t / s + 1;
}

/* The argmax of window (oy, ox) as a flat h*w index into its plane. The
 * start index stands in when every value is -inf, as PyTorch does. */
inline int ct_maxpool_argmax(__global const float *xp, int oy, int ox, int h, int w, int kh,
                             int kw, int sh, int sw, int ph, int pw)
{
    int y0 = oy * sh - ph, x0 = ox * sw - pw;
    int y1 = min(y0 + kh, h), x1 = min(x0 + kw, w);
    y0 = max(y0, 0);
    x0 = max(x0, 0);
    int best = y0 * w + x0;
    float m = -INFINITY;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            float v = xp[y * w + x];
            if (v > m || isnan(v)) {
                m = v;
                best = y * w + x;
            }
        }
    return best;
}

/* y (planes, oh, ow) = max over windows of x (planes, h, w) */
__kernel void maxpool_fwd_f32(__global float *y, ulong y_off, __global const float *x, ulong x_off,
                              uint planes, int h, int w, int oh, int ow, int kh, int kw, int sh,
                              int sw, int ph, int pw)
{
    uint i = get_global_id(0);
    uint per = (uint)oh * (uint)ow;
    if (i >= planes * per)
        return;
    uint plane = i / per, r = i % per;
    int oy = (int)(r / (uint)ow), ox = (int)(r % (uint)ow);
    __global const float *xp = x + x_off + (ulong)plane * (uint)h * (uint)w;
    int best = ct_maxpool_argmax(xp, oy, ox, h, w, kh, kw, sh, sw, ph, pw);
    y[y_off + i] = xp[best];
}

/* Whether flat element e of value v is window (oy, ox)'s argmax under the
 * forward's rule: the last NaN if the window has one, else the first
 * maximum. The scan stops at the first element that rules e out, which
 * for most elements comes early: far cheaper than recomputing the argmax. */
inline int ct_maxpool_picks(__global const float *xp, int e, float v, int oy, int ox, int h, int w,
                            int kh, int kw, int sh, int sw, int ph, int pw)
{
    int y0 = oy * sh - ph, x0 = ox * sw - pw;
    int y1 = min(y0 + kh, h), x1 = min(x0 + kw, w);
    y0 = max(y0, 0);
    x0 = max(x0, 0);
    int v_nan = isnan(v);
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            int q = y * w + x;
            float u = xp[q];
            if (q < e ? !v_nan && (u >= v || isnan(u)) : q > e && (u > v || isnan(u)))
                return 0;
        }
    return 1;
}

/* dx (planes, h, w) = sum of dy (planes, oh, ow) over the windows whose
 * argmax is this element; x (planes, h, w) is the forward input. */
__kernel void maxpool_bwd_f32(__global float *dx, ulong dx_off, __global const float *dy,
                              ulong dy_off, __global const float *x, ulong x_off, uint planes,
                              int h, int w, int oh, int ow, int kh, int kw, int sh, int sw, int ph,
                              int pw)
{
    uint i = get_global_id(0);
    uint per = (uint)h * (uint)w;
    if (i >= planes * per)
        return;
    uint plane = i / per, r = i % per;
    int iy = (int)(r / (uint)w), ix = (int)(r % (uint)w);
    __global const float *xp = x + x_off + (ulong)plane * per;
    __global const float *dyp = dy + dy_off + (ulong)plane * (uint)oh * (uint)ow;
    int y_lo = ct_pool_first(iy, kh, sh, ph), y_hi = min((iy + ph) / sh, oh - 1);
    int x_lo = ct_pool_first(ix, kw, sw, pw), x_hi = min((ix + pw) / sw, ow - 1);
    float v = xp[r], acc = 0.0f;
    for (int oy = y_lo; oy <= y_hi; oy++)
        for (int ox = x_lo; ox <= x_hi; ox++)
            if (ct_maxpool_picks(xp, (int)r, v, oy, ox, h, w, kh, kw, sh, sw, ph, pw))
                acc += dyp[oy * ow + ox];
    dx[dx_off + i] = acc;
}

/* dx (planes, h, w) from dy (planes, oh, ow) and x (planes, h, w) when no
 * two windows overlap (sh >= kh and sw >= kw; the launcher checks). Work-item
 * (oy, ox) owns the tile of rows [oy sh - ph, (oy + 1) sh - ph) and columns
 * likewise, clipped to the plane, with the last tile of each axis stretched
 * to the plane's end. Padding is at most half a window, so every later tile
 * starts inside the plane and the tiles partition it: each dx element is
 * written exactly once, dy at the window's argmax (the forward's own rule)
 * and 0 elsewhere, which covers the elements in no window (stride > kernel,
 * the ragged bottom and right edges). 0 + dy rather than dy keeps the
 * gather's result bit for bit: its sum turns a -0 gradient into +0. */
__kernel void maxpool_bwd_tile_f32(__global float *dx, ulong dx_off, __global const float *dy,
                                   ulong dy_off, __global const float *x, ulong x_off,
                                   uint planes, int h, int w, int oh, int ow, int kh, int kw,
                                   int sh, int sw, int ph, int pw)
{
    uint i = get_global_id(0);
    uint per = (uint)oh * (uint)ow;
    if (i >= planes * per)
        return;
    uint plane = i / per, r = i % per;
    int oy = (int)(r / (uint)ow), ox = (int)(r % (uint)ow);
    ulong base = (ulong)plane * (uint)h * (uint)w;
    __global const float *xp = x + x_off + base;
    __global float *dxp = dx + dx_off + base;
    int best = ct_maxpool_argmax(xp, oy, ox, h, w, kh, kw, sh, sw, ph, pw);
    float g = 0.0f + dy[dy_off + i];
    int y0 = max(oy * sh - ph, 0), y1 = oy == oh - 1 ? h : min((oy + 1) * sh - ph, h);
    int x0 = max(ox * sw - pw, 0), x1 = ox == ow - 1 ? w : min((ox + 1) * sw - pw, w);
    for (int y = y0; y < y1; y++)
        for (int xx = x0; xx < x1; xx++) {
            int q = y * w + xx;
            dxp[q] = q == best ? g : 0.0f;
        }
}

/* PyTorch's divisor of window (oy, ox): the padded window's area clipped
 * to the padded input, or only its in-bounds elements without
 * count_include_pad. */
inline int ct_avgpool_divisor(int oy, int ox, int h, int w, int kh, int kw, int sh, int sw, int ph,
                              int pw, int include_pad)
{
    int y0 = oy * sh - ph, x0 = ox * sw - pw;
    int y1 = min(y0 + kh, h + ph), x1 = min(x0 + kw, w + pw);
    if (include_pad)
        return (y1 - y0) * (x1 - x0);
    return (min(y1, h) - max(y0, 0)) * (min(x1, w) - max(x0, 0));
}

/* y (planes, oh, ow) = window sums of x (planes, h, w) / divisor */
__kernel void avgpool_fwd_f32(__global float *y, ulong y_off, __global const float *x, ulong x_off,
                              uint planes, int h, int w, int oh, int ow, int kh, int kw, int sh,
                              int sw, int ph, int pw, int include_pad)
{
    uint i = get_global_id(0);
    uint per = (uint)oh * (uint)ow;
    if (i >= planes * per)
        return;
    uint plane = i / per, r = i % per;
    int oy = (int)(r / (uint)ow), ox = (int)(r % (uint)ow);
    __global const float *xp = x + x_off + (ulong)plane * (uint)h * (uint)w;
    int y0 = max(oy * sh - ph, 0), x0 = max(ox * sw - pw, 0);
    int y1 = min(oy * sh - ph + kh, h), x1 = min(ox * sw - pw + kw, w);
    float acc = 0.0f;
    for (int yy = y0; yy < y1; yy++)
        for (int xx = x0; xx < x1; xx++)
            acc += xp[yy * w + xx];
    y[y_off + i] = acc / (float)ct_avgpool_divisor(oy, ox, h, w, kh, kw, sh, sw, ph, pw,
                                                   include_pad);
}

/* dx (planes, h, w) = sum over the windows holding it of dy (planes, oh, ow) / divisor */
__kernel void avgpool_bwd_f32(__global float *dx, ulong dx_off, __global const float *dy,
                              ulong dy_off, uint planes, int h, int w, int oh, int ow, int kh,
                              int kw, int sh, int sw, int ph, int pw, int include_pad)
{
    uint i = get_global_id(0);
    uint per = (uint)h * (uint)w;
    if (i >= planes * per)
        return;
    uint plane = i / per, r = i % per;
    int iy = (int)(r / (uint)w), ix = (int)(r % (uint)w);
    __global const float *dyp = dy + dy_off + (ulong)plane * (uint)oh * (uint)ow;
    int y_lo = ct_pool_first(iy, kh, sh, ph), y_hi = min((iy + ph) / sh, oh - 1);
    int x_lo = ct_pool_first(ix, kw, sw, pw), x_hi = min((ix + pw) / sw, ow - 1);
    float acc = 0.0f;
    for (int oy = y_lo; oy <= y_hi; oy++)
        for (int ox = x_lo; ox <= x_hi; ox++)
            acc += dyp[oy * ow + ox] / (float)ct_avgpool_divisor(oy, ox, h, w, kh, kw, sh, sw, ph,
                                                                 pw, include_pad);
    dx[dx_off + i] = acc;
}

/* y (planes) = mean of each plane of x (planes, hw); inv_hw = 1/hw rounded
 * once on the host, so every device scales alike. One work-item per plane
 * sums in index order. */
__kernel void global_avgpool_fwd_f32(__global float *y, ulong y_off, __global const float *x,
                                     ulong x_off, uint planes, uint hw, float inv_hw)
{
    uint i = get_global_id(0);
    if (i >= planes)
        return;
    __global const float *xp = x + x_off + (ulong)i * hw;
    float acc = 0.0f;
    for (uint j = 0; j < hw; j++)
        acc += xp[j];
    y[y_off + i] = acc * inv_hw;
}

/* dx (planes, hw) = dy (planes) * inv_hw */
__kernel void global_avgpool_bwd_f32(__global float *dx, ulong dx_off, __global const float *dy,
                                     ulong dy_off, uint planes, uint hw, float inv_hw)
{
    uint i = get_global_id(0);
    if (i >= planes * hw)
        return;
    dx[dx_off + i] = dy[dy_off + i / hw] * inv_hw;
}
