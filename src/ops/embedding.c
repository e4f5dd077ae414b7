/*
 * embedding.c - embedding launchers (cl_kernels/embedding.cl). y and dy
 * are activations, in the context's storage (ct_program_store: the
 * embedding_s* variants under 16-bit storage); the weight, its gradient,
 * the int32 ids and the links stay 4 bytes an element.
 */
#include "ops/embedding.h"

size_t ct_embedding_workspace_size(size_t n)
{
    return n * sizeof(cl_uint);
}

/* The kernels keep i, v and d in uint and the links in 31 bits. */
static int check_dims(ct_context *ctx, const char *fn, size_t n, size_t V, size_t D)
{
    if (n >= 0x7fffffff || V > 0x7fffffff || D > UINT32_MAX || (n && (V == 0 || D == 0)))
        return ct_fail(ctx, CT_ERR_INVALID_ARG,
                       "%s: n=%zu indices into a %zu x %zu table: need 0 < V < 2^31, D > 0 and "
                       "n < 2^31 - 1. HINT: split the batch", fn, n, V, D);
    return CT_OK;
}

int ct_embedding_forward(ct_context *ctx, ct_buf y, ct_buf w, ct_buf idx, size_t n, size_t V,
                         size_t D)
{
    int st = check_dims(ctx, "ct_embedding_forward", n, V, D);
    if (st || n == 0)
        return st;
    cl_uint nn = (cl_uint)n, vv = (cl_uint)V, dd = (cl_uint)D;
    size_t g[2] = { D, n };
    /* idx, and at most min(n, V) distinct rows of w; y */
    ct_launch_bytes(ctx, n * sizeof(cl_int) + (n < V ? n : V) * D * sizeof(float),
                    n * D * ct_act_size(ctx));
    return CT_RUN(ctx, ct_program_store(ctx, CT_PROG_embedding), "embedding_fwd_f32", 2, g, NULL,
                  CT_BUF(y), CT_BUF(w), CT_BUF(idx), CT_ARG(nn), CT_ARG(vv), CT_ARG(dd));
}

int ct_embedding_backward(ct_context *ctx, ct_buf dw, ct_buf dy, ct_buf idx, ct_buf ws, size_t n,
                          size_t V, size_t D)
{
    int st = check_dims(ctx, "ct_embedding_backward", n, V, D);
    if (st || n == 0)
        return st;
    /* a short workspace would be written out of bounds */
    size_t bytes = 0, skip = (size_t)ws.off * sizeof(cl_uint);
    cl_int err = ws.mem ? clGetMemObjectInfo(ws.mem, CL_MEM_SIZE, sizeof bytes, &bytes, NULL)
                        : CL_INVALID_MEM_OBJECT;
    if (err != CL_SUCCESS)
        return ct_cl_fail(ctx, err, "ct_embedding_backward: the workspace");
    if (bytes < skip || bytes - skip < ct_embedding_workspace_size(n))
        return ct_fail(ctx, CT_ERR_INVALID_ARG,
                       "ct_embedding_backward: the workspace is shorter than the %zu bytes %zu "
                       "indices need. HINT: size it with ct_embedding_workspace_size",
                       ct_embedding_workspace_size(n), n);
    int prog = ct_program_store(ctx, CT_PROG_embedding); /* dy's storage */
    cl_uint nn = (cl_uint)n, vv = (cl_uint)V, dd = (cl_uint)D;
    size_t g1[1] = { n };
    ct_launch_bytes(ctx, n * sizeof(cl_int), n * sizeof(cl_uint));
    st = CT_RUN(ctx, prog, "embedding_link_f32", 1, g1, NULL, CT_BUF(ws), CT_BUF(idx), CT_ARG(nn),
                CT_ARG(vv));
    if (st)
        return st;
    size_t g2[2] = { D, n };
    /* dy, idx, the links and the dw rows of at most min(n, V) distinct indices */
    size_t rows = (n < V ? n : V) * D * sizeof(float);
    ct_launch_bytes(ctx, n * D * ct_act_size(ctx) + n * (sizeof(cl_int) + sizeof(cl_uint)) + rows,
                    rows);
    return CT_RUN(ctx, prog, "embedding_bwd_f32", 2, g2, NULL, CT_BUF(dw), CT_BUF(dy), CT_BUF(idx),
                  CT_BUF(ws), CT_ARG(nn), CT_ARG(dd));
}
