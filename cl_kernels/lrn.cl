/*
 * lrn.cl - local response normalization across channels (PyTorch's
 * local_response_norm), forward and exact backward, NCHW with the spatial
 * dims flattened to hw.
 *
 *   s_c = k + alpha/size * sum_{c' = c - size/2}^{c + (size-1)/2} x_{c'}^2
 *   y_c = x_c * s_c^-beta
 *
 * (channels outside [0, C) count as zeros). One work-item per element. The
 * forward can save the factor p_c = s_c^-beta it computes; the backward
 * reads it instead of raising the few s_c it needs to a power again (pow
 * dominated its time) and recomputes only those s_c, a handful of
 * multiply-adds each: dx needs both p_c and s_c, and saving s_c as well
 * would double the record for little gain.
 */

/* s^e for s > 0, as exp2(e log2 s): pocl's pow takes four times as long as
 * the pair; the pair's error (3 ulp each, the first amplified by
 * |e log2 s|) is budgeted in src/check/lrn.c. */
inline float ct_lrn_pow(float s, float e)
{
    return exp2(e * log2(s));
}

/* s_c at channel c of the column xc (channel stride hw). */
inline float ct_lrn_scale(__global const float *xc, int c, int channels, uint hw, int size,
                          float k, float alpha_n)
{
    int lo = max(c - size / 2, 0), hi = min(c + (size - 1) / 2, channels - 1);
    float sum = 0.0f;
    for (int j = lo; j <= hi; j++) {
        float v = xc[(ulong)j * hw];
        sum += v * v;
    }
    return k + alpha_n * sum;
}

/* y, x: (N, C, hw); alpha_n = alpha / size; unless scale is NULL, also
 * scale (N, C, hw) = s^-beta for the backward */
__kernel void lrn_fwd_f32(__global float *y, ulong y_off, __global float *scale,
                               ulong scale_off, __global const float *x, ulong x_off, uint n,
                               int channels, uint hw, int size, float alpha_n, float beta, float k)
{
    uint i = get_global_id(0);
    uint plane = (uint)channels * hw;
    if (i >= n * plane)
        return;
    uint b = i / plane, r = i % plane;
    int c = (int)(r / hw);
    __global const float *xc = x + x_off + (ulong)b * plane + r % hw;
    float s = ct_lrn_scale(xc, c, channels, hw, size, k, alpha_n);
    float p = ct_lrn_pow(s, -beta);
    if (scale)
        scale[scale_off + i] = p;
    y[y_off + i] = xc[(ulong)c * hw] * p;
}

/* dx_j = dy_j p_j - 2 alpha_n beta x_j sum_{c : j in window(c)} dy_c x_c p_c / s_c
 * with p = s^-beta the forward's saved scale.
 * dx, dy, x, scale: (N, C, hw); dx is written. */
__kernel void lrn_bwd_f32(__global float *dx, ulong dx_off, __global const float *dy,
                          ulong dy_off, __global const float *x, ulong x_off,
                          __global const float *scale, ulong scale_off, uint n, int channels,
                          uint hw, int size, float alpha_n, float beta, float k)
{
    uint i = get_global_id(0);
    uint plane = (uint)channels * hw;
    if (i >= n * plane)
        return;
    uint b = i / plane, r = i % plane;
    int j = (int)(r / hw);
    ulong col = (ulong)b * plane + r % hw;
    __global const float *xc = x + x_off + col;
    __global const float *dyc = dy + dy_off + col;
    __global const float *pc = scale + scale_off + col;
    /* channel j lies in the windows of c in [j - (size-1)/2, j + size/2] */
    int lo = max(j - (size - 1) / 2, 0), hi = min(j + size / 2, channels - 1);
    float acc = 0.0f;
    for (int c = lo; c <= hi; c++) {
        float s = ct_lrn_scale(xc, c, channels, hw, size, k, alpha_n);
        acc += dyc[(ulong)c * hw] * xc[(ulong)c * hw] * pc[(ulong)c * hw] / s;
    }
    dx[dx_off + i] = dyc[(ulong)j * hw] * pc[(ulong)j * hw] -
                     2.0f * alpha_n * beta * xc[(ulong)j * hw] * acc;
}

/*
 * CPU devices: one work-item per (image, channel) row of hw pixels, 8 at a
 * time as float8 vectors, so the power (exp2 of a log2) runs in SIMD lanes;
 * the row's last hw % 8 pixels take the per-element path. Same formulas as
 * the kernels above, lane by lane.
 */
inline float8 ct_lrn_scale8(__global const float *xc, int c, int channels, uint hw, int size,
                            float k, float alpha_n)
{
    int lo = max(c - size / 2, 0), hi = min(c + (size - 1) / 2, channels - 1);
    float8 sum = 0.0f;
    for (int j = lo; j <= hi; j++) {
        float8 v = vload8(0, xc + (ulong)j * hw);
        sum += v * v;
    }
    return k + alpha_n * sum;
}

/* as lrn_fwd_f32; rows = n * channels */
__kernel void lrn_fwd_rows_f32(__global float *y, ulong y_off, __global float *scale,
                               ulong scale_off, __global const float *x, ulong x_off, uint rows,
                               int channels, uint hw, int size, float alpha_n, float beta, float k)
{
    uint row = get_global_id(0);
    if (row >= rows)
        return;
    uint b = row / (uint)channels;
    int c = (int)(row % (uint)channels);
    ulong base = (ulong)b * (uint)channels * hw, at = (ulong)row * hw;
    uint hw8 = hw / 8 * 8;
    for (uint p = 0; p < hw8; p += 8) {
        __global const float *xc = x + x_off + base + p;
        float8 s = ct_lrn_scale8(xc, c, channels, hw, size, k, alpha_n);
        float8 pw = exp2(-beta * log2(s));
        if (scale)
            vstore8(pw, 0, scale + scale_off + at + p);
        vstore8(vload8(0, xc + (ulong)c * hw) * pw, 0, y + y_off + at + p);
    }
    for (uint p = hw8; p < hw; p++) {
        __global const float *xc = x + x_off + base + p;
        float pw = ct_lrn_pow(ct_lrn_scale(xc, c, channels, hw, size, k, alpha_n), -beta);
        if (scale)
            scale[scale_off + at + p] = pw;
        y[y_off + at + p] = xc[(ulong)c * hw] * pw;
    }
}

/* as lrn_bwd_f32; rows = n * channels */
__kernel void lrn_bwd_rows_f32(__global float *dx, ulong dx_off, __global const float *dy,
                               ulong dy_off, __global const float *x, ulong x_off,
                               __global const float *scale, ulong scale_off, uint rows,
                               int channels, uint hw, int size, float alpha_n, float beta, float k)
{
    uint row = get_global_id(0);
    if (row >= rows)
        return;
    uint b = row / (uint)channels;
    int j = (int)(row % (uint)channels);
    int lo = max(j - (size - 1) / 2, 0), hi = min(j + size / 2, channels - 1);
    ulong base = (ulong)b * (uint)channels * hw;
    uint hw8 = hw / 8 * 8;
    float f = 2.0f * alpha_n * beta;
    for (uint p = 0; p < hw8; p += 8) {
        ulong col = base + p;
        __global const float *xc = x + x_off + col, *dyc = dy + dy_off + col;
        __global const float *pc = scale + scale_off + col;
        float8 acc = 0.0f;
        for (int c = lo; c <= hi; c++) {
            float8 s = ct_lrn_scale8(xc, c, channels, hw, size, k, alpha_n);
            acc += vload8(0, dyc + (ulong)c * hw) * vload8(0, xc + (ulong)c * hw) *
                   vload8(0, pc + (ulong)c * hw) / s;
        }
        float8 r = vload8(0, dyc + (ulong)j * hw) * vload8(0, pc + (ulong)j * hw) -
                   f * vload8(0, xc + (ulong)j * hw) * acc;
        vstore8(r, 0, dx + dx_off + col + (ulong)j * hw);
    }
    for (uint p = hw8; p < hw; p++) {
        ulong col = base + p;
        __global const float *xc = x + x_off + col, *dyc = dy + dy_off + col;
        __global const float *pc = scale + scale_off + col;
        float acc = 0.0f;
        for (int c = lo; c <= hi; c++) {
            float s = ct_lrn_scale(xc, c, channels, hw, size, k, alpha_n);
            acc += dyc[(ulong)c * hw] * xc[(ulong)c * hw] * pc[(ulong)c * hw] / s;
        }
        dx[dx_off + col + (ulong)j * hw] = dyc[(ulong)j * hw] * pc[(ulong)j * hw] -
                                           f * xc[(ulong)j * hw] * acc;
    }
}
