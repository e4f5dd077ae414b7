/*
 * transpose.c - checks of the batched transpose (src/ops/transpose.c)
 * against src/ref/transpose.c: plain transposes and the image <-> sequence
 * reorders (interleaved strides), sizes below, at and above the 16 x 16
 * tile and no multiple of it, in both device classes (the same kernel).
 * A transpose moves values: it must be exact (tolerance 0), every output
 * written once (the outputs start as NaN, the guards are checked).
 */
#include "check/check.h"
#include "ops/transpose.h"
#include "ref/transpose.h"

static void one_case(ct_check *c, size_t n, size_t R, size_t C, int seq, int cpu)
{
    ct_kernels real = ck_use_class(c, cpu ? CT_KERNELS_CPU : CT_KERNELS_GPU);
    ck_case(c, "%s n=%zu (%zu, %zu), %s class", seq ? "image <-> sequence" : "transpose", n, R, C,
            cpu ? "cpu" : "gpu");
    size_t m = n * R * C;
    double *x = ck_host(c, m), *y = ck_host(c, m);
    if (!ck_failed(c)) {
        ck_fill(c, x, m, -1, 1);
        ck_round_f32(x, m);
        ct_context *ctx = ck_ctx(c);
        ct_buf d_x = ck_dev_in(c, x, m), d_y = ck_dev_out(c, m), d_back = ck_dev_out(c, m);
        if (seq) { /* images (n, R = e, C = t) -> (t, n, e) */
            ct_ref_transpose(y, x, n, R, C, R * C, C, R, n * R);
            if (!ck_failed(c) && !ck_status(c, ct_image_to_seq(ctx, d_y, d_x, n, R, C), "image to sequence") &&
                ck_expect(c, "sequence", d_y, m, y, 0, 0) &&
                !ck_status(c, ct_seq_to_image(ctx, d_back, d_y, n, R, C), "sequence to image"))
                ck_expect(c, "image again", d_back, m, x, 0, 0);
        } else {
            ct_ref_transpose(y, x, n, R, C, R * C, C, R * C, R);
            if (!ck_failed(c) && !ck_status(c, ct_transpose(ctx, d_y, d_x, n, R, C, R * C, C, R * C, R), "transpose"))
                ck_expect(c, "transposed", d_y, m, y, 0, 0);
        }
    }
    ck_case_end(c);
    ck_use_class(c, real);
}

void ct_check_transpose(ct_check *c)
{
    static const size_t fixed[][3] = { { 1, 1, 1 }, { 2, 16, 16 }, { 3, 17, 5 }, { 2, 64, 49 }, { 1, 1, 300 },
                                       { 5, 33, 1 } };
    for (int cpu = 0; cpu < 2 && !ck_failed(c); cpu++)
        for (size_t k = 0; k < CT_ARRAY_LEN(fixed) && !ck_failed(c); k++)
            for (int seq = 0; seq < 2 && !ck_failed(c); seq++)
                one_case(c, fixed[k][0], fixed[k][1], fixed[k][2], seq, cpu);
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++)
        one_case(c, (size_t)ck_dim(c, 6), (size_t)ck_dim(c, ck_small(c) ? 20 : 70),
                 (size_t)ck_dim(c, ck_small(c) ? 20 : 70), it % 2, (it / 2) % 2);
    if (ck_failed(c))
        return;
    ck_case(c, "refused arguments");
    ct_buf v = ck_dev_out(c, 16);
    if (!ck_failed(c) && ct_transpose(ck_ctx(c), v, v, 1, 4, 4, 16, 3, 16, 4) != CT_ERR_INVALID_ARG)
        ck_status(c, CT_ERR_INTERNAL, "a row stride below the row's length was accepted");
    ck_case_end(c);
}
