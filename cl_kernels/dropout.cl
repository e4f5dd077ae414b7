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
 *
 * `first` is the index of element 0 within the whole tensor: a data-parallel
 * replica holding rows [r0, r0 + n) of a larger batch passes r0 * features,
 * so its mask is the slice of the mask one device would draw for the whole
 * batch (src/train/parallel.c).
 *
 * x, y, dy, dx are ct_at (common.cl): float, or 16 bits in the CT_ACT16
 * variants, each kept element's product rounded once on store.
 */

#define CT_DROPOUT_TAG 1u

/* The four words of block b: the keep decisions of elements 4b .. 4b + 3. */
inline uint4 ct_dropout_block(uint b, uint seed_lo, uint seed_hi, uint stream)
{
    return ct_philox4x32((uint4)(b, CT_DROPOUT_TAG, seed_hi, stream), (uint2)(seed_lo, 0x5eedu));
}

/* out = in * keep * scale for the (up to) four elements 4b .. 4b + 3; their
 * decisions are words (first + i) % 4 of blocks (first + i) / 4, so one
 * Philox call serves four elements when first is a multiple of 4, two
 * otherwise. */
inline void ct_dropout_apply(__global ct_at *out, __global const ct_at *in, uint b, uint n,
                             uint first, float p, float scale, uint seed_lo, uint seed_hi,
                             uint stream)
{
    uint w[4] = { 0, 0, 0, 0 };
    uint have = 0xffffffffu;
    for (uint k = 0; k < 4; k++) {
        uint i = 4 * b + k;
        if (i >= n)
            break;
        uint j = first + i;
        if (j / 4 != have) {
            have = j / 4;
            uint4 r = ct_dropout_block(have, seed_lo, seed_hi, stream);
            w[0] = r.x;
            w[1] = r.y;
            w[2] = r.z;
            w[3] = r.w;
        }
        ct_st(out, i, ct_u01(w[j % 4]) >= p ? ct_ld(in, i) * scale : 0.0f);
    }
}

/* The common case, four whole elements of one block (first a multiple of
 * 4): one Philox call, straight-line code that CPU compilers vectorize
 * across work-items (the general loop above does not vectorize; on pocl it
 * ran 5x slower). Same decisions, same results. */
inline void ct_dropout_apply4(__global ct_at *out, __global const ct_at *in, uint b, uint first,
                              float p, float scale, uint seed_lo, uint seed_hi, uint stream)
{
    uint4 r = ct_dropout_block(first / 4 + b, seed_lo, seed_hi, stream);
#ifdef CT_ACT16
    uint i = 4 * b;
    ct_st(out, i, ct_u01(r.x) >= p ? ct_ld(in, i) * scale : 0.0f);
    ct_st(out, i + 1, ct_u01(r.y) >= p ? ct_ld(in, i + 1) * scale : 0.0f);
    ct_st(out, i + 2, ct_u01(r.z) >= p ? ct_ld(in, i + 2) * scale : 0.0f);
    ct_st(out, i + 3, ct_u01(r.w) >= p ? ct_ld(in, i + 3) * scale : 0.0f);
#else
    float4 v = vload4(b, in);
    float4 o;
    o.x = ct_u01(r.x) >= p ? v.x * scale : 0.0f;
    o.y = ct_u01(r.y) >= p ? v.y * scale : 0.0f;
    o.z = ct_u01(r.z) >= p ? v.z * scale : 0.0f;
    o.w = ct_u01(r.w) >= p ? v.w * scale : 0.0f;
    vstore4(o, b, out);
#endif
}

/* y = x * keep * scale; work-item b handles elements 4b .. 4b + 3.
 * x, y: (n) */
__kernel void dropout_fwd_f32(__global ct_at *y, ulong y_off, __global const ct_at *x, ulong x_off,
                              uint n, uint first, float p, float scale, uint seed_lo, uint seed_hi,
                              uint stream)
{
    uint b = get_global_id(0);
    if (first % 4 == 0 && 4 * b + 3 < n)
        ct_dropout_apply4(y + y_off, x + x_off, b, first, p, scale, seed_lo, seed_hi, stream);
    else if (b < (n + 3) / 4)
        ct_dropout_apply(y + y_off, x + x_off, b, n, first, p, scale, seed_lo, seed_hi, stream);
}

/* dx = dy * keep * scale, the same mask. dy, dx: (n) */
__kernel void dropout_bwd_f32(__global ct_at *dx, ulong dx_off, __global const ct_at *dy,
                              ulong dy_off, uint n, uint first, float p, float scale, uint seed_lo,
                              uint seed_hi, uint stream)
{
    uint b = get_global_id(0);
    if (first % 4 == 0 && 4 * b + 3 < n)
        ct_dropout_apply4(dx + dx_off, dy + dy_off, b, first, p, scale, seed_lo, seed_hi, stream);
    else if (b < (n + 3) / 4)
        ct_dropout_apply(dx + dx_off, dy + dy_off, b, n, first, p, scale, seed_lo, seed_hi, stream);
}
