/*
 * act.c - activation launchers (cl_kernels/act.cl): per element on the GPU class,
 * chunks of float8 vectors on the CPU class (cl/devclass.h). With 16-bit
 * activation storage (ct_context_set_act16) the per-element kernels' 16-bit
 * program variant.
 */
#include "ops/act.h"

#include "host/eltwise_host.h"

/* elements per work-item of the CPU kernels (cl_kernels/act.cl), a
 * multiple of their float8 vectors */
#define CT_ACT_CHUNK 2048u

const char *ct_act_name(ct_act act)
{
    static const char *const names[CT_ACT_COUNT] = { "none", "relu", "leaky_relu", "sigmoid", "tanh",
                                                     "gelu", "silu", "hardswish", "relu6" };
    return act >= 0 && act < CT_ACT_COUNT ? names[act] : "?";
}

int ct_act_needs_input(ct_act act)
{
    return act == CT_ACT_GELU || act == CT_ACT_SILU || act == CT_ACT_HARDSWISH;
}

int ct_act_forward(ct_context *ctx, ct_act act, ct_buf y, ct_buf x, size_t n)
{
    if (act < 0 || act >= CT_ACT_COUNT || n > UINT32_MAX)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_act_forward: activation %d over %zu elements",
                       (int)act, n);
    if (!ctx->act16 && ct_eltwise_host_ok(ctx, n) && ct_eltwise_host_act(act))
        return ct_host_act_forward(ctx, act, y, x, n);
    cl_uint nn = (cl_uint)n;
    cl_int a = act;
    size_t bytes = n * ct_act_size(ctx);
    ct_launch_bytes(ctx, bytes, bytes);
    if (ctx->cls.row_kernels && !ctx->act16) {
        size_t g[1] = { (n + CT_ACT_CHUNK - 1) / CT_ACT_CHUNK }, l[1] = { 1 };
        cl_uint chunk = CT_ACT_CHUNK;
        return CT_RUN(ctx, CT_PROG_act, "act_fwd_chunks_f32", 1, g, l, CT_BUF(y), CT_BUF(x),
                      CT_ARG(nn), CT_ARG(a), CT_ARG(chunk));
    }
    size_t g[1] = { n };
    int prog = ct_program_store(ctx, CT_PROG_act);
    return CT_RUN(ctx, prog, "act_fwd_f32", 1, g, NULL, CT_BUF(y), CT_BUF(x), CT_ARG(nn),
                  CT_ARG(a));
}

int ct_act_backward(ct_context *ctx, ct_act act, ct_buf dx, ct_buf dy, ct_buf x, ct_buf y, size_t n)
{
    if (act < 0 || act >= CT_ACT_COUNT || n > UINT32_MAX)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_act_backward: activation %d over %zu elements",
                       (int)act, n);
    if (!ctx->act16 && ct_eltwise_host_ok(ctx, n) && ct_eltwise_host_act(act))
        return ct_host_act_backward(ctx, act, dx, dy, x, n);
    cl_uint nn = (cl_uint)n;
    cl_int a = act;
    size_t bytes = n * ct_act_size(ctx);
    if (ctx->cls.row_kernels && !ctx->act16) {
        size_t g[1] = { (n + CT_ACT_CHUNK - 1) / CT_ACT_CHUNK }, l[1] = { 1 };
        cl_uint chunk = CT_ACT_CHUNK;
        ct_launch_bytes(ctx, 3 * bytes, bytes); /* dy, x and y; dx */
        return CT_RUN(ctx, CT_PROG_act, "act_bwd_chunks_f32", 1, g, l, CT_BUF(dx), CT_BUF(dy),
                      CT_BUF(x), CT_BUF(y), CT_ARG(nn), CT_ARG(a), CT_ARG(chunk));
    }
    size_t g[1] = { n };
    /* dy and the one of x, y the derivative uses (none for CT_ACT_NONE); dx */
    ct_launch_bytes(ctx, (act == CT_ACT_NONE ? 1 : 2) * bytes, bytes);
    int prog = ct_program_store(ctx, CT_PROG_act);
    return CT_RUN(ctx, prog, "act_bwd_f32", 1, g, NULL, CT_BUF(dx), CT_BUF(dy), CT_BUF(x),
                  CT_BUF(y), CT_ARG(nn), CT_ARG(a));
}
