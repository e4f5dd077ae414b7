/*
 * eltwise.cl - element-wise arithmetic for residual connections and the
 * trainer: add (forward and backward), accumulate, scale, axpy. Outputs
 * may alias inputs: every work-item reads its element before writing it.
 */

/* y = a + b */
__kernel void add_fwd_f32(__global float *y, ulong y_off, __global const float *a, ulong a_off,
                          __global const float *b, ulong b_off, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        y[y_off + i] = a[a_off + i] + b[b_off + i];
}

/* da = dy and/or db = dy (bit 0 of `which`: da, bit 1: db), reading dy once */
__kernel void add_bwd_f32(__global float *da, ulong da_off, __global float *db, ulong db_off,
                          __global const float *dy, ulong dy_off, uint n, int which)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    float g = dy[dy_off + i];
    if (which & 1)
        da[da_off + i] = g;
    if (which & 2)
        db[db_off + i] = g;
}

/* dst += src */
__kernel void add_accumulate_f32(__global float *dst, ulong dst_off, __global const float *src,
                                 ulong src_off, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        dst[dst_off + i] += src[src_off + i];
}

/* x *= s */
__kernel void scale_f32(__global float *x, ulong x_off, uint n, float s)
{
    uint i = get_global_id(0);
    if (i < n)
        x[x_off + i] *= s;
}

/* y += a x */
__kernel void axpy_f32(__global float *y, ulong y_off, float a, __global const float *x,
                       ulong x_off, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        y[y_off + i] += a * x[x_off + i];
}
