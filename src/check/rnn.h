/*
 * rnn.h - what the checks of the recurrent families (check/lstm.c,
 * check/gru.c) share: a case's random data, the tolerances and the finite
 * differences of every layer's parameters.
 */
#ifndef CT_CHECK_RNN_H
#define CT_CHECK_RNN_H

#include "check/check.h"
#include "ops/rnn.h"

/* A case's inputs, owned by the case, every value rounded to float: x
 * (T, N, input) and dy (T, N, H) in [-1, 1], the parameters p (np) in
 * PyTorch's init range +-1/sqrt(H), dp0 (np) in [-1, 1], the start of the
 * accumulated parameter gradient. */
typedef struct ck_rnn_data {
    size_t nx, ny, np;
    double *x, *dy, *p, *dp0;
} ck_rnn_data;

/* 0 when the case failed (out of host memory). */
int ck_rnn_data_make(ct_check *c, const ct_rnn_desc *d, size_t np, ck_rnn_data *out);

/* The tolerance (atol = rtol) of a G-gate RNN's forward or backward; the
 * reasoning is in check/lstm.c. */
double ck_rnn_tol(const ct_rnn_desc *d, int G, int backward);

/* The largest of each output's 16-bit bounds in precision p
 * (ct_ref_lstm_bound16 for G = 4, ct_ref_gru_bound16 for G = 3), in the
 * outputs' order: y, h_n, c_n (the LSTM only), dx, dparams; all 0 in
 * float32. CT_OK or CT_ERR_NO_MEMORY. */
int ck_rnn_bound16(ct_precision p, const ct_rnn_desc *d, int G, const double *dy, const double *x,
                   const double *params, double *b16);

/* Finite differences of the reference's loss against its parameter
 * gradient g (flat, from zero): up to 8 points of each layer's weight_ih,
 * weight_hh, bias_ih and bias_hh. */
void ck_rnn_gradcheck_params(ct_check *c, const ct_rnn_desc *d, int G, ck_loss_fn loss, void *user,
                             double *p, const double *g);

/* A family's launchers for the benchmark (the forward without final
 * states) and its cases. */
typedef struct ck_rnn_family {
    int G;
    size_t (*workspace_size)(const ct_rnn_desc *d);
    int (*forward)(ct_context *ctx, const ct_rnn_desc *d, ct_buf y, ct_buf x, ct_buf params, ct_buf ws);
    int (*backward)(ct_context *ctx, const ct_rnn_desc *d, ct_buf dx, ct_buf dparams, ct_buf dy,
                    ct_buf x, ct_buf params, ct_buf ws);
    void (*one_case)(ct_check *c, const ct_rnn_desc *d); /* the case's checks, ck_case included */
} ck_rnn_family;

/* The family's check: fixed edge shapes, ck_iterations random ones, a stack
 * of the most layers, and with ck_benchmarking the seed benchmark's shape
 * (T 32, N 128, 256 -> 256, 2 layers). */
void ck_rnn_run(ct_check *c, const ck_rnn_family *f);

#endif /* CT_CHECK_RNN_H */
