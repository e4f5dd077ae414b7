/*
 * splitk.cl - split-K's fixed-order sum (src/ops/gemm_cl.c ct_gemm_cl_sum),
 * which the SGEMM (gemm.cl), the implicit-GEMM convolution (conv_igemm.cl)
 * and the lane convolutions' weight gradient (conv_lane.cl) share: a
 * program of its own, so that none of them builds another's tiles for it
 * (gemm.cl takes about a minute to compile on pocl, this a fraction of a
 * second). It sums float32 slices and rounds nothing, so 16-bit products
 * use it as it is; its storage variants (splitk_sbf16, _sfp16) write a C
 * in the activation storage where hc is set (common.cl's ct_gst).
 */

/* Split-K's second pass: c = act(alpha * sum over the slices of w + beta c
 * + bias), the slices summed in order (deterministic); the epilogue as in
 * gemm.cl's ct_gemm_tile. w: (slices, m, n); c: (m, n) at c_off, ldc;
 * bias: (n). Global size (n, m). */
__kernel void gemm_splitk_sum(__global const float *w, uint slices, __global float *c,
                              ulong c_off, uint ldc, uint m, uint n, float alpha, float beta,
                              __global const float *bias, ulong bias_off, int has_bias, int act,
                              int hc)
{
    const uint j = get_global_id(0), i = get_global_id(1);
    if (i >= m || j >= n)
        return;
    const ulong mn = (ulong)m * n;
    __global const float *p = w + (ulong)i * n + j;
    float s = 0.0f;
    /* in slice order; unrolled so that the loads of several slices are in
     * flight at once (up to 512 slices on GPUs) */
#pragma unroll 8
    for (uint z = 0; z < slices; z++)
        s += p[z * mn];
    const ulong q = c_off + (ulong)i * ldc + j;
    float v = beta == 0.0f ? alpha * s : ct_fma(alpha, s, beta * ct_gld(c, q, hc));
    if (has_bias)
        v += bias[bias_off + j];
    ct_gst(c, q, ct_act_f(act, v), hc);
}
