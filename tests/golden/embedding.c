/*
 * embedding.c - golden adapter for the embedding lookup (embedding_*.safetensors:
 * int64 `indices` of any shape, `weight` (V, D), y = weight[indices], and
 * `dweight`, where repeated indices accumulate).
 *
 * Tolerances: y is a copy of float values, so exact (0, 0). dweight sums the
 * dy rows of each index: with m terms of |t| <= 2.5 (the file's dy) float
 * summation errs by at most (m - 1) 2^-24 sum|t|, under 1e-5 for m <= 8,
 * and PyTorch's sum rounds as much, so 1e-5 + 1e-5 |b|; the reference in
 * double must match PyTorch's float sums within the same.
 */
#include <stdint.h>
#include <stdlib.h>

#include "golden.h"
#include "ops/embedding.h"
#include "ref/embedding.h"

void golden_embedding(golden *g)
{
    ct_context *ctx = golden_ctx(g);
    size_t n = 0, nw = 0;
    int wshape[8] = { 0 }, wdim = 0;
    double *fidx = golden_tensor(g, "indices", &n, NULL, NULL);
    double *w = golden_tensor(g, "weight", &nw, wshape, &wdim);
    double *dy = golden_tensor(g, "dy", NULL, NULL, NULL);
    if (!fidx || !w || !dy)
        return;
    if (wdim != 2 || n == 0) {
        golden_failf(g, "weight must be (V, D) and indices non-empty");
        return;
    }
    size_t V = (size_t)wshape[0], D = (size_t)wshape[1];
    int32_t *idx = (int32_t *)(void *)golden_host(g, n); /* doubles are wide enough */
    for (size_t i = 0; i < n; i++) {
        /* the kernels take int32: an index that does not fit is out of range anyway */
        if (fidx[i] < INT32_MIN || fidx[i] > INT32_MAX || fidx[i] != (double)(int64_t)fidx[i]) {
            golden_failf(g, "index %zu (%g) is no int32", i, fidx[i]);
            return;
        }
        idx[i] = (int32_t)fidx[i];
    }
    double *y = golden_host(g, n * D), *dw = golden_host(g, V * D);
    ct_ref_embedding_forward(y, w, idx, n, V, D);
    ct_ref_embedding_backward(dw, dy, idx, n, V, D);
    golden_expect_host(g, "y", y, "y", 0, 0);
    golden_expect_host(g, "dweight", dw, "dweight", 1e-5, 1e-5);

    cl_mem idx_mem = NULL;
    if (golden_status(g, ct_buffer_create(ctx, n * sizeof *idx, &idx_mem), "index buffer") ||
        golden_status(g, ct_buffer_write(ctx, idx_mem, 0, n * sizeof *idx, idx), "index buffer"))
        goto done;
    ct_buf d_idx = { idx_mem, 0 };
    ct_buf d_w = golden_dev(g, w, V * D), d_dy = golden_dev(g, dy, n * D);
    ct_buf d_y = golden_dev_zero(g, n * D), d_dw = golden_dev_zero(g, V * D);
    ct_buf d_ws = golden_dev_zero(g, ct_embedding_workspace_size(n) / sizeof(float));
    if (golden_status(g, ct_embedding_forward(ctx, d_y, d_w, d_idx, n, V, D), "embedding forward") ||
        golden_status(g, ct_embedding_backward(ctx, d_dw, d_dy, d_idx, d_ws, n, V, D),
                      "embedding backward"))
        goto done;
    golden_expect_dev(g, "y", d_y, "y", 0, 0);
    golden_expect_dev(g, "dweight", d_dw, "dweight", 1e-5, 1e-5);
done:
    /* the reads above were blocking; a failed launch may still be queued */
    ct_context_finish(ctx);
    ct_buffer_release(&idx_mem);
}
