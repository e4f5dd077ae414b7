/*
 * transpose.cl - batched 2-D transposes between strided layouts, through
 * tiles in local memory so both the reads and the writes are coalesced:
 * for every batch b, dst[b dn + c cs + r] = src[b sn + r rs + c] for r < R,
 * c < C (the source's rows are R of C contiguous elements, the
 * destination's C of R). A work-group of TS x TR work-items moves a TILE x
 * TILE tile: it reads TILE source rows along c, stores them in local memory
 * (one padding column, no bank conflicts), and writes TILE destination rows
 * along r. Images to sequences ((N, E, T) -> (T, N, E)) and back are two
 * such transposes with other strides (src/ops/transpose.c).
 */

#define CT_TP_TILE 16

__kernel void transpose_f32(__global float *dst, ulong dst_off, __global const float *src, ulong src_off,
                            uint R, uint C, ulong sn, ulong rs, ulong dn, ulong cs)
{
    __local float tile[CT_TP_TILE][CT_TP_TILE + 1];
    uint lx = get_local_id(0), ly = get_local_id(1), ny = get_local_size(1);
    uint c0 = get_group_id(0) * CT_TP_TILE, r0 = get_group_id(1) * CT_TP_TILE, b = get_group_id(2);
    __global const float *s = src + src_off + (ulong)b * sn;
    __global float *d = dst + dst_off + (ulong)b * dn;
    for (uint i = ly; i < CT_TP_TILE; i += ny) {
        uint r = r0 + i, c = c0 + lx;
        tile[i][lx] = r < R && c < C ? s[(ulong)r * rs + c] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = ly; i < CT_TP_TILE; i += ny) {
        uint c = c0 + i, r = r0 + lx;
        if (c < C && r < R)
            d[(ulong)c * cs + r] = tile[lx][i];
    }
}
