/*
 * dense.cl - the per-channel pieces around a GEMM: bias + activation
 * forward (dense and conv outputs alike, layout (N, C, HW); dense is HW = 1)
 * and the bias gradient, a deterministic sum over N and HW. x, y and dy
 * are ct_at (common.cl): 16 bits in the storage variants (dense_sbf16,
 * _sfp16), the bias, its gradient and the partial sums float32.
 */

/* y = act(x + b[channel]); y may alias x (each element is read, then
 * written, by the same work-item). x, y: (n, c, hw); b: (c) */
__kernel void bias_act_fwd_f32(__global ct_at *y, ulong y_off, __global const ct_at *x,
                               ulong x_off, __global const float *b, ulong b_off, uint n, uint c,
                               uint hw, int act)
{
    uint i = get_global_id(0);
    if (i >= n * c * hw)
        return;
    uint ch = (i / hw) % c;
    ct_st(y, y_off + i, ct_act_f(act, ct_ld(x, x_off + i) + b[b_off + ch]));
}

/* One term of a bias gradient. With an activation (act != 0) the term is
 * the pre-activation's gradient dy * act'(x, y), written back over dy: the
 * activation's backward and the bias sum in one pass, each element touched
 * by exactly one work-item (in 16 bits the sum takes the term before the
 * store rounds it). */
/* The column that compact column ch stands for when the columns [at, at +
 * len) of each row are skipped (len 0: ch itself) */
inline uint bias_col(uint ch, uint at, uint len)
{
    return ch >= at ? ch + len : ch;
}

inline float bias_term(__global ct_at *dy, ulong i, __global const ct_at *x,
                       __global const ct_at *y, ulong xy, int act)
{
    float v = ct_ld(dy, i);
    if (act) {
        v *= ct_act_df(act, ct_ld(x, xy), ct_ld(y, xy));
        ct_st(dy, i, v);
    }
    return v;
}

/*
 * db[ch] += sum over (n, hw) of dy in two stages, so that the launch fills a
 * GPU even with 16 channels (the launcher picks S slices of L consecutive
 * j = img hw + p of a channel from the shape alone). Stage one: a
 * work-group per (slice s, channel ch), dimension 0 over the slice so that
 * neighbouring work-items read neighbouring elements; each work-item sums a
 * strided share in a fixed order, a fixed-pairing tree in local memory
 * (`red`, a power-of-two wg) combines them into part[ch, s]. Stage two
 * (bias_bwd_final_f32) adds the slices in order. No atomics: the same
 * result every run on a device. The grid is exactly S x c work-groups: no
 * early return ahead of the barriers. With act != 0, dy first becomes
 * dy * act'(x, y) (bias_term). dy, x, y: (n, c, hw); part: (c, S); red: (wg)
 */
__kernel void bias_bwd_partial_f32(__global float *part, ulong part_off, __global ct_at *dy,
                                   ulong dy_off, __global const ct_at *x, ulong x_off,
                                   __global const ct_at *y, ulong y_off, uint n, uint c, uint hw,
                                   uint L, int act, __local float *red)
{
    uint s = get_group_id(0), S = get_num_groups(0), ch = get_group_id(1);
    uint l = get_local_id(0), wg = get_local_size(0);
    uint m = n * hw, j0 = s * L, j1 = m - j0 > L ? j0 + L : m;
    /* (img, p) of j = j0 + l, advanced by (wg / hw, wg % hw) per step */
    uint j = j0 + l, img = j / hw, p = j - img * hw, dimg = wg / hw, dp = wg - dimg * hw;
    float acc = 0.0f;
    for (; j < j1; j += wg) {
        ulong e = ((ulong)img * c + ch) * hw + p;
        acc += bias_term(dy, dy_off + e, x + x_off, y + y_off, e, act);
        img += dimg;
        if (p >= hw - dp) { /* p + dp >= hw, without overflowing */
            p -= hw - dp;
            img++;
        } else {
            p += dp;
        }
    }
    red[l] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = wg / 2; k > 0; k >>= 1) {
        if (l < k)
            red[l] += red[l + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        part[part_off + (ulong)ch * S + s] = red[0];
}

/*
 * The same stage one for hw == 1: a work-item per (channel ch, slice s)
 * sums the slice's L rows in order, neighbouring work-items reading
 * neighbouring channels of a row (coalesced), into part[s, ch]. With
 * accum != 0 (S = 1, L = n: columns short enough for one stage) the sum is
 * added to part[ch], which is then db: the whole gradient in one launch.
 * dy, x, y: (n, c); part: (S, c)
 * The columns [at, at + len) of each row of c can be skipped: ch then
 * runs over the c - len others (bias_col), part is (S, c - len), and the
 * accumulated db is indexed by the real column.
 */
__kernel void bias_bwd_cols_partial_f32(__global float *part, ulong part_off, __global ct_at *dy,
                                        ulong dy_off, __global const ct_at *x, ulong x_off,
                                        __global const ct_at *y, ulong y_off, uint n, uint c,
                                        uint S, uint L, int act, int accum, uint at, uint len)
{
    uint ch = get_global_id(0), s = get_global_id(1), cc = c - len;
    if (ch >= cc || s >= S)
        return;
    uint col = bias_col(ch, at, len);
    uint i0 = s * L, i1 = n - i0 > L ? i0 + L : n;
    float acc = 0.0f;
    for (uint i = i0; i < i1; i++) {
        ulong e = (ulong)i * c + col;
        acc += bias_term(dy, dy_off + e, x + x_off, y + y_off, e, act);
    }
    ulong o = part_off + (accum ? (ulong)col : (ulong)s * cc + ch);
    part[o] = accum ? part[o] + acc : acc;
}

/*
 * hw == 1, columns short enough for one launch (below R x 256 rows): a
 * work-group of cw columns x R lanes (local size (cw, R), R a power of two);
 * lane r sums rows r, r + R, ... of its column, neighbouring work-items
 * reading neighbouring columns of a row (coalesced), then the R lane sums
 * meet in a tree in local memory (a fixed order) and db[ch] += the total:
 * the whole gradient without partials or a second kernel.
 * dy, x, y: (n, c); db: (c); red: (cw R)
 */
__kernel void bias_bwd_cols_tree_f32(__global float *db, ulong db_off, __global ct_at *dy,
                                     ulong dy_off, __global const ct_at *x, ulong x_off,
                                     __global const ct_at *y, ulong y_off, uint n, uint c, int act,
                                     __local float *red, uint at, uint len)
{
    uint cw = get_local_size(0), R = get_local_size(1);
    uint lc = get_local_id(0), r = get_local_id(1);
    uint ch = get_group_id(0) * cw + lc, cc = c - len, col = bias_col(ch, at, len);
    float acc = 0.0f;
    if (ch < cc)
        for (uint i = r; i < n; i += R) {
            ulong e = (ulong)i * c + col;
            acc += bias_term(dy, dy_off + e, x + x_off, y + y_off, e, act);
        }
    red[r * cw + lc] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = R / 2; k > 0; k >>= 1) {
        if (r < k)
            red[r * cw + lc] += red[(r + k) * cw + lc];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (r == 0 && ch < cc)
        db[db_off + col] += red[lc];
}

/*
 * Stage two: db[ch] += the S partials of channel ch in slice order, read at
 * part[ch * cs + s * ss] ((c, S): cs = S, ss = 1; (S, c): cs = 1, ss = c);
 * with columns skipped (len > 0, bias_col) ch is compact and db's index
 * the column it stands for. part: as stated; db: (c + len)
 */
__kernel void bias_bwd_final_f32(__global float *db, ulong db_off, __global const float *part,
                                 ulong part_off, uint c, uint S, uint cs, uint ss, uint at,
                                 uint len)
{
    uint ch = get_global_id(0);
    if (ch >= c)
        return;
    __global const float *pc = part + part_off + (ulong)ch * cs;
    float acc = 0.0f;
    for (uint s = 0; s < S; s++)
        acc += pc[(ulong)s * ss];
    db[db_off + bias_col(ch, at, len)] += acc;
}
