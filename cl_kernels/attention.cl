/*
 * attention.cl - the masked softmax of self-attention and its backward,
 * over rows of scores (N H, T, T): row r is query i = r mod T of one
 * (sample, head) pair. Causal: the row covers keys 0 .. i and the rest are
 * written 0; otherwise all T keys.
 *
 * One work-item per row, in place, walking j in ascending order: every sum
 * has a fixed order (deterministic, no atomics). The forward subtracts the
 * row's maximum before exp, so no score overflows.
 */

/* p (rows, T): scaled scores in, probabilities out */
__kernel void attn_softmax_fwd_f32(__global float *p, ulong p_off, uint rows, uint T, uint causal)
{
    uint r = get_global_id(0);
    if (r >= rows)
        return;
    uint len = causal ? r % T + 1 : T;
    __global float *row = p + p_off + (ulong)r * T;
    float m = row[0];
    for (uint j = 1; j < len; j++)
        m = fmax(m, row[j]);
    float s = 0.0f;
    for (uint j = 0; j < len; j++) {
        float e = exp(row[j] - m);
        row[j] = e;
        s += e;
    }
    float inv = 1.0f / s;
    for (uint j = 0; j < len; j++)
        row[j] *= inv;
    for (uint j = len; j < T; j++)
        row[j] = 0.0f;
}

/* d (rows, T): dP in, dS = P (dP - sum_j dP_j P_j) out (0 at masked keys);
 * p (rows, T) the forward's probabilities */
__kernel void attn_softmax_bwd_f32(__global float *d, ulong d_off, __global const float *p,
                                   ulong p_off, uint rows, uint T, uint causal)
{
    uint r = get_global_id(0);
    if (r >= rows)
        return;
    uint len = causal ? r % T + 1 : T;
    __global float *row = d + d_off + (ulong)r * T;
    __global const float *pr = p + p_off + (ulong)r * T;
    float dot = 0.0f;
    for (uint j = 0; j < len; j++)
        dot += row[j] * pr[j];
    for (uint j = 0; j < len; j++)
        row[j] = pr[j] * (row[j] - dot);
    for (uint j = len; j < T; j++)
        row[j] = 0.0f;
}
