/*
 * loss.cl - losses: softmax + cross-entropy over logits with integer labels,
 * and mean-squared error.
 *
 * Softmax cross-entropy, GPU class: the forward gives each row L lanes of a
 * work-group (R = wg / L rows a group; L a power of two, one row for long
 * rows). Each lane reads its strided share of the row once, keeping the
 * running maximum, its first index and the Kahan-compensated sum of
 * exp(x - max), rescaled when the maximum grows; a fixed-order tree in local
 * memory (log2 L levels) merges the lanes. The row's loss, hit, maximum and
 * exponential sum go to a workspace; softmax_xent_sum_f32 then adds the
 * losses and hits in one work-group in a fixed order (no atomics), so the
 * result is deterministic run to run. The backward reads the row's maximum
 * and sum from that workspace (or recomputes them the same way) and reads
 * the row once more to write dx.
 *
 * CPU class: a work-item per row (xent_row, 8-lane vectors), then the same
 * final sum. The mean-squared error reduces in one work-group: each
 * work-item sums its strided share with Kahan compensation (error ~2 eps of
 * the sum of magnitudes however long the share), then a fixed-order tree in
 * local memory (log2(wg) levels) combines the shares. Work-group sizes are
 * powers of two, chosen by the launchers (src/ops/loss.c).
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
 * [0, K)) and sets *hit when the first argmax is the label (the CPU
 * class's forward). */
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

/* The end of the forward's final sum: the work-items' loss shares and hit
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

/* ---- GPU class: L lanes per row ---- */

/* One lane's share of a row, k = lane, lane + L, ...: *m its maximum, *am
 * the first index holding it (K: none yet), *e sum exp(x_k - *m), each term
 * Kahan-added and the sum rescaled when the maximum grows. NaN is never a
 * maximum (as fmax) but makes the sum NaN; -inf adds nothing (exp gives 0
 * against any finite maximum), and a row of only -inf and NaN gets a NaN
 * loss through m - x[label] anyway. */
inline void xent_lane(__global const float *row, uint K, uint lane, uint L, float *pm, float *pe,
                      uint *pam)
{
    float m = -INFINITY, e = 0.0f, c = 0.0f;
    uint am = K;
    for (uint k = lane; k < K; k += L) {
        float v = row[k];
        if (v > m || (am == K && v == -INFINITY)) {
            if (e != 0.0f) {
                float f = exp(m - v);
                e *= f;
                c *= f;
            }
            m = v;
            am = k;
        }
        if (v != -INFINITY)
            loss_kahan(&e, &c, exp(v - m));
    }
    *pm = m;
    *pe = e - c; /* fold the compensation in before the lanes meet */
    *pam = am;
}

/* Merges each row's L lanes (lid = row-in-group L + lane) into the row's
 * first lane, lower lane first at every level: the maximum, the first
 * index holding it, and the sum rescaled to that maximum. Every work-item
 * of the group must call it (barriers). */
inline void xent_tree(__local float *rm, __local float *re, __local uint *ri, uint lid, uint lane,
                      uint L)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = L / 2; s > 0; s >>= 1) {
        if (lane < s) {
            uint j = lid + s;
            float m1 = rm[lid], m2 = rm[j], m = fmax(m1, m2);
            float e1 = m1 == m ? re[lid] : re[lid] * exp(m1 - m);
            float e2 = m2 == m ? re[j] : re[j] * exp(m2 - m);
            uint a1 = ri[lid], a2 = ri[j];
            rm[lid] = m;
            re[lid] = e1 + e2;
            ri[lid] = m1 > m2 ? a1 : m2 > m1 ? a2 : min(a1, a2);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* A row's maximum and exponential sum into rm, re, ri at the row's first
 * lane (its = lid - lane): the lanes' shares, then the tree. A row past N
 * (the last group's spare rows) has K = 0 here and merges nothing. */
inline void xent_row_stats(__global const float *row, uint K, uint lid, uint lane, uint L,
                           __local float *rm, __local float *re, __local uint *ri)
{
    float m, e;
    uint am;
    xent_lane(row, K, lane, L, &m, &e, &am);
    rm[lid] = m;
    re[lid] = e;
    ri[lid] = am;
    xent_tree(rm, re, ri, lid, lane, L);
}

/*
 * Rows r = group R + lid / L (R = wg / L) of L lanes each: ws[r] = the row's
 * loss logsumexp(x_r) - x_r[label_r] (NaN for a label outside [0, K)),
 * ws[N + r] = 1 when the row's first argmax is the label, else 0 (as
 * xent_row), ws[2N + r] = the row's maximum, ws[3N + r] = sum exp(x_r - max)
 * (what the backward reads back). Groups: ceil(N / R); no early return
 * (barriers). x: (N, K), labels: (N) int32, ws: (4 N), rm, re, ri: (wg)
 */
__kernel void softmax_xent_fwd_f32(__global float *ws, ulong ws_off, __global const float *x,
                                   ulong x_off, __global const int *labels, ulong labels_off,
                                   uint N, uint K, uint L, __local float *rm, __local float *re,
                                   __local uint *ri)
{
    uint lid = get_local_id(0), lane = lid & (L - 1);
    uint r = get_group_id(0) * (get_local_size(0) / L) + lid / L;
    int in = r < N;
    __global const float *row = x + x_off + (ulong)(in ? r : 0) * K;
    xent_row_stats(row, in ? K : 0, lid, lane, L, rm, re, ri);
    if (lane == 0 && in) { /* no return in a kernel with barriers: pocl miscompiles it */
        float m = rm[lid], e = re[lid];
        uint am = ri[lid];
        if (am == K)
            am = K - 1; /* a row of NaN: xent_row's search ends on the last index */
        int lab = labels[labels_off + r];
        int valid = lab >= 0 && (uint)lab < K;
        __global float *o = ws + ws_off;
        o[r] = valid ? (m - row[lab]) + log(e) : NAN;
        o[N + r] = valid && am == (uint)lab ? 1.0f : 0.0f;
        o[2 * (ulong)N + r] = m;
        o[3 * (ulong)N + r] = e;
    }
}

/*
 * CPU devices: one work-item per row writes the row's loss and hit
 * (xent_row), then softmax_xent_sum_f32 adds them up in one work-group with
 * strided Kahan shares and a tree; the rows run on every core.
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
 * the row hits, both classes. ws: (2 N) as softmax_xent_rows_f32 or
 * softmax_xent_fwd_f32 left it, red: (2 wg) floats */
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

/* dx of row r from its maximum m and exponential sum e, lane's share. */
inline void xent_row_dx(__global float *drow, __global const float *row, uint K, int lab, uint lane,
                        uint L, float m, float e, float scale)
{
    float inv = 1.0f / e;
    int valid = lab >= 0 && (uint)lab < K;
    for (uint k = lane; k < K; k += L) {
        float p = exp(row[k] - m) * inv;
        drow[k] = valid ? (p - (k == (uint)lab ? 1.0f : 0.0f)) * scale : NAN;
    }
}

/*
 * Rows as softmax_xent_fwd_f32: dx = (softmax(x_r) - onehot(label_r)) *
 * scale, scale = dloss_scale / N from the launcher, the row statistics
 * first computed as the forward does (each logit read twice).
 * x, dx: (N, K), labels: (N) int32, rm, re, ri: (wg)
 */
__kernel void softmax_xent_bwd_f32(__global float *dx, ulong dx_off, __global const float *x,
                                   ulong x_off, __global const int *labels, ulong labels_off,
                                   uint N, uint K, uint L, float scale, __local float *rm,
                                   __local float *re, __local uint *ri)
{
    uint lid = get_local_id(0), lane = lid & (L - 1);
    uint r = get_group_id(0) * (get_local_size(0) / L) + lid / L;
    int in = r < N;
    __global const float *row = x + x_off + (ulong)(in ? r : 0) * K;
    xent_row_stats(row, in ? K : 0, lid, lane, L, rm, re, ri);
    if (in) /* no return in a kernel with barriers: pocl miscompiles it */
        xent_row_dx(dx + dx_off + (ulong)r * K, row, K, labels[labels_off + r], lane, L,
                    rm[lid - lane], re[lid - lane], scale);
}

/*
 * The same with each row's maximum and exponential sum as the forward left
 * them in ws: each logit read once. No barriers; L lanes a row as the
 * forward (global size a multiple of L). x, dx: (N, K), labels: (N) int32,
 * ws: (4 N)
 */
__kernel void softmax_xent_bwd_saved_f32(__global float *dx, ulong dx_off, __global const float *x,
                                         ulong x_off, __global const int *labels, ulong labels_off,
                                         __global const float *ws, ulong ws_off, uint N, uint K,
                                         uint L, float scale)
{
    uint gid = get_global_id(0), lane = gid & (L - 1), r = gid / L;
    if (r >= N)
        return;
    __global const float *st = ws + ws_off;
    xent_row_dx(dx + dx_off + (ulong)r * K, x + x_off + (ulong)r * K, K, labels[labels_off + r],
                lane, L, st[2 * (ulong)N + r], st[3 * (ulong)N + r], scale);
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
