/*
 * fill.cl - buffer fills, copies and scaling. Offsets are in elements.
 */

__kernel void fill_f32(__global float *x, ulong x_off, uint n, float value)
{
    uint i = get_global_id(0);
    if (i < n)
        x[x_off + i] = value;
}

__kernel void copy_f32(__global float *dst, ulong dst_off, __global const float *src,
                       ulong src_off, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        dst[dst_off + i] = src[src_off + i];
}

/* c (m, n) with leading dimension ld: c *= beta; beta == 0 writes zeros
 * (so NaNs in c do not survive, as BLAS specifies). */
__kernel void scale2d_f32(__global float *c, ulong c_off, uint ld, uint m, uint n, float beta)
{
    uint j = get_global_id(0), i = get_global_id(1);
    if (i < m && j < n) {
        __global float *p = c + c_off + (ulong)i * ld + j;
        *p = beta == 0.0f ? 0.0f : beta * *p;
    }
}

/* Uniform random numbers in [lo, hi) from Philox: element i takes word
 * i % 4 of the block at counter (i / 4, 0, seed_hi, stream). */
__kernel void uniform_f32(__global float *x, ulong x_off, uint n, uint seed_lo, uint seed_hi,
                          uint stream, float lo, float hi)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    uint4 r = ct_philox4x32((uint4)(i / 4, 0, seed_hi, stream), (uint2)(seed_lo, 0x5eedu));
    uint w = (i & 3) == 0 ? r.x : (i & 3) == 1 ? r.y : (i & 3) == 2 ? r.z : r.w;
    x[x_off + i] = lo + (hi - lo) * ct_u01(w);
}
