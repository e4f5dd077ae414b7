/*
 * upsample.cl - 2-D upsampling of planes (N C, H, W) by an integer scale S
 * to (N C, S H, S W), as torch.nn.functional.interpolate(scale_factor=S):
 * nearest (source floor(o / S)) or bilinear with align_corners=False
 * (source max((o + 0.5) / S - 0.5, 0), its floor and the next index, the
 * last clamped, weights 1 - f and f).
 *
 * Forward: a work-item per output element in a 2-D range (output column,
 * output row of a plane), so the plane's division is per row. Backward: a
 * work-item per input element gathers the output elements that read it, in
 * (row, column) order: deterministic, no atomics. An input index i is read
 * by outputs o with floor(src(o)) = i or floor(src(o)) + 1 = i, all within
 * [(i - 1) S, (i + 2) S): the gather tests those 3 S candidates per axis.
 */

/* bilinear: the source index, its floor lo, the next hi (clamped) and the
 * weight of hi */
inline void ct_up_src(int o, int S, int n, int *lo, int *hi, float *f)
{
    float s = ((float)o + 0.5f) / (float)S - 0.5f;
    s = s < 0.0f ? 0.0f : s;
    int l = (int)s;
    l = l < n - 1 ? l : n - 1;
    *lo = l;
    *hi = l + (l < n - 1 ? 1 : 0);
    *f = s - (float)l;
}

__kernel void upsample_fwd_f32(__global float *y, ulong y_off, __global const float *x, ulong x_off,
                               uint planes, int h, int w, int S, int bilinear)
{
    int oh = h * S, ow = w * S;
    uint ox = get_global_id(0), row = get_global_id(1);
    uint plane = row / (uint)oh;
    if (ox >= (uint)ow || row >= planes * (uint)oh)
        return;
    int oy = (int)(row - plane * (uint)oh);
    __global const float *xp = x + x_off + (ulong)plane * (uint)h * (uint)w;
    float v;
    if (!bilinear) {
        v = xp[(oy / S) * w + (int)ox / S];
    } else {
        int y0, y1, x0, x1;
        float fy, fx;
        ct_up_src(oy, S, h, &y0, &y1, &fy);
        ct_up_src((int)ox, S, w, &x0, &x1, &fx);
        v = (1.0f - fy) * ((1.0f - fx) * xp[y0 * w + x0] + fx * xp[y0 * w + x1]) +
            fy * ((1.0f - fx) * xp[y1 * w + x0] + fx * xp[y1 * w + x1]);
    }
    y[y_off + (ulong)row * (uint)ow + ox] = v;
}

/* the weight output o gives input i along one axis (0: none) */
inline float ct_up_weight(int o, int i, int S, int n, int bilinear)
{
    if (!bilinear)
        return o / S == i ? 1.0f : 0.0f;
    int lo, hi;
    float f;
    ct_up_src(o, S, n, &lo, &hi, &f);
    return (lo == i ? 1.0f - f : 0.0f) + (hi == i ? f : 0.0f);
}

__kernel void upsample_bwd_f32(__global float *dx, ulong dx_off, __global const float *dy, ulong dy_off,
                               uint planes, int h, int w, int S, int bilinear)
{
    int oh = h * S, ow = w * S;
    uint ix = get_global_id(0), row = get_global_id(1);
    uint plane = row / (uint)h;
    if (ix >= (uint)w || row >= planes * (uint)h)
        return;
    int iy = (int)(row - plane * (uint)h);
    __global const float *dp = dy + dy_off + (ulong)plane * (uint)oh * (uint)ow;
    int oy0 = max((iy - 1) * S, 0), oy1 = min((iy + 2) * S, oh);
    int ox0 = max(((int)ix - 1) * S, 0), ox1 = min(((int)ix + 2) * S, ow);
    float s = 0.0f;
    for (int oy = oy0; oy < oy1; oy++) {
        float wy = ct_up_weight(oy, iy, S, h, bilinear);
        if (wy == 0.0f)
            continue;
        for (int ox = ox0; ox < ox1; ox++) {
            float wx = ct_up_weight(ox, (int)ix, S, w, bilinear);
            if (wx != 0.0f)
                s += wy * wx * dp[oy * ow + ox];
        }
    }
    dx[dx_off + (ulong)row * (uint)w + ix] = s;
}
