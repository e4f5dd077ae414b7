/*
 * rnn.c - the recurrent references' shared pieces (rnn.h).
 */
#include "ref/rnn.h"

#include <stdlib.h>

#include "core/error.h"

/* Layer k of a G-gate RNN: rows = G H, in its input features; the
 * gradients NULL where dparams is (a forward). */
typedef struct rnn_layer {
    size_t rows, in, H;
    const double *wih, *whh, *bih, *bhh; /* (rows, in), (rows, H), (rows), (rows) */
    double *dwih, *dwhh, *dbih, *dbhh;
} rnn_layer;

static rnn_layer layer_at(const ct_rnn_desc *d, int G, int k, const double *params, double *dparams)
{
    ct_rnn_offsets o = ct_rnn_layer_offsets(d, G, k);
    rnn_layer l = { (size_t)G * (size_t)d->hidden, ct_rnn_layer_in(d, k), (size_t)d->hidden,
                    params + o.w_ih, params + o.w_hh, params + o.b_ih, params + o.b_hh,
                    NULL, NULL, NULL, NULL };
    if (dparams) {
        l.dwih = dparams + o.w_ih;
        l.dwhh = dparams + o.w_hh;
        l.dbih = dparams + o.b_ih;
        l.dbhh = dparams + o.b_hh;
    }
    return l;
}

static int state_alloc(const ct_rnn_desc *d, int G, ct_ref_rnn_state *s)
{
    size_t SL = (size_t)d->T * (size_t)d->N * (size_t)d->hidden * (size_t)d->layers;
    s->gates = malloc((size_t)G * SL * sizeof(double));
    s->aux = malloc(SL * sizeof(double));
    s->h = malloc(SL * sizeof(double));
    if (s->gates && s->aux && s->h)
        return CT_OK;
    ct_ref_rnn_state_free(s);
    return CT_ERR_NO_MEMORY;
}

void ct_ref_rnn_state_free(ct_ref_rnn_state *s)
{
    free(s->gates);
    free(s->aux);
    free(s->h);
    s->gates = s->aux = s->h = NULL;
}

/* One batch row's pre-activations: gi (rows) = W_ih x + b_ih and
 * gh (rows) = W_hh hp + b_hh, just b_hh at the first step (hp NULL). */
static void preact(const rnn_layer *l, const double *x, const double *hp, double *gi, double *gh)
{
    size_t in = l->in, H = l->H;
    for (size_t r = 0; r < l->rows; r++) {
        double a = l->bih[r], b = l->bhh[r];
        for (size_t i = 0; i < in; i++)
            a += l->wih[r * in + i] * x[i];
        for (size_t i = 0; hp && i < H; i++)
            b += l->whh[r * H + i] * hp[i];
        gi[r] = a;
        gh[r] = b;
    }
}

int ct_ref_rnn_forward(const ct_rnn_desc *d, int G, ct_ref_rnn_cell_forward fn, const double *x,
                       const double *params, ct_ref_rnn_state *s)
{
    size_t T = (size_t)d->T, N = (size_t)d->N, H = (size_t)d->hidden, L = (size_t)d->layers;
    size_t S = T * N * H, GH = (size_t)G * H;
    double *gi = malloc(2 * GH * sizeof(double)), *gh = gi + GH;
    if (state_alloc(d, G, s) || !gi) {
        free(gi);
        return CT_ERR_NO_MEMORY;
    }
    for (size_t k = 0; k < L; k++) {
        rnn_layer rl = layer_at(d, G, (int)k, params, NULL);
        const double *X = k == 0 ? x : s->h + (k - 1) * S;
        double *gk = s->gates + GH * T * N * k, *ak = s->aux + S * k, *hk = s->h + S * k;
        for (size_t t = 0; t < T; t++)
            for (size_t n = 0; n < N; n++) {
                size_t q = (t * N + n) * H;
                const double *hp = t ? hk + q - N * H : NULL, *ap = t ? ak + q - N * H : NULL;
                preact(&rl, X + (t * N + n) * rl.in, hp, gi, gh);
                fn(H, gi, gh, hp, ap, gk + (t * N + n) * GH, ak + q, hk + q);
            }
    }
    free(gi);
    return CT_OK;
}

void ct_ref_rnn_outputs(const ct_rnn_desc *d, const ct_ref_rnn_state *s, double *y, double *h_n)
{
    size_t NH = (size_t)d->N * (size_t)d->hidden, S = (size_t)d->T * NH, L = (size_t)d->layers;
    for (size_t i = 0; i < S; i++)
        y[i] = s->h[(L - 1) * S + i];
    for (size_t k = 0; h_n && k < L; k++)
        for (size_t i = 0; i < NH; i++)
            h_n[k * NH + i] = s->h[k * S + S - NH + i];
}

/* One batch row of one step, from the gradients of its input and hidden
 * pre-activations di and dg: db_ih += di, db_hh += dg, dW_ih += di xᵀ,
 * dx (in) += W_ihᵀ di, and, where h_{t-1} exists (hp not NULL),
 * dW_hh += dg hpᵀ and dhp (H) += W_hhᵀ dg. */
static void step_backward(const rnn_layer *l, const double *di, const double *dg,
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

int ct_ref_rnn_backward(const ct_rnn_desc *d, int G, const ct_ref_rnn_state *s,
                        ct_ref_rnn_cell_backward fn, const void *cell, double *dx, double *dparams,
                        const double *dy, const double *x, const double *params)
{
    size_t T = (size_t)d->T, N = (size_t)d->N, H = (size_t)d->hidden, L = (size_t)d->layers;
    size_t S = T * N * H, in0 = (size_t)d->input, wide = in0 > H ? in0 : H;
    /* dseq: gradient reaching the current layer's outputs h_t (T, N, H);
     * dprev: the one reaching its inputs; di, dg: one row's pre-activation
     * gradients (G H); dh: the recurrent gradient reaching h_t from step
     * t + 1, dhn the one reaching h_{t-1} (N, H); dht: dh plus dseq, one
     * row's (H) */
    double *dseq = malloc(S * sizeof(double)), *dprev = malloc(T * N * wide * sizeof(double));
    double *di = malloc(2 * (size_t)G * H * sizeof(double)), *dg = di + (size_t)G * H;
    double *dh = malloc((2 * N + 1) * H * sizeof(double)), *dhn = dh + N * H, *dht = dhn + N * H;
    int st = dseq && dprev && di && dh ? CT_OK : CT_ERR_NO_MEMORY;
    for (size_t i = 0; !st && i < S; i++)
        dseq[i] = dy[i];
    for (size_t k = L; !st && k-- > 0;) {
        rnn_layer rl = layer_at(d, G, (int)k, params, dparams);
        size_t in = rl.in;
        const double *X = k == 0 ? x : s->h + (k - 1) * S, *hk = s->h + S * k;
        for (size_t i = 0; i < N * H; i++)
            dh[i] = 0;
        for (size_t i = 0; i < T * N * in; i++)
            dprev[i] = 0;
        for (size_t t = T; t-- > 0;) {
            for (size_t n = 0; n < N; n++) {
                for (size_t j = 0; j < H; j++)
                    dht[j] = dseq[(t * N + n) * H + j] + dh[n * H + j];
                fn(cell, s, k, t, n, dht, di, dg, dhn + n * H);
                step_backward(&rl, di, dg, X + (t * N + n) * in,
                              t ? hk + ((t - 1) * N + n) * H : NULL, dprev + (t * N + n) * in,
                              dhn + n * H);
            }
            for (size_t i = 0; i < N * H; i++)
                dh[i] = dhn[i];
        }
        double *dst = k == 0 ? dx : dseq;
        for (size_t i = 0; i < T * N * in; i++)
            dst[i] = dprev[i];
    }
    free(dseq);
    free(dprev);
    free(di);
    free(dh);
    return st;
}
