/*
 * posembed.cl - a learned position embedding added to a sequence:
 * y[t, n, :] = x[t, n, :] + w[t, :] for x, y (T, N, E) time-major (element
 * [t][n][e] at (t N + n) E + e) and w (max_len, E), T <= max_len.
 *
 * The backward takes one work-item per (e, t): it copies dy into dx (when
 * wanted) and adds the sum over n of dy[t, n, e], in ascending n, to
 * dw[t, e]; every sum has a fixed order and nothing needs atomics.
 * Adjacent work-items read adjacent elements.
 *
 * x, y, dy, dx are ct_at (common.cl): float, or 16 bits in the CT_ACT16
 * variants (each y the float sum rounded once on store; dx a copy of dy's
 * bits); w, dw and dw's sums stay float.
 */

/* y (T, N, E) = x (T, N, E) + w (max_len, E) per position; y may alias x */
__kernel void posembed_fwd_f32(__global ct_at *y, ulong y_off, __global const ct_at *x, ulong x_off,
                               __global const float *w, ulong w_off, uint T, uint N, uint E)
{
    uint e = get_global_id(0), row = get_global_id(1);
    if (e >= E || row >= T * N)
        return;
    ulong i = (ulong)row * E + e;
    ct_st(y, y_off + i, ct_ld(x, x_off + i) + w[w_off + (ulong)(row / N) * E + e]);
}

/* dx (T, N, E) = dy (dx may be NULL); dw[t, e] += sum over n of dy[t, n, e] */
__kernel void posembed_bwd_f32(__global ct_at *dx, ulong dx_off, __global float *dw, ulong dw_off,
                               __global const ct_at *dy, ulong dy_off, uint T, uint N, uint E)
{
    uint e = get_global_id(0), t = get_global_id(1);
    if (e >= E || t >= T)
        return;
    float s = 0.0f;
    for (uint n = 0; n < N; n++) {
        ulong i = ((ulong)t * N + n) * E + e;
        float g = ct_ld(dy, dy_off + i);
        s += g;
        if (dx)
            dx[dx_off + i] = dy[dy_off + i]; /* the same bits, in either storage */
    }
    dw[dw_off + (ulong)t * E + e] += s;
}
