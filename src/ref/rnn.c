/*
 * rnn.c - the recurrent references' shared backward step (rnn.h).
 */
#include "ref/rnn.h"

ct_ref_rnn_layer ct_ref_rnn_layer_at(const ct_rnn_desc *d, int G, int k, const double *params,
                                     double *dparams)
{
    ct_rnn_offsets o = ct_rnn_layer_offsets(d, G, k);
    ct_ref_rnn_layer l = { (size_t)G * (size_t)d->hidden, ct_rnn_layer_in(d, k), (size_t)d->hidden,
                           params + o.w_ih, params + o.w_hh, dparams + o.w_ih, dparams + o.w_hh,
                           dparams + o.b_ih, dparams + o.b_hh };
    return l;
}

void ct_ref_rnn_step_backward(const ct_ref_rnn_layer *l, const double *di, const double *dg,
                              const double *x, const double *hp, double *dx, double *dhp)
{
    size_t in = l->in, H = l->H;
    for (size_t r = 0; r < l->rows; r++) {
        l->dbih[r] += di[r];
        l->dbhh[r] += dg[r];
        for (size_t i = 0; i < in; i++) {
            l->dwih[r * in + i] += di[r] * x[i];
            dx[i] += di[r] * l->wih[r * in + i];
        }
        for (size_t i = 0; hp && i < H; i++) {
            l->dwhh[r * H + i] += dg[r] * hp[i];
            dhp[i] += dg[r] * l->whh[r * H + i];
        }
    }
}
