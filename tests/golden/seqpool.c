/*
 * seqpool.c - golden adapter for sequence pooling (seqpool_*.safetensors,
 * from tools/golden_seqpool.py: x (T, N, F), int64 `tokens` (T, N) with 0
 * for padding, y (N, F), dy and dx; metadata "mode": mean, max or last).
 *
 * Tolerances: max and last copy float values forward and backward, so
 * they are exact (0, 0). mean sums at most T = 8 terms of |x| < 5 in
 * float (PyTorch) or float and double (ours), each within (T - 1) 2^-24
 * sum|x| / T ~ 2e-6 of the exact mean: 1e-5 + 1e-5 |b|; its dx is dy / count,
 * one rounding each side: 1e-7 + 1e-6 |b|.
 */
#include <stdint.h>
#include <string.h>

#include "golden.h"
#include "ops/seqpool.h"
#include "ref/seqpool.h"

void golden_seqpool(golden *g)
{
    ct_context *ctx = golden_ctx(g);
    static const char *const names[] = { "mean", "max", "last" };
    const char *m = golden_meta(g, "mode");
    int mode = -1;
    for (int i = 0; m && i < 3; i++)
        if (!strcmp(m, names[i]))
            mode = i;
    if (mode < 0) {
        golden_failf(g, "metadata mode='%s' is none of mean, max, last", m ? m : "");
        return;
    }
    size_t nx = 0, nt = 0;
    int xs[8] = { 0 }, xd = 0;
    double *x = golden_tensor(g, "x", &nx, xs, &xd);
    double *ftok = golden_tensor(g, "tokens", &nt, NULL, NULL);
    double *dy = golden_tensor(g, "dy", NULL, NULL, NULL);
    if (!x || !ftok || !dy)
        return;
    if (xd != 3 || nt != (size_t)xs[0] * (size_t)xs[1]) {
        golden_failf(g, "x must be (T, N, F) and tokens (T, N)");
        return;
    }
    size_t T = (size_t)xs[0], N = (size_t)xs[1], F = (size_t)xs[2];
    int32_t *tok = (int32_t *)(void *)golden_host(g, nt); /* doubles are wide enough */
    for (size_t i = 0; i < nt; i++) {
        if (ftok[i] < 0 || ftok[i] > INT32_MAX || ftok[i] != (double)(int64_t)ftok[i]) {
            golden_failf(g, "token %zu (%g) is no int32 id", i, ftok[i]);
            return;
        }
        tok[i] = (int32_t)ftok[i];
    }
    ct_seqpool_mode md = (ct_seqpool_mode)mode;
    double yatol = md == CT_SEQPOOL_MEAN ? 1e-5 : 0, yrtol = md == CT_SEQPOOL_MEAN ? 1e-5 : 0;
    double dxatol = md == CT_SEQPOOL_MEAN ? 1e-7 : 0, dxrtol = md == CT_SEQPOOL_MEAN ? 1e-6 : 0;
    double *y = golden_host(g, N * F), *dx = golden_host(g, nx);
    ct_ref_seqpool_forward(md, y, NULL, x, tok, T, N, F);
    ct_ref_seqpool_backward(md, dx, dy, x, tok, T, N, F);
    golden_expect_host(g, "y", y, "y", yatol, yrtol);
    golden_expect_host(g, "dx", dx, "dx", dxatol, dxrtol);

    cl_mem tok_mem = NULL;
    if (golden_status(g, ct_buffer_create(ctx, nt * sizeof *tok, &tok_mem), "token buffer") ||
        golden_status(g, ct_buffer_write(ctx, tok_mem, 0, nt * sizeof *tok, tok), "token buffer"))
        goto done;
    ct_buf d_tok = { tok_mem, 0 };
    ct_buf d_x = golden_dev(g, x, nx), d_dy = golden_dev(g, dy, N * F);
    ct_buf d_y = golden_dev_zero(g, N * F), d_dx = golden_dev_zero(g, nx);
    ct_buf d_am = golden_dev_zero(g, N * F); /* int32 argmax, as many bytes as floats */
    if (!d_x.mem || !d_dy.mem || !d_y.mem || !d_dx.mem || !d_am.mem)
        goto done;
    if (golden_status(g, ct_seqpool_forward(ctx, md, d_y, d_am, d_x, d_tok, T, N, F), "seqpool forward") ||
        golden_status(g, ct_seqpool_backward(ctx, md, d_dx, d_dy, d_am, d_tok, T, N, F),
                      "seqpool backward"))
        goto done;
    golden_expect_dev(g, "y", d_y, "y", yatol, yrtol);
    golden_expect_dev(g, "dx", d_dx, "dx", dxatol, dxrtol);
done:
    /* the reads above were blocking; a failed launch may still be queued */
    ct_context_finish(ctx);
    ct_buffer_release(&tok_mem);
}
