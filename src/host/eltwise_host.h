/*
 * eltwise_host.h - the element-wise ops of a training step on the host
 * pool (host_work.h) for contexts whose device class says so (host_pool:
 * the CPU class on the host GEMM path): sums, copies, fills, ReLU and leaky
 * ReLU, and the option-A shortcut. Each is exact (a sum, a copy, a compare,
 * one product), so the results are the kernels' bit for bit whatever the
 * ISA or thread count; GELU (AVX-512 only) is not exact, but the same
 * whatever the thread count. On pocl these ran between host-side convolutions and
 * batch norms as kernels, each handing the cores from the pool to pocl's
 * workers and back, at a fifth of the host loop's bandwidth.
 *
 * The launchers of eltwise.c, fill.c, act.c and shortcut.c check their
 * arguments and call these where ct_eltwise_host_ok says so.
 */
#ifndef CT_HOST_ELTWISE_HOST_H
#define CT_HOST_ELTWISE_HOST_H

#include "ops/act.h"
#include "ops/ops.h"

/* Element counts below this stay with the kernels: a host op maps its
 * buffers (a blocking call, ~50 us on pocl), a kernel launch does not
 * block. */
#define CT_ELTWISE_HOST_MIN 4096

/* The context's class runs element-wise ops of n elements on the host. */
int ct_eltwise_host_ok(const ct_context *ctx, size_t n);
/* The activation has a host form: exact (none, ReLU, leaky ReLU), or GELU
 * on AVX-512 (vmath512.h's erfc and exp: within a few ulp of the kernel's,
 * not its bits). */
int ct_eltwise_host_act(ct_act act);

int ct_host_add(ct_context *ctx, ct_buf y, ct_buf a, ct_buf b, size_t n);
/* bit 0 of which: da = dy; bit 1: db = dy */
int ct_host_add_backward(ct_context *ctx, ct_buf da, ct_buf db, ct_buf dy, size_t n, int which);
int ct_host_accumulate(ct_context *ctx, ct_buf dst, ct_buf src, size_t n);
int ct_host_copy(ct_context *ctx, ct_buf dst, ct_buf src, size_t n);
int ct_host_fill(ct_context *ctx, ct_buf x, size_t n, float value);
int ct_host_act_forward(ct_context *ctx, ct_act act, ct_buf y, ct_buf x, size_t n);
int ct_host_act_backward(ct_context *ctx, ct_act act, ct_buf dx, ct_buf dy, ct_buf x, size_t n);
/* y (n, co, oh, ow) from x (n, c, h, w), as shortcut.cl */
int ct_host_shortcut_a_forward(ct_context *ctx, ct_buf y, ct_buf x, int n, int c, int h, int w,
                               int stride, int co, int oh, int ow);
int ct_host_shortcut_a_backward(ct_context *ctx, ct_buf dx, ct_buf dy, int n, int c, int h, int w,
                                int stride, int co, int oh, int ow);

#endif /* CT_HOST_ELTWISE_HOST_H */
