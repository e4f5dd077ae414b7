/*
 * cltrain/selftest.h - check every op on a device against the host
 * reference: seeded random inputs of random shapes (including sizes that
 * are no multiple of any work-group or tile size, and size-1 edges),
 * outputs pre-filled with NaN and surrounded by guard bands, both passes.
 * This is how to learn that a driver computes wrong numbers before
 * training on it.
 */
#ifndef CLTRAIN_SELFTEST_H
#define CLTRAIN_SELFTEST_H

#include <stdint.h>

#include "cltrain/common.h"
#include "cltrain/context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ct_selftest_options {
    uint64_t seed;        /* default 1 */
    int iterations;       /* random shapes per op, default 8 */
    const char *filter;   /* run only the op of this name, or, if none has it, the ops whose
                             name contains it ("pool": pool, not seqpool); NULL: all */
    int bench;            /* also time each op at a benchmark shape */
    int plant_bug;        /* corrupt one output element per op: every op must then FAIL */
    int finite_diff;      /* also check the reference backward against finite differences (default 1) */
    int small;            /* simulator-sized (Oclgrind): fewer fixed cases, smaller large cases */
    int precision;        /* ct_precision of the matrix products and convolutions while the checks
                             run (the context's is given back after): default CT_PRECISION_FP32;
                             bf16 and fp16 hold their products to the formats' bounds, and
                             leave out the ops with no 16-bit bound yet (lstm, gru,
                             attention) */
} ct_selftest_options;

typedef struct ct_selftest_result {
    const char *op;        /* "dense", "conv2d", ... */
    int passed;
    int cases;             /* shapes checked */
    int comparisons;       /* output tensors compared */
    double max_abs_err;    /* worst |device - reference| over all comparisons */
    double max_rel_err;    /* worst error / (atol + rtol |reference|): <= 1 passes */
    char message[1024];    /* the first failure, with its case and index; "" when passed */
    /* with bench: */
    double bench_ms;       /* median forward + backward time at the benchmark shape */
    double gflops;         /* achieved, from the op's FLOP count */
    double gbytes;         /* achieved GB/s, from the bytes it must move */
    char bench_shape[128];
} ct_selftest_result;

typedef void (*ct_selftest_report_fn)(void *user, const ct_selftest_result *result);

CT_API void ct_selftest_defaults(ct_selftest_options *options);

/* The names of the checked ops, NULL-terminated. */
CT_API const char *const *ct_selftest_ops(void);

/* Runs the checks; `report` is called once per op. Returns CT_OK when all
 * passed, CT_ERR_CORRUPT when some op computed wrong numbers (its result
 * says where), another status if the device failed to run them. */
CT_API int ct_selftest_run(ct_context *ctx, const ct_selftest_options *options,
                           ct_selftest_report_fn report, void *user);

#ifdef __cplusplus
}
#endif

#endif /* CLTRAIN_SELFTEST_H */
