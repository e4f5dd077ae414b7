/*
 * loss.cl - losses: softmax + cross-entropy over logits with integer labels,
 * and mean-squared error.
 *
 * Softmax cross-entropy, GPU class: the forward gives each row L lanes of a
 * work-group (R = wg / L rows a group; L a power of two, one row for long
 * rows). Each lane reads its share of the row (chunks of 8 logits, lane
 * after lane) twice: first for its maximum, which a tree in local memory
 * (log2 L levels) makes the row's, then for the Kahan-compensated sum of
 * exp(x - max) with that maximum known (no rescaling: vector exps) and the
 * first index holding it; a fixed-order compensated tree merges the sums.
 * The row's loss, hit, maximum and exponential sum go to a workspace; softmax_xent_sum_f32 then adds the
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
 * The GPU class's softmax cross-entropy types the logits and their
 * gradient ct_at (common.cl: 16 bits in the CT_ACT16 variants, loaded by
 * ct_ld / ct_ld8 into float, every sum in float); the CPU kernels and the
 * other losses read floats only.
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
    ct_tree_sum(red, lid, wg);
    ct_tree_sum(red + wg, lid, wg);
    if (lid == 0) {
        loss[loss_off] = red[0] / (float)N;
        if (correct)
            correct[correct_off] = red[wg];
    }
}

/* ---- GPU class: L lanes per row ---- */

/* A lane's share of a row: the chunks of 8 logits q = lane, lane + L, ...
 * of the K / 8 whole ones (vload8: neighbouring lanes read neighbouring 32
 * bytes, and CPU compilers vectorize each chunk), then the tail past the
 * last whole chunk, k = 8 (K / 8) + lane, + L, ... */

/* The lane's maximum (-INFINITY for an empty share; NaN is never a
 * maximum, as fmax). */
inline float xent_lane_max(__global const ct_at *row, uint K, uint lane, uint L)
{
    uint Q = K / 8;
    float8 m8 = -INFINITY;
    for (uint q = lane; q < Q; q += L)
        m8 = fmax(m8, ct_ld8(row, q));
    float4 m4 = fmax(m8.lo, m8.hi);
    float2 m2 = fmax(m4.lo, m4.hi);
    float m = fmax(m2.x, m2.y);
    for (uint k = Q * 8 + lane; k < K; k += L)
        m = fmax(m, ct_ld(row, k));
    return m;
}

/* The lane's sum of exp(x_k - m), m the row's maximum (no rescaling): 8
 * Kahan-compensated vector lanes, their compensations folded in, then the
 * lanes and the tail in index order into a scalar Kahan sum, *pe with its
 * compensation *pc (the sum is *pe - *pc). *pam: the first index of the
 * share holding m (K: none). A NaN makes the sum NaN and never equals m;
 * -inf adds nothing against a finite m (a row of only -inf and NaN gets a
 * NaN sum, as xent_row). */
inline void xent_lane_expsum(__global const ct_at *row, uint K, uint lane, uint L, float m,
                             float *pe, float *pc, uint *pam)
{
    uint Q = K / 8;
    float8 e8 = 0.0f, c8 = 0.0f;
    uint8 a8 = (uint8)K;
    const uint8 i8 = (uint8)(0, 1, 2, 3, 4, 5, 6, 7);
    for (uint q = lane; q < Q; q += L) {
        float8 v = ct_ld8(row, q);
        loss_kahan8(&e8, &c8, exp(v - m));
        a8 = min(a8, select((uint8)K, (uint8)(q * 8) + i8, v == m));
    }
    float e = 0.0f, c = 0.0f;
    e8 -= c8;
    loss_kahan(&e, &c, e8.s0);
    loss_kahan(&e, &c, e8.s1);
    loss_kahan(&e, &c, e8.s2);
    loss_kahan(&e, &c, e8.s3);
    loss_kahan(&e, &c, e8.s4);
    loss_kahan(&e, &c, e8.s5);
    loss_kahan(&e, &c, e8.s6);
    loss_kahan(&e, &c, e8.s7);
    uint4 a4 = min(a8.lo, a8.hi);
    uint2 a2 = min(a4.lo, a4.hi);
    uint am = min(a2.x, a2.y);
    for (uint k = Q * 8 + lane; k < K; k += L) { /* past every chunk's index */
        float v = ct_ld(row, k);
        loss_kahan(&e, &c, exp(v - m));
        am = min(am, v == m ? k : K);
    }
    *pe = e;
    *pc = c;
    *pam = am;
}

/* Trees over each row's L lanes (lid = row-in-group L + lane) into the
 * row's first lane, lower lane first at every level. Every work-item of
 * the group must call them (barriers). The maximum: */
inline void xent_tree_max(__local float *rm, uint lid, uint lane, uint L)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = L / 2; s > 0; s >>= 1) {
        if (lane < s)
            rm[lid] = fmax(rm[lid], rm[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* The sums re with their compensations rc (each level adds the rounding
 * error of its addition, exact by TwoSum, to the compensations), and the
 * first index holding the maximum ri. */
inline void xent_tree_sum(__local float *re, __local float *rc, __local uint *ri, uint lid,
                          uint lane, uint L)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = L / 2; s > 0; s >>= 1) {
        if (lane < s) {
            uint j = lid + s;
            float a = re[lid], b = re[j], t = a + b, bv = t - a;
            float err = (a - (t - bv)) + (b - bv); /* a + b = t + err exactly */
            re[lid] = t;
            rc[lid] = (rc[lid] + rc[j]) - err;
            ri[lid] = min(ri[lid], ri[j]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* A row's maximum, exponential sum and first argmax (K: none) into rm, re,
 * ri at the row's first lane (lid - lane), for every lane to read after
 * it: the lanes' maxima and their tree, then with that maximum the lanes'
 * sums and their tree (two reads of the row, no rescaling). A row past N
 * (the last group's spare rows) has K = 0 here and sums nothing. */
inline void xent_row_stats(__global const ct_at *row, uint K, uint lid, uint lane, uint L,
                           __local float *rm, __local float *re, __local uint *ri)
{
    rm[lid] = xent_lane_max(row, K, lane, L);
    xent_tree_max(rm, lid, lane, L);
    float m = rm[lid - lane], e, c;
    barrier(CLK_LOCAL_MEM_FENCE); /* every lane has m before rm holds compensations */
    uint am;
    xent_lane_expsum(row, K, lane, L, m, &e, &c, &am);
    re[lid] = e;
    rm[lid] = c;
    ri[lid] = am;
    xent_tree_sum(re, rm, ri, lid, lane, L);
    if (lane == 0) {
        re[lid] -= rm[lid];
        rm[lid] = m;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/*
 * Rows r = group R + lid / L (R = wg / L) of L lanes each: ws[r] = the row's
 * loss logsumexp(x_r) - x_r[label_r] (NaN for a label outside [0, K)),
 * ws[N + r] = 1 when the row's first argmax is the label, else 0 (as
 * xent_row), ws[2N + r] = the row's maximum, ws[3N + r] = sum exp(x_r - max)
 * (what the backward reads back). Groups: ceil(N / R); no early return
 * (barriers). x: (N, K), labels: (N) int32, ws: (4 N), rm, re, ri: (wg)
 */
__kernel void softmax_xent_fwd_f32(__global float *ws, ulong ws_off, __global const ct_at *x,
                                   ulong x_off, __global const int *labels, ulong labels_off,
                                   uint N, uint K, uint L, __local float *rm, __local float *re,
                                   __local uint *ri)
{
    uint lid = get_local_id(0), lane = lid & (L - 1);
    uint r = get_group_id(0) * (get_local_size(0) / L) + lid / L;
    int in = r < N;
    __global const ct_at *row = x + x_off + (ulong)(in ? r : 0) * K;
    xent_row_stats(row, in ? K : 0, lid, lane, L, rm, re, ri);
    if (lane == 0 && in) { /* no return in a kernel with barriers: pocl miscompiles it */
        float m = rm[lid], e = re[lid];
        uint am = ri[lid];
        if (am == K)
            am = K - 1; /* a row of NaN: xent_row's search ends on the last index */
        int lab = labels[labels_off + r];
        int valid = lab >= 0 && (uint)lab < K;
        __global float *o = ws + ws_off;
        o[r] = valid ? (m - ct_ld(row, lab)) + log(e) : NAN;
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

/* dx of row r from its maximum m and exponential sum e, the lane's share
 * (chunks of 8, then the tail, as the forward's lanes). */
inline void xent_row_dx(__global ct_at *drow, __global const ct_at *row, uint K, int lab, uint lane,
                        uint L, float m, float e, float scale)
{
    float inv = 1.0f / e;
    int valid = lab >= 0 && (uint)lab < K;
    uint Q = K / 8, hot = valid ? (uint)lab : K;
    const uint8 i8 = (uint8)(0, 1, 2, 3, 4, 5, 6, 7);
    for (uint q = lane; q < Q; q += L) {
        float8 p = exp(ct_ld8(row, q) - m) * inv;
        float8 one = select((float8)0.0f, (float8)1.0f, (uint8)(q * 8) + i8 == (uint8)hot);
        ct_st8(drow, q, valid ? (p - one) * scale : (float8)NAN);
    }
    for (uint k = Q * 8 + lane; k < K; k += L) {
        float p = exp(ct_ld(row, k) - m) * inv;
        ct_st(drow, k, valid ? (p - (k == hot ? 1.0f : 0.0f)) * scale : NAN);
    }
}

/*
 * Rows as softmax_xent_fwd_f32: dx = (softmax(x_r) - onehot(label_r)) *
 * scale, scale = dloss_scale / N from the launcher, the row statistics
 * first computed as the forward does (each logit read twice).
 * x, dx: (N, K), labels: (N) int32, rm, re, ri: (wg)
 */
__kernel void softmax_xent_bwd_f32(__global ct_at *dx, ulong dx_off, __global const ct_at *x,
                                   ulong x_off, __global const int *labels, ulong labels_off,
                                   uint N, uint K, uint L, float scale, __local float *rm,
                                   __local float *re, __local uint *ri)
{
    uint lid = get_local_id(0), lane = lid & (L - 1);
    uint r = get_group_id(0) * (get_local_size(0) / L) + lid / L;
    int in = r < N;
    __global const ct_at *row = x + x_off + (ulong)(in ? r : 0) * K;
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
__kernel void softmax_xent_bwd_saved_f32(__global ct_at *dx, ulong dx_off, __global const ct_at *x,
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
    ct_tree_sum(red, lid, wg);
    ct_tree_sum(red + wg, lid, wg);
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

/*
 * Binary cross-entropy on logits (multi-label), as
 * torch.nn.BCEWithLogitsLoss: per element max(x, 0) - x t + log1p(exp(-|x|))
 * (no overflow for any x), mean over the n elements. One work-group:
 * loss[0] = that mean, correct[0] (unless NULL) = how many elements have
 * (x > 0) == (t > 0.5), divided by K (the labels per sample: a sample's
 * share of right labels, summed over the batch). red: (2 wg) floats
 */
__kernel void bce_fwd_f32(__global float *loss, ulong loss_off, __global float *correct, ulong correct_off,
                          __global const float *x, ulong x_off, __global const float *t, ulong t_off, uint n,
                          uint K, __local float *red)
{
    uint lid = get_local_id(0), wg = get_local_size(0);
    float s = 0.0f, comp = 0.0f, right = 0.0f;
    for (uint i = lid; i < n; i += wg) {
        float v = x[x_off + i], tv = t[t_off + i];
        loss_kahan(&s, &comp, fmax(v, 0.0f) - v * tv + log1p(exp(-fabs(v))));
        right += (v > 0.0f) == (tv > 0.5f) ? 1.0f : 0.0f; /* exact: integers below 2^24 */
    }
    red[lid] = s;
    red[wg + lid] = right;
    ct_tree_sum(red, lid, wg);
    ct_tree_sum(red + wg, lid, wg);
    if (lid == 0) {
        loss[loss_off] = red[0] / (float)n;
        if (correct)
            correct[correct_off] = red[wg] / (float)K;
    }
}

/* dx = k (sigmoid(x) - t), dt = -k x (skipped when dt is NULL), k =
 * dloss_scale / n. x, t, dx, dt: (n) */
__kernel void bce_bwd_f32(__global float *dx, ulong dx_off, __global float *dt, ulong dt_off,
                          __global const float *x, ulong x_off, __global const float *t, ulong t_off, uint n,
                          float k)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    float v = x[x_off + i];
    dx[dx_off + i] = k * (1.0f / (1.0f + exp(-v)) - t[t_off + i]);
    if (dt)
        dt[dt_off + i] = -k * v;
}

/*
 * Per-pixel softmax cross-entropy (segmentation): scores (n, K, P), an
 * image's K class planes of P pixels, with a label per pixel; rows r = i P
 * + p, N = n P of them. A work-item per pixel reads its K scores a plane
 * apart (neighbouring work-items read neighbouring pixels: coalesced), the
 * maximum and its first index, then the Kahan-compensated sum of exp(x -
 * max); it writes the row's loss and hit where softmax_xent_sum_f32 reads
 * them. Both classes (a pixel's K scores are short and strided).
 * x: (n, K, P); labels: (N) int32; ws: (2 N)
 */
__kernel void softmax_xent_px_fwd_f32(__global float *ws, ulong ws_off, __global const float *x, ulong x_off,
                                      __global const int *labels, ulong labels_off, uint N, uint K, uint P,
                                      uint2 div_p)
{
    uint r = get_global_id(0);
    if (r >= N)
        return;
    uint i = ct_udiv(r, div_p);
    __global const float *row = x + x_off + (ulong)i * K * P + (r - i * P);
    float m = row[0];
    uint am = 0;
    for (uint k = 1; k < K; k++) {
        float v = row[(ulong)k * P];
        if (v > m) {
            m = v;
            am = k;
        }
    }
    float s = 0.0f, comp = 0.0f;
    for (uint k = 0; k < K; k++)
        loss_kahan(&s, &comp, exp(row[(ulong)k * P] - m));
    int lab = labels[labels_off + r];
    int valid = lab >= 0 && (uint)lab < K;
    ws[ws_off + r] = valid ? log(s) + m - row[(ulong)(valid ? lab : 0) * P] : NAN;
    ws[ws_off + N + r] = valid && am == (uint)lab ? 1.0f : 0.0f;
}

/* dx = (softmax - onehot) * scale per pixel, the scores and dx (n, K, P)
 * read and written a plane apart as the forward does; a bad label gives
 * NaN. */
__kernel void softmax_xent_px_bwd_f32(__global float *dx, ulong dx_off, __global const float *x, ulong x_off,
                                      __global const int *labels, ulong labels_off, uint N, uint K, uint P,
                                      uint2 div_p, float scale)
{
    uint r = get_global_id(0);
    if (r >= N)
        return;
    uint i = ct_udiv(r, div_p);
    ulong base = (ulong)i * K * P + (r - i * P);
    __global const float *row = x + x_off + base;
    __global float *drow = dx + dx_off + base;
    float m = row[0];
    for (uint k = 1; k < K; k++)
        m = fmax(m, row[(ulong)k * P]);
    float s = 0.0f, comp = 0.0f;
    for (uint k = 0; k < K; k++)
        loss_kahan(&s, &comp, exp(row[(ulong)k * P] - m));
    int lab = labels[labels_off + r];
    int valid = lab >= 0 && (uint)lab < K;
    float inv = 1.0f / s;
    for (uint k = 0; k < K; k++) {
        float p = exp(row[(ulong)k * P] - m) * inv;
        drow[(ulong)k * P] = valid ? (p - ((uint)lab == k ? 1.0f : 0.0f)) * scale : NAN;
    }
}
