/*
 * golden.h - the runner of PyTorch golden vectors (the .safetensors files of tests/golden/data,
 * or any directory of such files): each file holds one op's inputs,
 * parameters, output y, an upstream gradient dy and PyTorch's gradients d<name>;
 * `__metadata__` holds "op" and its arguments.
 *
 * An adapter, tests/golden/<family>.c, is `void golden_<family>(golden *g)`:
 * it runs BOTH the host reference (src/ref/) and the OpenCL launchers
 * (src/ops/) on the file's inputs and compares each with PyTorch's values.
 * Everything allocated through golden_* belongs to the file and is freed
 * after it. A failure is recorded (with the file, tensor and index) and the
 * adapter may go on.
 *
 * Tolerances: |a - b| <= atol + rtol |b|, 1e-5 + 1e-4 |b| for element-wise
 * results (float32 against float32), looser for reductions over many terms:
 * each adapter states its own. With --precision bf16|fp16 the products of
 * dense, conv2d (grouped too) and conv_transpose2d add golden_prec_bound;
 * the ops whose products feed recurrences or softmaxes (lstm, gru,
 * attention) add the largest of their per-element bounds
 * (ref/rnn_bound.h, ref/attention.h).
 */
#ifndef CT_TESTS_GOLDEN_H
#define CT_TESTS_GOLDEN_H

#include <stddef.h>

#include "check/check.h"
#include "io/safetensors.h"
#include "ops/rnn.h"

typedef struct golden golden;

ct_context *golden_ctx(golden *g);
const char *golden_op(golden *g);                       /* metadata "op" */
const char *golden_meta(golden *g, const char *key);    /* NULL if absent */
int golden_meta_int(golden *g, const char *key, int fallback);
double golden_meta_double(golden *g, const char *key, double fallback);
int golden_meta_bool(golden *g, const char *key, int fallback); /* "true"/"false" */

/* A tensor of the file as doubles, or NULL (and a recorded failure) if the
 * file lacks it. shape gets up to 8 dims, ndim their count (either may be NULL). */
double *golden_tensor(golden *g, const char *name, size_t *numel, int *shape, int *ndim);
int golden_has(golden *g, const char *name);

double *golden_host(golden *g, size_t n);              /* zeroed */
double *golden_abs(golden *g, const double *x, size_t n); /* |x|, owned by the file */
/* What 16-bit operands add to the device's bound of sums of `terms`
 * products (golden --precision bf16|fp16; 0 in float32): ck_prec_extra of
 * the context's precision, with abs_ref the sums of absolute products (n
 * entries) and amax the operands' largest magnitude. The float32 part is
 * ck_sum_atol; ck_amax gives amax. */
double golden_prec_bound(golden *g, size_t terms, const double *abs_ref, size_t n, double amax);

ct_buf golden_dev(golden *g, const double *x, size_t n); /* a float copy on the device */
ct_buf golden_dev_zero(golden *g, size_t n);

/* Compare a host result (the reference) or a device result (the kernel)
 * with the file's tensor `expected`. Return 1 on a match. */
int golden_expect_host(golden *g, const char *what, const double *got, const char *expected,
                       double atol, double rtol);
int golden_expect_dev(golden *g, const char *what, ct_buf got, const char *expected,
                      double atol, double rtol);
/* Records a failing status (returns it). */
int golden_status(golden *g, int status, const char *what);
void golden_failf(golden *g, const char *fmt, ...) CT_PRINTF(2, 3);

/* The recurrent adapters' shared pieces (rnn.c), for G-gate layers in the
 * flat layout of ops/rnn.h. The descriptor from the metadata seq_len,
 * batch, input_size, hidden_size, num_layers; */
ct_rnn_desc golden_rnn_desc(golden *g);
/* the inputs x (T, N, input) and dy, and the per-layer tensors
 * weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k} gathered into
 * one flat array, returned (NULL, and a recorded failure, if one is
 * missing or of the wrong size); */
double *golden_rnn_inputs(golden *g, const ct_rnn_desc *d, int G, double **x, double **dy);
/* the reference's (dp) and the device's (d_dp) flat parameter gradients
 * against the file's d<name>_l{k}, atol = rtol = tol; the device's atol
 * adds dev_extra (the 16-bit bound; 0 in float32). */
void golden_rnn_expect_dparams(golden *g, const ct_rnn_desc *d, int G, const double *dp, ct_buf d_dp,
                               double tol, double dev_extra);

/* op name in the file's metadata -> adapter. One line per op. */
#define GOLDEN_OPS(X)          \
    X("dense", golden_dense) \
    X("conv2d", golden_conv) \
    X("conv_transpose2d", golden_convt) \
    X("to_sequence", golden_transpose) \
    X("embedding", golden_embedding) \
    X("lstm", golden_lstm) \
    X("gru", golden_gru) \
    X("seqpool", golden_seqpool) \
    X("layernorm", golden_layernorm) \
    X("posembed", golden_posembed) \
    X("batchnorm_train", golden_batchnorm) \
    X("batchnorm_eval", golden_batchnorm) \
    X("softmax_cross_entropy", golden_loss) \
    X("mse", golden_loss) \
    X("bce_logits", golden_loss) \
    X("maxpool", golden_pool) \
    X("avgpool", golden_pool) \
    X("global_avgpool", golden_pool) \
    X("lrn", golden_lrn) \
    X("shortcut_a", golden_shortcut) \
    X("attention", golden_attention) \
    X("optimizer", golden_optim) \
    X("relu", golden_act)      \
    X("leaky_relu", golden_act) \
    X("sigmoid", golden_act)   \
    X("tanh", golden_act)      \
    X("gelu", golden_act)      \
    X("silu", golden_act)      \
    X("hardswish", golden_act) \
    X("relu6", golden_act)     \
    X("mul", golden_mul)       \
    X("concat", golden_concat) \
    X("rmsnorm", golden_rmsnorm) \
    X("upsample", golden_upsample)

#define GOLDEN_X(op, fn) void fn(golden *g);
GOLDEN_OPS(GOLDEN_X)
#undef GOLDEN_X

#endif /* CT_TESTS_GOLDEN_H */
