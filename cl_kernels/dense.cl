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

/* One term of a bias gradient. With an activation (act != 0) the term is
 * the pre-activation's gradient dy * act'(x, y), written back over dy: the
 * activation's backward and the bias sum in one pass, each element touched
 * by exactly one work-item. */
inline float bias_term(__global float *dy, ulong i, __global const float *x,
                       __global const float *y, ulong xy, int act)
{
    float v = dy[i];
    if (act) {
        v *= ct_act_df(act, x[xy], y[xy]);
        dy[i] = v;
    }
    return v;
}

/* db[ch] += sum over (n, hw) of dy: one work-group per channel (dimension
 * 1), each work-item sums a strided slice in a fixed order, then a tree in
 * local memory with a fixed pairing, so the result is the same every run.
 * Works for any local size up to CT_WG_SIZE, powers of two or not.
 * With act != 0, dy first becomes dy * act'(x, y) (bias_term).
 * dy, x, y: (n, c, hw); db: (c) */
__kernel void bias_bwd_f32(__global float *db, ulong db_off, __global float *dy, ulong dy_off,
                           __global const float *x, ulong x_off, __global const float *y,
                           ulong y_off, uint n, uint c, uint hw, int act)
{
    __local float part[CT_WG_SIZE];
    uint l = get_local_id(0), ls = get_local_size(0), ch = get_group_id(1);
    float acc = 0.0f;
    if (ch < c && hw >= ls) {
        /* long rows: walk each image's row, no division per term */
        for (uint img = 0; img < n; img++) {
            ulong row = ((ulong)img * c + ch) * hw;
            for (uint p = l; p < hw; p += ls)
                acc += bias_term(dy, dy_off + row + p, x + x_off, y + y_off, row + p, act);
        }
    } else if (ch < c) {
        uint per = n * hw; /* short rows: spread all the channel's terms */
        for (uint j = l; j < per; j += ls) {
            uint img = j / hw, p = j - img * hw;
            ulong e = ((ulong)img * c + ch) * hw + p;
            acc += bias_term(dy, dy_off + e, x + x_off, y + y_off, e, act);
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
 * dy, x, y: (n, c); db: (c) */
__kernel void bias_bwd_cols_f32(__global float *db, ulong db_off, __global float *dy,
                                ulong dy_off, __global const float *x, ulong x_off,
                                __global const float *y, ulong y_off, uint n, uint c, int act)
{
    uint ch = get_global_id(0);
    if (ch >= c)
        return;
    float acc = 0.0f;
    for (uint i = 0; i < n; i++) {
        ulong e = (ulong)i * c + ch;
        acc += bias_term(dy, dy_off + e, x + x_off, y + y_off, e, act);
    }
    db[db_off + ch] += acc;
}
