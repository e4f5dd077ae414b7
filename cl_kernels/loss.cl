/*
 * loss.cl - losses: softmax + cross-entropy over logits with integer labels,
 * and mean-squared error. Both forwards reduce to one scalar in a single
 * work-group: each work-item sums its strided share with Kahan compensation
 * (error ~2 eps of the sum of magnitudes however long the share), then a
 * fixed-order tree in local memory (log2(wg) levels) combines the shares, so
 * the result is deterministic run to run and accurate to ~(2 + log2 wg) eps
 * relative to sum |term|. Work-group sizes are powers of two, chosen by the
 * launchers (src/ops/loss.c); `red` is local memory of that many floats.
 *
 * A label outside [0, K) is never used as an index: its row contributes a
 * NaN loss (so the mean is NaN and a trainer notices) and NaN gradients.
 */

inline void loss_kahan(float *s, float *comp, float v)
{
    float y = v - *comp;
    float t = *s + y;
    *comp = (t - *s) - y;
    *s = t;
}

/* Sums red[0..wg) into red[0] in a fixed order; every work-item must call it. */
inline void loss_tree_sum(__local float *red, uint lid, uint wg)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = wg / 2; s > 0; s >>= 1) {
        if (lid < s)
            red[lid] += red[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

inline void loss_tree_max(__local float *red, uint lid, uint wg)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = wg / 2; s > 0; s >>= 1) {
        if (lid < s)
            red[lid] = fmax(red[lid], red[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* Kahan-compensated sums in 8 lanes at once. */
inline void loss_kahan8(float8 *s, float8 *comp, float8 v)
{
    float8 y = v - *comp;
    float8 t = *s + y;
    *comp = (t - *s) - y;
    *s = t;
}

/* The row's maximum; vectors of 8 so CPU compilers use SIMD (a NaN is
 * skipped by fmax; it still makes the row's exponential sum NaN). */
inline float row_max(__global const float *row, uint K)
{
    uint K8 = K / 8 * 8;
    float m = row[0];
    if (K8) {
        float8 m8 = vload8(0, row);
        for (uint k = 8; k < K8; k += 8)
            m8 = fmax(m8, vload8(0, row + k));
        float4 m4 = fmax(m8.lo, m8.hi);
        float2 m2 = fmax(m4.lo, m4.hi);
        m = fmax(m, fmax(m2.x, m2.y));
    }
    for (uint k = K8; k < K; k++)
        m = fmax(m, row[k]);
    return m;
}

/* sum_k exp(row[k] - m), Kahan-compensated in 8 lanes, the lanes and the
 * tail then added in index order; with out != NULL each exp is also
 * stored there (the backward's first pass). */
inline float row_expsum(__global const float *row, uint K, float m, __global float *out)
{
    uint K8 = K / 8 * 8;
    float8 e8 = 0.0f, c8 = 0.0f;
    for (uint k = 0; k < K8; k += 8) {
        float8 t = exp(vload8(0, row + k) - m);
        if (out)
            vstore8(t, 0, out + k);
        loss_kahan8(&e8, &c8, t);
    }
    float e = 0.0f, ec = 0.0f;
    e8 -= c8; /* fold each lane's compensation in before the lanes meet */
    loss_kahan(&e, &ec, e8.s0);
    loss_kahan(&e, &ec, e8.s1);
    loss_kahan(&e, &ec, e8.s2);
    loss_kahan(&e, &ec, e8.s3);
    loss_kahan(&e, &ec, e8.s4);
    loss_kahan(&e, &ec, e8.s5);
    loss_kahan(&e, &ec, e8.s6);
    loss_kahan(&e, &ec, e8.s7);
    for (uint k = K8; k < K; k++) {
        float t = exp(row[k] - m);
        if (out)
            out[k] = t;
        loss_kahan(&e, &ec, t);
    }
    return e;
}

/* One row: returns logsumexp(row) - row[lab] (NaN for a label outside
 * [0, K)) and sets *hit when the first argmax is the label. Both forward
 * paths use it, so they agree bit for bit. */
inline float xent_row(__global const float *row, uint K, int lab, float *hit)
{
    float m = row_max(row, K);
    uint am = 0; /* the first index holding the maximum, as torch.argmax */
    while (am + 1 < K && row[am] != m)
        am++;
    float e = row_expsum(row, K, m, 0);
    *hit = 0.0f;
    if (lab < 0 || (uint)lab >= K)
        return NAN;
    *hit = am == (uint)lab ? 1.0f : 0.0f;
    return (m - row[lab]) + log(e);
}

/* The end of both forward reductions: the work-items' loss shares and hit
 * counts through the trees; loss[0] = the mean, correct[0] = the hits (when
 * given). Every work-item of the group must call it (barriers). */
inline void xent_finish(__local float *red, uint lid, uint wg, float s, float hits,
                        __global float *loss, ulong loss_off, __global float *correct,
                        ulong correct_off, uint N)
{
    red[lid] = s;
    red[wg + lid] = hits;
    loss_tree_sum(red, lid, wg);
    loss_tree_sum(red + wg, lid, wg);
    if (lid == 0) {
        loss[loss_off] = red[0] / (float)N;
        if (correct)
            correct[correct_off] = red[wg];
    }
}

/*
 * One work-group: loss[0] = mean over rows of logsumexp(x_r) - x_r[label_r],
 * correct[0] = #rows whose first argmax equals the label (as a float; exact
 * below 2^24 rows, which the launcher enforces); correct may be NULL.
 * x: (N, K), labels: (N) int32, loss: (1), correct: (1), red: (2 wg) floats
 */
__kernel void softmax_xent_fwd_f32(__global float *loss, ulong loss_off, __global float *correct,
                                   ulong correct_off, __global const float *x, ulong x_off,
                                   __global const int *labels, ulong labels_off, uint N, uint K,
                                   __local float *red)
{
    uint lid = get_local_id(0), wg = get_local_size(0);
    float s = 0.0f, comp = 0.0f, hits = 0.0f;
    for (uint r = lid; r < N; r += wg) {
        float hit;
        float l = xent_row(x + x_off + (ulong)r * K, K, labels[labels_off + r], &hit);
        hits += hit;
        loss_kahan(&s, &comp, l);
    }
    xent_finish(red, lid, wg, s, hits, loss, loss_off, correct, correct_off, N);
}

/*
 * CPU devices: one work-item per row writes the row's loss and hit (xent_row,
 * as softmax_xent_fwd_f32's inner loop), then softmax_xent_sum_f32
 * adds them up in one work-group with the same strided Kahan shares and tree,
 * so both ways give the same bits; the rows run on every core instead of one.
 * x: (N, K), labels: (N) int32, ws: (2 N): row losses, then row hits
 */
__kernel void softmax_xent_rows_f32(__global float *ws, ulong ws_off, __global const float *x,
                                    ulong x_off, __global const int *labels, ulong labels_off,
                                    uint N, uint K)
{
    uint r = get_global_id(0);
    if (r >= N)
        return; /* no barrier in this kernel */
    __global float *rowloss = ws + ws_off, *rowhit = ws + ws_off + N;
    float hit;
    rowloss[r] = xent_row(x + x_off + (ulong)r * K, K, labels[labels_off + r], &hit);
    rowhit[r] = hit;
}

/* One work-group: loss[0] = mean of the row losses, correct[0] = sum of
 * the row hits. ws: (2 N) as softmax_xent_rows_f32 left it, red: (2 wg) floats */
__kernel void softmax_xent_sum_f32(__global float *loss, ulong loss_off, __global float *correct,
                                   ulong correct_off, __global const float *ws, ulong ws_off,
                                   uint N, __local float *red)
{
    uint lid = get_local_id(0), wg = get_local_size(0);
    __global const float *rowloss = ws + ws_off, *rowhit = ws + ws_off + N;
    float s = 0.0f, comp = 0.0f, hits = 0.0f;
    for (uint r = lid; r < N; r += wg) {
        loss_kahan(&s, &comp, rowloss[r]);
        hits += rowhit[r];
    }
    xent_finish(red, lid, wg, s, hits, loss, loss_off, correct, correct_off, N);
}

/*
 * CPU devices: one work-item per row, no barriers: dx = (softmax(x_r) -
 * onehot(label_r)) * scale, the row's sum of exponentials as row_expsum
 * computes it (8 Kahan-compensated lanes, then the lanes and the tail in
 * index order). x, dx: (N, K), labels: (N) int32
 */
__kernel void softmax_xent_bwd_rows_f32(__global float *dx, ulong dx_off, __global const float *x,
                                        ulong x_off, __global const int *labels, ulong labels_off,
                                        uint N, uint K, float scale)
{
    uint r = get_global_id(0);
    if (r >= N)
        return;
    __global const float *row = x + x_off + (ulong)r * K;
    __global float *drow = dx + dx_off + (ulong)r * K;
    /* the exps are kept in drow for the second pass: one exp per logit */
    float e = row_expsum(row, K, row_max(row, K), drow);
    float inv = 1.0f / e;
    int lab = labels[labels_off + r];
    uint K8 = K / 8 * 8;
    if (lab < 0 || (uint)lab >= K) {
        for (uint k = 0; k < K; k++)
            drow[k] = NAN;
        return;
    }
    float dl = (drow[lab] * inv - 1.0f) * scale;
    for (uint k = 0; k < K8; k += 8)
        vstore8(vload8(0, drow + k) * inv * scale, 0, drow + k);
    for (uint k = K8; k < K; k++)
        drow[k] = drow[k] * inv * scale;
    drow[lab] = dl;
}

/*
 * One work-group per row, exactly N groups (no guard on the group id: an
 * early return ahead of barriers hangs pocl's CPU device): dx = (softmax(x_r) - onehot(label_r)) * scale,
 * scale = dloss_scale / N from the launcher.
 * x, dx: (N, K), labels: (N) int32, red: (wg) floats
 */
__kernel void softmax_xent_bwd_f32(__global float *dx, ulong dx_off, __global const float *x,
                                   ulong x_off, __global const int *labels, ulong labels_off,
                                   uint N, uint K, float scale, __local float *red)
{
    uint r = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    __global const float *row = x + x_off + (ulong)r * K;
    __global float *drow = dx + dx_off + (ulong)r * K;
    float m = -INFINITY;
    for (uint k = lid; k < K; k += wg)
        m = fmax(m, row[k]);
    red[lid] = m;
    loss_tree_max(red, lid, wg);
    m = red[0];
    barrier(CLK_LOCAL_MEM_FENCE); /* everyone has read red[0] before it is reused */
    float e = 0.0f, ec = 0.0f;
    for (uint k = lid; k < K; k += wg)
        loss_kahan(&e, &ec, exp(row[k] - m));
    red[lid] = e;
    loss_tree_sum(red, lid, wg);
    float inv = 1.0f / red[0];
    int lab = labels[labels_off + r];
    int valid = lab >= 0 && (uint)lab < K;
    for (uint k = lid; k < K; k += wg) {
        float p = exp(row[k] - m) * inv;
        drow[k] = valid ? (p - (k == (uint)lab ? 1.0f : 0.0f)) * scale : NAN;
    }
}

/* One work-group: loss[0] = mean((x - t)^2), mae[0] = mean(|x - t|) (skipped
 * when mae is NULL). x, t: (n), loss, mae: (1), red: (2 wg) floats */
__kernel void mse_fwd_f32(__global float *loss, ulong loss_off, __global float *mae,
                          ulong mae_off, __global const float *x, ulong x_off,
                          __global const float *t, ulong t_off, uint n, __local float *red)
{
    uint lid = get_local_id(0), wg = get_local_size(0);
    float s = 0.0f, comp = 0.0f, a = 0.0f, acomp = 0.0f;
    for (uint i = lid; i < n; i += wg) {
        float d = x[x_off + i] - t[t_off + i];
        loss_kahan(&s, &comp, d * d);
        loss_kahan(&a, &acomp, fabs(d));
    }
    red[lid] = s;
    red[wg + lid] = a;
    loss_tree_sum(red, lid, wg);
    loss_tree_sum(red + wg, lid, wg);
    if (lid == 0) {
        loss[loss_off] = red[0] / (float)n;
        if (mae)
            mae[mae_off] = red[wg] / (float)n;
    }
}

/* dx = k (x - t), dt = -dx (skipped when dt is NULL), k = 2 dloss_scale / n.
 * x, t, dx, dt: (n) */
__kernel void mse_bwd_f32(__global float *dx, ulong dx_off, __global float *dt, ulong dt_off,
                          __global const float *x, ulong x_off, __global const float *t,
                          ulong t_off, uint n, float k)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    float g = k * (x[x_off + i] - t[t_off + i]);
    if (dx)
        dx[dx_off + i] = g;
    if (dt)
        dt[dt_off + i] = -g;
}
