/*
 * rnn.c - what the recurrent adapters (lstm.c, gru.c) share: the
 * descriptor from the metadata, the per-layer tensors gathered into the
 * flat layout of src/ops/rnn.h, and the comparison of the parameter
 * gradients.
 */
#include <stdio.h>

#include "golden.h"

static const char *const pnames[4] = { "weight_ih", "weight_hh", "bias_ih", "bias_hh" };

ct_rnn_desc golden_rnn_desc(golden *g)
{
    ct_rnn_desc d = { golden_meta_int(g, "seq_len", 0), golden_meta_int(g, "batch", 0),
                      golden_meta_int(g, "input_size", 0), golden_meta_int(g, "hidden_size", 0),
                      golden_meta_int(g, "num_layers", 0) };
    return d;
}

/* the tensors' offsets: at[t] for pnames[t], at[4] the next layer's start */
static void layer_at(const ct_rnn_desc *d, int G, int k, size_t at[5])
{
    ct_rnn_offsets o = ct_rnn_layer_offsets(d, G, k), next = ct_rnn_layer_offsets(d, G, k + 1);
    at[0] = o.w_ih, at[1] = o.w_hh, at[2] = o.b_ih, at[3] = o.b_hh, at[4] = next.w_ih;
}

double *golden_rnn_inputs(golden *g, const ct_rnn_desc *d, int G, double **x, double **dy)
{
    size_t got = 0, nx = (size_t)d->T * (size_t)d->N * (size_t)d->input;
    *x = golden_tensor(g, "x", &got, NULL, NULL);
    *dy = golden_tensor(g, "dy", NULL, NULL, NULL);
    if (!*x || !*dy)
        return NULL;
    if (got != nx) {
        golden_failf(g, "x has %zu elements, the metadata make %zu", got, nx);
        return NULL;
    }
    double *p = golden_host(g, ct_rnn_layer_offsets(d, G, d->layers).w_ih);
    for (int k = 0; k < d->layers; k++) {
        size_t at[5];
        layer_at(d, G, k, at);
        for (int t = 0; t < 4; t++) {
            char name[64];
            snprintf(name, sizeof name, "%s_l%d", pnames[t], k);
            size_t n = 0;
            double *v = golden_tensor(g, name, &n, NULL, NULL);
            if (!v)
                return NULL;
            if (n != at[t + 1] - at[t]) {
                golden_failf(g, "%s has %zu elements, expected %zu", name, n, at[t + 1] - at[t]);
                return NULL;
            }
            for (size_t i = 0; i < n; i++)
                p[at[t] + i] = v[i];
        }
    }
    return p;
}

void golden_rnn_expect_dparams(golden *g, const ct_rnn_desc *d, int G, const double *dp, ct_buf d_dp,
                               double tol, double dev_extra)
{
    for (int k = 0; k < d->layers; k++) {
        size_t at[5];
        layer_at(d, G, k, at);
        for (int t = 0; t < 4; t++) {
            char dname[64];
            snprintf(dname, sizeof dname, "d%s_l%d", pnames[t], k);
            golden_expect_host(g, dname, dp + at[t], dname, tol, tol);
            golden_expect_dev(g, dname, ct_buf_at(d_dp, at[t]), dname, tol + dev_extra, tol);
        }
    }
}
