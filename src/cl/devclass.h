/*
 * devclass.h - which implementation every op uses on a context's device,
 * decided once per context (src/cl/devclass.c). Op files read the table
 * (ctx->cls); none of them looks at the device type itself.
 *
 * The CPU class: the host BLAS on mapped buffers, the direct host
 * convolution, the host max pool, dropout, batch norm, element-wise ops and
 * LSTM and GRU steps (the _host.c files of src/ops), and the per-row kernels whose work-items
 * each own a whole row or chunk (SIMD-friendly for CPU compilers).
 * The GPU class: CLBlast, and the work-group kernels (one work-item per
 * element, tree reductions in local memory); nothing runs on the host inside
 * a training step.
 *
 * The rule is CL_DEVICE_TYPE, never CL_DEVICE_HOST_UNIFIED_MEMORY: Intel's
 * integrated GPUs and AMD's APUs share host memory and are GPUs all the same.
 */
#ifndef CT_CL_DEVCLASS_H
#define CT_CL_DEVCLASS_H

#include "cltrain/context.h"
#include "cltrain/device.h"
#include "cltrain/gemm.h"

typedef struct ct_devclass {
    ct_kernels kernels; /* resolved: CT_KERNELS_CPU or CT_KERNELS_GPU */
    ct_gemm_path gemm;  /* resolved: CT_GEMM_HOST or CT_GEMM_CLBLAST */
    int row_kernels;    /* per-row / per-chunk kernels (activations, losses, LRN, batch norm, im2col) */
    int fuse_bias_act;  /* dense and conv add the bias and activation in one kernel after the product */
    int host_conv;      /* stride-1 convolutions on the host (when the CPU has AVX2 + FMA) */
    int host_pool;      /* max pool, dropout, exact element-wise ops, the optimizer steps and
                           (AVX-512 CPUs) batch norm, the LSTM's and GRU's steps and softmax
                           cross-entropy on the host; net arenas' mappings held */
} ct_devclass;

/* Parses CLTRAIN_KERNELS-style text ("auto", "cpu", "gpu"); -1 if unknown. */
int ct_kernels_parse(const char *s);
/* Parses CLTRAIN_GEMM-style text ("auto", "host", "clblast"); -1 if unknown. */
int ct_gemm_parse(const char *s);

/* The table for a device. `kernels` and `gemm` are the wishes (AUTO: decide
 * by the device type); conv_direct is 0 when CLTRAIN_CONV=im2col, 2 for lane. Returns
 * CT_ERR_UNSUPPORTED with a message in `why` when a wish cannot be met (the
 * host GEMM path on a device that does not share host memory). */
int ct_devclass_resolve(const ct_device_info *dev, ct_kernels kernels, ct_gemm_path gemm,
                        int conv_direct, ct_devclass *out, char *why, size_t why_size);

/* The wishes from the environment (CLTRAIN_KERNELS, CLTRAIN_GEMM,
 * CLTRAIN_CONV); an unknown value is an error naming the variable. */
int ct_devclass_env(ct_kernels *kernels, ct_gemm_path *gemm, int *conv_direct, char *why,
                    size_t why_size);

#endif /* CT_CL_DEVCLASS_H */
