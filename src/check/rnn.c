/*
 * rnn.c - the recurrent families' shared check pieces (rnn.h).
 */
#include "check/rnn.h"

#include <math.h>

#define U_F32 0x1p-24

int ck_rnn_data_make(ct_check *c, const ct_rnn_desc *d, size_t np, ck_rnn_data *out)
{
    size_t TN = (size_t)d->T * (size_t)d->N;
    out->nx = TN * (size_t)d->input;
    out->ny = TN * (size_t)d->hidden;
    out->np = np;
    out->x = ck_host(c, out->nx);
    out->dy = ck_host(c, out->ny);
    out->p = ck_host(c, np);
    out->dp0 = ck_host(c, np);
    if (ck_failed(c))
        return 0;
    double k = 1.0 / sqrt((double)d->hidden); /* PyTorch's init range */
    ck_fill(c, out->x, out->nx, -1, 1);
    ck_fill(c, out->p, np, -k, k);
    ck_fill(c, out->dy, out->ny, -1, 1);
    ck_fill(c, out->dp0, np, -1, 1);
    ck_round_f32(out->x, out->nx);
    ck_round_f32(out->p, np);
    ck_round_f32(out->dy, out->ny);
    ck_round_f32(out->dp0, np);
    return 1;
}

double ck_rnn_tol(const ct_rnn_desc *d, int G, int backward)
{
    double H = (double)d->hidden, K = fmax((double)d->input, H) + H + 2;
    if (backward)
        K = fmax(fmax(K, (double)G * H), (double)d->T * (double)d->N);
    return 4 * U_F32 * sqrt(K) * (double)d->T * (double)d->layers;
}

void ck_rnn_gradcheck_params(ct_check *c, const ct_rnn_desc *d, int G, ck_loss_fn loss, void *user,
                             double *p, const double *g)
{
    static const char *const names[4] = { "reference dweight_ih", "reference dweight_hh",
                                          "reference dbias_ih", "reference dbias_hh" };
    for (int layer = 0; layer < d->layers && !ck_failed(c); layer++) {
        ct_rnn_offsets o = ct_rnn_layer_offsets(d, G, layer), next = ct_rnn_layer_offsets(d, G, layer + 1);
        size_t at[5] = { o.w_ih, o.w_hh, o.b_ih, o.b_hh, next.w_ih };
        for (int t = 0; t < 4; t++)
            ck_gradcheck(c, names[t], loss, user, p + at[t], at[t + 1] - at[t], g + at[t], 8);
    }
}
