/*
 * pool_host.h - max pool forward on the host (any CPU; AVX2 gathers where
 * the CPU has them), for contexts whose device class says so (host_pool:
 * the CPU class on the host GEMM path): pocl's code for the data-dependent
 * window scan ran at ~0.5 GB/s.
 */
#ifndef CT_OPS_POOL_HOST_H
#define CT_OPS_POOL_HOST_H

#include "ops/pool.h"

/* oh, ow: the validated output size; argmax.mem may be NULL. */
int ct_maxpool_host_forward(ct_context *ctx, const ct_pool2d *p, int oh, int ow, ct_buf y,
                            ct_buf x, ct_buf argmax);

#endif /* CT_OPS_POOL_HOST_H */
