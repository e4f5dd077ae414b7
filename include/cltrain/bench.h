/*
 * cltrain/bench.h - time full training steps (forward, backward, optimizer)
 * of a model on synthetic data: the seed benchmark of Shi et al. 2017
 * (FCN-S, AlexNet-S, ResNet-50, FCN-R, AlexNet-R, ResNet-56, LSTM).
 */
#ifndef CLTRAIN_BENCH_H
#define CLTRAIN_BENCH_H

#include <stdint.h>

#include "cltrain/common.h"
#include "cltrain/context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ct_bench_options {
    const char *model; /* zoo name or model file */
    int batch;         /* 0: the seed benchmark's batch for zoo models, else 64 */
    int steps;         /* timed steps; default 10 */
    int warmup;        /* untimed steps first; default 2 */
    uint64_t seed;     /* default 1 */
    int profile;       /* also time every layer's forward and backward (serialized) */
    int record;        /* only one step, every launch recorded (launch_list), nothing timed */
} ct_bench_options;

typedef struct ct_bench_layer {
    const char *name;  /* valid until the next ct_bench_run */
    const char *type;
    double forward_ms; /* mean over the timed steps */
    double backward_ms;
    double forward_launches;  /* kernel launches per step (a CLBlast routine counts as one) */
    double backward_launches;
} ct_bench_layer;

typedef struct ct_bench_result {
    int batch;
    int steps;
    double median_ms;      /* per mini-batch */
    double min_ms;
    double samples_per_second; /* from the median */
    double gflops;         /* achieved, from the model's FLOPs per step and the median */
    double flops_per_step; /* 3x the forward multiply-adds x 2 (dense, conv, LSTM) */
    double plan_mib;       /* device memory of the plan, optimizer state included */
    int act16;             /* activations stored as: 0 float32, else the ct_precision (bf16,
                              fp16) of 16-bit storage (GPU class, every layer with a form) */
    ct_kernels kernels;    /* the device class the steps ran with */
    ct_gemm_path gemm;     /* and its GEMM path */
    double batch_bytes;    /* one batch's inputs and labels */
    /* with profile: per step, from steps run back to back as in training
     * (ct_counters; the clFinish ending the run is not counted) */
    double launches_per_step;
    double blocking_calls_per_step;
    double h2d_bytes_per_step;
    double d2h_bytes_per_step;
    /* with profile: per step, serialized: zeroing the gradients, the SGD step */
    double zero_grad_ms;
    double optimizer_ms;
    /* with profile: one entry per layer (a profiled step runs serialized,
     * so the median above comes from the unprofiled steps before) */
    ct_bench_layer *layers;
    int nlayers;
    struct ct_model *model_keep; /* owns the layer names */
    /* with profile: one step's launches in order (a kernel, or a matrix
     * product with its shape), and per step the bytes they state they move,
     * how many launches state none, and the floor: each layer's inputs,
     * output, saved tensors and parameters once in its forward; its output
     * gradient, inputs, saved tensors, parameters, parameter gradients and
     * input gradients once in its backward; the optimizer's parameters,
     * gradients and state once each way */
    struct ct_bench_launch *launch_list;
    int nlaunch_list;
    double bytes_moved;
    double bytes_floor;
    int unstated_launches;
    /* with profile: per kernel (a CLBlast routine as one), its launches
     * and ms per step, most time first, from steps with every launch
     * waited for and timed (the queue's event times where it gives them) */
    struct ct_bench_kernel *kernel_times;
    int nkernel_times;
} ct_bench_result;

typedef struct ct_bench_kernel {
    const char *name;   /* a kernel or CLBlast routine (a static string) */
    double launches;    /* per step */
    double ms;          /* per step */
} ct_bench_kernel;

/* One launch of a profiled step. */
typedef struct ct_bench_launch {
    const char *layer;  /* the layer (valid as the layers' names are), or NULL: the optimizer,
                           zeroing, the loss bookkeeping */
    char kernel[48];    /* the kernel; empty for a matrix product */
    uint64_t global, local; /* work-items in all, per work-group */
    int64_t bytes_read, bytes_written; /* -1: not stated */
    uint64_t m, n, k, batch, k_splits; /* a matrix product: C (m, n), depth k */
    int ta, tb;         /* a matrix product: A, B transposed */
    int conv;           /* the product is an implicit-GEMM convolution */
} ct_bench_launch;

/* Frees result->layers, the launch list (and what their names point into). */
CT_API void ct_bench_result_free(ct_bench_result *result);

CT_API void ct_bench_defaults(ct_bench_options *options);
/* The seed benchmark's batch for a zoo model (0 for others). */
CT_API int ct_bench_seed_batch(const char *model);
/* On success, free the result with ct_bench_result_free. */
CT_API int ct_bench_run(ct_context *ctx, const ct_bench_options *options, ct_bench_result *result);

#ifdef __cplusplus
}
#endif

#endif /* CLTRAIN_BENCH_H */
