/*
 * optim.c - optimizer and gradient-clipping launchers (cl_kernels/optim.cl).
 *
 * PyTorch computes an optimizer's scalars (bias corrections, step size,
 * 1 - beta, 1 - lr wd) in Python doubles and rounds them to float only when
 * a tensor op uses them; the launchers do the same in double, so the device
 * sees PyTorch's float scalars. On the CPU class the steps run on the host
 * pool (optim_host.c) from the same scalars. Either way a step that zeroes
 * the gradients does it in the same pass.
 */
#include <math.h>

#include "optim/optim.h"
#include "host/optim_host.h"

#define NORM_MAX_WG 256
#define NORM_MAX_GROUPS 256

const char *ct_optim_name(ct_optim_kind kind)
{
    static const char *const names[CT_OPT_COUNT] = { "sgd", "adam", "adamw" };
    return kind >= 0 && kind < CT_OPT_COUNT ? names[kind] : "?";
}

void ct_optim_defaults(ct_optim_desc *d, ct_optim_kind kind)
{
    *d = (ct_optim_desc){ .kind = kind, .lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f };
    if (kind == CT_OPT_SGD)
        d->lr = 0.01f; /* PyTorch has no default: lr is required */
    if (kind == CT_OPT_ADAMW)
        d->weight_decay = 0.01f;
}

int ct_optim_validate(ct_context *ctx, const ct_optim_desc *d)
{
    if (!d)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "optimizer: NULL description");
    if (d->kind < 0 || d->kind >= CT_OPT_COUNT)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "optimizer: unknown kind %d. HINT: CT_OPT_SGD, "
                       "CT_OPT_ADAM or CT_OPT_ADAMW", (int)d->kind);
    const char *name = ct_optim_name(d->kind);
    if (!(d->lr >= 0) || !(d->weight_decay >= 0) || isinf(d->lr) || isinf(d->weight_decay))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: lr %g and weight decay %g must be finite "
                       "and >= 0", name, (double)d->lr, (double)d->weight_decay);
    if (d->kind == CT_OPT_SGD) {
        if (!(d->momentum >= 0) || isinf(d->momentum) || !(d->dampening >= 0) ||
            isinf(d->dampening))
            return ct_fail(ctx, CT_ERR_INVALID_ARG, "sgd: momentum %g and dampening %g must be "
                           "finite and >= 0", (double)d->momentum, (double)d->dampening);
        if (d->nesterov && (d->momentum <= 0 || d->dampening != 0))
            return ct_fail(ctx, CT_ERR_INVALID_ARG, "sgd: Nesterov momentum needs momentum > 0 "
                           "and dampening 0 (momentum %g, dampening %g), as PyTorch requires",
                           (double)d->momentum, (double)d->dampening);
        return CT_OK;
    }
    if (!(d->beta1 >= 0 && d->beta1 < 1) || !(d->beta2 >= 0 && d->beta2 < 1))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: betas (%g, %g) must lie in [0, 1)", name,
                       (double)d->beta1, (double)d->beta2);
    if (!(d->eps >= 0) || isinf(d->eps))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: eps %g must be finite and >= 0", name,
                       (double)d->eps);
    return CT_OK;
}

size_t ct_optim_state_size(const ct_optim_desc *d, size_t n)
{
    if (!d)
        return 0;
    if (d->kind == CT_OPT_SGD)
        return d->momentum != 0 ? n : 0;
    return 2 * n;
}

/* Elements per work-item of the step kernels (CT_OPT_PER in
 * cl_kernels/optim.cl) */
#define OPT_PER 4

static int optim_sgd(ct_context *ctx, const ct_optim_desc *d, ct_buf params, ct_buf grads,
                     ct_buf state, cl_uint n, long step, float lr, int host, int zero)
{
    /* without momentum the kernel never touches the state: any buffer does */
    ct_buf b = d->momentum != 0 ? state : params;
    cl_float wd = d->weight_decay, mu = d->momentum;
    cl_float one_minus_damp = (cl_float)(1.0 - (double)d->dampening);
    cl_int nesterov = d->nesterov != 0, first = step == 1, z = zero;
    if (host)
        return ct_host_sgd_step(ctx, params, grads, b, n, lr, wd, mu, one_minus_damp, nesterov, first,
                                zero);
    size_t g[1] = { (n + OPT_PER - 1) / OPT_PER }, nb = (size_t)n * sizeof(float);
    /* p and grad read; p written, grad when zeroing; b read after the
     * first step and written, with momentum */
    size_t brd = mu != 0 && !first ? nb : 0, bwr = mu != 0 ? nb : 0;
    ct_launch_bytes(ctx, 2 * nb + brd, nb + (zero ? nb : 0) + bwr);
    return CT_RUN(ctx, CT_PROG_optim, "sgd_step_f32", 1, g, NULL, CT_BUF(params), CT_BUF(grads),
                  CT_BUF(b), CT_ARG(n), CT_ARG(lr), CT_ARG(wd), CT_ARG(mu),
                  CT_ARG(one_minus_damp), CT_ARG(nesterov), CT_ARG(first), CT_ARG(z));
}

static int optim_adam(ct_context *ctx, const ct_optim_desc *d, ct_buf params, ct_buf grads,
                      ct_buf state, size_t vstride, cl_uint n, long step, float lr, int host, int zero)
{
    double b1 = d->beta1, b2 = d->beta2, t = (double)step;
    int adamw = d->kind == CT_OPT_ADAMW;
    cl_float decay = adamw ? (cl_float)(1.0 - (double)lr * d->weight_decay) : 1.0f;
    cl_float l2 = adamw ? 0.0f : d->weight_decay;
    cl_float beta1 = d->beta1, beta2 = d->beta2, eps = d->eps;
    cl_float omb1 = (cl_float)(1.0 - b1), omb2 = (cl_float)(1.0 - b2);
    cl_float step_size = (cl_float)((double)lr / (1.0 - pow(b1, t)));
    cl_float bc2_sqrt = (cl_float)sqrt(1.0 - pow(b2, t));
    cl_int first = step == 1, z = zero;
    ct_buf m = state, v = ct_buf_at(state, vstride); /* v follows m, vstride floats on */
    if (host)
        return ct_host_adam_step(ctx, params, grads, m, v, n, decay, l2, beta1, omb1, beta2, omb2,
                                 step_size, bc2_sqrt, eps, first, zero);
    size_t g[1] = { (n + OPT_PER - 1) / OPT_PER }, nb = (size_t)n * sizeof(float);
    /* p, grad, and m, v after the first step read; p, m, v written, grad
     * when zeroing */
    ct_launch_bytes(ctx, (first ? 2 : 4) * nb, 3 * nb + (zero ? nb : 0));
    return CT_RUN(ctx, CT_PROG_optim, "adam_step_f32", 1, g, NULL, CT_BUF(params), CT_BUF(grads),
                  CT_BUF(m), CT_BUF(v), CT_ARG(n), CT_ARG(decay), CT_ARG(l2), CT_ARG(beta1),
                  CT_ARG(omb1), CT_ARG(beta2), CT_ARG(omb2), CT_ARG(step_size), CT_ARG(bc2_sqrt),
                  CT_ARG(eps), CT_ARG(first), CT_ARG(z));
}

/* The step, and with zero grads = 0 in the same pass; Adam's v lies
 * vstride floats after m. */
static int optim_step(ct_context *ctx, const ct_optim_desc *d, ct_buf params, ct_buf grads,
                      ct_buf state, size_t vstride, size_t n, long step, float lr, int zero)
{
    int st = ct_optim_validate(ctx, d);
    if (st)
        return st;
    const char *name = ct_optim_name(d->kind);
    if (step < 1)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s step: step count %ld must be >= 1 (it is "
                       "1-based: the first step is 1)", name, step);
    if (!(lr >= 0) || isinf(lr))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s step %ld: learning rate %g must be finite "
                       "and >= 0", name, step, (double)lr);
    if (n > UINT32_MAX)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s step: %zu parameters, more than 2^32 - 1. HINT: "
                       "step the arena in slices", name, n);
    if (n == 0)
        return CT_OK;
    if (!params.mem || !grads.mem || (ct_optim_state_size(d, n) && !state.mem))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s step: a NULL buffer (params, grads, or the "
                       "state of %zu floats it needs)", name, ct_optim_state_size(d, n));
    int host = ct_optim_host_ok(ctx, n);
    return d->kind == CT_OPT_SGD ? optim_sgd(ctx, d, params, grads, state, (cl_uint)n, step, lr, host, zero)
                                 : optim_adam(ctx, d, params, grads, state, vstride, (cl_uint)n, step, lr, host,
                                              zero);
}

int ct_optim_step(ct_context *ctx, const ct_optim_desc *d, ct_buf params, ct_buf grads,
                  ct_buf state, size_t n, long step, float lr)
{
    return optim_step(ctx, d, params, grads, state, n, n, step, lr, 0);
}

int ct_optim_step_zero_grads(ct_context *ctx, const ct_optim_desc *d, ct_buf params, ct_buf grads,
                             ct_buf state, size_t n, long step, float lr)
{
    return optim_step(ctx, d, params, grads, state, n, n, step, lr, 1);
}

int ct_optim_step_range(ct_context *ctx, const ct_optim_desc *d, ct_buf params, ct_buf grads, ct_buf state,
                        size_t total, size_t off, size_t count, long step, float lr)
{
    if (off > total || count > total - off)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "optimizer step: elements %zu to %zu of %zu", off, off + count,
                       total);
    return optim_step(ctx, d, ct_buf_at(params, off), ct_buf_at(grads, off), ct_buf_at(state, off), total, count,
                      step, lr, 1);
}


size_t ct_grad_norm_workspace_size(size_t n)
{
    (void)n; /* the group count is capped, so this bound serves every n */
    return NORM_MAX_GROUPS;
}

int ct_grad_norm(ct_context *ctx, ct_buf norm, ct_buf grads, size_t n, ct_buf workspace)
{
    if (n > UINT32_MAX)
        return ct_fail(ctx, CT_ERR_SHAPE, "ct_grad_norm: %zu gradients, more than 2^32 - 1", n);
    if (!norm.mem || !workspace.mem || (n && !grads.mem))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_grad_norm: a NULL buffer (norm, grads or a "
                       "workspace of ct_grad_norm_workspace_size(n) floats)");
    size_t wg1, wg2;
    int st = ct_kernel_pow2_wg(ctx, CT_PROG_optim, "grad_sumsq_partial_f32", NORM_MAX_WG, 0, &wg1);
    if (!st)
        st = ct_kernel_pow2_wg(ctx, CT_PROG_optim, "grad_norm_final_f32", NORM_MAX_WG, 0, &wg2);
    if (st)
        return st;
    /* groups depend on n and the device only; n == 0 still runs one group,
     * which writes a zero partial */
    size_t groups = (n + wg1 - 1) / wg1;
    if (groups > NORM_MAX_GROUPS)
        groups = NORM_MAX_GROUPS;
    if (groups == 0)
        groups = 1;
    ct_buf g_in = grads.mem ? grads : workspace; /* never read when n == 0 */
    cl_uint nn = (cl_uint)n, ng = (cl_uint)groups;
    size_t g1[1] = { groups * wg1 }, l1[1] = { wg1 };
    ct_launch_bytes(ctx, n * sizeof(float), groups * sizeof(float));
    st = CT_RUN(ctx, CT_PROG_optim, "grad_sumsq_partial_f32", 1, g1, l1, CT_BUF(workspace),
                CT_BUF(g_in), CT_ARG(nn), CT_LOCAL(wg1 * sizeof(cl_float)));
    if (st)
        return st;
    size_t g2[1] = { wg2 }, l2[1] = { wg2 };
    ct_launch_bytes(ctx, groups * sizeof(float), sizeof(float));
    return CT_RUN(ctx, CT_PROG_optim, "grad_norm_final_f32", 1, g2, l2, CT_BUF(norm),
                  CT_BUF(workspace), CT_ARG(ng), CT_LOCAL(wg2 * sizeof(cl_float)));
}

int ct_grad_clip(ct_context *ctx, ct_buf grads, size_t n, ct_buf norm, float max_norm)
{
    if (!(max_norm >= 0) || isinf(max_norm))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_grad_clip: max_norm %g must be finite and "
                       ">= 0", (double)max_norm);
    if (n > UINT32_MAX)
        return ct_fail(ctx, CT_ERR_SHAPE, "ct_grad_clip: %zu gradients, more than 2^32 - 1", n);
    if (n == 0)
        return CT_OK;
    if (!grads.mem || !norm.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_grad_clip: a NULL buffer (grads or norm)");
    cl_uint nn = (cl_uint)n;
    cl_float mx = max_norm;
    size_t g[1] = { n };
    ct_launch_bytes(ctx, (n + 1) * sizeof(float), n * sizeof(float));
    return CT_RUN(ctx, CT_PROG_optim, "grad_clip_f32", 1, g, NULL, CT_BUF(grads), CT_BUF(norm),
                  CT_ARG(nn), CT_ARG(mx));
}
