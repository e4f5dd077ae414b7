/*
 * seqpool.cl - pooling a sequence over time, (T, N, F) -> (N, F): the mean,
 * the max or the last vector over the positions that are not padding.
 * Rows are time-major, element [t][n][f] at (t N + n) F + f. tokens (T, N)
 * int32 marks padding with the id 0; a NULL tokens buffer masks nothing. A
 * sample with no position left gives zeros and a zero gradient.
 *
 * One work-item per (f, n) walks t in ascending order, so every sum has a
 * fixed order and nothing needs atomics; adjacent work-items read adjacent
 * features. The backward writes every dx element, zeros included.
 *
 * mode: 0 mean, 1 max, 2 last (enum ct_seqpool_mode). The max is the first
 * maximum, or the last NaN if the column holds any (maxpool's rule); its
 * position t is recorded in argmax (N, F) int32 (-1 for a sample with no
 * position) for the backward.
 */

#define CT_SEQPOOL_PAD 0

/* position (t, n) holds a real token */
inline int ct_seqpool_real(__global const int *tok, ulong tok_off, uint t, uint n, uint N)
{
    return !tok || tok[tok_off + (ulong)t * N + n] != CT_SEQPOOL_PAD;
}

/* the last real position of sample n, -1 if none. An ascending walk with no
 * early exit: the descending one (t-- > 0 && found < 0) picked a wrong
 * position on NVIDIA's OpenCL compiler (driver 580.159.04, H200) */
inline int ct_seqpool_last(__global const int *tok, ulong tok_off, uint T, uint n, uint N)
{
    if (!tok)
        return (int)T - 1;
    int last = -1;
    for (uint t = 0; t < T; t++)
        if (tok[tok_off + (ulong)t * N + n] != CT_SEQPOOL_PAD)
            last = (int)t;
    return last;
}

/* y (N, F) = pooled x (T, N, F); argmax (N, F) int32 (max only, may be NULL);
 * tokens (T, N) int32 or NULL */
__kernel void seqpool_fwd_f32(__global float *y, ulong y_off, __global int *argmax, ulong am_off,
                              __global const float *x, ulong x_off, __global const int *tok,
                              ulong tok_off, uint mode, uint T, uint N, uint F)
{
    uint f = get_global_id(0), n = get_global_id(1);
    if (f >= F || n >= N)
        return;
    ulong step = (ulong)N * F, at = x_off + (ulong)n * F + f;
    float out = 0.0f;
    int best = -1;
    if (mode == 0) {
        float s = 0.0f;
        uint count = 0;
        for (uint t = 0; t < T; t++)
            if (ct_seqpool_real(tok, tok_off, t, n, N)) {
                s += x[at + t * step];
                count++;
            }
        out = count ? s / (float)count : 0.0f;
    } else if (mode == 1) {
        float m = -INFINITY;
        for (uint t = 0; t < T; t++)
            if (ct_seqpool_real(tok, tok_off, t, n, N)) {
                float v = x[at + t * step];
                if (best < 0 || v > m || isnan(v)) {
                    m = v;
                    best = (int)t;
                }
            }
        out = best < 0 ? 0.0f : m;
        if (argmax)
            argmax[am_off + (ulong)n * F + f] = best;
    } else {
        best = ct_seqpool_last(tok, tok_off, T, n, N);
        out = best < 0 ? 0.0f : x[at + (uint)best * step];
    }
    y[y_off + (ulong)n * F + f] = out;
}

/* dx (T, N, F) = dy (N, F) spread back: mean over the real positions, the
 * recorded argmax (N, F) int32 (max; required), the last real position */
__kernel void seqpool_bwd_f32(__global float *dx, ulong dx_off, __global const float *dy,
                              ulong dy_off, __global const int *argmax, ulong am_off,
                              __global const int *tok, ulong tok_off, uint mode, uint T, uint N,
                              uint F)
{
    uint f = get_global_id(0), n = get_global_id(1);
    if (f >= F || n >= N)
        return;
    ulong step = (ulong)N * F, at = dx_off + (ulong)n * F + f;
    float g = dy[dy_off + (ulong)n * F + f];
    if (mode == 0) {
        uint count = 0;
        for (uint t = 0; t < T; t++)
            count += ct_seqpool_real(tok, tok_off, t, n, N);
        float share = count ? g / (float)count : 0.0f;
        for (uint t = 0; t < T; t++)
            dx[at + t * step] = ct_seqpool_real(tok, tok_off, t, n, N) ? share : 0.0f;
        return;
    }
    int pick = -1;
    if (mode == 1) {
        pick = argmax[am_off + (ulong)n * F + f];
    } else {
        pick = ct_seqpool_last(tok, tok_off, T, n, N);
    }
    for (uint t = 0; t < T; t++)
        dx[at + t * step] = (int)t == pick ? g : 0.0f;
}
