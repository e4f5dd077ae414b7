/*
 * dense.cl - the per-channel pieces around a GEMM: bias + activation
 * forward (dense and conv outputs alike, layout (N, C, HW); dense is HW = 1)
 * and the bias gradient, a deterministic sum over N and HW.
 */

/* y = act(x + b[channel]); y may alias x (each element is read, then
 * written, by the same work-item). x, y: (n, c, hw); b: (c) */
__kernel void bias_act_fwd_f32(__global float *y, ulong y_off, __global const float *x,
                               ulong x_off, __global const float *b, ulong b_off, uint n, uint c,
                               uint hw, int act)
{
    uint i = get_global_id(0);
    if (i >= n * c * hw)
        return;
    uint ch = (i / hw) % c;
    y[y_off + i] = ct_act_f(act, x[x_off + i] + b[b_off + ch]);
}

/* db[ch] += sum over (n, hw) of dy: one work-group per channel (dimension
 * 1), each work-item sums a strided slice in a fixed order, then a tree in
 * local memory with a fixed pairing, so the result is the same every run.
 * Works for any local size up to CT_WG_SIZE, powers of two or not.
 * dy: (n, c, hw); db: (c) */
__kernel void bias_bwd_f32(__global float *db, ulong db_off, __global const float *dy,
                           ulong dy_off, uint n, uint c, uint hw)
{
    __local float part[CT_WG_SIZE];
    uint l = get_local_id(0), ls = get_local_size(0), ch = get_group_id(1);
    float acc = 0.0f;
    if (ch < c && hw >= ls) {
        /* long rows: walk each image's row, no division per term */
        for (uint img = 0; img < n; img++) {
            __global const float *row = dy + dy_off + ((ulong)img * c + ch) * hw;
            for (uint p = l; p < hw; p += ls)
                acc += row[p];
        }
    } else if (ch < c) {
        uint per = n * hw; /* short rows: spread all the channel's terms */
        for (uint j = l; j < per; j += ls) {
            uint img = j / hw, p = j - img * hw;
            acc += dy[dy_off + ((ulong)img * c + ch) * hw + p];
        }
    }
    part[l] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 1; s < ls; s <<= 1) {
        if ((l & (2 * s - 1)) == 0 && l + s < ls)
            part[l] += part[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0 && ch < c)
        db[db_off + ch] += part[0];
}

/* The same sum for hw == 1 and many channels: one work-item per channel
 * walks the batch, so neighbouring work-items read neighbouring elements.
 * dy: (n, c); db: (c) */
__kernel void bias_bwd_cols_f32(__global float *db, ulong db_off, __global const float *dy,
                                ulong dy_off, uint n, uint c)
{
    uint ch = get_global_id(0);
    if (ch >= c)
        return;
    float acc = 0.0f;
    for (uint i = 0; i < n; i++)
        acc += dy[dy_off + (ulong)i * c + ch];
    db[db_off + ch] += acc;
}
