/*
 * act.cl - activations, forward and backward. `act` follows enum ct_act
 * (src/ops/act.h): 0 none, 1 relu, 2 leaky relu, 3 sigmoid, 4 tanh, 5 gelu.
 */

/* ct_act_f / ct_act_df live in common.cl: the fused bias + activation
 * kernels (dense.cl) share them. */

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
