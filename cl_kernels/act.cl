/*
 * act.cl - activations, forward and backward. `act` follows enum ct_act
 * (src/ops/act.h): 0 none, 1 relu, 2 leaky relu, 3 sigmoid, 4 tanh, 5 gelu.
 */

#define CT_LEAKY_SLOPE 0.01f
#define CT_INV_SQRT2 0.70710678118654752f
#define CT_INV_SQRT2PI 0.39894228040143268f

inline float ct_act_f(int act, float x)
{
    switch (act) {
    case 1: return fmax(x, 0.0f);
    case 2: return x > 0.0f ? x : CT_LEAKY_SLOPE * x;
    case 3: return 1.0f / (1.0f + exp(-x));
    case 4: return tanh(x);
    case 5: return 0.5f * x * (1.0f + erf(x * CT_INV_SQRT2));
    default: return x;
    }
}

/* d act / dx at x (forward output y where cheaper) */
inline float ct_act_df(int act, float x, float y)
{
    switch (act) {
    case 1: return x > 0.0f ? 1.0f : 0.0f;
    case 2: return x > 0.0f ? 1.0f : CT_LEAKY_SLOPE;
    case 3: return y * (1.0f - y);
    case 4: return 1.0f - y * y;
    case 5: return 0.5f * (1.0f + erf(x * CT_INV_SQRT2)) + x * CT_INV_SQRT2PI * exp(-0.5f * x * x);
    default: return 1.0f;
    }
}

__kernel void act_fwd_f32(__global float *y, ulong y_off, __global const float *x, ulong x_off,
                          uint n, int act)
{
    uint i = get_global_id(0);
    if (i < n)
        y[y_off + i] = ct_act_f(act, x[x_off + i]);
}

__kernel void act_bwd_f32(__global float *dx, ulong dx_off, __global const float *dy, ulong dy_off,
                          __global const float *x, ulong x_off, __global const float *y,
                          ulong y_off, uint n, int act)
{
    uint i = get_global_id(0);
    if (i < n)
        dx[dx_off + i] = dy[dy_off + i] * ct_act_df(act, x[x_off + i], y[y_off + i]);
}
