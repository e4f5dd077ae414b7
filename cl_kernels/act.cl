/*
 * act.cl - activations, forward and backward. `act` follows enum ct_act
 * (src/ops/act.h): 0 none, 1 relu, 2 leaky relu, 3 sigmoid, 4 tanh, 5 gelu,
 * 6 silu, 7 hardswish, 8 relu6.
 */

/* ct_act_f / ct_act_df live in common.cl: the fused bias + activation
 * kernels (dense.cl) share them. */

/* The GPU class's kernels store activations as ct_at (common.cl): float,
 * or 16 bits in the CT_ACT16 variants; the math is float either way. */
__kernel void act_fwd_f32(__global ct_at *y, ulong y_off, __global const ct_at *x, ulong x_off,
                          uint n, int act)
{
    uint i = get_global_id(0);
    if (i < n)
        ct_st(y, y_off + i, ct_act_f(act, ct_ld(x, x_off + i)));
}

/* Reads only the input the derivative uses (x: relu, leaky relu, gelu,
 * silu, hardswish, relu6; y: sigmoid, tanh; neither: none): a third less
 * traffic than reading both. */
__kernel void act_bwd_f32(__global ct_at *dx, ulong dx_off, __global const ct_at *dy, ulong dy_off,
                          __global const ct_at *x, ulong x_off, __global const ct_at *y,
                          ulong y_off, uint n, int act)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    float xv = act == 1 || act == 2 || act >= 5 ? ct_ld(x, x_off + i) : 0.0f;
    float yv = act == 3 || act == 4 ? ct_ld(y, y_off + i) : 0.0f;
    ct_st(dx, dx_off + i, ct_ld(dy, dy_off + i) * ct_act_df(act, xv, yv));
}

/*
 * CPU devices: each work-item takes `chunk` consecutive elements (the
 * launcher's choice, a multiple of 8) in float8 vectors with the activation chosen once, outside the loop: the
 * per-element kernels above switch on `act` around calls to exp, tanh and
 * erf, which CPU compilers leave scalar (0.35 GB/s for gelu on pocl); in
 * vectors the math library's SIMD versions run. Same formulas.
 */
inline float8 ct_act_f8(int act, float8 x)
{
    switch (act) {
    case 1: return fmax(x, 0.0f);
    case 2: return select(CT_LEAKY_SLOPE * x, x, x > 0.0f);
    case 3: return 1.0f / (1.0f + exp(-x));
    case 4: return tanh(x);
    case 5: return 0.5f * x * (1.0f + erf(x * CT_INV_SQRT2));
    case 6: return x / (1.0f + exp(-x));
    case 7: return x * fmin(fmax(x + 3.0f, 0.0f), 6.0f) / 6.0f;
    case 8: return fmin(fmax(x, 0.0f), 6.0f);
    default: return x;
    }
}

inline float8 ct_act_df8(int act, float8 x, float8 y)
{
    switch (act) {
    case 1: return select((float8)0.0f, (float8)1.0f, x > 0.0f);
    case 2: return select((float8)CT_LEAKY_SLOPE, (float8)1.0f, x > 0.0f);
    case 3: return y * (1.0f - y);
    case 4: return 1.0f - y * y;
    case 5: return 0.5f * (1.0f + erf(x * CT_INV_SQRT2)) + x * CT_INV_SQRT2PI * exp(-0.5f * x * x);
    case 6: {
        float8 s = 1.0f / (1.0f + exp(-x));
        return s * (1.0f + x * (1.0f - s));
    }
    case 7: return select(select((float8)1.0f, x / 3.0f + 0.5f, x <= 3.0f), (float8)0.0f, x < -3.0f);
    case 8: return select((float8)0.0f, (float8)1.0f, x > 0.0f && x < 6.0f);
    default: return (float8)1.0f;
    }
}

__kernel void act_fwd_chunks_f32(__global float *y, ulong y_off, __global const float *x,
                                 ulong x_off, uint n, int act, uint chunk)
{
    ulong lo64 = (ulong)get_global_id(0) * chunk;
    if (lo64 >= n)
        return;
    uint lo = (uint)lo64, hi = min(lo + chunk, n), hi8 = lo + (hi - lo) / 8 * 8;
    __global float *yp = y + y_off;
    __global const float *xp = x + x_off;
    for (uint i = lo; i < hi8; i += 8)
        vstore8(ct_act_f8(act, vload8(0, xp + i)), 0, yp + i);
    for (uint i = hi8; i < hi; i++)
        yp[i] = ct_act_f(act, xp[i]);
}

__kernel void act_bwd_chunks_f32(__global float *dx, ulong dx_off, __global const float *dy,
                                 ulong dy_off, __global const float *x, ulong x_off,
                                 __global const float *y, ulong y_off, uint n, int act,
                                 uint chunk)
{
    ulong lo64 = (ulong)get_global_id(0) * chunk;
    if (lo64 >= n)
        return;
    uint lo = (uint)lo64, hi = min(lo + chunk, n), hi8 = lo + (hi - lo) / 8 * 8;
    __global float *dxp = dx + dx_off;
    __global const float *dyp = dy + dy_off, *xp = x + x_off, *yp = y + y_off;
    for (uint i = lo; i < hi8; i += 8)
        vstore8(vload8(0, dyp + i) * ct_act_df8(act, vload8(0, xp + i), vload8(0, yp + i)), 0,
                dxp + i);
    for (uint i = hi8; i < hi; i++)
        dxp[i] = dyp[i] * ct_act_df(act, xp[i], yp[i]);
}
