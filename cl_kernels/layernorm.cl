/*
 * layernorm.cl - layer normalization over the last dimension: each of the
 * R rows of x (R, F) is normalized by its own mean and biased variance,
 * y = (x - mean) rstd w + b with rstd = 1 / sqrt(var + eps), w and b (F).
 * The forward saves mean and rstd (R) for the backward.
 *
 * GPU class (ln_fwd_f32, ln_bwd_f32): one work-group per row, a
 * power-of-two size from the launcher; each work-item sums a strided share
 * and a fixed-order tree in local memory combines them. The variance is a
 * second pass over (x - mean)^2. CPU class (*_rows_f32): one work-item per
 * row walks it in order (a work-group runs on one core there, see
 * batchnorm.cl). Either way every sum has a fixed order: deterministic.
 *
 * The parameter gradients are column sums over the R rows. GPU class: two
 * stages (ln_bwd_params_partial_f32 then ln_bwd_params_final_f32), a
 * work-item per (column, slice of rows) so that a GPU is full even with
 * 192 columns, then one per column adding the slices in order. CPU class
 * (ln_bwd_params_f32): one work-item per column walking the rows in order.
 * Either way dw and db accumulate (+=) without atomics. The row kernels
 * are launched with exactly R work-groups: no early return ahead of a
 * barrier.
 *
 * In the GPU-class kernels x, y, dy and dx are ct_at (common.cl): float,
 * or 16 bits in the CT_ACT16 variants (layernorm_sbf16, layernorm_sfp16),
 * loaded exactly and each y or dx rounded once to nearest even on store
 * (dx += rounds the sum once). w, b, mean, rstd, dw, db and the partial
 * sums stay float, as does all the arithmetic. The CPU-class kernels read
 * floats only: 16-bit storage runs with the GPU class.
 */

/* y (R, F), mean (R), rstd (R) = layer norm of x (R, F) with w, b (F);
 * red (wg) */
__kernel void ln_fwd_f32(__global ct_at *y, ulong y_off, __global float *mean, ulong mean_off,
                         __global float *rstd, ulong rstd_off, __global const ct_at *x,
                         ulong x_off, __global const float *w, ulong w_off,
                         __global const float *b, ulong b_off, uint F, float eps,
                         __local float *red)
{
    uint r = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    __global const ct_at *xr = x + x_off + (ulong)r * F;
    float s = 0.0f;
    for (uint f = lid; f < F; f += wg)
        s += ct_ld(xr, f);
    red[lid] = s;
    ct_tree_sum(red, lid, wg);
    float mu = red[0] / (float)F;
    barrier(CLK_LOCAL_MEM_FENCE); /* red[0] read by all before reuse */
    s = 0.0f;
    for (uint f = lid; f < F; f += wg) {
        float d = ct_ld(xr, f) - mu;
        s += d * d;
    }
    red[lid] = s;
    ct_tree_sum(red, lid, wg);
    float is = 1.0f / sqrt(red[0] / (float)F + eps);
    __global ct_at *yr = y + y_off + (ulong)r * F;
    for (uint f = lid; f < F; f += wg)
        ct_st(yr, f, (ct_ld(xr, f) - mu) * is * w[w_off + f] + b[b_off + f]);
    if (lid == 0) {
        mean[mean_off + r] = mu;
        rstd[rstd_off + r] = is;
    }
}

/* the same, one work-item per row */
__kernel void ln_fwd_rows_f32(__global float *y, ulong y_off, __global float *mean, ulong mean_off,
                              __global float *rstd, ulong rstd_off, __global const float *x,
                              ulong x_off, __global const float *w, ulong w_off,
                              __global const float *b, ulong b_off, uint R, uint F, float eps)
{
    uint r = get_global_id(0);
    if (r >= R)
        return;
    __global const float *xr = x + x_off + (ulong)r * F;
    float s = 0.0f;
    for (uint f = 0; f < F; f++)
        s += xr[f];
    float mu = s / (float)F;
    s = 0.0f;
    for (uint f = 0; f < F; f++) {
        float d = xr[f] - mu;
        s += d * d;
    }
    float is = 1.0f / sqrt(s / (float)F + eps);
    __global float *yr = y + y_off + (ulong)r * F;
    for (uint f = 0; f < F; f++)
        yr[f] = (xr[f] - mu) * is * w[w_off + f] + b[b_off + f];
    mean[mean_off + r] = mu;
    rstd[rstd_off + r] = is;
}

/* Stage two of the parameters' sums for column f: dw[f] += the S slices'
 * sums of dy xhat, db[f] += those of dy, in slice order. part: (2, S, F) */
inline void ln_params_final(__global float *dw, __global float *db, __global const float *part,
                            uint f, uint F, uint S)
{
    __global const float *p = part + f;
    ulong sb_off = (ulong)S * F;
    float sw = 0.0f, sb = 0.0f;
    for (uint s = 0; s < S; s++) {
        sw += p[(ulong)s * F];
        sb += p[sb_off + (ulong)s * F];
    }
    dw[f] += sw;
    db[f] += sb;
}

/*
 * dx (R, F) from dy (R, F), x (R, F), w (F) and the saved mean, rstd (R):
 * with g = dy w and xhat = (x - mean) rstd,
 *   dx = rstd (g - mean(g) - xhat mean(g xhat)).
 * One work-group per row; red (2 wg). dx is written.
 */
__kernel void ln_bwd_f32(__global ct_at *dx, ulong dx_off, __global const ct_at *dy, ulong dy_off,
                         __global const ct_at *x, ulong x_off, __global const float *w,
                         ulong w_off, __global const float *mean, ulong mean_off,
                         __global const float *rstd, ulong rstd_off, uint F,
                         __local float *red, __global float *dw, ulong dw_off,
                         __global float *db, ulong db_off, __global const float *part,
                         ulong part_off, uint S, int acc)
{
    uint r = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    /* the parameters' stage two (ln_bwd_params_final_f32's sums, in its
     * order), folded in here where S > 0: a work-item per column, the
     * partials complete before this launch */
    for (uint f = r * wg + lid; f < F && S; f += get_num_groups(0) * wg)
        ln_params_final(dw + dw_off, db + db_off, part + part_off, f, F, S);
    ulong row = (ulong)r * F;
    float mu = mean[mean_off + r], is = rstd[rstd_off + r];
    float sg = 0.0f, sgx = 0.0f;
    for (uint f = lid; f < F; f += wg) {
        float g = ct_ld(dy, dy_off + row + f) * w[w_off + f];
        sg += g;
        sgx += g * ((ct_ld(x, x_off + row + f) - mu) * is);
    }
    red[lid] = sg;
    red[wg + lid] = sgx;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = wg / 2; s > 0; s >>= 1) {
        if (lid < s) {
            red[lid] += red[lid + s];
            red[wg + lid] += red[wg + lid + s];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float mg = red[0] / (float)F, mgx = red[wg] / (float)F;
    for (uint f = lid; f < F; f += wg) {
        float g = ct_ld(dy, dy_off + row + f) * w[w_off + f];
        float xh = (ct_ld(x, x_off + row + f) - mu) * is;
        float v = is * (g - mg - xh * mgx);
        ct_st(dx, dx_off + row + f, acc ? ct_ld(dx, dx_off + row + f) + v : v);
    }
}

/* the same, one work-item per row (acc: dx += instead of dx =) */
__kernel void ln_bwd_rows_f32(__global float *dx, ulong dx_off, __global const float *dy,
                              ulong dy_off, __global const float *x, ulong x_off,
                              __global const float *w, ulong w_off, __global const float *mean,
                              ulong mean_off, __global const float *rstd, ulong rstd_off, uint R,
                              uint F, int acc)
{
    uint r = get_global_id(0);
    if (r >= R)
        return;
    ulong row = (ulong)r * F;
    float mu = mean[mean_off + r], is = rstd[rstd_off + r];
    float sg = 0.0f, sgx = 0.0f;
    for (uint f = 0; f < F; f++) {
        float g = dy[dy_off + row + f] * w[w_off + f];
        sg += g;
        sgx += g * ((x[x_off + row + f] - mu) * is);
    }
    float mg = sg / (float)F, mgx = sgx / (float)F;
    for (uint f = 0; f < F; f++) {
        float g = dy[dy_off + row + f] * w[w_off + f];
        float xh = (x[x_off + row + f] - mu) * is;
        float v = is * (g - mg - xh * mgx);
        dx[dx_off + row + f] = acc ? dx[dx_off + row + f] + v : v;
    }
}

/* dw (F) += sum over rows of dy xhat, db (F) += sum over rows of dy; one
 * work-item per column f, rows in order */
__kernel void ln_bwd_params_f32(__global float *dw, ulong dw_off, __global float *db, ulong db_off,
                                __global const float *dy, ulong dy_off, __global const float *x,
                                ulong x_off, __global const float *mean, ulong mean_off,
                                __global const float *rstd, ulong rstd_off, uint R, uint F)
{
    uint f = get_global_id(0);
    if (f >= F)
        return;
    float sw = 0.0f, sb = 0.0f;
    for (uint r = 0; r < R; r++) {
        ulong i = (ulong)r * F + f;
        float g = dy[dy_off + i];
        sw += g * ((x[x_off + i] - mean[mean_off + r]) * rstd[rstd_off + r]);
        sb += g;
    }
    dw[dw_off + f] += sw;
    db[db_off + f] += sb;
}

/* GPU class, stage one: a work-item per (column f, slice s) sums the
 * slice's L rows in order, neighbouring work-items reading neighbouring
 * columns of a row. dy, x: (R, F), mean, rstd: (R), part: (2, S, F) (the
 * sums of dy xhat, then of dy) */
__kernel void ln_bwd_params_partial_f32(__global float *part, ulong part_off,
                                        __global const ct_at *dy, ulong dy_off,
                                        __global const ct_at *x, ulong x_off,
                                        __global const float *mean, ulong mean_off,
                                        __global const float *rstd, ulong rstd_off, uint R,
                                        uint F, uint S, uint L)
{
    uint f = get_global_id(0), s = get_global_id(1);
    if (f >= F || s >= S)
        return;
    uint r0 = s * L, r1 = R - r0 > L ? r0 + L : R;
    float sw = 0.0f, sb = 0.0f;
    for (uint r = r0; r < r1; r++) {
        ulong i = (ulong)r * F + f;
        float g = ct_ld(dy, dy_off + i);
        sw += g * ((ct_ld(x, x_off + i) - mean[mean_off + r]) * rstd[rstd_off + r]);
        sb += g;
    }
    ulong o = part_off + (ulong)s * F + f;
    part[o] = sw;
    part[o + (ulong)S * F] = sb;
}

/* Stage two: dw (F) += the S slices' sums of dy xhat, db (F) += those of
 * dy, in slice order; one work-item per column. part: (2, S, F) */
__kernel void ln_bwd_params_final_f32(__global float *dw, ulong dw_off, __global float *db,
                                      ulong db_off, __global const float *part, ulong part_off,
                                      uint F, uint S)
{
    uint f = get_global_id(0);
    if (f < F)
        ln_params_final(dw + dw_off, db + db_off, part + part_off, f, F, S);
}
