/*
 * batchnorm.cl - batch normalisation over (N, C, HW): per channel c the
 * statistics run over the m = N * HW elements x[n, c, s] (HW = 1 for a
 * dense layer's (N, F) output), indexed j = n HW + s in [0, m).
 *
 * Reductions on GPUs: two stages, so that the launch fills a device of 30 to
 * 130 compute units even with 16 channels. The launcher cuts each channel's
 * [0, m) into S slices of L consecutive j (S and L depend on the shape and
 * the device's compute units); stage one (bn_*_partial_f32) runs a
 * work-group per (slice, channel), its work-items reading neighbouring
 * elements (coalesced along HW), each Kahan-summing a strided share in four
 * lanes, a fixed-order tree in local memory (`red`) combining the shares
 * into the slice's partial sums in a workspace; stage two, in the
 * element-wise kernel that follows (bn_fwd_train_f32, bn_bwd_dx_f32),
 * Kahan-sums a channel's S partials in slice order in each work-group that
 * needs them. With one slice (small devices, small batches) stage one
 * finishes the channel itself and the element-wise kernels that follow
 * (bn_fwd_f32, bn_bwd_dx1_f32) need no stage two and no barrier. No
 * atomics: the result is the same every run on a device, and its error is
 * ~(5 + log2 wg) eps of the sum of magnitudes whatever m is.
 *
 * The variance never takes E[x^2] - mean^2, which loses every digit when
 * |mean| >> std (ReLU outputs, un-centred inputs). Each slice makes a
 * second pass over its (cached) elements about its own mean mu_s, summing
 * r_s = sum (x - mu_s) and q_s = sum (x - mu_s)^2; with the channel's mean
 * mu and d_s = mu_s - mu the exact identity
 *   sum over the slice of (x - mu)^2 = q_s + (2 r_s + n_s d_s) d_s
 * combines the slices (Chan's formula with the slice mean's rounding
 * carried in r_s), and an error in mu enters only at second order, as in a
 * two-pass variance.
 *
 * CPU devices (the *_cpu_f32 and *_rows_f32 kernels) run a work-group on
 * one core, so a group per channel strides across rows, divides per element
 * and serialises on barriers. There one work-item owns a channel and walks
 * its N contiguous HW rows with 8-wide vector loads, Kahan-summing each
 * lane (the row tails into a ninth, scalar sum); the lanes combine pairwise
 * in a fixed order, so the error is ~(2 + 4) eps of the sum of magnitudes,
 * inside the GPU path's bound. The second pass of a channel's rows mostly
 * hits the core's cache. The forward's normalisation runs one work-item per
 * (n, c) row; the backward keeps both passes in the channel's work-item,
 * which needs no buffer for the channel sums between them.
 *
 * The stage-one kernels are launched with exactly S x C work-groups, so the
 * group ids need no guard: an early return ahead of the barriers, even a
 * uniform one, hangs pocl's CPU device.
 *
 * The GPU-class kernels type x, y, dy and dx ct_at (common.cl): float, or
 * 16 bits in the program's CT_ACT16 variants (batchnorm_sbf16, _sfp16);
 * statistics, partials, parameters and their gradients stay float, and
 * every sum is float. The CPU kernels below read floats only.
 *
 * relu = 1 fuses y = max(0, bn(x)); its backward takes that y and passes the
 * gradient only where y > 0 (the same as where bn(x) > 0).
 */

inline void bn_kahan(float *s, float *comp, float v)
{
    float y = v - *comp;
    float t = *s + y;
    *comp = (t - *s) - y;
    *s = t;
}

/* Four interleaved Kahan sums (a work-item's elements k, k + wg, k + 2 wg,
 * k + 3 wg go to lanes 0-3): four independent dependency chains instead of
 * one, which a CPU runs about 4x as fast; the lanes combine pairwise. */
inline void bn_kahan4(float4 *s, float4 *comp, float4 v)
{
    float4 y = v - *comp;
    float4 t = *s + y;
    *comp = (t - *s) - y;
    *s = t;
}

inline float bn_lanes4(float4 v, float tail)
{
    return ((v.x + v.z) + (v.y + v.w)) + tail; /* (lo + hi), then its two lanes */
}

/*
 * A work-item's walk over j = j0 + lid, j0 + lid + wg, ... of one slice,
 * as (n, s) = (j / HW, j % HW) advanced by (wg / HW, wg % HW) per step: one
 * division at the start instead of one per element.
 */
typedef struct bn_walk {
    uint n, p, dn, dp;
} bn_walk;

inline bn_walk bn_walk_start(uint j, uint wg, uint HW)
{
    bn_walk w;
    w.n = j / HW;
    w.p = j - w.n * HW;
    w.dn = wg / HW;
    w.dp = wg - w.dn * HW;
    return w;
}

inline void bn_walk_step(bn_walk *w, uint HW)
{
    w->n += w->dn;
    if (w->p >= HW - w->dp) { /* p + dp >= HW, without overflowing */
        w->p -= HW - w->dp;
        w->n++;
    } else {
        w->p += w->dp;
    }
}

/* the element (n, c, p) of x (N, C, HW) */
inline ulong bn_at(const bn_walk *w, uint c, uint C, uint HW)
{
    return ((ulong)w->n * C + c) * HW + w->p;
}

/* the end of slice s of [0, m), slices of L */
inline uint bn_slice_end(uint s, uint L, uint m)
{
    uint j0 = s * L;
    return m - j0 > L ? j0 + L : m;
}

/*
 * Training statistics, stage one: a work-group per (slice s, channel c)
 * writes part[c, s] = (sum x, mu_s = sum x / n_s, r_s, q_s) (see the top
 * of the file). Each work-item sums its elements four at a time into four
 * lanes (bn_kahan4), its last few into a scalar tail. With one slice
 * (S = 1: the usual case on CPU devices, and for small batches) the group
 * holds the whole channel and also writes what stage two would: mean,
 * invstd = 1 / sqrt(var + eps) and the running statistics (unless NULL),
 * as bn_fwd_train_f32 does (there mu_s = mu, so var = q / m). The four
 * loads per step are written out: a helper filling an index array ran the
 * kernel 3x slower on pocl (the array went to memory).
 * x: (N, C, HW), part: (C, S, 4), mean, invstd, running_*: (C), red: (2 wg)
 */
__kernel void bn_stats_partial_f32(__global float *part, ulong part_off, __global float *mean,
                                   ulong mean_off, __global float *invstd, ulong invstd_off,
                                   __global float *running_mean, ulong rmean_off,
                                   __global float *running_var, ulong rvar_off,
                                   __global const ct_at *x, ulong x_off, uint N, uint C, uint HW,
                                   uint L, float momentum, float eps, __local float *red)
{
    uint s = get_group_id(0), S = get_num_groups(0), c = get_group_id(1);
    uint lid = get_local_id(0), wg = get_local_size(0);
    uint m = N * HW, j0 = s * L, j1 = bn_slice_end(s, L, m);
    __global const ct_at *xc = x + x_off;
    float4 sum4 = 0.0f, comp4 = 0.0f;
    float sum1 = 0.0f, comp1 = 0.0f;
    bn_walk w = bn_walk_start(j0 + lid, wg, HW);
    uint j = j0 + lid;
    for (; j < j1 && j1 - j > 3 * wg; j += 4 * wg) {
        float4 v;
        v.x = ct_ld(xc, bn_at(&w, c, C, HW));
        bn_walk_step(&w, HW);
        v.y = ct_ld(xc, bn_at(&w, c, C, HW));
        bn_walk_step(&w, HW);
        v.z = ct_ld(xc, bn_at(&w, c, C, HW));
        bn_walk_step(&w, HW);
        v.w = ct_ld(xc, bn_at(&w, c, C, HW));
        bn_walk_step(&w, HW);
        bn_kahan4(&sum4, &comp4, v);
    }
    for (; j < j1; j += wg, bn_walk_step(&w, HW))
        bn_kahan(&sum1, &comp1, ct_ld(xc, bn_at(&w, c, C, HW)));
    red[lid] = bn_lanes4(sum4, sum1);
    ct_tree_sum(red, lid, wg);
    float sum = red[0];
    float mu = sum / (float)(j1 - j0);
    barrier(CLK_LOCAL_MEM_FENCE); /* red[0] read by all before reuse */
    float4 r4 = 0.0f, cr4 = 0.0f, q4 = 0.0f, cq4 = 0.0f;
    float r1 = 0.0f, cr1 = 0.0f, q1 = 0.0f, cq1 = 0.0f;
    w = bn_walk_start(j0 + lid, wg, HW);
    j = j0 + lid;
    for (; j < j1 && j1 - j > 3 * wg; j += 4 * wg) {
        float4 d;
        d.x = ct_ld(xc, bn_at(&w, c, C, HW));
        bn_walk_step(&w, HW);
        d.y = ct_ld(xc, bn_at(&w, c, C, HW));
        bn_walk_step(&w, HW);
        d.z = ct_ld(xc, bn_at(&w, c, C, HW));
        bn_walk_step(&w, HW);
        d.w = ct_ld(xc, bn_at(&w, c, C, HW));
        bn_walk_step(&w, HW);
        d -= mu;
        bn_kahan4(&r4, &cr4, d);
        bn_kahan4(&q4, &cq4, d * d);
    }
    for (; j < j1; j += wg, bn_walk_step(&w, HW)) {
        float d = ct_ld(xc, bn_at(&w, c, C, HW)) - mu;
        bn_kahan(&r1, &cr1, d);
        bn_kahan(&q1, &cq1, d * d);
    }
    red[lid] = bn_lanes4(r4, r1);
    red[wg + lid] = bn_lanes4(q4, q1);
    ct_tree_sum(red, lid, wg);
    ct_tree_sum(red + wg, lid, wg);
    if (lid == 0) {
        __global float *o = part + part_off + ((ulong)c * S + s) * 4;
        o[0] = sum;
        o[1] = mu;
        o[2] = red[0];
        o[3] = red[wg];
        if (S == 1) {
            float var = fmax(red[wg], 0.0f) / (float)m;
            mean[mean_off + c] = mu;
            invstd[invstd_off + c] = 1.0f / sqrt(var + eps);
            if (running_mean) {
                running_mean[rmean_off + c] =
                    (1.0f - momentum) * running_mean[rmean_off + c] + momentum * mu;
                running_var[rvar_off + c] = (1.0f - momentum) * running_var[rvar_off + c] +
                                            momentum * (var * ((float)m / (float)(m - 1)));
            }
        }
    }
}

/*
 * Stage two for channel c: the slices' partials p = part[c] (S, 4)
 * Kahan-summed in slice order into the mean and the biased variance.
 */
inline void bn_stats_combine(__global const float *p, uint S, uint L, uint m, float *mean_out,
                             float *var_out)
{
    float s = 0.0f, comp = 0.0f;
    for (uint k = 0; k < S; k++)
        bn_kahan(&s, &comp, p[4 * k]);
    float mu = s / (float)m;
    s = comp = 0.0f;
    for (uint k = 0; k < S; k++) {
        float ns = (float)(bn_slice_end(k, L, m) - k * L), d = p[4 * k + 1] - mu;
        bn_kahan(&s, &comp, p[4 * k + 3] + (2.0f * p[4 * k + 2] + ns * d) * d);
    }
    *mean_out = mu;
    *var_out = fmax(s, 0.0f) / (float)m;
}

/*
 * The element-wise passes after a reduction run in a 2-D range: dimension 0
 * the position p in a row of HW, dimension 1 the row r = n C + c of
 * (N, C, HW), a work-item per element (neighbouring work-items,
 * neighbouring addresses); a work-group holds ly rows of lx positions.
 * Each group makes stage two itself for its rows, so no launch sits
 * between the two: work-item (0, t) Kahan-sums row t's channel's S
 * partials, in slice order as a single stage-two kernel would, into the
 * local slots of row t, which the row's work-items read after the barrier
 * (a group repeats the combination for its rows: S <= BN_GROUPS / C small
 * reads next to its lx ly elements). The first group along dimension 0 of
 * the channel's first row (n = 0, r = c) writes the channel's outputs, so
 * each is written once. The channel c = r mod C comes from a multiply
 * (ct_udiv with md = ct_fastdiv(C)): CPU compilers cannot vectorize a
 * row of work-items whose guarded code divides.
 */
inline uint bn_channel(uint r, uint C, uint2 md)
{
    return r - ct_udiv(r, md) * C;
}

/*
 * y = gamma (x - mean) invstd + beta, element-wise, in the 2-D layout
 * above without its stage two. from_var = 0: `stat` is invstd (saved by
 * training: bn_stats_partial_f32 with one slice writes it); 1: `stat` is a
 * variance and invstd = 1 / sqrt(stat + eps) (inference, running stats).
 * y may alias x. x, y: (N, C, HW), mean, stat, gamma, beta: (C)
 */
__kernel void bn_fwd_f32(__global ct_at *y, ulong y_off, __global const ct_at *x, ulong x_off,
                         __global const float *mean, ulong mean_off, __global const float *stat,
                         ulong stat_off, __global const float *gamma, ulong gamma_off,
                         __global const float *beta, ulong beta_off, uint N, uint C, uint HW,
                         uint2 md, float eps, int from_var, int relu)
{
    uint p = get_global_id(0), r = get_global_id(1), c = bn_channel(r, C, md);
    /* the row's constants ahead of the guard (c < C on padded rows too):
     * loads behind it would be per element on CPUs */
    float v = stat[stat_off + c];
    float is = from_var ? 1.0f / sqrt(v + eps) : v;
    float mu = mean[mean_off + c], ga = gamma[gamma_off + c], be = beta[beta_off + c];
    if (p >= HW || r >= N * C)
        return;
    ulong i = (ulong)r * HW + p;
    float o = ga * ((ct_ld(x, x_off + i) - mu) * is) + be;
    ct_st(y, y_off + i, relu && !(o > 0.0f) ? 0.0f : o);
}

/*
 * Training: the statistics from the stage-one partials and y = gamma (x -
 * mean) invstd + beta, in the 2-D layout above; the owning group writes
 * mean, invstd = 1 / sqrt(var + eps) (saved for the backward) and moves
 * the running stats (if not NULL) towards the batch's with the unbiased
 * variance, as PyTorch: running = (1 - momentum) running + momentum
 * batch. m >= 2. y may alias x. Masked past the ends (no return ahead of
 * the barrier). x, y: (N, C, HW), part: (C, S, 4), mean, invstd, gamma,
 * beta, running_mean, running_var: (C), loc: (4 ly)
 */
__kernel void bn_fwd_train_f32(__global ct_at *y, ulong y_off, __global float *mean,
                               ulong mean_off, __global float *invstd, ulong invstd_off,
                               __global float *running_mean, ulong rmean_off,
                               __global float *running_var, ulong rvar_off,
                               __global const ct_at *x, ulong x_off, __global const float *part,
                               ulong part_off, __global const float *gamma, ulong gamma_off,
                               __global const float *beta, ulong beta_off, uint N, uint C,
                               uint HW, uint S, uint L, uint2 md, float momentum, float eps,
                               int relu, __local float *loc)
{
    uint p = get_global_id(0), r = get_global_id(1), t = get_local_id(1), ly = get_local_size(1);
    uint m = N * HW, rows = N * C, c = bn_channel(r, C, md);
    if (get_local_id(0) == 0 && r < rows) {
        float mu, var;
        bn_stats_combine(part + part_off + (ulong)c * S * 4, S, L, m, &mu, &var);
        float is = 1.0f / sqrt(var + eps);
        loc[t] = mu;
        loc[ly + t] = is;
        loc[2 * ly + t] = gamma[gamma_off + c];
        loc[3 * ly + t] = beta[beta_off + c];
        if (r < C && get_group_id(0) == 0) {
            mean[mean_off + c] = mu;
            invstd[invstd_off + c] = is;
            if (running_mean) {
                running_mean[rmean_off + c] =
                    (1.0f - momentum) * running_mean[rmean_off + c] + momentum * mu;
                running_var[rvar_off + c] = (1.0f - momentum) * running_var[rvar_off + c] +
                                            momentum * (var * ((float)m / (float)(m - 1)));
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float mu = loc[t], is = loc[ly + t], ga = loc[2 * ly + t], be = loc[3 * ly + t];
    if (p < HW && r < rows) {
        ulong i = (ulong)r * HW + p;
        float v = ga * ((ct_ld(x, x_off + i) - mu) * is) + be;
        ct_st(y, y_off + i, relu && !(v > 0.0f) ? 0.0f : v); /* fmax(v, 0), a call on pocl */
    }
}

/*
 * Backward, stage one: a work-group per (slice s, channel c) writes
 * part[c, s] = (sum g, sum g xhat) over the slice, g = dy (times y > 0 with
 * relu), xhat = (x - mean) invstd, in four lanes as the statistics. With
 * one slice (S = 1) the group also adds the sums to dbeta and dgamma, which
 * stage two would. `stat` as in bn_fwd_f32 (train: the saved invstd;
 * eval: running_var). x, dy, y: (N, C, HW), mean, stat, dgamma, dbeta: (C),
 * part: (C, S, 2), red: (2 wg)
 */
/* dy at k, 0 where relu is on and y <= 0 (or NaN). y is always read (the
 * launcher passes dy for it without relu) and the choice is a select: a
 * branch on y's sign mispredicts half the time (3 ms of 4.4 on a cnn layer
 * on a CPU). */
inline float bn_bwd_g(__global const ct_at *dy, __global const ct_at *y, ulong k, int relu)
{
    float g = ct_ld(dy, k), yv = ct_ld(y, k);
    int keep = !relu | (yv > 0.0f);
    return keep ? g : 0.0f;
}

__kernel void bn_bwd_partial_f32(__global float *part, ulong part_off, __global float *dgamma,
                                 ulong dgamma_off, __global float *dbeta, ulong dbeta_off,
                                 __global const ct_at *dy, ulong dy_off, __global const ct_at *x,
                                 ulong x_off, __global const ct_at *y, ulong y_off,
                                 __global const float *mean, ulong mean_off,
                                 __global const float *stat, ulong stat_off, uint N, uint C,
                                 uint HW, uint L, float eps, int train, int relu,
                                 __local float *red)
{
    uint s = get_group_id(0), S = get_num_groups(0), c = get_group_id(1);
    uint lid = get_local_id(0), wg = get_local_size(0);
    uint m = N * HW, j0 = s * L, j1 = bn_slice_end(s, L, m);
    float mu = mean[mean_off + c], v = stat[stat_off + c];
    float is = train ? v : 1.0f / sqrt(v + eps);
    __global const ct_at *dyc = dy + dy_off, *xc = x + x_off, *yc = y + y_off;
    float4 sg4 = 0.0f, cg4 = 0.0f, sgx4 = 0.0f, cgx4 = 0.0f;
    float sg1 = 0.0f, cg1 = 0.0f, sgx1 = 0.0f, cgx1 = 0.0f;
    bn_walk w = bn_walk_start(j0 + lid, wg, HW);
    uint j = j0 + lid;
    for (; j < j1 && j1 - j > 3 * wg; j += 4 * wg) {
        float4 g, xh;
        ulong k = bn_at(&w, c, C, HW);
        g.x = bn_bwd_g(dyc, yc, k, relu);
        xh.x = ct_ld(xc, k);
        bn_walk_step(&w, HW);
        k = bn_at(&w, c, C, HW);
        g.y = bn_bwd_g(dyc, yc, k, relu);
        xh.y = ct_ld(xc, k);
        bn_walk_step(&w, HW);
        k = bn_at(&w, c, C, HW);
        g.z = bn_bwd_g(dyc, yc, k, relu);
        xh.z = ct_ld(xc, k);
        bn_walk_step(&w, HW);
        k = bn_at(&w, c, C, HW);
        g.w = bn_bwd_g(dyc, yc, k, relu);
        xh.w = ct_ld(xc, k);
        bn_walk_step(&w, HW);
        bn_kahan4(&sg4, &cg4, g);
        bn_kahan4(&sgx4, &cgx4, g * ((xh - mu) * is));
    }
    for (; j < j1; j += wg, bn_walk_step(&w, HW)) {
        ulong k = bn_at(&w, c, C, HW);
        float g = bn_bwd_g(dyc, yc, k, relu);
        bn_kahan(&sg1, &cg1, g);
        bn_kahan(&sgx1, &cgx1, g * ((ct_ld(xc, k) - mu) * is));
    }
    red[lid] = bn_lanes4(sg4, sg1);
    red[wg + lid] = bn_lanes4(sgx4, sgx1);
    ct_tree_sum(red, lid, wg);
    ct_tree_sum(red + wg, lid, wg);
    if (lid == 0) {
        __global float *o = part + part_off + ((ulong)c * S + s) * 2;
        o[0] = red[0];
        o[1] = red[wg];
        if (S == 1) {
            dbeta[dbeta_off + c] += red[0];
            dgamma[dgamma_off + c] += red[wg];
        }
    }
}

/*
 * The input gradient, element-wise in the 2-D layout above, with stage two
 * of the backward: each group Kahan-sums its rows' channels' partials in
 * slice order (sum g, sum g xhat); the owning group adds them to dbeta and
 * dgamma.
 *   train: dx = gamma invstd (g - sum g / m - xhat sum(g xhat) / m)
 *   eval:  dx = gamma invstd g   (the statistics are constants)
 * Each element is read and written by one work-item, so dx may alias dy.
 * Masked past the ends. x, dy, dx, y: (N, C, HW), gamma, mean, stat,
 * dgamma, dbeta: (C), part: (C, S, 2), loc: (5 ly)
 */
__kernel void bn_bwd_dx_f32(__global ct_at *dx, ulong dx_off, __global float *dgamma,
                            ulong dgamma_off, __global float *dbeta, ulong dbeta_off,
                            __global const ct_at *dy, ulong dy_off, __global const ct_at *x,
                            ulong x_off, __global const ct_at *y, ulong y_off,
                            __global const float *gamma, ulong gamma_off,
                            __global const float *mean, ulong mean_off,
                            __global const float *stat, ulong stat_off,
                            __global const float *part, ulong part_off, uint N, uint C, uint HW,
                            uint S, uint2 md, float eps, int train, int relu, __local float *loc)
{
    uint p = get_global_id(0), r = get_global_id(1), t = get_local_id(1), ly = get_local_size(1);
    uint m = N * HW, rows = N * C, c = bn_channel(r, C, md);
    if (get_local_id(0) == 0 && r < rows) {
        __global const float *pp = part + part_off + (ulong)c * S * 2;
        float sg = 0.0f, cg = 0.0f, sgx = 0.0f, cgx = 0.0f;
        for (uint k = 0; k < S; k++) {
            bn_kahan(&sg, &cg, pp[2 * k]);
            bn_kahan(&sgx, &cgx, pp[2 * k + 1]);
        }
        if (r < C && get_group_id(0) == 0) {
            dbeta[dbeta_off + c] += sg;
            dgamma[dgamma_off + c] += sgx;
        }
        float v = stat[stat_off + c];
        float is = train ? v : 1.0f / sqrt(v + eps);
        loc[t] = mean[mean_off + c];
        loc[ly + t] = is;
        loc[2 * ly + t] = gamma[gamma_off + c] * is;
        loc[3 * ly + t] = sg / (float)m;
        loc[4 * ly + t] = sgx / (float)m;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float mu = loc[t], is = loc[ly + t], gi = loc[2 * ly + t];
    float mg = loc[3 * ly + t], mgx = loc[4 * ly + t];
    if (p < HW && r < rows) {
        ulong i = (ulong)r * HW + p;
        float g = bn_bwd_g(dy + dy_off, y + y_off, i, relu);
        float xh = train ? (ct_ld(x, x_off + i) - mu) * is : 0.0f;
        ct_st(dx, dx_off + i, train ? gi * (g - mg - xh * mgx) : gi * g);
    }
}

/*
 * The input gradient with one slice (S = 1): bn_bwd_partial_f32 has
 * written the channel's sums and added them to dgamma and dbeta, so this
 * is element-wise, without bn_bwd_dx_f32's stage two and barrier (which on
 * a CPU cost as much as the elements). The same formulas.
 * x, dy, dx, y: (N, C, HW), gamma, mean, stat: (C), part: (C, 1, 2)
 */
__kernel void bn_bwd_dx1_f32(__global ct_at *dx, ulong dx_off, __global const ct_at *dy,
                             ulong dy_off, __global const ct_at *x, ulong x_off,
                             __global const ct_at *y, ulong y_off, __global const float *gamma,
                             ulong gamma_off, __global const float *mean, ulong mean_off,
                             __global const float *stat, ulong stat_off,
                             __global const float *part, ulong part_off, uint N, uint C, uint HW,
                             uint2 md, float eps, int train, int relu)
{
    uint p = get_global_id(0), r = get_global_id(1), c = bn_channel(r, C, md);
    uint m = N * HW;
    float v = stat[stat_off + c]; /* the row's constants ahead of the guard, as bn_fwd_f32 */
    float is = train ? v : 1.0f / sqrt(v + eps);
    float mu = mean[mean_off + c], gi = gamma[gamma_off + c] * is;
    float mg = part[part_off + 2 * (ulong)c] / (float)m;
    float mgx = part[part_off + 2 * (ulong)c + 1] / (float)m;
    if (p >= HW || r >= N * C)
        return;
    ulong i = (ulong)r * HW + p;
    float g = bn_bwd_g(dy + dy_off, y + y_off, i, relu);
    float xh = train ? (ct_ld(x, x_off + i) - mu) * is : 0.0f;
    ct_st(dx, dx_off + i, train ? gi * (g - mg - xh * mgx) : gi * g);
}

/* ---- CPU devices ---- */

inline void bn_kahan8(float8 *s, float8 *comp, float8 v)
{
    float8 y = v - *comp;
    float8 t = *s + y;
    *comp = (t - *s) - y;
    *s = t;
}

/* the lanes of v8 summed pairwise, then the scalar tail sum s1 */
inline float bn_lanes_sum(float8 v8, float s1)
{
    float4 a = v8.lo + v8.hi;
    float2 b = a.lo + a.hi;
    return (b.x + b.y) + s1;
}

/*
 * bn_stats_f32 for CPU devices: one work-item per channel, the same
 * outputs. No barriers, so the index guard may return.
 * x: (N, C, HW), mean, invstd, running_mean, running_var: (C)
 */
__kernel void bn_stats_cpu_f32(__global float *mean, ulong mean_off, __global float *invstd,
                               ulong invstd_off, __global float *running_mean, ulong rmean_off,
                               __global float *running_var, ulong rvar_off,
                               __global const float *x, ulong x_off, uint N, uint C, uint HW,
                               float momentum, float eps)
{
    uint c = get_global_id(0);
    if (c >= C)
        return;
    uint m = N * HW, hw8 = HW & ~7u;
    ulong stride = (ulong)C * HW;
    __global const float *xc = x + x_off + (ulong)c * HW;
    float8 s8 = (float8)(0.0f), c8 = (float8)(0.0f);
    float s1 = 0.0f, c1 = 0.0f;
    for (uint n = 0; n < N; n++) {
        __global const float *row = xc + n * stride;
        for (uint j = 0; j < hw8; j += 8)
            bn_kahan8(&s8, &c8, vload8(0, row + j));
        for (uint j = hw8; j < HW; j++)
            bn_kahan(&s1, &c1, row[j]);
    }
    float mu = bn_lanes_sum(s8, s1) / (float)m;
    float8 mu8 = (float8)(mu);
    s8 = c8 = (float8)(0.0f);
    s1 = c1 = 0.0f;
    for (uint n = 0; n < N; n++) {
        __global const float *row = xc + n * stride;
        for (uint j = 0; j < hw8; j += 8) {
            float8 d = vload8(0, row + j) - mu8;
            bn_kahan8(&s8, &c8, d * d);
        }
        for (uint j = hw8; j < HW; j++) {
            float d = row[j] - mu;
            bn_kahan(&s1, &c1, d * d);
        }
    }
    float var = bn_lanes_sum(s8, s1) / (float)m;
    mean[mean_off + c] = mu;
    invstd[invstd_off + c] = 1.0f / sqrt(var + eps);
    if (running_mean) {
        running_mean[rmean_off + c] = (1.0f - momentum) * running_mean[rmean_off + c] + momentum * mu;
        running_var[rvar_off + c] = (1.0f - momentum) * running_var[rvar_off + c] +
                                    momentum * (var * ((float)m / (float)(m - 1)));
    }
}

/*
 * bn_fwd_f32 for CPU devices: one work-item per (n, c) row of HW elements,
 * the same arithmetic per element. y may alias x.
 * x, y: (N, C, HW), mean, stat, gamma, beta: (C)
 */
__kernel void bn_fwd_rows_f32(__global float *y, ulong y_off, __global const float *x,
                              ulong x_off, __global const float *mean, ulong mean_off,
                              __global const float *stat, ulong stat_off,
                              __global const float *gamma, ulong gamma_off,
                              __global const float *beta, ulong beta_off, uint N, uint C, uint HW,
                              float eps, int from_var, int relu)
{
    uint row = get_global_id(0);
    if (row >= N * C)
        return;
    uint c = row % C, hw8 = HW & ~7u;
    float v = stat[stat_off + c];
    float is = from_var ? 1.0f / sqrt(v + eps) : v;
    float g = gamma[gamma_off + c], mu = mean[mean_off + c], b = beta[beta_off + c];
    __global const float *xr = x + x_off + (ulong)row * HW;
    __global float *yr = y + y_off + (ulong)row * HW;
    for (uint j = 0; j < hw8; j += 8) {
        float8 r = g * ((vload8(0, xr + j) - mu) * is) + b;
        vstore8(relu ? fmax(r, 0.0f) : r, 0, yr + j);
    }
    for (uint j = hw8; j < HW; j++) {
        float r = g * ((xr[j] - mu) * is) + b;
        yr[j] = relu ? fmax(r, 0.0f) : r;
    }
}

/* dy masked by the fused ReLU: 0 where !(y > 0) */
inline float8 bn_grad8(__global const float *dyr, __global const float *yr, uint j, int relu)
{
    float8 g = vload8(0, dyr + j);
    return relu ? select((float8)(0.0f), g, isgreater(vload8(0, yr + j), (float8)(0.0f))) : g;
}

/*
 * bn_bwd_f32 for CPU devices: one work-item per channel makes both passes
 * (the sums, then dx), so the sums never leave it. Each dx element is
 * written after the work-item's last read of its dy, so dx may alias dy.
 * x, dy, dx, y: (N, C, HW), gamma, mean, stat, dgamma, dbeta: (C)
 */
__kernel void bn_bwd_cpu_f32(__global float *dx, ulong dx_off, __global float *dgamma,
                             ulong dgamma_off, __global float *dbeta, ulong dbeta_off,
                             __global const float *dy, ulong dy_off, __global const float *x,
                             ulong x_off, __global const float *y, ulong y_off,
                             __global const float *gamma, ulong gamma_off,
                             __global const float *mean, ulong mean_off,
                             __global const float *stat, ulong stat_off, uint N, uint C, uint HW,
                             float eps, int train, int relu)
{
    uint c = get_global_id(0);
    if (c >= C)
        return;
    uint m = N * HW, hw8 = HW & ~7u;
    ulong stride = (ulong)C * HW, first = (ulong)c * HW;
    __global const float *dyc = dy + dy_off + first, *xc = x + x_off + first;
    __global const float *yc = relu ? y + y_off + first : dyc; /* y is read only with relu */
    __global float *dxc = dx + dx_off + first;
    float mu = mean[mean_off + c], v = stat[stat_off + c];
    float is = train ? v : 1.0f / sqrt(v + eps);
    float8 sg8 = (float8)(0.0f), cg8 = sg8, sgx8 = sg8, cgx8 = sg8;
    float sg1 = 0.0f, cg1 = 0.0f, sgx1 = 0.0f, cgx1 = 0.0f;
    for (uint n = 0; n < N; n++) {
        ulong o = n * stride;
        for (uint j = 0; j < hw8; j += 8) {
            float8 g = bn_grad8(dyc + o, yc + o, j, relu);
            bn_kahan8(&sg8, &cg8, g);
            bn_kahan8(&sgx8, &cgx8, g * ((vload8(0, xc + o + j) - mu) * is));
        }
        for (uint j = hw8; j < HW; j++) {
            float g = dyc[o + j];
            if (relu && !(yc[o + j] > 0.0f))
                g = 0.0f;
            bn_kahan(&sg1, &cg1, g);
            bn_kahan(&sgx1, &cgx1, g * ((xc[o + j] - mu) * is));
        }
    }
    float sg = bn_lanes_sum(sg8, sg1), sgx = bn_lanes_sum(sgx8, sgx1);
    dbeta[dbeta_off + c] += sg;
    dgamma[dgamma_off + c] += sgx;
    float gi = gamma[gamma_off + c] * is;
    float mg = sg / (float)m, mgx = sgx / (float)m;
    for (uint n = 0; n < N; n++) {
        ulong o = n * stride;
        for (uint j = 0; j < hw8; j += 8) {
            float8 g = bn_grad8(dyc + o, yc + o, j, relu);
            float8 d = train ? gi * (g - mg - ((vload8(0, xc + o + j) - mu) * is) * mgx) : gi * g;
            vstore8(d, 0, dxc + o + j);
        }
        for (uint j = hw8; j < HW; j++) {
            float g = dyc[o + j];
            if (relu && !(yc[o + j] > 0.0f))
                g = 0.0f;
            dxc[o + j] = train ? gi * (g - mg - ((xc[o + j] - mu) * is) * mgx) : gi * g;
        }
    }
}
