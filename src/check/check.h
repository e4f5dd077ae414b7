/*
 * check.h - the op-check harness (after dav1d's checkasm and ggml's
 * test-backend-ops), used by tests/checkcl and `cltrain selftest`.
 *
 * An op's check, src/check/<op>.c, is `void ct_check_<op>(ct_check *c)`:
 * for each case it draws shapes and inputs from the seeded RNG, computes
 * the reference (src/ref/, double), runs the launchers (src/ops/) on device
 * buffers made here, and compares with ck_expect. Host and device buffers
 * made through ck_host / ck_dev_* belong to the case and are released by
 * ck_case_end. A failure is recorded (first one kept, with its index) and
 * the check goes on; ck_failed tells whether to stop early.
 *
 * Device buffers carry guard bands: CK_GUARD elements before and after,
 * set to a canary, and outputs start as NaN, so a kernel that writes out of
 * bounds or leaves elements unwritten is caught.
 */
#ifndef CT_CHECK_CHECK_H
#define CT_CHECK_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "cltrain/selftest.h"
#include "ops/ops.h"

#define CK_GUARD 37 /* odd on purpose: no alignment lines up with it */

typedef struct ct_check ct_check;

/* ---- randomness ---- */
uint32_t ck_u32(ct_check *c);
double ck_uniform(ct_check *c, double lo, double hi);
int ck_int(ct_check *c, int lo, int hi); /* inclusive */
/* A dimension in [1, hi]: often 1 or hi, otherwise odd-looking values that
 * are no multiple of a work-group or tile size. */
int ck_dim(ct_check *c, int hi);
void ck_fill(ct_check *c, double *x, size_t n, double lo, double hi);
/* Rounds to float in place, so the device sees exactly the reference's values. */
void ck_round_f32(double *x, size_t n);
/* |x| in a case-owned array; NULL for x NULL. */
double *ck_abs(ct_check *c, const double *x, size_t n);

/* ---- case scope ---- */
/* Starts a case; the description (printf) appears in failure messages. */
void ck_case(ct_check *c, const char *fmt, ...) CT_PRINTF(2, 3);
void ck_case_end(ct_check *c);
int ck_failed(const ct_check *c);      /* a failure so far in this op */
ct_context *ck_ctx(ct_check *c);
/* Switches the context to device class k (the launchers pick their kernel
 * variants by class, so every variant is checked on any device); returns
 * the class it had, to be given back the same way. */
ct_kernels ck_use_class(ct_check *c, ct_kernels k);
int ck_iterations(const ct_check *c);  /* random cases to run */
/* Simulator-sized run (ct_selftest_options.small): checks skip repeats of a
 * kernel path and shrink cases that are large only for statistics or
 * throughput, keeping one case of every kernel and branch. */
int ck_small(const ct_check *c);

/* Zeroed host doubles owned by the case (never NULL: allocation failure
 * fails the op and returns a static dummy large enough for nothing, so
 * check code must test ck_failed before heavy work). */
double *ck_host(ct_check *c, size_t n);
/* Device copies of host data (converted to float), with guard bands. */
ct_buf ck_dev_in(ct_check *c, const double *x, size_t n);
/* A device output of n elements, pre-filled with NaN. */
ct_buf ck_dev_out(ct_check *c, size_t n);
/* A device buffer of n floats set to `value` (for accumulating gradients). */
ct_buf ck_dev_const(ct_check *c, size_t n, double value);
/* A device copy of x (as float) with an output's guard bands, for operands
 * a launcher updates in place; written in one transfer, guards included. */
ct_buf ck_dev_inout(ct_check *c, const double *x, size_t n);

/* Activations in the context's storage (ct_context_set_act16): ck_act16
 * gives its format (0 float32, 1 bf16, 2 fp16); ck_act_in / _out / _inout
 * are ck_dev_in / _out / _inout with elements in that format (inputs
 * rounded to nearest even; ck_expect reads either kind back), and
 * ck_round_act rounds host values in place to it, so that the reference
 * sees the device's inputs exactly. */
int ck_act16(const ct_check *c);
/* The rerun of a case with activations stored in 16 bits, for the ops
 * with a 16-bit form: where the run's precision (ct_context_precision) is
 * bf16 or fp16, the products run on the device (not the host BLAS:
 * checkcl --gemm host) and nothing has failed, ck_act16_begin ends the current
 * case, switches the context to the GPU class and that storage, and
 * returns 1: run the case (ck_case ... ), then ck_act16_end gives the
 * class and storage back (the case itself is ended by the caller, as
 * any). 0: nothing to rerun, nothing switched. */
typedef struct ck_act16_state {
    ct_kernels cls;
    int had;
} ck_act16_state;
int ck_act16_begin(ct_check *c, ck_act16_state *s);
void ck_act16_end(ct_check *c, const ck_act16_state *s);
void ck_round_act(const ct_check *c, double *x, size_t n);
ct_buf ck_act_in(ct_check *c, const double *x, size_t n);
ct_buf ck_act_out(ct_check *c, size_t n);
ct_buf ck_act_inout(ct_check *c, const double *x, size_t n);

/* Reports a launcher's failure status as a check failure. Returns status. */
int ck_status(ct_check *c, int status, const char *what);

/* Reads `got` back (guards included) and compares it with `ref`:
 * |got - ref| <= atol + rtol * |ref| (or got == ref, for infinities) for
 * every element, the guards intact, no NaN where ref has none. Returns 1 if
 * it matched. */
int ck_expect(ct_check *c, const char *what, ct_buf got, size_t n, const double *ref,
              double atol, double rtol);

/* Checks an analytic gradient against central finite differences of a
 * scalar loss (double precision). `loss` reads the perturbed x in place.
 * At most `max_points` elements are probed (chosen at random). */
typedef double (*ck_loss_fn)(void *user);
int ck_gradcheck(ct_check *c, const char *what, ck_loss_fn loss, void *user, double *x,
                 size_t n, const double *analytic, size_t max_points);
int ck_finite_diff(const ct_check *c); /* finite-difference checks are on */

/* The float32 error bound of sums of `terms` products: (terms + 2) 2^-24
 * times the largest |reference| of the sums of absolute products (abs_ref,
 * n entries); the +2 covers a bias add or `+=` and the final store. */
double ck_sum_atol(size_t terms, const double *abs_ref, size_t n);

/* The same for sums of products whose operands the context's precision
 * rounds (ct_context_set_precision: matrix products and convolutions): in
 * float32 ck_sum_atol; with bf16 (or fp16) operands each operand is off by
 * at most u = 2^-8 (2^-11) of itself, so each product by 2u + u^2 of
 * itself and the sum by 2.03 u times the sum of absolute products, on top
 * of the float32 bound of the sum of the rounded products; fp16's
 * subnormals (below 2^-14, steps of 2^-24) add at most 2^-25 per operand,
 * 2^-24 per product where the checks' operands lie in [-1, 1] (those that
 * call this draw them so). */
double ck_prod_atol(ct_check *c, size_t terms, const double *abs_ref, size_t n);

/* The part of that bound the precision p adds (0 in float32): 2.03 u
 * sum_max, with sum_max the largest sum of absolute products, plus for fp16
 * terms 2^-24 operand_max (each operand's subnormal step 2^-25 times the
 * other operand, at most operand_max). ck_prod_atol passes operand_max 1. */
double ck_prec_extra(ct_precision p, size_t terms, double sum_max, double operand_max);

/* The precision's rounding of an operand (for the bounds of the ops whose
 * products feed softmaxes and recurrences: ref/attention.h,
 * ref/rnn_bound.h): relative error u (2^-8 bf16,
 * 2^-11 fp16, 0 float32) and absolute error below the normal range (fp16's
 * subnormal half step 2^-25; 0 otherwise). */
double ck_prec_u(ct_precision p);
double ck_prec_sub(ct_precision p);

/* The largest |x[i]| (0 for n = 0). */
double ck_amax(const double *x, size_t n);

/* sum(y * w): the usual scalar loss whose gradient w.r.t. y is w. */
double ck_dot(const double *y, const double *w, size_t n);

/* ---- benchmarks ---- */
int ck_benchmarking(const ct_check *c);
/* Times `run` (which enqueues one forward+backward) a few times after a
 * warm-up and records the median with the op's flops and bytes. */
typedef int (*ck_run_fn)(void *user);
void ck_bench(ct_check *c, const char *shape, double flops, double bytes, ck_run_fn run, void *user);

/* The list of op checks (one line each, in the order they run). */
#define CT_CHECKS(X) \
    X(dense) \
    X(conv) \
    X(gconv) \
    X(convt) \
    X(transpose) \
    X(embedding) \
    X(lstm) \
    X(gru) \
    X(seqpool) \
    X(layernorm) \
    X(rmsnorm) \
    X(upsample) \
    X(posembed) \
    X(act) \
    X(optim) \
    X(batchnorm) \
    X(loss) \
    X(dropout) \
    X(pool) \
    X(lrn) \
    X(shortcut) \
    X(eltwise) \
    X(attention)

#define CT_X(name) void ct_check_##name(ct_check *c);
CT_CHECKS(CT_X)
#undef CT_X

#endif /* CT_CHECK_CHECK_H */
