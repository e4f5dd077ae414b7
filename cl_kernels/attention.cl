/*
 * attention.cl - the masked softmax of self-attention and its backward,
 * over rows of scores (N H, T, T): row r is query i = r mod T of one
 * (sample, head) pair. Causal: the row covers keys 0 .. i and the rest are
 * written 0; otherwise all T keys.
 *
 * GPU class (attn_softmax_fwd_f32, attn_softmax_bwd_f32): one work-group
 * per row, a power-of-two size from the launcher, launched with exactly
 * `rows` groups (no early return ahead of a barrier); each work-item takes
 * a strided share of the keys and a fixed-order tree in local memory
 * combines the shares. CPU class (*_rows_f32): one work-item per row
 * walking j in ascending order. Either way every sum has a fixed order
 * (deterministic, no atomics), and the forward subtracts the row's maximum
 * before exp, so no score overflows.
 */

/* red[0..wg) combined into red[0] in a fixed order (max or sum); every
 * work-item calls it */
inline void attn_tree(__local float *red, uint lid, uint wg, int is_max)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = wg / 2; s > 0; s >>= 1) {
        if (lid < s)
            red[lid] = is_max ? fmax(red[lid], red[lid + s]) : red[lid] + red[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* p (rows, T): scaled scores in, probabilities out; red (wg) */
__kernel void attn_softmax_fwd_f32(__global float *p, ulong p_off, uint T, uint causal,
                                   __local float *red)
{
    uint r = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    uint len = causal ? r % T + 1 : T;
    __global float *row = p + p_off + (ulong)r * T;
    float m = -INFINITY;
    for (uint j = lid; j < len; j += wg)
        m = fmax(m, row[j]);
    red[lid] = m;
    attn_tree(red, lid, wg, 1);
    m = red[0];
    barrier(CLK_LOCAL_MEM_FENCE); /* red[0] read by all before reuse */
    float s = 0.0f;
    for (uint j = lid; j < len; j += wg) {
        float e = exp(row[j] - m);
        row[j] = e;
        s += e;
    }
    red[lid] = s;
    attn_tree(red, lid, wg, 0);
    float inv = 1.0f / red[0];
    for (uint j = lid; j < len; j += wg)
        row[j] *= inv;
    for (uint j = len + lid; j < T; j += wg)
        row[j] = 0.0f;
}

/* d (rows, T): dP in, dS out, as attn_softmax_bwd_rows_f32; red (wg) */
__kernel void attn_softmax_bwd_f32(__global float *d, ulong d_off, __global const float *p,
                                   ulong p_off, uint T, uint causal, __local float *red)
{
    uint r = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    uint len = causal ? r % T + 1 : T;
    __global float *row = d + d_off + (ulong)r * T;
    __global const float *pr = p + p_off + (ulong)r * T;
    float dot = 0.0f;
    for (uint j = lid; j < len; j += wg)
        dot += row[j] * pr[j];
    red[lid] = dot;
    attn_tree(red, lid, wg, 0);
    dot = red[0];
    for (uint j = lid; j < len; j += wg)
        row[j] = pr[j] * (row[j] - dot);
    for (uint j = len + lid; j < T; j += wg)
        row[j] = 0.0f;
}

/* the same, one work-item per row */
__kernel void attn_softmax_fwd_rows_f32(__global float *p, ulong p_off, uint rows, uint T, uint causal)
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
__kernel void attn_softmax_bwd_rows_f32(__global float *d, ulong d_off, __global const float *p,
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
