/*
 * optim.cl - optimizer steps as one fused kernel each over a flat parameter
 * buffer, and gradient clipping by the global L2 norm.
 *
 * The step kernels follow torch.optim.SGD / Adam / AdamW operation by
 * operation, in float, with the scalars PyTorch forms in double on the host
 * (bias corrections, step size, 1 - beta) passed in already rounded to float
 * by the launchers (src/optim/optim.c), so the device rounds where PyTorch
 * rounds. At the first step the state is never read: PyTorch's zero (Adam)
 * or clone-of-the-gradient (SGD) initialisation is written instead, so a
 * fresh state arena needs no zeroing and garbage in it cannot leak through.
 * With zero set, a step writes grad = 0 once it has read it (the next
 * step's backward adds into zeros): no separate fill reads the gradients
 * again.
 *
 * The norm is a deterministic two-stage reduction: stage one gives each of G
 * work-groups a fixed strided share (Kahan-summed per work-item, then a
 * fixed-order tree in local memory), stage two sums the G partials the same
 * way in one work-group. The work-group size is a power of two the launcher
 * picks from the device and kernel alone, so a device gives the same bits
 * every run. The clip kernel reads the norm from device memory: no host
 * round trip inside a training step.
 */

/*
 * SGD, with dampening d and Nesterov as torch.optim.SGD (maximize off):
 *   g = grad + wd p                     (only when wd != 0)
 *   b = first ? g : mu b + (1 - d) g    (only when mu != 0)
 *   g = nesterov ? g + mu b : b         (only when mu != 0)
 *   p = p - lr g
 *   grad = 0                            (only when zero)
 * p, grad, b: (n); b is not touched when mu == 0 (any buffer may be passed).
 */
/* Each work-item steps CT_OPT_PER elements a grid apart (G = the global
 * size, at least n / CT_OPT_PER): element i + k G for k < CT_OPT_PER. It
 * loads all of them before it computes, so CT_OPT_PER loads per array are
 * in flight (one each left a GPU's memory system mostly idle: an H200 ran
 * the SGD step at 1 TB/s), and every load is still coalesced. */
#define CT_OPT_PER 4

__kernel void sgd_step_f32(__global float *p, ulong p_off, __global float *grad, ulong grad_off,
                           __global float *b, ulong b_off, uint n, float lr, float wd, float mu,
                           float one_minus_damp, int nesterov, int first, int zero)
{
    const uint i0 = get_global_id(0), G = get_global_size(0);
    float w[CT_OPT_PER], g[CT_OPT_PER], bb[CT_OPT_PER];
#pragma unroll
    for (int k = 0; k < CT_OPT_PER; k++) {
        const ulong i = i0 + (ulong)k * G;
        const int in = i < n;
        w[k] = in ? p[p_off + i] : 0.0f;
        g[k] = in ? grad[grad_off + i] : 0.0f;
        bb[k] = in && mu != 0.0f && !first ? b[b_off + i] : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < CT_OPT_PER; k++) {
        const ulong i = i0 + (ulong)k * G;
        if (i >= n)
            continue;
        float gk = g[k];
        if (zero)
            grad[grad_off + i] = 0.0f;
        if (wd != 0.0f)
            gk = gk + wd * w[k];
        if (mu != 0.0f) {
            float m = first ? gk : mu * bb[k] + one_minus_damp * gk;
            b[b_off + i] = m;
            gk = nesterov ? gk + mu * m : m;
        }
        p[p_off + i] = w[k] - lr * gk;
    }
}

/*
 * Adam (decay == 1) and AdamW (l2 == 0), as torch.optim.Adam / AdamW
 * (amsgrad and maximize off):
 *   p = decay p                         (AdamW: decay = 1 - lr wd)
 *   g = grad + l2 p                     (Adam: l2 = wd)
 *   m = beta1 m + (1 - beta1) g         (m = (1 - beta1) g at the first step)
 *   v = beta2 v + (1 - beta2) g^2       (likewise)
 *   p = p - step_size m / (sqrt(v) / bc2_sqrt + eps)
 *   grad = 0                            (only when zero)
 * with step_size = lr / (1 - beta1^t), bc2_sqrt = sqrt(1 - beta2^t).
 * p, grad, m, v: (n)
 */
__kernel void adam_step_f32(__global float *p, ulong p_off, __global float *grad, ulong grad_off,
                            __global float *m, ulong m_off, __global float *v, ulong v_off, uint n,
                            float decay, float l2, float beta1, float one_minus_beta1, float beta2,
                            float one_minus_beta2, float step_size, float bc2_sqrt, float eps,
                            int first, int zero)
{
    const uint i0 = get_global_id(0), G = get_global_size(0);
    float w[CT_OPT_PER], g[CT_OPT_PER], mm[CT_OPT_PER], vv[CT_OPT_PER];
#pragma unroll
    for (int k = 0; k < CT_OPT_PER; k++) {
        const ulong i = i0 + (ulong)k * G;
        const int in = i < n, st = in && !first;
        w[k] = in ? p[p_off + i] : 0.0f;
        g[k] = in ? grad[grad_off + i] : 0.0f;
        mm[k] = st ? m[m_off + i] : 0.0f;
        vv[k] = st ? v[v_off + i] : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < CT_OPT_PER; k++) {
        const ulong i = i0 + (ulong)k * G;
        if (i >= n)
            continue;
        float wk = w[k], gk = g[k];
        if (zero)
            grad[grad_off + i] = 0.0f;
        if (decay != 1.0f)
            wk = wk * decay;
        if (l2 != 0.0f)
            gk = gk + l2 * wk;
        float mi = first ? one_minus_beta1 * gk : beta1 * mm[k] + one_minus_beta1 * gk;
        float vi = first ? one_minus_beta2 * gk * gk : beta2 * vv[k] + one_minus_beta2 * gk * gk;
        m[m_off + i] = mi;
        v[v_off + i] = vi;
        float denom = sqrt(vi) / bc2_sqrt + eps;
        p[p_off + i] = wk - step_size * (mi / denom);
    }
}

/* Kahan-compensated s += v. */
inline void optim_kahan(float *s, float *comp, float v)
{
    float y = v - *comp;
    float t = *s + y;
    *comp = (t - *s) - y;
    *s = t;
}

/*
 * Stage one, G = get_num_groups(0) work-groups of wg (a power of two):
 * partial[gr] = sum of g[i]^2 over i = gr wg + lid + k G wg.
 * g: (n), partial: (G), red: wg floats of local memory
 */
__kernel void grad_sumsq_partial_f32(__global float *partial, ulong partial_off,
                                     __global const float *g, ulong g_off, uint n,
                                     __local float *red)
{
    uint lid = get_local_id(0), wg = get_local_size(0);
    uint gr = get_group_id(0), groups = get_num_groups(0);
    float s = 0.0f, comp = 0.0f;
    ulong stride = (ulong)groups * wg;
    for (ulong i = (ulong)gr * wg + lid; i < n; i += stride) {
        float x = g[g_off + i];
        optim_kahan(&s, &comp, x * x);
    }
    red[lid] = s;
    ct_tree_sum(red, lid, wg);
    if (lid == 0)
        partial[partial_off + gr] = red[0];
}

/* Stage two, one work-group: norm[0] = sqrt(sum of partial[0..groups)).
 * partial: (groups), norm: (1), red: wg floats of local memory */
__kernel void grad_norm_final_f32(__global float *norm, ulong norm_off,
                                  __global const float *partial, ulong partial_off, uint groups,
                                  __local float *red)
{
    uint lid = get_local_id(0), wg = get_local_size(0);
    float s = 0.0f, comp = 0.0f;
    for (uint i = lid; i < groups; i += wg)
        optim_kahan(&s, &comp, partial[partial_off + i]);
    red[lid] = s;
    ct_tree_sum(red, lid, wg);
    if (lid == 0)
        norm[norm_off] = sqrt(red[0]);
}

/*
 * g *= min(1, max_norm / (norm[0] + 1e-6)), as torch.nn.utils.clip_grad_norm_
 * (which clamps the coefficient at 1 and multiplies unconditionally). A NaN
 * norm gives a NaN coefficient, as torch.clamp does, so the trainer sees it.
 * g: (n), norm: (1)
 */
__kernel void grad_clip_f32(__global float *g, ulong g_off, __global const float *norm,
                            ulong norm_off, uint n, float max_norm)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    float coef = max_norm / (norm[norm_off] + 1e-6f);
    coef = coef > 1.0f ? 1.0f : coef;
    g[g_off + i] = g[g_off + i] * coef;
}
