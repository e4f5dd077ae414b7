/*
 * eltwise.cl - element-wise arithmetic for residual connections and the
 * trainer: add (forward and backward), accumulate, scale, axpy. Outputs
 * may alias inputs: every work-item reads its element before writing it.
 *
 * The non-finite count (the trainer's NaN/Inf check) is a two-stage
 * reduction in integers, so any order gives the same exact count and no
 * atomics are needed. It tests the exponent bits rather than calling
 * isfinite(), which a compiler assuming finite math may fold to true.
 */

/* y = a + b */
__kernel void add_fwd_f32(__global float *y, ulong y_off, __global const float *a, ulong a_off,
                          __global const float *b, ulong b_off, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        y[y_off + i] = a[a_off + i] + b[b_off + i];
}

/* da = dy and/or db = dy (bit 0 of `which`: da, bit 1: db), reading dy
 * once; bit 2 (da) and bit 3 (db): add dy into that target instead (a
 * gradient other layers write too) */
__kernel void add_bwd_f32(__global float *da, ulong da_off, __global float *db, ulong db_off,
                          __global const float *dy, ulong dy_off, uint n, int which)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    float g = dy[dy_off + i];
    if (which & 1)
        da[da_off + i] = which & 4 ? da[da_off + i] + g : g;
    if (which & 2)
        db[db_off + i] = which & 8 ? db[db_off + i] + g : g;
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

/*
 * Stage one of the non-finite count, G = get_num_groups(0) work-groups of wg
 * (a power of two): partial[gr] = how many x[i] are NaN or +-Inf over
 * i = gr wg + lid + k G wg. x: (n), partial: (G) uint, red: wg uints of
 * local memory
 */
__kernel void nonfinite_partial_f32(__global uint *partial, ulong partial_off,
                                    __global const float *x, ulong x_off, uint n,
                                    __local uint *red)
{
    uint lid = get_local_id(0), wg = get_local_size(0);
    uint gr = get_group_id(0), groups = get_num_groups(0);
    uint c = 0;
    ulong stride = (ulong)groups * wg;
    for (ulong i = (ulong)gr * wg + lid; i < n; i += stride)
        c += (as_uint(x[x_off + i]) & 0x7f800000u) == 0x7f800000u;
    red[lid] = c;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = wg / 2; s > 0; s >>= 1) {
        if (lid < s)
            red[lid] += red[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[partial_off + gr] = red[0];
}

/* Stage two, one work-group: count[0] = sum of partial[0..groups), as a
 * float (exact below 2^24, and nonzero exactly when the sum is).
 * partial: (groups) uint, count: (1), red: wg uints of local memory */
__kernel void nonfinite_final_f32(__global float *count, ulong count_off,
                                  __global const uint *partial, ulong partial_off, uint groups,
                                  __local uint *red)
{
    uint lid = get_local_id(0), wg = get_local_size(0);
    uint c = 0;
    for (uint i = lid; i < groups; i += wg)
        c += partial[partial_off + i];
    red[lid] = c;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = wg / 2; s > 0; s >>= 1) {
        if (lid < s)
            red[lid] += red[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        count[count_off] = (float)red[0];
}
