/*
 * pool_host.h - max pool forward and backward on the host (any CPU; AVX2 gathers where
 * the CPU has them), for contexts whose device class says so (host_pool:
 * the CPU class on the host GEMM path): pocl's code for the data-dependent
 * window scan ran at ~0.5 GB/s.
 */
#ifndef CT_HOST_POOL_HOST_H
#define CT_HOST_POOL_HOST_H

#include "ops/pool.h"

/* oh, ow: the validated output size; argmax.mem may be NULL. */
int ct_maxpool_host_forward(ct_context *ctx, const ct_pool2d *p, int oh, int ow, ct_buf y,
                            ct_buf x, ct_buf argmax);

/* dx from dy: disjoint windows find the argmax again in x, overlapping
 * ones take the forward's argmax record (the callers check which is
 * given); the same results as maxpool_bwd_tile_f32 / maxpool_bwd_f32. */
int ct_maxpool_host_backward(ct_context *ctx, const ct_pool2d *p, int oh, int ow, ct_buf dx,
                             ct_buf dy, ct_buf x, ct_buf argmax);

#endif /* CT_HOST_POOL_HOST_H */
