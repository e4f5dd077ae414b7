/*
 * shortcut.cl - the ResNet option-A shortcut: x (N, C, H, W) subsampled
 * with stride s (x[:, :, ::s, ::s]) and zero channels appended after the C
 * copied ones up to co, giving y (N, co, oh, ow) with oh = ceil(H / s).
 * Both passes are pure copies: one work-item per written element. x, y,
 * dy, dx are ct_at (common.cl): 16 bits in the CT_ACT16 variants.
 */

__kernel void shortcut_a_fwd_f32(__global ct_at *y, ulong y_off, __global const ct_at *x,
                                 ulong x_off, uint n, uint c, uint h, uint w, uint co, uint oh,
                                 uint ow, uint s)
{
    uint i = get_global_id(0);
    uint per = oh * ow, plane = co * per;
    if (i >= n * plane)
        return;
    uint b = i / plane, r = i % plane;
    uint ch = r / per, oy = (r % per) / ow, ox = r % ow;
    ct_st(y, y_off + i, ch < c ? ct_ld(x, x_off + (((ulong)b * c + ch) * h + oy * s) * w + ox * s) : 0.0f);
}

/* dx (N, C, H, W) = dy (N, co, oh, ow) at the subsampled positions, 0
 * elsewhere; the appended channels have no input to reach. */
__kernel void shortcut_a_bwd_f32(__global ct_at *dx, ulong dx_off, __global const ct_at *dy,
                                 ulong dy_off, uint n, uint c, uint h, uint w, uint co, uint oh,
                                 uint ow, uint s)
{
    uint i = get_global_id(0);
    uint per = h * w, plane = c * per;
    if (i >= n * plane)
        return;
    uint b = i / plane, r = i % plane;
    uint ch = r / per, iy = (r % per) / w, ix = r % w;
    ct_st(dx, dx_off + i,
          iy % s == 0 && ix % s == 0 ? ct_ld(dy, dy_off + (((ulong)b * co + ch) * oh + iy / s) * ow + ix / s)
                                     : 0.0f);
}
