/*
 * layernorm_host.h - layer normalization forward and backward on the host
 * pool (layernorm_host.c) for the CPU class on AVX-512 CPUs, with the
 * meanings of the CPU-class kernels of cl_kernels/layernorm.cl. The
 * launchers of src/ops/layernorm.c check the arguments and call these
 * where ct_layernorm_host_ok says so.
 */
#ifndef CT_HOST_LAYERNORM_HOST_H
#define CT_HOST_LAYERNORM_HOST_H

#include "ops/layernorm.h"

/* Element counts (R F) below this stay with the kernels: a host op maps
 * its buffers (a blocking call where no mapping is held), a launch does
 * not block. */
#define CT_LAYERNORM_HOST_MIN 4096

/* The CPU class with the host pool, on a CPU with AVX-512, R F large enough. */
int ct_layernorm_host_ok(const ct_context *ctx, size_t R, size_t F);

int ct_layernorm_host_forward(ct_context *ctx, ct_buf y, ct_buf mean, ct_buf rstd, ct_buf x, ct_buf w,
                              ct_buf b, size_t R, size_t F, float eps);
/* dx (may be NULL: parameters only) written, or added to with dx_acc; dw,
 * db accumulated (+=) */
int ct_layernorm_host_backward(ct_context *ctx, ct_buf dx, int dx_acc, ct_buf dw, ct_buf db, ct_buf dy,
                               ct_buf x, ct_buf w, ct_buf mean, ct_buf rstd, size_t R, size_t F);

#endif /* CT_HOST_LAYERNORM_HOST_H */
