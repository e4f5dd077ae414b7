/*
 * embedding.cl - table lookup y[i, :] = W[idx[i], :] and its deterministic
 * backward. Indices are int32; one outside [0, V) yields a NaN row forward
 * (so a bad index is loud, never an out-of-bounds read) and contributes
 * nothing backward.
 *
 * The backward sums the dy rows of each distinct index in ascending i,
 * with no float atomics, in two passes: embedding_link_f32 links every
 * occurrence of an index to its next one (O(n^2) integer compares, no
 * floats), then embedding_bwd_f32 lets the first occurrence of each index
 * walk its chain for one column (O(n D) float adds).
 *
 * y and dy are ct_at (common.cl): float, or 16 bits in the CT_ACT16
 * variants, where each output is a weight rounded once on store and dy's
 * chain sums in float from exact 16-bit loads; w, dw and the int32 ids stay
 * 32-bit (parameters and ids are not activations).
 */

#define CT_EMB_HEAD 0x80000000u /* link bit: no earlier i has this index */
#define CT_EMB_NEXT 0x7fffffffu /* link bits: the next i with this index, or n */

/* y (n, D), w (V, D), idx (n) int32 */
__kernel void embedding_fwd_f32(__global ct_at *y, ulong y_off, __global const float *w,
                                ulong w_off, __global const int *idx, ulong idx_off, uint n,
                                uint V, uint D)
{
    uint d = get_global_id(0), i = get_global_id(1);
    if (d >= D || i >= n)
        return;
    int v = idx[idx_off + i];
    ct_st(y, y_off + (ulong)i * D + d, v >= 0 && (uint)v < V ? w[w_off + (ulong)v * D + d] : NAN);
}

/* link (n) uint: CT_EMB_HEAD if i is the first occurrence of a valid index,
 * ored with the next j > i holding the same index (n when there is none). */
__kernel void embedding_link_f32(__global uint *link, ulong link_off, __global const int *idx,
                                 ulong idx_off, uint n, uint V)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    int v = idx[idx_off + i];
    if (v < 0 || (uint)v >= V) {
        link[link_off + i] = n; /* not a head: nobody walks it */
        return;
    }
    uint head = CT_EMB_HEAD;
    for (uint j = 0; j < i && head; j++)
        if (idx[idx_off + j] == v)
            head = 0;
    uint next = n;
    for (uint j = i + 1; j < n; j++)
        if (idx[idx_off + j] == v) {
            next = j;
            break;
        }
    link[link_off + i] = head | next;
}

/* dw (V, D) +=, dy (n, D), idx (n), link (n) from embedding_link_f32 */
__kernel void embedding_bwd_f32(__global float *dw, ulong dw_off, __global const ct_at *dy,
                                ulong dy_off, __global const int *idx, ulong idx_off,
                                __global const uint *link, ulong link_off, uint n, uint D)
{
    uint d = get_global_id(0), i = get_global_id(1);
    if (d >= D || i >= n)
        return;
    uint l = link[link_off + i];
    if (!(l & CT_EMB_HEAD))
        return;
    float s = 0.0f;
    for (uint j = i; j < n; j = link[link_off + j] & CT_EMB_NEXT)
        s += ct_ld(dy, dy_off + (ulong)j * D + d);
    dw[dw_off + (ulong)idx[idx_off + i] * D + d] += s;
}
