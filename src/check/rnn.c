/*
 * rnn.c - the recurrent families' shared check pieces (rnn.h).
 */
#include "check/rnn.h"

#include <math.h>
#include <stdlib.h>

#include "ops/gru.h"
#include "ops/lstm.h"
#include "ref/rnn_bound.h"

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

int ck_rnn_bound16(ct_precision p, const ct_rnn_desc *d, int G, const double *dy, const double *x,
                   const double *params, double *b16)
{
    size_t ny = (size_t)d->T * (size_t)d->N * (size_t)d->hidden, nx = (size_t)d->T * (size_t)d->N * (size_t)d->input;
    size_t ns = (size_t)d->layers * (size_t)d->N * (size_t)d->hidden;
    size_t np = G == 4 ? ct_lstm_param_count(d) : ct_gru_param_count(d), no = G == 4 ? 5 : 4;
    for (size_t i = 0; i < no; i++)
        b16[i] = 0;
    if (p == CT_PRECISION_FP32)
        return CT_OK;
    double *ey = malloc((ny + 2 * ns + nx + np) * sizeof(double)), *ehn = ey + ny, *ecn = ehn + ns;
    double *edx = ecn + ns, *edp = edx + nx;
    if (!ey)
        return CT_ERR_NO_MEMORY;
    int st = G == 4 ? ct_ref_lstm_bound16(d, ck_prec_u(p), ck_prec_sub(p), ey, ehn, ecn, edx, edp, dy, x, params)
                    : ct_ref_gru_bound16(d, ck_prec_u(p), ck_prec_sub(p), ey, ehn, edx, edp, dy, x, params);
    if (!st) {
        const double *e[5] = { ey, ehn, ecn, edx, edp };
        size_t n[5] = { ny, ns, ns, nx, np };
        for (size_t i = 0, o = 0; i < 5; i++)
            if (G == 4 || i != 2)
                b16[o++] = ck_amax(e[i], n[i]);
    }
    free(ey);
    return st;
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

typedef struct rnn_bench {
    ct_context *ctx;
    const ck_rnn_family *f;
    const ct_rnn_desc *d;
    ct_buf y, x, params, ws, dy, dx, dparams;
} rnn_bench;

static int bench_run(void *user)
{
    rnn_bench *b = user;
    int st = b->f->forward(b->ctx, b->d, b->y, b->x, b->params, b->ws);
    return st ? st : b->f->backward(b->ctx, b->d, b->dx, b->dparams, b->dy, b->x, b->params, b->ws);
}

static void bench(ct_check *c, const ck_rnn_family *f)
{
    /* the seed benchmark's LSTM */
    ct_rnn_desc d = { 32, 128, 256, 256, 2 };
    ck_case(c, "bench T=32 N=128 input=256 hidden=256 layers=2");
    size_t T = 32, N = 128, H = 256, in = 256, S = T * N * H, G = (size_t)f->G;
    size_t np = ct_rnn_layer_offsets(&d, f->G, d.layers).w_ih, nws = f->workspace_size(&d) / sizeof(float);
    rnn_bench b = { ck_ctx(c), f, &d, ck_dev_out(c, S), ck_dev_const(c, T * N * in, 0.5),
                    ck_dev_const(c, np, 0.01), ck_dev_out(c, nws), ck_dev_const(c, S, 1),
                    ck_dev_out(c, T * N * in), ck_dev_const(c, np, 0) };
    /* forward 2 T N G H (in + H) per layer; the backward twice that (dx and
     * dW_ih, dh and dW_hh) */
    double flops = 3.0 * 2.0 * (double)(T * N * G * H) * (double)(in + H + H + H);
    /* parameters read 3 times and dparams updated; the workspace (saved
     * activations, scratch) written and read; x, y, dx, dy */
    double bytes = 4.0 * (5.0 * (double)np + 2.0 * (double)nws + 2.0 * (double)(T * N * in) + 2.0 * (double)S);
    if (!ck_failed(c))
        ck_bench(c, "T=32 N=128 256->256 x2", flops, bytes, bench_run, &b);
    ck_case_end(c);
}

void ck_rnn_run(ct_check *c, const ck_rnn_family *f)
{
    static const ct_rnn_desc fixed[] = {
        { 1, 1, 1, 1, 1 }, { 1, 3, 2, 5, 2 }, { 5, 1, 3, 1, 3 }, { 4, 3, 5, 6, 2 },
        /* hidden past two 16-unit vectors of the host steps (lstm_host.c, gru_host.c), ragged */
        { 3, 4, 6, 37, 2 },
        /* 253 rows: the bias gradients in slices of 16 rows */
        { 23, 11, 6, 9, 2 },
    };
    /* simulators (never the host steps; 23 time steps were most of their
     * time): hidden past one vector, and 18 rows (two slices) */
    static const ct_rnn_desc smaller[] = { { 3, 4, 6, 17, 2 }, { 3, 6, 6, 9, 2 } };
    for (size_t i = 0; i < CT_ARRAY_LEN(fixed) && !ck_failed(c); i++) {
        f->one_case(c, ck_small(c) && i >= 4 ? &smaller[i - 4] : &fixed[i]);
        ck_case_end(c);
    }
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        ct_rnn_desc d = { ck_dim(c, 9), ck_dim(c, 7), ck_dim(c, 17), ck_dim(c, 13), ck_int(c, 1, 3) };
        f->one_case(c, &d);
        ck_case_end(c);
    }
    /* the deepest stack the layer types take */
    ct_rnn_desc deep = { 3, 2, 5, 7, 4 };
    if (!ck_failed(c))
        f->one_case(c, &deep);
    ck_case_end(c);
    if (ck_benchmarking(c) && !ck_failed(c))
        bench(c, f);
}
