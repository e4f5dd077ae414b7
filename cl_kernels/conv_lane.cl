/*
 * conv_lane.cl - conv2d as direct convolutions for runtimes that run
 * work-items as SIMD lanes and every global load as one scalar load per
 * lane (Mesa's llvmpipe; src/ops/conv_lane.c). There a product's cost is
 * its loads: the im2col column matrix (kh kw times the activation, written
 * and read again) and a GEMM's float4 operands cost more than the
 * multiply-adds. Each work-item here reads its operands straight from the
 * NCHW tensors and keeps a 4 x 4 block of sums in registers: every step
 * loads 4 + 4 floats for 16 multiply-adds, integer index arithmetic only,
 * and the padding and stride tests are on row and column indices that
 * neighbouring lanes share (dimension 0 runs along channels or taps, not
 * pixels), so they do not split a vector.
 *
 * Geometry g (as conv_igemm's): n, c_in, h, w, c_out, kh, kw, stride_h,
 * stride_w, pad_h, pad_w, dil_h, dil_w, oh, ow. Blocks past c_out, c_in,
 * n or the taps read clamped indices and store nothing. Each sum runs in a
 * fixed order (deterministic): the forward over (ci, ky, kx), the input
 * gradient over (co, ky, kx), the weight gradient over its slice's rows
 * (image, oy) and columns ox in order.
 */

#define CT_LANE_ACC(i, a, b0, b1, b2, b3)                                                         \
    s##i.x = ct_fma(a, b0, s##i.x);                                                                \
    s##i.y = ct_fma(a, b1, s##i.y);                                                                \
    s##i.z = ct_fma(a, b2, s##i.z);                                                                \
    s##i.w = ct_fma(a, b3, s##i.w)

/* one step: B's four values at b0..b3 + bo, each multiplied into row i of
 * the sums by A's value at a<i> + ao */
#define CT_LANE_STEP(A, a0, a1, a2, a3, ao, B, b0, b1, b2, b3, bo)                                \
    {                                                                                             \
        const float v0 = B[b0 + bo], v1 = B[b1 + bo], v2 = B[b2 + bo], v3 = B[b3 + bo];          \
        CT_LANE_ACC(0, A[a0 + ao], v0, v1, v2, v3);                                               \
        CT_LANE_ACC(1, A[a1 + ao], v0, v1, v2, v3);                                               \
        CT_LANE_ACC(2, A[a2 + ao], v0, v1, v2, v3);                                               \
        CT_LANE_ACC(3, A[a3 + ao], v0, v1, v2, v3);                                               \
    }

/* the sums s<i>.<j> (plus add[i]) to o[((n0 + j) ch + c0 + i) plane + pix]
 * for the channels c0 + i < ch and images n0 + j < n */
inline void ct_lane_put(__global float *o, float4 s0, float4 s1, float4 s2, float4 s3, float4 add, int c0,
                        int ch, int n0, int n, int plane, int pix)
{
    float4 sums[4] = { s0 + add.x, s1 + add.y, s2 + add.z, s3 + add.w };
    for (int i = 0; i < 4 && c0 + i < ch; i++) {
        float v[4];
        vstore4(sums[i], 0, v);
        for (int j = 0; j < 4 && n0 + j < n; j++)
            o[((n0 + j) * ch + c0 + i) * plane + pix] = v[j];
    }
}

/* y (n, c_out, oh, ow) = conv(x, w) + bias: a work-item computes output
 * channels 4 g0 .. 4 g0 + 3 of images 4 g2 .. 4 g2 + 3 at output pixel g1
 * (oy, ox by div_ow). */
__kernel void conv_lane_fwd(__global float *y, ulong y_off, __global const float *x, int x_off,
                            __global const float *w, int w_off, __global const float *bias,
                            int b_off, int has_bias, int16 g, uint2 div_ow)
{
    const int N = g.s0, C = g.s1, H = g.s2, W = g.s3, K = g.s4, R = g.s5, S = g.s6;
    const int OH = g.sd, OW = g.se, P = OH * OW;
    const int k0 = (int)get_global_id(0) * 4, p = (int)get_global_id(1), n0 = (int)get_global_id(2) * 4;
    if (k0 >= K || p >= P || n0 >= N)
        return;
    const int oy = (int)ct_udiv((uint)p, div_ow), ox = p - oy * OW;
    const int HW = H * W, CHW = C * HW, RS = R * S, CRS = C * RS;
    /* the four images' and channels' bases, clamped; the offsets are
     * folded into these int indices (a pointer moved by a 64-bit offset
     * made every load 2.6x dearer on llvmpipe) */
    const int xa = x_off + n0 * CHW, xb = x_off + min(n0 + 1, N - 1) * CHW,
              xc = x_off + min(n0 + 2, N - 1) * CHW, xd = x_off + min(n0 + 3, N - 1) * CHW;
    const int wa = w_off + k0 * CRS, wb = w_off + min(k0 + 1, K - 1) * CRS,
              wc = w_off + min(k0 + 2, K - 1) * CRS, wd = w_off + min(k0 + 3, K - 1) * CRS;
    const int iy0 = oy * g.s7 - g.s9, ix0 = ox * g.s8 - g.sa;
    float4 s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f; /* s<channel>.<image> */
    for (int c = 0; c < C; c++) {
        for (int r = 0; r < R; r++) {
            const int iy = iy0 + r * g.sb;
            if (iy < 0 || iy >= H)
                continue;
            const int xr = c * HW + iy * W, wr = c * RS + r * S;
            for (int s = 0; s < S; s++) {
                const int ix = ix0 + s * g.sc;
                if (ix < 0 || ix >= W)
                    continue;
                CT_LANE_STEP(w, wa, wb, wc, wd, wr + s, x, xa, xb, xc, xd, xr + ix);
            }
        }
    }
    float4 b = 0.0f;
    if (has_bias)
        b = (float4)(bias[b_off + k0], bias[b_off + min(k0 + 1, K - 1)], bias[b_off + min(k0 + 2, K - 1)],
                     bias[b_off + min(k0 + 3, K - 1)]);
    ct_lane_put(y + y_off, s0, s1, s2, s3, b, k0, K, n0, N, P, p);
}

/* dx (n, c_in, h, w) = the input gradient: a work-item computes input
 * channels 4 g0 .. 4 g0 + 3 of images 4 g2 .. 4 g2 + 3 at input pixel g1
 * (iy, ix by div_w), the sum over (co, ky, kx) of w[co][ci][ky][kx]
 * dy[n][co][oy][ox] where iy = oy stride_h - pad_h + ky dil_h (and the
 * same along x). */
__kernel void conv_lane_dx(__global float *dx, ulong dx_off, __global const float *dy, int dy_off,
                           __global const float *w, int w_off, int16 g, uint2 div_w)
{
    const int N = g.s0, C = g.s1, H = g.s2, W = g.s3, K = g.s4, R = g.s5, S = g.s6;
    const int sh = g.s7, sw = g.s8, OH = g.sd, OW = g.se, P = OH * OW, HW = H * W;
    const int c0 = (int)get_global_id(0) * 4, q = (int)get_global_id(1), n0 = (int)get_global_id(2) * 4;
    if (c0 >= C || q >= HW || n0 >= N)
        return;
    const int iy = (int)ct_udiv((uint)q, div_w), ix = q - iy * W;
    const int RS = R * S, CRS = C * RS, KP = K * P;
    const int ya = dy_off + n0 * KP, yb = dy_off + min(n0 + 1, N - 1) * KP,
              yc = dy_off + min(n0 + 2, N - 1) * KP, yd = dy_off + min(n0 + 3, N - 1) * KP;
    const int wa = w_off + c0 * RS, wb = w_off + min(c0 + 1, C - 1) * RS,
              wc = w_off + min(c0 + 2, C - 1) * RS, wd = w_off + min(c0 + 3, C - 1) * RS;
    const int ty0 = iy + g.s9, tx0 = ix + g.sa;
    float4 s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f; /* s<channel>.<image> */
    for (int k = 0; k < K; k++) {
        for (int r = 0; r < R; r++) {
            int oy = ty0 - r * g.sb;
            if (oy < 0)
                break; /* it only falls as r grows */
            if (sh > 1) {
                const int t = oy / sh;
                if (t * sh != oy)
                    continue;
                oy = t;
            }
            if (oy >= OH)
                continue;
            const int yr = k * P + oy * OW, wr = k * CRS + r * S;
            for (int s = 0; s < S; s++) {
                int ox = tx0 - s * g.sc;
                if (ox < 0)
                    break;
                if (sw > 1) {
                    const int t = ox / sw;
                    if (t * sw != ox)
                        continue;
                    ox = t;
                }
                if (ox >= OW)
                    continue;
                CT_LANE_STEP(w, wa, wb, wc, wd, wr + s, dy, ya, yb, yc, yd, yr + ox);
            }
        }
    }
    ct_lane_put(dx + dx_off, s0, s1, s2, s3, (float4)0.0f, c0, C, n0, N, HW, q);
}

/* The weight gradient over slice g2 of the rows (image, oy), rows
 * rows_per g2 .. min(rows_per (g2 + 1), n oh): a work-item computes
 * output channels 4 g1 .. 4 g1 + 3 by input channels 4 cb .. 4 cb + 3 at
 * one tap (ky, kx), g0 = tap * cblocks + cb: the sum over its rows and the
 * columns ox whose input column lies inside the image (a range worked out
 * once: no test per pixel) of dy[n][co][oy][ox] x[n][ci][iy][ix]. beta 1:
 * added into dw (c_out, c_in, kh, kw); beta 0: written to slice g2 of dw,
 * (slices, c_out, c_in kh kw). */
__kernel void conv_lane_dw(__global float *dw, ulong dw_off, __global const float *dy, int dy_off,
                           __global const float *x, int x_off, int16 g, int rows_per, float beta)
{
    const int N = g.s0, C = g.s1, H = g.s2, W = g.s3, K = g.s4, R = g.s5, S = g.s6;
    const int sh = g.s7, sw = g.s8, OH = g.sd, OW = g.se, P = OH * OW, HW = H * W, RS = R * S;
    const int cblocks = (C + 3) / 4, t = (int)get_global_id(0) / cblocks;
    const int c0 = ((int)get_global_id(0) - t * cblocks) * 4, k0 = (int)get_global_id(1) * 4;
    const int z = (int)get_global_id(2), row0 = z * rows_per, row1 = min(row0 + rows_per, N * OH);
    if (t >= RS || k0 >= K || row0 >= row1)
        return;
    const int r = t / S, s = t - r * S;
    const int iy0 = r * g.sb - g.s9, ix0 = s * g.sc - g.sa;
    /* the columns ox with 0 <= ox sw + ix0 < W */
    const int lo = ix0 >= 0 ? 0 : (-ix0 + sw - 1) / sw;
    const int hi = min(OW, W - 1 - ix0 < 0 ? 0 : (W - 1 - ix0) / sw + 1);
    const int xa = x_off + c0 * HW + ix0, xb = x_off + min(c0 + 1, C - 1) * HW + ix0,
              xc = x_off + min(c0 + 2, C - 1) * HW + ix0, xd = x_off + min(c0 + 3, C - 1) * HW + ix0;
    const int ya = dy_off + k0 * P, yb = dy_off + min(k0 + 1, K - 1) * P,
              yc = dy_off + min(k0 + 2, K - 1) * P, yd = dy_off + min(k0 + 3, K - 1) * P;
    float4 s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f; /* s<output channel>.<input channel> */
    int n = row0 / OH, oy = row0 - n * OH;
    for (int row = row0; row < row1; row++) {
        const int iy = oy * sh + iy0;
        if (iy >= 0 && iy < H) {
            const int xr = n * C * HW + iy * W, yr = n * K * P + oy * OW;
            for (int ox = lo; ox < hi; ox++) {
                CT_LANE_STEP(dy, ya, yb, yc, yd, yr + ox, x, xa, xb, xc, xd, xr + ox * sw);
            }
        }
        if (++oy == OH)
            oy = 0, n++;
    }
    dw += dw_off + (beta == 0.0f ? (ulong)z * K * C * RS : 0);
    float4 sums[4] = { s0, s1, s2, s3 };
    for (int i = 0; i < 4 && k0 + i < K; i++) {
        float v[4];
        vstore4(sums[i], 0, v);
        for (int j = 0; j < 4 && c0 + j < C; j++) {
            __global float *o = dw + ((k0 + i) * C + c0 + j) * RS + t;
            *o = beta == 0.0f ? v[j] : *o + v[j];
        }
    }
}
