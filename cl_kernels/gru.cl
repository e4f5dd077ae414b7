/*
 * gru.cl - the GRU's element-wise steps (src/ops/gru.c does the matrix
 * products with ct_gemm and the bias gradients with ct_bias_backward). A
 * row of gates is (3H): r, z, n blocks of H, PyTorch's order. Work-item
 * (j, n) owns unit j of batch row n, so the in-place updates need no
 * synchronization, and neighbouring work-items touch neighbouring floats.
 */

/* One step. In: gates (N, 3H) = x_t W_ihᵀ without the bias; gh (N, 3H) =
 * h_{t-1} W_hhᵀ without the bias (read when has_prev; h_{-1} = 0);
 * b_ih, b_hh (3H); h_prev (N, H) when has_prev. Out: gates become the
 * activations r, z, n (in place); ghn (N, H) = W_hn h_{t-1} + b_hn, which
 * the backward needs for r's gradient; h (N, H). */
__kernel void gru_fwd_f32(__global float *gates, ulong gates_off, __global const float *gh,
                          ulong gh_off, __global const float *b_ih, ulong b_ih_off,
                          __global const float *b_hh, ulong b_hh_off, __global const float *h_prev,
                          ulong h_prev_off, __global float *ghn, ulong ghn_off, __global float *h,
                          ulong h_off, uint N, uint H, int has_prev)
{
    uint j = get_global_id(0), n = get_global_id(1);
    if (j >= H || n >= N)
        return;
    ulong row = (ulong)n * 3 * H + j, k = (ulong)n * H + j;
    __global float *gr = gates + gates_off + row;
    __global const float *bi = b_ih + b_ih_off + j, *bh = b_hh + b_hh_off + j;
    float hr = bh[0], hz = bh[H], hn = bh[2 * H], hp = 0.0f;
    if (has_prev) {
        __global const float *g = gh + gh_off + row;
        hr += g[0];
        hz += g[H];
        hn += g[2 * H];
        hp = h_prev[h_prev_off + k];
    }
    /* (x W_ihᵀ + b_ih) + (h W_hhᵀ + b_hh), PyTorch's grouping */
    float r = ct_sigmoid((gr[0] + bi[0]) + hr), z = ct_sigmoid((gr[H] + bi[H]) + hz);
    float nv = tanh((gr[2 * H] + bi[2 * H]) + r * hn);
    gr[0] = r;
    gr[H] = z;
    gr[2 * H] = nv;
    ghn[ghn_off + k] = hn;
    h[h_off + k] = (1.0f - z) * nv + z * hp;
}

/* One step backward. In: the saved activations gates (N, 3H), ghn and
 * h_prev (N, H) (h_prev read when has_prev), dh (N, H), the whole gradient
 * reaching h_t (from above and from step t + 1). Out: dgi (N, 3H), the
 * gradient of x_t W_ihᵀ + b_ih, and dgh (N, 3H), that of
 * h_{t-1} W_hhᵀ + b_hh (they differ in the n block, where r scales the
 * hidden part); dh_prev (N, H) += dh z, the direct path to h_{t-1}
 * (when has_prev; the launcher adds dgh W_hh). */
__kernel void gru_bwd_f32(__global float *dgi, ulong dgi_off, __global float *dgh, ulong dgh_off,
                          __global const float *gates, ulong gates_off, __global const float *ghn,
                          ulong ghn_off, __global const float *h_prev, ulong h_prev_off,
                          __global const float *dh, ulong dh_off, __global float *dh_prev,
                          ulong dh_prev_off, uint N, uint H, int has_prev)
{
    uint j = get_global_id(0), n = get_global_id(1);
    if (j >= H || n >= N)
        return;
    ulong row = (ulong)n * 3 * H + j, k = (ulong)n * H + j;
    __global const float *gr = gates + gates_off + row;
    float r = gr[0], z = gr[H], nv = gr[2 * H];
    float hp = has_prev ? h_prev[h_prev_off + k] : 0.0f;
    float d = dh[dh_off + k];
    float an = d * (1.0f - z) * (1.0f - nv * nv);
    float ar = an * ghn[ghn_off + k] * r * (1.0f - r);
    float az = d * (hp - nv) * z * (1.0f - z);
    __global float *di = dgi + dgi_off + row, *dg = dgh + dgh_off + row;
    di[0] = ar;
    di[H] = az;
    di[2 * H] = an;
    dg[0] = ar;
    dg[H] = az;
    dg[2 * H] = an * r;
    if (has_prev)
        dh_prev[dh_prev_off + k] += d * z;
}
