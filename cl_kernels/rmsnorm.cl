/*
 * rmsnorm.cl - RMS normalization over the last dimension, as
 * torch.nn.RMSNorm(F, eps): each of the R rows of x (R, F) becomes
 * y = x rstd w with rstd = 1 / sqrt(mean(x^2) + eps), w (F). The forward
 * saves rstd (R). Backward, with g = dy w and xhat = x rstd:
 *   dx = rstd (g - xhat mean(g xhat)),   dw = sum over rows of dy xhat.
 *
 * GPU class: a work-group per row (at least 2 work-items, so the tree
 * loop of ct_tree_sum always runs: pocl 3.1 ran the store after a barrier loop of
 * no step twice in groups of 1 x N, cl_kernels/eltwise.cl), each
 * work-item summing a strided share, a fixed-order tree in local memory
 * combining them; dw in two stages (rms_bwd_params_partial_f32 over slices
 * of rows, the slices added in order inside the dx pass). CPU class
 * (*_rows_f32, rms_bwd_params_f32): a work-item per row, or per column,
 * walking it in order. Every sum has a fixed order: deterministic.
 */

/* y (R, F), rstd (R) = RMS norm of x (R, F) with w (F); red (wg) */
__kernel void rms_fwd_f32(__global float *y, ulong y_off, __global float *rstd, ulong rstd_off,
                          __global const float *x, ulong x_off, __global const float *w, ulong w_off,
                          uint F, float eps, __local float *red)
{
    uint r = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    __global const float *xr = x + x_off + (ulong)r * F;
    float s = 0.0f;
    for (uint f = lid; f < F; f += wg)
        s += xr[f] * xr[f];
    red[lid] = s;
    ct_tree_sum(red, lid, wg);
    float is = 1.0f / sqrt(red[0] / (float)F + eps);
    __global float *yr = y + y_off + (ulong)r * F;
    for (uint f = lid; f < F; f += wg)
        yr[f] = xr[f] * is * w[w_off + f];
    if (lid == 0)
        rstd[rstd_off + r] = is;
}

/* the same, one work-item per row */
__kernel void rms_fwd_rows_f32(__global float *y, ulong y_off, __global float *rstd, ulong rstd_off,
                               __global const float *x, ulong x_off, __global const float *w,
                               ulong w_off, uint R, uint F, float eps)
{
    uint r = get_global_id(0);
    if (r >= R)
        return;
    __global const float *xr = x + x_off + (ulong)r * F;
    float s = 0.0f;
    for (uint f = 0; f < F; f++)
        s += xr[f] * xr[f];
    float is = 1.0f / sqrt(s / (float)F + eps);
    __global float *yr = y + y_off + (ulong)r * F;
    for (uint f = 0; f < F; f++)
        yr[f] = xr[f] * is * w[w_off + f];
    rstd[rstd_off + r] = is;
}

/*
 * dx (R, F) (acc: +=) from dy, x (R, F), w (F) and rstd (R); a work-group
 * per row, red (wg). With S > 0 the work-items first add the S slices'
 * partial sums of dw (part (S, F), complete before this launch) in slice
 * order, a work-item per column: the parameters' stage two.
 */
__kernel void rms_bwd_f32(__global float *dx, ulong dx_off, __global const float *dy, ulong dy_off,
                          __global const float *x, ulong x_off, __global const float *w, ulong w_off,
                          __global const float *rstd, ulong rstd_off, uint F, int acc,
                          __global float *dw, ulong dw_off, __global const float *part,
                          ulong part_off, uint S, __local float *red)
{
    uint r = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    for (uint f = r * wg + lid; f < F && S; f += get_num_groups(0) * wg) {
        float sw = 0.0f;
        for (uint s = 0; s < S; s++)
            sw += part[part_off + (ulong)s * F + f];
        dw[dw_off + f] += sw;
    }
    ulong row = (ulong)r * F;
    float is = rstd[rstd_off + r];
    float sgx = 0.0f;
    for (uint f = lid; f < F; f += wg)
        sgx += dy[dy_off + row + f] * w[w_off + f] * (x[x_off + row + f] * is);
    red[lid] = sgx;
    ct_tree_sum(red, lid, wg);
    float mgx = red[0] / (float)F;
    for (uint f = lid; f < F; f += wg) {
        float g = dy[dy_off + row + f] * w[w_off + f];
        float v = is * (g - (x[x_off + row + f] * is) * mgx);
        dx[dx_off + row + f] = acc ? dx[dx_off + row + f] + v : v;
    }
}

/* the same, one work-item per row (no parameters' stage) */
__kernel void rms_bwd_rows_f32(__global float *dx, ulong dx_off, __global const float *dy,
                               ulong dy_off, __global const float *x, ulong x_off,
                               __global const float *w, ulong w_off, __global const float *rstd,
                               ulong rstd_off, uint R, uint F, int acc)
{
    uint r = get_global_id(0);
    if (r >= R)
        return;
    ulong row = (ulong)r * F;
    float is = rstd[rstd_off + r];
    float sgx = 0.0f;
    for (uint f = 0; f < F; f++)
        sgx += dy[dy_off + row + f] * w[w_off + f] * (x[x_off + row + f] * is);
    float mgx = sgx / (float)F;
    for (uint f = 0; f < F; f++) {
        float g = dy[dy_off + row + f] * w[w_off + f];
        float v = is * (g - (x[x_off + row + f] * is) * mgx);
        dx[dx_off + row + f] = acc ? dx[dx_off + row + f] + v : v;
    }
}

/* dw (F) += sum over rows of dy xhat; a work-item per column, rows in order */
__kernel void rms_bwd_params_f32(__global float *dw, ulong dw_off, __global const float *dy,
                                 ulong dy_off, __global const float *x, ulong x_off,
                                 __global const float *rstd, ulong rstd_off, uint R, uint F)
{
    uint f = get_global_id(0);
    if (f >= F)
        return;
    float sw = 0.0f;
    for (uint r = 0; r < R; r++) {
        ulong i = (ulong)r * F + f;
        sw += dy[dy_off + i] * (x[x_off + i] * rstd[rstd_off + r]);
    }
    dw[dw_off + f] += sw;
}

/* GPU class, stage one: a work-item per (column f, slice s) sums the
 * slice's L rows in order, neighbouring work-items on neighbouring columns
 * of a row. part: (S, F) */
__kernel void rms_bwd_params_partial_f32(__global float *part, ulong part_off,
                                         __global const float *dy, ulong dy_off,
                                         __global const float *x, ulong x_off,
                                         __global const float *rstd, ulong rstd_off, uint R, uint F,
                                         uint S, uint L)
{
    uint f = get_global_id(0), s = get_global_id(1);
    if (f >= F || s >= S)
        return;
    uint r0 = s * L, r1 = R - r0 > L ? r0 + L : R;
    float sw = 0.0f;
    for (uint r = r0; r < r1; r++) {
        ulong i = (ulong)r * F + f;
        sw += dy[dy_off + i] * (x[x_off + i] * rstd[rstd_off + r]);
    }
    part[part_off + (ulong)s * F + f] = sw;
}

/* Stage two alone (no dx wanted): dw (F) += the S slices' sums in slice
 * order; a work-item per column. part: (S, F) */
__kernel void rms_bwd_params_final_f32(__global float *dw, ulong dw_off, __global const float *part,
                                       ulong part_off, uint F, uint S)
{
    uint f = get_global_id(0);
    if (f >= F)
        return;
    float sw = 0.0f;
    for (uint s = 0; s < S; s++)
        sw += part[part_off + (ulong)s * F + f];
    dw[dw_off + f] += sw;
}
