/*
 * lstm.cl - the LSTM's element-wise parts (src/ops/lstm.c does the matrix
 * products with ct_gemm). A row of gates is (4H): i, f, g, o blocks of H,
 * PyTorch's order. Work-item (j, n) owns unit j of batch row n in every
 * kernel, so the in-place updates need no synchronization.
 */

/* gates (rows, 4H) = b_ih + b_hh broadcast over rows; the input projection
 * GEMM then accumulates onto it. */
__kernel void lstm_bias_f32(__global float *gates, ulong gates_off, __global const float *b_ih,
                            ulong b_ih_off, __global const float *b_hh, ulong b_hh_off, uint rows,
                            uint G)
{
    uint j = get_global_id(0), r = get_global_id(1);
    if (j < G && r < rows)
        gates[gates_off + (ulong)r * G + j] = b_ih[b_ih_off + j] + b_hh[b_hh_off + j];
}

/* One step: gates (N, 4H) pre-activations in, activations out (in place);
 * c_prev (N, H) read when has_prev (else c_{-1} = 0); c, h (N, H) out. */
__kernel void lstm_fwd_f32(__global float *gates, ulong gates_off, __global const float *c_prev,
                           ulong c_prev_off, __global float *c, ulong c_off, __global float *h,
                           ulong h_off, uint N, uint H, int has_prev)
{
    uint j = get_global_id(0), n = get_global_id(1);
    if (j >= H || n >= N)
        return;
    __global float *gr = gates + gates_off + (ulong)n * 4 * H + j;
    float i = ct_sigmoid(gr[0]), f = ct_sigmoid(gr[H]), g = tanh(gr[2 * H]),
          o = ct_sigmoid(gr[3 * H]);
    gr[0] = i;
    gr[H] = f;
    gr[2 * H] = g;
    gr[3 * H] = o;
    ulong k = (ulong)n * H + j;
    float cp = has_prev ? c_prev[c_prev_off + k] : 0.0f;
    float ct = f * cp + i * g;
    c[c_off + k] = ct;
    h[h_off + k] = o * tanh(ct);
}

/* One step backward: from the saved activations gates (N, 4H), c and
 * c_prev (N, H), the gradient dh (N, H) reaching h_t (from above and from
 * step t + 1) and dc (N, H) reaching c_t from step t + 1: dgates (N, 4H)
 * with respect to the pre-activations, and dc becomes the gradient
 * reaching c_{t-1} (in place). */
__kernel void lstm_bwd_f32(__global float *dgates, ulong dgates_off, __global const float *gates,
                           ulong gates_off, __global const float *c, ulong c_off,
                           __global const float *c_prev, ulong c_prev_off,
                           __global const float *dh, ulong dh_off, __global float *dc,
                           ulong dc_off, uint N, uint H, int has_prev)
{
    uint j = get_global_id(0), n = get_global_id(1);
    if (j >= H || n >= N)
        return;
    ulong r = (ulong)n * 4 * H + j, k = (ulong)n * H + j;
    __global const float *gr = gates + gates_off + r;
    float i = gr[0], f = gr[H], g = gr[2 * H], o = gr[3 * H];
    float tc = tanh(c[c_off + k]);
    float cp = has_prev ? c_prev[c_prev_off + k] : 0.0f;
    float dhv = dh[dh_off + k];
    float dct = dc[dc_off + k] + dhv * o * (1.0f - tc * tc);
    __global float *dr = dgates + dgates_off + r;
    dr[0] = dct * g * i * (1.0f - i);
    dr[H] = dct * cp * f * (1.0f - f);
    dr[2 * H] = dct * i * (1.0f - g * g);
    dr[3 * H] = dhv * tc * o * (1.0f - o);
    dc[dc_off + k] = dct * f;
}

/* The bias gradients db_ih, db_hh (G) += column sums of dgates (rows, G),
 * in two stages so that a GPU is full even with a few hundred columns.
 * Stage one: a work-item per (column j, slice s) sums the slice's L rows
 * in order, neighbouring work-items reading neighbouring columns, into
 * part[s, j]. dgates: (rows, G), part: (S, G) */
__kernel void lstm_dbias_partial_f32(__global float *part, ulong part_off,
                                     __global const float *dgates, ulong dgates_off, uint rows,
                                     uint G, uint S, uint L)
{
    uint j = get_global_id(0), s = get_global_id(1);
    if (j >= G || s >= S)
        return;
    uint r0 = s * L, r1 = rows - r0 > L ? r0 + L : rows;
    float acc = 0.0f;
    for (uint r = r0; r < r1; r++)
        acc += dgates[dgates_off + (ulong)r * G + j];
    part[part_off + (ulong)s * G + j] = acc;
}

/* Stage two: a work-item per column adds the S slices in order (the same
 * result every run, no atomics) onto both bias gradients.
 * part: (S, G), db_ih, db_hh: (G) */
__kernel void lstm_dbias_final_f32(__global float *db_ih, ulong db_ih_off, __global float *db_hh,
                                   ulong db_hh_off, __global const float *part, ulong part_off,
                                   uint G, uint S)
{
    uint j = get_global_id(0);
    if (j >= G)
        return;
    float acc = 0.0f;
    for (uint s = 0; s < S; s++)
        acc += part[part_off + (ulong)s * G + j];
    db_ih[db_ih_off + j] += acc;
    db_hh[db_hh_off + j] += acc;
}
