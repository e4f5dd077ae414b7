/*
 * rnn_bound.c - the recurrent layers' 16-bit bounds (rnn_bound.h): the
 * reference's recurrences again, each value carried with the bound of how
 * far the device's can be from it.
 */
#include "ref/rnn_bound.h"

#include <stdlib.h>

#include "core/error.h"
#include "ref/act.h"

/* a value and the bound of |device - value| */
typedef struct ev {
    double v, e;
} ev;

static ev add(ev a, ev b)
{
    return (ev){ a.v + b.v, a.e + b.e };
}

static ev mul(ev a, ev b)
{
    return (ev){ a.v * b.v, a.e * fabs(b.v) + fabs(a.v) * b.e + a.e * b.e };
}

static ev one_minus(ev a)
{
    return (ev){ 1 - a.v, a.e };
}

/* sigmoid: slope at most 1/4, range (0, 1) */
static ev sig(ev a)
{
    return (ev){ ct_ref_act_f(CT_ACT_SIGMOID, a.v), fmin(a.e / 4, 1.0) };
}

/* tanh: slope at most 1, range (-1, 1) */
static ev th(ev a)
{
    return (ev){ tanh(a.v), fmin(a.e, 2.0) };
}

typedef struct bnd {
    const ct_rnn_desc *d;
    int G;
    double u, s;
    ev *gates, *aux, *h; /* as ct_ref_rnn_state: (L, T, N, G H), (L, T, N, H) twice */
    ev *dc;              /* the LSTM's recurrent dc (N, H) */
} bnd;

/* a cell's forward for one row: gi, gh (G H) pre-activations, hp and ap
 * (H; NULL at the first step) the previous h and aux; gates (G H), aux,
 * h (H) out */
typedef void (*cell_fwd)(size_t H, const ev *gi, const ev *gh, const ev *hp, const ev *ap, ev *gates, ev *aux,
                         ev *h);
/* a cell's backward for row n of step t of layer k: di, dg (G H) from dh
 * (H); dhp (H) the gradient reaching h_{t-1} other than through W_hh */
typedef void (*cell_bwd)(bnd *b, size_t k, size_t t, size_t n, const ev *dh, ev *di, ev *dg, ev *dhp);

static void lstm_fwd(size_t H, const ev *gi, const ev *gh, const ev *hp, const ev *cp, ev *gates, ev *c, ev *h)
{
    (void)hp;
    for (size_t r = 0; r < 4 * H; r++)
        gates[r] = r / H == 2 ? th(add(gi[r], gh[r])) : sig(add(gi[r], gh[r]));
    for (size_t j = 0; j < H; j++) {
        c[j] = add(cp ? mul(gates[H + j], cp[j]) : (ev){ 0, 0 }, mul(gates[j], gates[2 * H + j]));
        h[j] = mul(gates[3 * H + j], th(c[j]));
    }
}

static void lstm_bwd(bnd *b, size_t k, size_t t, size_t n, const ev *dh, ev *di, ev *dg, ev *dhp)
{
    size_t T = (size_t)b->d->T, N = (size_t)b->d->N, H = (size_t)b->d->hidden, S = T * N * H;
    const ev *gr = b->gates + 4 * S * k + (t * N + n) * 4 * H, *ck = b->aux + S * k;
    ev *dc = b->dc + n * H;
    for (size_t j = 0; j < H; j++) {
        ev i_ = gr[j], f = gr[H + j], g = gr[2 * H + j], og = gr[3 * H + j];
        ev tc = th(ck[(t * N + n) * H + j]);
        ev cp = t ? ck[((t - 1) * N + n) * H + j] : (ev){ 0, 0 };
        ev dct = add(t + 1 < T ? dc[j] : (ev){ 0, 0 }, mul(mul(dh[j], og), one_minus(mul(tc, tc))));
        di[j] = mul(mul(dct, g), mul(i_, one_minus(i_)));
        di[H + j] = mul(mul(dct, cp), mul(f, one_minus(f)));
        di[2 * H + j] = mul(mul(dct, i_), one_minus(mul(g, g)));
        di[3 * H + j] = mul(mul(dh[j], tc), mul(og, one_minus(og)));
        dc[j] = mul(dct, f);
        dhp[j] = (ev){ 0, 0 };
    }
    for (size_t r = 0; r < 4 * H; r++)
        dg[r] = di[r];
}

static void gru_fwd(size_t H, const ev *gi, const ev *gh, const ev *hp, const ev *ap, ev *gates, ev *hn, ev *h)
{
    (void)ap;
    for (size_t j = 0; j < H; j++) {
        ev r = sig(add(gi[j], gh[j])), z = sig(add(gi[H + j], gh[H + j]));
        ev nv = th(add(gi[2 * H + j], mul(r, gh[2 * H + j])));
        gates[j] = r;
        gates[H + j] = z;
        gates[2 * H + j] = nv;
        hn[j] = gh[2 * H + j];
        h[j] = add(mul(one_minus(z), nv), hp ? mul(z, hp[j]) : (ev){ 0, 0 });
    }
}

static void gru_bwd(bnd *b, size_t k, size_t t, size_t n, const ev *dh, ev *di, ev *dg, ev *dhp)
{
    size_t N = (size_t)b->d->N, H = (size_t)b->d->hidden, S = (size_t)b->d->T * N * H, q = (t * N + n) * H;
    const ev *gr = b->gates + 3 * S * k + 3 * q, *hn = b->aux + S * k + q;
    const ev *hp = t ? b->h + S * k + q - N * H : NULL;
    for (size_t j = 0; j < H; j++) {
        ev r = gr[j], z = gr[H + j], nv = gr[2 * H + j];
        ev an = mul(mul(dh[j], one_minus(z)), one_minus(mul(nv, nv)));
        ev ar = mul(mul(an, hn[j]), mul(r, one_minus(r)));
        ev hpj = hp ? hp[j] : (ev){ 0, 0 };
        ev az = mul(mul(dh[j], add(hpj, (ev){ -nv.v, nv.e })), mul(z, one_minus(z)));
        di[j] = dg[j] = ar;
        di[H + j] = dg[H + j] = az;
        di[2 * H + j] = an;
        dg[2 * H + j] = mul(an, r);
        dhp[j] = mul(dh[j], z);
    }
}

/* a row's pre-activations: W x + bias (x within its bounds, W exact and
 * the bias float32) */
static void preact(const bnd *b, const double *w, const double *bias, size_t rows, size_t in, const ev *x, ev *out)
{
    for (size_t r = 0; r < rows; r++) {
        ev a = { bias[r], 0 };
        for (size_t i = 0; i < in; i++) {
            a.v += w[r * in + i] * x[i].v;
            a.e += ct_ref_perr16(b->u, b->s, w[r * in + i], 0, x[i].v, x[i].e);
        }
        out[r] = a;
    }
}

static int forward(bnd *b, cell_fwd fn, const double *x, const double *params)
{
    const ct_rnn_desc *d = b->d;
    size_t T = (size_t)d->T, N = (size_t)d->N, H = (size_t)d->hidden, L = (size_t)d->layers;
    size_t S = T * N * H, GH = (size_t)b->G * H, in0 = (size_t)d->input;
    ev *gi = malloc((2 * GH + T * N * in0) * sizeof(ev)), *gh = gi + GH, *x0 = gh + GH;
    b->gates = malloc(GH * T * N * L * sizeof(ev));
    b->aux = malloc(S * L * sizeof(ev));
    b->h = malloc(S * L * sizeof(ev));
    if (!gi || !b->gates || !b->aux || !b->h) {
        free(gi);
        return CT_ERR_NO_MEMORY;
    }
    for (size_t i = 0; i < T * N * in0; i++)
        x0[i] = (ev){ x[i], 0 };
    for (size_t k = 0; k < L; k++) {
        ct_rnn_offsets o = ct_rnn_layer_offsets(d, b->G, (int)k);
        size_t in = ct_rnn_layer_in(d, (int)k);
        const ev *X = k == 0 ? x0 : b->h + (k - 1) * S;
        ev *gk = b->gates + GH * T * N * k, *ak = b->aux + S * k, *hk = b->h + S * k;
        for (size_t t = 0; t < T; t++)
            for (size_t n = 0; n < N; n++) {
                size_t q = (t * N + n) * H;
                const ev *hp = t ? hk + q - N * H : NULL, *ap = t ? ak + q - N * H : NULL;
                preact(b, params + o.w_ih, params + o.b_ih, GH, in, X + (t * N + n) * in, gi);
                if (hp)
                    preact(b, params + o.w_hh, params + o.b_hh, GH, H, hp, gh);
                else
                    for (size_t r = 0; r < GH; r++)
                        gh[r] = (ev){ params[o.b_hh + r], 0 };
                fn(H, gi, gh, hp, ap, gk + (t * N + n) * GH, ak + q, hk + q);
            }
    }
    free(gi);
    return CT_OK;
}

/* Backpropagation through time as ct_ref_rnn_backward, bounds carried:
 * edx (T, N, input) =, edp (flat) += */
static int backward(bnd *b, cell_bwd fn, double *edx, double *edp, const double *dy, const double *x,
                    const double *params)
{
    const ct_rnn_desc *d = b->d;
    size_t T = (size_t)d->T, N = (size_t)d->N, H = (size_t)d->hidden, L = (size_t)d->layers;
    size_t S = T * N * H, in0 = (size_t)d->input, wide = in0 > H ? in0 : H, GH = (size_t)b->G * H;
    ev *dseq = malloc(S * sizeof(ev)), *dprev = malloc(T * N * wide * sizeof(ev));
    ev *di = malloc(2 * GH * sizeof(ev)), *dg = di + GH;
    ev *dh = malloc((2 * N + 1) * H * sizeof(ev)), *dhn = dh + N * H, *dht = dhn + N * H;
    int st = dseq && dprev && di && dh ? CT_OK : CT_ERR_NO_MEMORY;
    for (size_t i = 0; !st && i < S; i++)
        dseq[i] = (ev){ dy[i], 0 };
    for (size_t k = L; !st && k-- > 0;) {
        ct_rnn_offsets o = ct_rnn_layer_offsets(d, b->G, (int)k);
        size_t in = ct_rnn_layer_in(d, (int)k);
        const double *wih = params + o.w_ih, *whh = params + o.w_hh;
        const ev *hk = b->h + S * k;
        for (size_t i = 0; i < N * H; i++)
            dh[i] = (ev){ 0, 0 };
        for (size_t i = 0; i < T * N * in; i++)
            dprev[i] = (ev){ 0, 0 };
        for (size_t t = T; t-- > 0;) {
            for (size_t n = 0; n < N; n++) {
                for (size_t j = 0; j < H; j++)
                    dht[j] = add(dseq[(t * N + n) * H + j], dh[n * H + j]);
                fn(b, k, t, n, dht, di, dg, dhn + n * H);
                const ev *hp = t ? hk + ((t - 1) * N + n) * H : NULL;
                ev *dx = dprev + (t * N + n) * in;
                for (size_t r = 0; r < GH; r++) {
                    edp[o.b_ih + r] += di[r].e;
                    edp[o.b_hh + r] += dg[r].e;
                    for (size_t i = 0; i < in; i++) {
                        double xv = k == 0 ? x[(t * N + n) * in + i] : b->h[(k - 1) * S + (t * N + n) * in + i].v;
                        double xe = k == 0 ? 0 : b->h[(k - 1) * S + (t * N + n) * in + i].e;
                        edp[o.w_ih + r * in + i] += ct_ref_perr16(b->u, b->s, di[r].v, di[r].e, xv, xe);
                        dx[i].v += di[r].v * wih[r * in + i];
                        dx[i].e += ct_ref_perr16(b->u, b->s, di[r].v, di[r].e, wih[r * in + i], 0);
                    }
                    for (size_t i = 0; hp && i < H; i++) {
                        edp[o.w_hh + r * H + i] += ct_ref_perr16(b->u, b->s, dg[r].v, dg[r].e, hp[i].v, hp[i].e);
                        dhn[n * H + i].v += dg[r].v * whh[r * H + i];
                        dhn[n * H + i].e += ct_ref_perr16(b->u, b->s, dg[r].v, dg[r].e, whh[r * H + i], 0);
                    }
                }
            }
            for (size_t i = 0; i < N * H; i++)
                dh[i] = dhn[i];
        }
        for (size_t i = 0; i < T * N * in; i++) {
            if (k > 0)
                dseq[i] = dprev[i];
            else if (edx)
                edx[i] = dprev[i].e;
        }
    }
    free(dseq);
    free(dprev);
    free(di);
    free(dh);
    return st;
}

/* the forward's outputs' bounds: ey the top layer's h, ehn each layer's
 * last h, ecn (the LSTM) each layer's last aux */
static void outputs(const bnd *b, double *ey, double *ehn, double *ecn)
{
    size_t NH = (size_t)b->d->N * (size_t)b->d->hidden, S = (size_t)b->d->T * NH, L = (size_t)b->d->layers;
    for (size_t i = 0; ey && i < S; i++)
        ey[i] = b->h[(L - 1) * S + i].e;
    for (size_t k = 0; k < L; k++)
        for (size_t i = 0; i < NH; i++) {
            if (ehn)
                ehn[k * NH + i] = b->h[k * S + S - NH + i].e;
            if (ecn)
                ecn[k * NH + i] = b->aux[k * S + S - NH + i].e;
        }
}

static int bound(bnd *b, cell_fwd ff, cell_bwd fb, size_t np, double *ey, double *ehn, double *ecn, double *edx,
                 double *edp, const double *dy, const double *x, const double *params)
{
    for (size_t i = 0; i < np; i++)
        edp[i] = 0;
    int st = forward(b, ff, x, params);
    if (!st) {
        outputs(b, ey, ehn, ecn);
        b->dc = malloc((size_t)b->d->N * (size_t)b->d->hidden * sizeof(ev));
        st = b->dc ? backward(b, fb, edx, edp, dy, x, params) : CT_ERR_NO_MEMORY;
    }
    free(b->gates);
    free(b->aux);
    free(b->h);
    free(b->dc);
    return st;
}

int ct_ref_lstm_bound16(const ct_lstm_desc *d, double u, double s, double *ey, double *ehn, double *ecn,
                        double *edx, double *edp, const double *dy, const double *x, const double *params)
{
    bnd b = { d, 4, u, s, NULL, NULL, NULL, NULL };
    return bound(&b, lstm_fwd, lstm_bwd, ct_lstm_param_count(d), ey, ehn, ecn, edx, edp, dy, x, params);
}

int ct_ref_gru_bound16(const ct_gru_desc *d, double u, double s, double *ey, double *ehn, double *edx,
                       double *edp, const double *dy, const double *x, const double *params)
{
    bnd b = { d, 3, u, s, NULL, NULL, NULL, NULL };
    return bound(&b, gru_fwd, gru_bwd, ct_gru_param_count(d), ey, ehn, NULL, edx, edp, dy, x, params);
}
