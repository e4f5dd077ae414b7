/*
 * pool.cl - 2-D max and average pooling (NCHW, PyTorch semantics, floor
 * output size) and global average pooling, forward and backward.
 *
 * Backward passes give each element the terms of the windows holding it in
 * a fixed order (output row, then column), so results are deterministic
 * without atomics: average pool gathers per input element. For overlapping
 * max pool windows the forward records each window's argmax (PyTorch's
 * rule: the last NaN, else the first maximum, so ties go to the first
 * maximum) and the backward routes dy by the record, one work-item per
 * input row; deciding from x again meant rescanning every window for every
 * element in it. When windows do not overlap (stride >= kernel, the usual
 * 2x2/2) max pool backward needs no record: one work-item per window finds
 * its argmax once and writes its whole tile.
 *
 * Geometry arguments: planes = N*C, input h x w, output oh x ow, kernel
 * kh x kw, stride sh x sw, padding ph x pw.
 *
 * Activations (x, y, dy, dx) are ct_at (common.cl): float, or 16 bits in
 * the CT_ACT16 variants, where each store rounds once to nearest even;
 * max pooling's values pass through unchanged, window sums are float. The
 * overlapping max pool backward adds into dx as it goes, so there an
 * element held by k windows' argmaxes is rounded after each of its k
 * terms. Argmax records stay int.
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
inline int ct_maxpool_argmax(__global const ct_at *xp, int oy, int ox, int h, int w, int kh,
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
            float v = ct_ld(xp, y * w + x);
            if (v > m || v != v) { /* isnan(), a call on pocl */
                m = v;
                best = y * w + x;
            }
        }
    return best;
}

/* y (planes, oh, ow) = max over windows of x (planes, h, w); unless am is
 * NULL, am (planes, oh, ow) = each window's argmax as a flat h*w index into
 * its input plane. A 2-D range: dimension 0 the output column ox,
 * dimension 1 the output row (plane, oy), so the division that finds the
 * plane is per row (CPU compilers hoist it out of the work-items of a
 * row), not per element. */
__kernel void maxpool_fwd_f32(__global ct_at *y, ulong y_off, __global int *am,
                                     ulong am_off, __global const ct_at *x, ulong x_off,
                                     uint planes, int h, int w, int oh, int ow, int kh, int kw,
                                     int sh, int sw, int ph, int pw)
{
    uint ox_u = get_global_id(0), row = get_global_id(1);
    if (row >= planes * (uint)oh || ox_u >= (uint)ow)
        return;
    uint plane = row / (uint)oh;
    int oy = (int)(row - plane * (uint)oh), ox = (int)ox_u;
    ulong i = (ulong)row * (uint)ow + ox_u;
    __global const ct_at *xp = x + x_off + (ulong)plane * (uint)h * (uint)w;
    int best = ct_maxpool_argmax(xp, oy, ox, h, w, kh, kw, sh, sw, ph, pw);
    ct_st(y, y_off + i, ct_ld(xp, best));
    if (am)
        am[am_off + i] = best;
}

/* dx (planes, h, w) = sum of dy (planes, oh, ow) over the windows whose
 * recorded argmax am (planes, oh, ow) is this element. One work-item per
 * input row zeroes it, then adds the dy of each window of the output rows
 * reaching it whose argmax lies in it, in (oy, ox) order: every element
 * gets its terms in that fixed order, as a per-element gather would, but
 * with no window range to work out per element (integer divisions) and
 * one compare per window; about 5x faster on CPUs. The row is the
 * work-item's own, so its read-modify-writes need no atomics. */
__kernel void maxpool_bwd_f32(__global ct_at *dx, ulong dx_off, __global const ct_at *dy,
                              ulong dy_off, __global const int *am, ulong am_off, uint planes,
                              int h, int w, int oh, int ow, int kh, int kw, int sh, int sw, int ph,
                              int pw)
{
    uint i = get_global_id(0);
    if (i >= planes * (uint)h)
        return;
    uint plane = i / (uint)h;
    int iy = (int)(i % (uint)h);
    ulong out_base = (ulong)plane * (uint)oh * (uint)ow;
    __global ct_at *dxr = dx + dx_off + (ulong)i * (uint)w;
    int y_lo = ct_pool_first(iy, kh, sh, ph), y_hi = min((iy + ph) / sh, oh - 1);
    int row = iy * w;
    for (int ix = 0; ix < w; ix++)
        ct_st(dxr, ix, 0.0f);
    for (int oy = y_lo; oy <= y_hi; oy++) {
        __global const ct_at *dyr = dy + dy_off + out_base + (uint)(oy * ow);
        __global const int *amr = am + am_off + out_base + (uint)(oy * ow);
        for (int ox = 0; ox < ow; ox++) {
            uint col = (uint)(amr[ox] - row); /* wraps above w when in another row */
            if (col < (uint)w)
                ct_st(dxr, col, ct_ld(dxr, col) + ct_ld(dyr, ox));
        }
    }
}

/* dx (planes, h, w) from dy (planes, oh, ow) and x (planes, h, w) when no
 * two windows overlap (sh >= kh and sw >= kw; the launcher checks). Work-item
 * (oy, ox) owns the tile of rows [oy sh - ph, (oy + 1) sh - ph) and columns
 * likewise, clipped to the plane, with the last tile of each axis stretched
 * to the plane's end. Padding is at most half a window, so every later tile
 * starts inside the plane and the tiles partition it: each dx element is
 * written exactly once, dy at the window's argmax (the forward's own rule)
 * and 0 elsewhere, which covers the elements in no window (stride > kernel,
 * the ragged bottom and right edges). 0 + dy rather than dy matches the
 * overlapping path bit for bit: its sums start at 0, turning -0 into +0. */
__kernel void maxpool_bwd_tile_f32(__global ct_at *dx, ulong dx_off, __global const ct_at *dy,
                                   ulong dy_off, __global const ct_at *x, ulong x_off,
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
    __global const ct_at *xp = x + x_off + base;
    __global ct_at *dxp = dx + dx_off + base;
    int best = ct_maxpool_argmax(xp, oy, ox, h, w, kh, kw, sh, sw, ph, pw);
    float g = 0.0f + ct_ld(dy, dy_off + i);
    int y0 = max(oy * sh - ph, 0), y1 = oy == oh - 1 ? h : min((oy + 1) * sh - ph, h);
    int x0 = max(ox * sw - pw, 0), x1 = ox == ow - 1 ? w : min((ox + 1) * sw - pw, w);
    for (int y = y0; y < y1; y++)
        for (int xx = x0; xx < x1; xx++) {
            int q = y * w + xx;
            ct_st(dxp, q, q == best ? g : 0.0f);
        }
}

/*
 * Max pool 2x2, stride 2, no padding (the common case): straight-line
 * kernels without window loops, so a CPU compiler vectorizes a row of
 * work-items and a GPU runs no loop control. The 2-D range of
 * maxpool_fwd_f32; the four values are scanned in its order with its rule
 * (the first maximum, the last NaN), so the results are its bits. Scalar
 * loads and `v != v` rather than vload2 and isnan(): on pocl both of those
 * cost more than the rest of the kernel (4.2 -> 0.9 ms for a 64x32x28x28
 * forward, measured one change at a time).
 */
#define CT_MAX2_TAKE(v, idx)                                                                      \
    do {                                                                                          \
        int t_ = (v) > m || (v) != (v);                                                           \
        m = t_ ? (v) : m;                                                                         \
        best = t_ ? (idx) : best;                                                                 \
    } while (0)

/* the window at p0 = 2 oy w + 2 ox of plane xp: m its max, best its argmax */
#define CT_MAX2_SCAN(xp, p0, w)                                                                   \
    float a0 = ct_ld(xp, p0), a1 = ct_ld(xp, (p0) + 1), b0 = ct_ld(xp, (p0) + (w));               \
    float b1 = ct_ld(xp, (p0) + (w) + 1);                                                         \
    float m = a0; /* the scan from -inf takes the first value, or keeps it at -inf */           \
    int best = (p0);                                                                              \
    CT_MAX2_TAKE(a1, (p0) + 1);                                                                   \
    CT_MAX2_TAKE(b0, (p0) + (w));                                                                 \
    CT_MAX2_TAKE(b1, (p0) + (w) + 1)

__kernel void maxpool2_fwd_f32(__global ct_at *y, ulong y_off, __global int *am, ulong am_off,
                               __global const ct_at *x, ulong x_off, uint planes, int h, int w,
                               int oh, int ow)
{
    uint ox = get_global_id(0), row = get_global_id(1);
    if (row >= planes * (uint)oh || ox >= (uint)ow)
        return;
    uint plane = row / (uint)oh, oy = row - plane * (uint)oh;
    int p0 = (int)(2 * oy * (uint)w + 2 * ox);
    __global const ct_at *xp = x + x_off + (ulong)plane * (uint)h * (uint)w;
    CT_MAX2_SCAN(xp, p0, w);
    ulong i = (ulong)row * (uint)ow + ox;
    ct_st(y, y_off + i, m);
    if (am)
        am[am_off + i] = best;
}

/* The backward of maxpool2_fwd_f32 for even h and w (the tiles are the
 * windows): the window's argmax from x, dy there and 0 elsewhere, as
 * maxpool_bwd_tile_f32 writes them. */
__kernel void maxpool2_bwd_f32(__global ct_at *dx, ulong dx_off, __global const ct_at *dy,
                               ulong dy_off, __global const ct_at *x, ulong x_off, uint planes,
                               int h, int w, int oh, int ow)
{
    uint ox = get_global_id(0), row = get_global_id(1);
    if (row >= planes * (uint)oh || ox >= (uint)ow)
        return;
    uint plane = row / (uint)oh, oy = row - plane * (uint)oh;
    int p0 = (int)(2 * oy * (uint)w + 2 * ox);
    ulong base = (ulong)plane * (uint)h * (uint)w;
    __global const ct_at *xp = x + x_off + base;
    CT_MAX2_SCAN(xp, p0, w);
    float g = 0.0f + ct_ld(dy, dy_off + (ulong)row * (uint)ow + ox);
    __global ct_at *d = dx + dx_off + base;
    ct_st(d, p0, best == p0 ? g : 0.0f);
    ct_st(d, p0 + 1, best == p0 + 1 ? g : 0.0f);
    ct_st(d, p0 + w, best == p0 + w ? g : 0.0f);
    ct_st(d, p0 + w + 1, best == p0 + w + 1 ? g : 0.0f);
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
__kernel void avgpool_fwd_f32(__global ct_at *y, ulong y_off, __global const ct_at *x, ulong x_off,
                              uint planes, int h, int w, int oh, int ow, int kh, int kw, int sh,
                              int sw, int ph, int pw, int include_pad)
{
    uint i = get_global_id(0);
    uint per = (uint)oh * (uint)ow;
    if (i >= planes * per)
        return;
    uint plane = i / per, r = i % per;
    int oy = (int)(r / (uint)ow), ox = (int)(r % (uint)ow);
    __global const ct_at *xp = x + x_off + (ulong)plane * (uint)h * (uint)w;
    int y0 = max(oy * sh - ph, 0), x0 = max(ox * sw - pw, 0);
    int y1 = min(oy * sh - ph + kh, h), x1 = min(ox * sw - pw + kw, w);
    float acc = 0.0f;
    for (int yy = y0; yy < y1; yy++)
        for (int xx = x0; xx < x1; xx++)
            acc += ct_ld(xp, yy * w + xx);
    ct_st(y, y_off + i, acc / (float)ct_avgpool_divisor(oy, ox, h, w, kh, kw, sh, sw, ph, pw,
                                                        include_pad));
}

/* dx (planes, h, w) = sum over the windows holding it of dy (planes, oh, ow) / divisor */
__kernel void avgpool_bwd_f32(__global ct_at *dx, ulong dx_off, __global const ct_at *dy,
                              ulong dy_off, uint planes, int h, int w, int oh, int ow, int kh,
                              int kw, int sh, int sw, int ph, int pw, int include_pad)
{
    uint i = get_global_id(0);
    uint per = (uint)h * (uint)w;
    if (i >= planes * per)
        return;
    uint plane = i / per, r = i % per;
    int iy = (int)(r / (uint)w), ix = (int)(r % (uint)w);
    __global const ct_at *dyp = dy + dy_off + (ulong)plane * (uint)oh * (uint)ow;
    int y_lo = ct_pool_first(iy, kh, sh, ph), y_hi = min((iy + ph) / sh, oh - 1);
    int x_lo = ct_pool_first(ix, kw, sw, pw), x_hi = min((ix + pw) / sw, ow - 1);
    float acc = 0.0f;
    for (int oy = y_lo; oy <= y_hi; oy++)
        for (int ox = x_lo; ox <= x_hi; ox++)
            acc += ct_ld(dyp, oy * ow + ox) / (float)ct_avgpool_divisor(oy, ox, h, w, kh, kw, sh, sw, ph,
                                                                 pw, include_pad);
    ct_st(dx, dx_off + i, acc);
}

/* y (planes) = mean of each plane of x (planes, hw); inv_hw = 1/hw rounded
 * once on the host, so every device scales alike. One work-item per plane
 * sums in index order. The global pooling's x, y, dy, dx are ct_at
 * (common.cl: 16 bits in the CT_ACT16 variants; the sum in float); the
 * other pooling kernels read floats only. */
__kernel void global_avgpool_fwd_f32(__global ct_at *y, ulong y_off, __global const ct_at *x,
                                     ulong x_off, uint planes, uint hw, float inv_hw)
{
    uint i = get_global_id(0);
    if (i >= planes)
        return;
    __global const ct_at *xp = x + x_off + (ulong)i * hw;
    float acc = 0.0f;
    for (uint j = 0; j < hw; j++)
        acc += ct_ld(xp, j);
    ct_st(y, y_off + i, acc * inv_hw);
}

/* dx (planes, hw) = dy (planes) * inv_hw */
__kernel void global_avgpool_bwd_f32(__global ct_at *dx, ulong dx_off, __global const ct_at *dy,
                                     ulong dy_off, uint planes, uint hw, float inv_hw)
{
    uint i = get_global_id(0);
    if (i >= planes * hw)
        return;
    ct_st(dx, dx_off + i, ct_ld(dy, dy_off + i / hw) * inv_hw);
}
