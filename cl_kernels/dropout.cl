/*
 * dropout.cl - inverted dropout whose mask is never stored: both passes
 * regenerate it from Philox, so the backward needs no mask buffer and a
 * seed reproduces the same mask on every device and on the host
 * (src/core/philox.c).
 *
 * Counter layout: element i takes word i % 4 of the block
 *   Philox4x32-10(ctr = (i / 4, 1, seed_hi, stream), key = (seed_lo, 0x5eed)),
 * as uniform_f32 in fill.cl does but with ctr.y = 1 instead of 0, so a
 * dropout mask never reuses the numbers an initialisation drew from the same
 * seed and stream. Element i is kept when u01(word) >= p; kept elements are
 * scaled by `scale` = 1 / (1 - p), computed once on the host (0 when p = 1,
 * when nothing is kept) so the device and the reference use the same float.
 */

#define CT_DROPOUT_TAG 1u

/* The four words of block b: the keep decisions of elements 4b .. 4b + 3. */
inline uint4 ct_dropout_block(uint b, uint seed_lo, uint seed_hi, uint stream)
{
    return ct_philox4x32((uint4)(b, CT_DROPOUT_TAG, seed_hi, stream), (uint2)(seed_lo, 0x5eedu));
}

/* out = in * keep * scale for the (up to) four elements of block b: one
 * Philox call serves four elements. */
inline void ct_dropout_apply(__global float *out, __global const float *in, uint b, uint n,
                             float p, float scale, uint seed_lo, uint seed_hi, uint stream)
{
    uint4 r = ct_dropout_block(b, seed_lo, seed_hi, stream);
    uint w[4] = { r.x, r.y, r.z, r.w };
    for (uint k = 0; k < 4; k++) {
        uint i = 4 * b + k;
        if (i < n)
            out[i] = ct_u01(w[k]) >= p ? in[i] * scale : 0.0f;
    }
}

/* y = x * keep * scale; work-item b handles elements 4b .. 4b + 3.
 * x, y: (n) */
__kernel void dropout_fwd_f32(__global float *y, ulong y_off, __global const float *x, ulong x_off,
                              uint n, float p, float scale, uint seed_lo, uint seed_hi, uint stream)
{
    uint b = get_global_id(0);
    if (b < (n + 3) / 4)
        ct_dropout_apply(y + y_off, x + x_off, b, n, p, scale, seed_lo, seed_hi, stream);
}

/* dx = dy * keep * scale, the same mask. dy, dx: (n) */
__kernel void dropout_bwd_f32(__global float *dx, ulong dx_off, __global const float *dy,
                              ulong dy_off, uint n, float p, float scale, uint seed_lo, uint seed_hi,
                              uint stream)
{
    uint b = get_global_id(0);
    if (b < (n + 3) / 4)
        ct_dropout_apply(dx + dx_off, dy + dy_off, b, n, p, scale, seed_lo, seed_hi, stream);
}
