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

/* The residual connection's kernels store activations as ct_at (common.cl):
 * float, or 16 bits in the CT_ACT16 variants; sums in float. */

/* y = a + b */
__kernel void add_fwd_f32(__global ct_at *y, ulong y_off, __global const ct_at *a, ulong a_off,
                          __global const ct_at *b, ulong b_off, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        ct_st(y, y_off + i, ct_ld(a, a_off + i) + ct_ld(b, b_off + i));
}

/* da = dy and/or db = dy (bit 0 of `which`: da, bit 1: db), reading dy
 * once; bit 2 (da) and bit 3 (db): add dy into that target instead (a
 * gradient other layers write too) */
__kernel void add_bwd_f32(__global ct_at *da, ulong da_off, __global ct_at *db, ulong db_off,
                          __global const ct_at *dy, ulong dy_off, uint n, int which)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    float g = ct_ld(dy, dy_off + i);
    if (which & 1)
        ct_st(da, da_off + i, which & 4 ? ct_ld(da, da_off + i) + g : g);
    if (which & 2)
        ct_st(db, db_off + i, which & 8 ? ct_ld(db, db_off + i) + g : g);
}

/* dst += src over activations (add_accumulate_f32 below: over floats) */
__kernel void add_accumulate_act(__global ct_at *dst, ulong dst_off, __global const ct_at *src,
                                 ulong src_off, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        ct_st(dst, dst_off + i, ct_ld(dst, dst_off + i) + ct_ld(src, src_off + i));
}

/* dst += src over floats (the trainer's counts, parameters' gradients) */
__kernel void add_accumulate_f32(__global float *dst, ulong dst_off, __global const float *src,
                                 ulong src_off, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        dst[dst_off + i] += src[src_off + i];
}

/* Conversions between activations and floats, and the fills and copies of
 * activations (the net's input into its storage, a gradient zeroed before
 * its writers add to it, a view's gradient copied, a layer without a
 * 16-bit form run over floats). Without CT_ACT16 they are float copies. */
__kernel void act_from_f32(__global ct_at *y, ulong y_off, __global const float *x, ulong x_off, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        ct_st(y, y_off + i, x[x_off + i]);
}

__kernel void act_to_f32(__global float *y, ulong y_off, __global const ct_at *x, ulong x_off, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        y[y_off + i] = ct_ld(x, x_off + i);
}

__kernel void act_copy(__global ct_at *y, ulong y_off, __global const ct_at *x, ulong x_off, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        y[y_off + i] = x[x_off + i];
}

__kernel void act_zero(__global ct_at *y, ulong y_off, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        y[y_off + i] = 0; /* +0 in float, bf16 and fp16 alike */
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
 * i = gr wg + lid + k G wg. x: (n) ct_at, floats in the base program (the
 * trainer's gradients and parameters), 16-bit activations in the storage
 * variants (a 16-bit infinity or NaN loads as a float one: ct_ld is
 * exact); partial: (G) uint, red: wg uints of local memory
 */
__kernel void nonfinite_partial_f32(__global uint *partial, ulong partial_off,
                                    __global const ct_at *x, ulong x_off, uint n,
                                    __local uint *red)
{
    uint lid = get_local_id(0), wg = get_local_size(0);
    uint gr = get_group_id(0), groups = get_num_groups(0);
    uint c = 0;
    ulong stride = (ulong)groups * wg;
    for (ulong i = (ulong)gr * wg + lid; i < n; i += stride)
        c += (as_uint(ct_ld(x, x_off + i)) & 0x7f800000u) == 0x7f800000u;
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

/*
 * The gating multiply (squeeze-and-excitation): y = x g over rows of hw
 * elements, g one value per row (x (N, C, H, W), g (N, C): row n C + c),
 * hw = 1 for two tensors of one shape. 2-D ranges: dimension 0 the
 * position in a row, dimension 1 the row, so the gate's index is the row
 * (no division).
 */
__kernel void mul_fwd_f32(__global float *y, ulong y_off, __global const float *x, ulong x_off,
                          __global const float *g, ulong g_off, uint hw, uint rows)
{
    uint p = get_global_id(0), r = get_global_id(1);
    float gv = g[g_off + min(r, rows - 1)]; /* ahead of the guard: one load per row on CPUs */
    if (p >= hw || r >= rows)
        return;
    ulong i = (ulong)r * hw + p;
    y[y_off + i] = x[x_off + i] * gv;
}

/* dx = dy g (acc: dx += dy g, a gradient other layers write too) */
__kernel void mul_bwd_dx_f32(__global float *dx, ulong dx_off, __global const float *dy,
                             ulong dy_off, __global const float *g, ulong g_off, uint hw,
                             uint rows, int acc)
{
    uint p = get_global_id(0), r = get_global_id(1);
    float gv = g[g_off + min(r, rows - 1)];
    if (p >= hw || r >= rows)
        return;
    ulong i = (ulong)r * hw + p;
    float v = dy[dy_off + i] * gv;
    dx[dx_off + i] = acc ? dx[dx_off + i] + v : v;
}

/* dy x over a row's elements lxi, lxi + lx, ..., Kahan-summed */
inline float ct_mul_row_sum(__global const float *dr, __global const float *xr, uint hw, uint lxi,
                            uint lx)
{
    float s = 0.0f, comp = 0.0f;
    for (uint p = lxi; p < hw; p += lx) {
        float v = dr[p] * xr[p] - comp;
        float u = s + v;
        comp = (u - s) - v;
        s = u;
    }
    return s;
}

/* dg[r] = sum over row r of dy x (acc: added to dg[r]), a work-item per row
 * (CPU devices, whose loop runs along the row, and rows of one element);
 * 1-D range over the rows */
__kernel void mul_bwd_dg_rows_f32(__global float *dg, ulong dg_off, __global const float *dy,
                                  ulong dy_off, __global const float *x, ulong x_off, uint hw,
                                  uint rows, int acc)
{
    uint r = get_global_id(0);
    if (r >= rows)
        return;
    float s = ct_mul_row_sum(dy + dy_off + (ulong)r * hw, x + x_off + (ulong)r * hw, hw, 0, 1);
    dg[dg_off + r] = acc ? dg[dg_off + r] + s : s;
}

/*
 * The same on GPUs for rows of 2 elements or more: work-groups of lx x ly
 * work-items (lx >= 2) take ly rows; work-item lxi sums the row's elements
 * lxi, lxi + lx, ... (neighbouring work-items on neighbouring elements), a
 * fixed-order tree in local memory combines the lx shares. The launch
 * covers whole groups: no return ahead of the barrier. (With lx = 1 and ly
 * > 1 pocl 3.1 ran the store after the barrier twice for work-item (0, 0),
 * adding its sum twice; rows of one work-item take the kernel above.)
 * red: (lx ly)
 */
__kernel void mul_bwd_dg_f32(__global float *dg, ulong dg_off, __global const float *dy,
                             ulong dy_off, __global const float *x, ulong x_off, uint hw,
                             uint rows, int acc, __local float *red)
{
    uint lxi = get_local_id(0), lx = get_local_size(0), t = get_local_id(1);
    uint r = get_global_id(1);
    float s = 0.0f;
    if (r < rows)
        s = ct_mul_row_sum(dy + dy_off + (ulong)r * hw, x + x_off + (ulong)r * hw, hw, lxi, lx);
    __local float *rr = red + t * lx;
    rr[lxi] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint w = lx / 2; w > 0; w >>= 1) {
        if (lxi < w)
            rr[lxi] += rr[lxi + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lxi == 0 && r < rows)
        dg[dg_off + r] = acc ? dg[dg_off + r] + rr[0] : rr[0];
}

/* dst[r dld + p] = src[r sld + p] (acc: +=) for p < len, r < rows: the
 * concatenation's blocks, forward and backward. 2-D range (p, r). */
__kernel void copy_rows_f32(__global float *dst, ulong dst_off, uint dld, __global const float *src,
                            ulong src_off, uint sld, uint len, uint rows, int acc)
{
    uint p = get_global_id(0), r = get_global_id(1);
    if (p >= len || r >= rows)
        return;
    ulong d = dst_off + (ulong)r * dld + p;
    float v = src[src_off + (ulong)r * sld + p];
    dst[d] = acc ? dst[d] + v : v;
}
