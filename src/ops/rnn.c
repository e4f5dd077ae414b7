/*
 * rnn.c - the recurrent families' shared parameter layout and checks
 * (rnn.h).
 */
#include "ops/rnn.h"

#include <stdio.h>

int ct_rnn_validate(ct_context *ctx, const char *who, const ct_rnn_desc *d, int G)
{
    if (!d)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: the descriptor is NULL", who);
    if (d->T < 1 || d->N < 1 || d->input < 1 || d->hidden < 1 || d->layers < 1)
        return ct_fail(ctx, CT_ERR_INVALID_ARG,
                       "%s: T=%d N=%d input=%d hidden=%d layers=%d: every field must be >= 1", who,
                       d->T, d->N, d->input, d->hidden, d->layers);
    /* The kernels index a step's and the bias kernel all steps' gates in
     * uint; ct_gemm takes dimensions below 2^31. */
    double tn = (double)d->T * d->N, hg = (double)G * d->hidden;
    if (tn * hg > 0x7fffffff || tn * d->input > 0x7fffffff)
        return ct_fail(ctx, CT_ERR_INVALID_ARG,
                       "%s: T=%d N=%d input=%d hidden=%d: the per-layer tensors exceed 2^31 "
                       "elements. HINT: shorten the sequence or the batch",
                       who, d->T, d->N, d->input, d->hidden);
    return CT_OK;
}

size_t ct_rnn_layer_in(const ct_rnn_desc *d, int layer)
{
    return (size_t)(layer == 0 ? d->input : d->hidden);
}

ct_rnn_offsets ct_rnn_layer_offsets(const ct_rnn_desc *d, int G, int layer)
{
    size_t GH = (size_t)G * (size_t)d->hidden, off = 0;
    for (int k = 0; k < layer; k++)
        off += GH * (ct_rnn_layer_in(d, k) + (size_t)d->hidden + 2);
    ct_rnn_offsets o;
    o.w_ih = off;
    o.w_hh = o.w_ih + GH * ct_rnn_layer_in(d, layer);
    o.b_ih = o.w_hh + GH * (size_t)d->hidden;
    o.b_hh = o.b_ih + GH;
    return o;
}

int ct_rnn_check_bufs(ct_context *ctx, const char *fn, const char *hint, const ct_buf *bufs,
                      const char *const *names, int count, size_t need)
{
    for (int i = 0; i < count; i++)
        if (!bufs[i].mem)
            return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: buffer %s is NULL", fn, names[i]);
    ct_buf ws = bufs[count - 1];
    size_t bytes = 0, skip = (size_t)ws.off * sizeof(float);
    cl_int err = clGetMemObjectInfo(ws.mem, CL_MEM_SIZE, sizeof bytes, &bytes, NULL);
    if (err != CL_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "%s: querying the workspace's size", fn);
        return ct_cl_fail(ctx, err, what);
    }
    size_t have = bytes > skip ? bytes - skip : 0;
    if (have < need)
        return ct_fail(ctx, CT_ERR_INVALID_ARG,
                       "%s: the workspace has %zu bytes from its offset, it needs %zu. "
                       "HINT: size it with %s", fn, have, need, hint);
    return CT_OK;
}

int ct_rnn_gemm(ct_context *ctx, int ta, int tb, size_t m, size_t n, size_t k, ct_buf a, size_t lda,
                ct_buf b, size_t ldb, float beta, ct_buf c, size_t ldc)
{
    return ct_gemm(ctx, ta, tb, m, n, k, 1.0f, a.mem, a.off, lda, b.mem, b.off, ldb, beta, c.mem,
                   c.off, ldc);
}
