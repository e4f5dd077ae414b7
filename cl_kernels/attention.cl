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
 *
 * The GPU-class kernels' rows are ct_at (common.cl): 16-bit in the storage
 * variants (attention_sbf16, _sfp16), where attention keeps its scores,
 * probabilities and their gradients in the activation storage. The
 * forward writes each probability once (exp(s - max) / sum, the exp
 * computed again rather than stored and rescaled: the same float, one
 * rounding in 16 bits).
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
__kernel void attn_softmax_fwd_f32(__global ct_at *p, ulong p_off, uint T, uint causal,
                                   __local float *red)
{
    uint r = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    uint len = causal ? r % T + 1 : T;
    __global ct_at *row = p + p_off + (ulong)r * T;
    float m = -INFINITY;
    for (uint j = lid; j < len; j += wg)
        m = fmax(m, ct_ld(row, j));
    red[lid] = m;
    attn_tree(red, lid, wg, 1);
    m = red[0];
    barrier(CLK_LOCAL_MEM_FENCE); /* red[0] read by all before reuse */
    float s = 0.0f;
    for (uint j = lid; j < len; j += wg)
        s += exp(ct_ld(row, j) - m);
    red[lid] = s;
    attn_tree(red, lid, wg, 0);
    float inv = 1.0f / red[0];
    for (uint j = lid; j < len; j += wg)
        ct_st(row, j, exp(ct_ld(row, j) - m) * inv);
    for (uint j = len + lid; j < T; j += wg)
        ct_st(row, j, 0.0f);
}

/* d (rows, T): dP in, dS out, as attn_softmax_bwd_rows_f32; red (wg) */
__kernel void attn_softmax_bwd_f32(__global ct_at *d, ulong d_off, __global const ct_at *p,
                                   ulong p_off, uint T, uint causal, __local float *red)
{
    uint r = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    uint len = causal ? r % T + 1 : T;
    __global ct_at *row = d + d_off + (ulong)r * T;
    __global const ct_at *pr = p + p_off + (ulong)r * T;
    float dot = 0.0f;
    for (uint j = lid; j < len; j += wg)
        dot += ct_ld(row, j) * ct_ld(pr, j);
    red[lid] = dot;
    attn_tree(red, lid, wg, 0);
    dot = red[0];
    for (uint j = lid; j < len; j += wg)
        ct_st(row, j, ct_ld(pr, j) * (ct_ld(row, j) - dot));
    for (uint j = len + lid; j < T; j += wg)
        ct_st(row, j, 0.0f);
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

/*
 * Fused attention for the GPU class (src/ops/attention.c): scores, softmax
 * and context in one launch, the backward in two, per (sample, head) pair,
 * reading the heads in place from the projections. A work-group of L x QB
 * work-items (local size (L, QB)) owns QB query rows (or, for the keys'
 * side of the backward, QB key rows); work-item (lane, r) takes its row's
 * keys lane, lane + L, ... and its output columns lane, lane + L, ...
 * Sums run in a fixed order (per work-item in ascending index, then the L
 * lanes' shares in lane order): deterministic, no atomics.
 *
 * Layouts: qkv (T N, 3E) rows t N + n, head h's q at column h D, k at E +
 * h D, v at 2E + h D; o, do (T N, E); p, ds (N H, T, T) rows n H T + h T +
 * t. Causal rows cover keys 0 .. t, and the rest of P's row is written 0.
 */

/* Output columns per work-item and pass: the work-item's columns lane,
 * lane + L, ... in groups of ATTN_NA, each group's sums in registers over
 * one walk of the rows */
#define ATTN_NA 8

/* dot(a, b) over D: float4 partial sums, then the tail */
inline float attn_dot(__local const float *a, __global const float *b, uint D)
{
    float4 acc = (float4)0.0f;
    uint d = 0;
    for (; d + 4 <= D; d += 4)
        acc = ct_fma(vload4(0, a + d), vload4(0, b + d), acc);
    float s = (acc.x + acc.y) + (acc.z + acc.w);
    for (; d < D; d++)
        s = ct_fma(a[d], b[d], s);
    return s;
}

/* out[d] = alpha sum over j < len of w[j] m[j ld + d], for the work-item's
 * columns d = lane + L i */
inline void attn_rows_times(__global float *out, float alpha, __global const float *w,
                            __global const float *m, ulong ld, uint len, uint D, uint lane,
                            uint L)
{
    for (uint d0 = lane; d0 < D; d0 += L * ATTN_NA) {
        float acc[ATTN_NA];
        for (uint a = 0; a < ATTN_NA; a++)
            acc[a] = 0.0f;
        for (uint j = 0; j < len; j++) {
            const float wj = w[j];
            __global const float *mr = m + j * ld;
            for (uint a = 0; a < ATTN_NA; a++)
                if (d0 + a * L < D)
                    acc[a] = ct_fma(wj, mr[d0 + a * L], acc[a]);
        }
        for (uint a = 0; a < ATTN_NA; a++)
            if (d0 + a * L < D)
                out[d0 + a * L] = alpha * acc[a];
    }
}

/* The L lanes' shares red[r L .. r L + L) combined in lane order */
inline float attn_lanes(__local const float *red, uint r, uint L, int is_max)
{
    float v = red[r * L];
    for (uint i = 1; i < L; i++)
        v = is_max ? fmax(v, red[r * L + i]) : v + red[r * L + i];
    return v;
}

/* Forward: p (the probabilities, kept for the backward) and o. qs: (QB D)
 * the block's queries; red: (QB L). Global size (L, QB ceil(T / QB), N H). */
__kernel void attn_fused_fwd_f32(__global float *p, ulong p_off, __global float *o, ulong o_off,
                                 __global const float *qkv, ulong qkv_off, uint T, uint N, uint H,
                                 uint D, uint causal, float scale, __local float *qs,
                                 __local float *red)
{
    const uint lane = get_local_id(0), L = get_local_size(0), r = get_local_id(1);
    const uint QB = get_local_size(1), nh = get_group_id(2), n = nh / H, h = nh - n * H;
    const uint t0 = get_group_id(1) * QB, t = t0 + r, E = H * D;
    const ulong ld3 = 3ul * N * E;
    __global const float *q = qkv + qkv_off + (ulong)n * 3 * E + (ulong)h * D;
    __global const float *k = q + E, *v = q + 2 * E;
    for (uint i = r * L + lane; i < QB * D; i += QB * L) {
        uint rr = i / D, dd = i - rr * D;
        qs[i] = t0 + rr < T ? q[(t0 + rr) * ld3 + dd] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint len = t < T ? (causal ? t + 1 : T) : 0;
    __global float *prow = p + p_off + ((ulong)nh * T + (t < T ? t : 0)) * T;
    __local const float *qr = qs + r * D;
    float m = -INFINITY;
    for (uint j = lane; j < len; j += L) {
        float s = attn_dot(qr, k + j * ld3, D) * scale;
        prow[j] = s;
        m = fmax(m, s);
    }
    red[r * L + lane] = m;
    barrier(CLK_LOCAL_MEM_FENCE);
    m = attn_lanes(red, r, L, 1);
    barrier(CLK_LOCAL_MEM_FENCE); /* red read by the row's lanes before reuse */
    float sum = 0.0f;
    for (uint j = lane; j < len; j += L) {
        float e = exp(prow[j] - m);
        prow[j] = e;
        sum += e;
    }
    red[r * L + lane] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    const float inv = 1.0f / attn_lanes(red, r, L, 0);
    if (t < T)
        for (uint j = lane; j < T; j += L)
            prow[j] = j < len ? prow[j] * inv : 0.0f;
    /* the row's probabilities, written by its L lanes, read by each */
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    if (t >= T)
        return;
    attn_rows_times(o + o_off + ((ulong)t * N + n) * E + (ulong)h * D, 1.0f, prow, v, ld3, len, D,
                    lane, L);
}

/* Backward, the queries' side: dS = P (dP - rowsum(P dP)) with dP = dO V^T,
 * written to ds (read by the keys' side), and dq = scale dS K into dqkv.
 * dos: (QB D) the block's dO rows; red: (QB L). Grid as the forward's. */
__kernel void attn_fused_bwd_q_f32(__global float *ds, ulong ds_off, __global float *dqkv,
                                   ulong dqkv_off, __global const float *p, ulong p_off,
                                   __global const float *dout, ulong dout_off,
                                   __global const float *qkv, ulong qkv_off, uint T, uint N,
                                   uint H, uint D, uint causal, float scale, __local float *dos,
                                   __local float *red)
{
    const uint lane = get_local_id(0), L = get_local_size(0), r = get_local_id(1);
    const uint QB = get_local_size(1), nh = get_group_id(2), n = nh / H, h = nh - n * H;
    const uint t0 = get_group_id(1) * QB, t = t0 + r, E = H * D;
    const ulong ld3 = 3ul * N * E, ld1 = (ulong)N * E;
    __global const float *k = qkv + qkv_off + (ulong)n * 3 * E + E + (ulong)h * D;
    __global const float *v = k + E;
    __global const float *g = dout + dout_off + (ulong)n * E + (ulong)h * D;
    for (uint i = r * L + lane; i < QB * D; i += QB * L) {
        uint rr = i / D, dd = i - rr * D;
        dos[i] = t0 + rr < T ? g[(t0 + rr) * ld1 + dd] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint len = t < T ? (causal ? t + 1 : T) : 0;
    const ulong row = ((ulong)nh * T + (t < T ? t : 0)) * T;
    __global const float *prow = p + p_off + row;
    __global float *srow = ds + ds_off + row;
    __local const float *gr = dos + r * D;
    float dot = 0.0f;
    for (uint j = lane; j < len; j += L) {
        float dp = attn_dot(gr, v + j * ld3, D);
        srow[j] = dp;
        dot += prow[j] * dp;
    }
    red[r * L + lane] = dot;
    barrier(CLK_LOCAL_MEM_FENCE);
    dot = attn_lanes(red, r, L, 0);
    if (t < T)
        for (uint j = lane; j < T; j += L)
            srow[j] = j < len ? prow[j] * (srow[j] - dot) : 0.0f;
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    if (t >= T)
        return;
    attn_rows_times(dqkv + dqkv_off + ((ulong)t * N + n) * 3 * E + (ulong)h * D, scale, srow, k, ld3,
                    len, D, lane, L);
}

/* Backward, the keys' side: for key rows j of the block, dk = scale dS^T q
 * and dv = P^T dO over the queries that saw key j (t >= j when causal),
 * into dqkv. Global size (L, QB ceil(T / QB), N H); no local memory. */
__kernel void attn_fused_bwd_kv_f32(__global float *dqkv, ulong dqkv_off, __global const float *ds,
                                    ulong ds_off, __global const float *p, ulong p_off,
                                    __global const float *dout, ulong dout_off,
                                    __global const float *qkv, ulong qkv_off, uint T, uint N,
                                    uint H, uint D, uint causal, float scale)
{
    const uint lane = get_local_id(0), L = get_local_size(0), r = get_local_id(1);
    const uint QB = get_local_size(1), nh = get_group_id(2), n = nh / H, h = nh - n * H;
    const uint j = get_group_id(1) * QB + r, E = H * D;
    if (j >= T)
        return;
    const ulong ld3 = 3ul * N * E, ld1 = (ulong)N * E;
    __global const float *q = qkv + qkv_off + (ulong)n * 3 * E + (ulong)h * D;
    __global const float *g = dout + dout_off + (ulong)n * E + (ulong)h * D;
    __global const float *scol = ds + ds_off + (ulong)nh * T * T + j;
    __global const float *pcol = p + p_off + (ulong)nh * T * T + j;
    __global float *dk = dqkv + dqkv_off + ((ulong)j * N + n) * 3 * E + E + (ulong)h * D;
    __global float *dv = dk + E;
    const uint t0 = causal ? j : 0;
    for (uint d0 = lane; d0 < D; d0 += L * ATTN_NA) {
        float ak[ATTN_NA], av[ATTN_NA];
        for (uint a = 0; a < ATTN_NA; a++)
            ak[a] = av[a] = 0.0f;
        for (uint t = t0; t < T; t++) {
            const float st = scol[(ulong)t * T], pt = pcol[(ulong)t * T];
            __global const float *qr = q + t * ld3, *gr = g + t * ld1;
            for (uint a = 0; a < ATTN_NA; a++)
                if (d0 + a * L < D) {
                    ak[a] = ct_fma(st, qr[d0 + a * L], ak[a]);
                    av[a] = ct_fma(pt, gr[d0 + a * L], av[a]);
                }
        }
        for (uint a = 0; a < ATTN_NA; a++)
            if (d0 + a * L < D) {
                dk[d0 + a * L] = scale * ak[a];
                dv[d0 + a * L] = av[a];
            }
    }
}
