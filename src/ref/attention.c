/*
 * attention.c - reference multi-head self-attention, in double, written
 * as the math: projections, per-(sample, head) scores, masked softmax,
 * weighted values, output projection; the backward by the chain rule.
 */
#include <math.h>
#include <stdlib.h>

#include "cltrain/common.h"
#include "ref/attention.h"

/* The forward's intermediates: qkv (T, N, 3E), p (N, H, T, T), o (T, N, E). */
typedef struct fwd {
    double *qkv, *p, *o;
} fwd;

static void fwd_free(fwd *f)
{
    free(f->qkv);
    free(f->p);
    free(f->o);
}

/* y (R, out) = x (R, in) W^T (W (out, in)) + b (out) */
static void linear(double *y, const double *x, const double *W, const double *b, size_t R, size_t in,
                   size_t out)
{
    for (size_t r = 0; r < R; r++)
        for (size_t j = 0; j < out; j++) {
            double s = b[j];
            for (size_t i = 0; i < in; i++)
                s += x[r * in + i] * W[j * in + i];
            y[r * out + j] = s;
        }
}

/* dx (R, in) = dy W (unless NULL); dW += dy^T x; db += column sums of dy */
static void linear_back(double *dx, double *dW, double *db, const double *dy, const double *x,
                        const double *W, size_t R, size_t in, size_t out)
{
    for (size_t r = 0; r < R; r++)
        for (size_t j = 0; j < out; j++) {
            double g = dy[r * out + j];
            db[j] += g;
            for (size_t i = 0; i < in; i++)
                dW[j * in + i] += g * x[r * in + i];
        }
    if (dx)
        for (size_t r = 0; r < R; r++)
            for (size_t i = 0; i < in; i++) {
                double s = 0;
                for (size_t j = 0; j < out; j++)
                    s += dy[r * out + j] * W[j * in + i];
                dx[r * in + i] = s;
            }
}

/* keys query i sees */
static size_t keys(const ct_attention_desc *d, size_t i)
{
    return d->causal ? i + 1 : d->T;
}

static int forward(const ct_attention_desc *d, fwd *f, const double *x, const double *w)
{
    size_t T = d->T, N = d->N, E = d->E, H = d->H, D = E / H;
    f->qkv = malloc(3 * T * N * E * sizeof(double));
    f->p = calloc(N * H * T * T, sizeof(double));
    f->o = malloc(T * N * E * sizeof(double));
    if (!f->qkv || !f->p || !f->o)
        return CT_ERR_NO_MEMORY;
    double scale = 1.0 / sqrt((double)D);
    linear(f->qkv, x, w, w + 3 * E * E, T * N, E, 3 * E);
    for (size_t n = 0; n < N; n++)
        for (size_t h = 0; h < H; h++)
            for (size_t i = 0; i < T; i++) {
                double *row = f->p + ((n * H + h) * T + i) * T;
                const double *q = f->qkv + (i * N + n) * 3 * E + h * D;
                double m = -INFINITY, s = 0;
                for (size_t j = 0; j < keys(d, i); j++) {
                    const double *k = f->qkv + (j * N + n) * 3 * E + E + h * D;
                    double dot = 0;
                    for (size_t e = 0; e < D; e++)
                        dot += q[e] * k[e];
                    row[j] = dot * scale;
                    m = fmax(m, row[j]);
                }
                for (size_t j = 0; j < keys(d, i); j++)
                    s += row[j] = exp(row[j] - m);
                for (size_t j = 0; j < keys(d, i); j++)
                    row[j] /= s;
                double *o = f->o + (i * N + n) * E + h * D;
                for (size_t e = 0; e < D; e++) {
                    double acc = 0;
                    for (size_t j = 0; j < keys(d, i); j++)
                        acc += row[j] * f->qkv[(j * N + n) * 3 * E + 2 * E + h * D + e];
                    o[e] = acc;
                }
            }
    return CT_OK;
}

int ct_ref_attention_forward(const ct_attention_desc *d, double *y, double *p, const double *x,
                             const double *w)
{
    fwd f = { NULL, NULL, NULL };
    int st = forward(d, &f, x, w);
    if (!st) {
        size_t E = d->E;
        linear(y, f.o, w + 3 * E * E + 3 * E, w + 4 * E * E + 3 * E, d->T * d->N, E, E);
        for (size_t i = 0; p && i < d->N * d->H * d->T * d->T; i++)
            p[i] = f.p[i];
    }
    fwd_free(&f);
    return st;
}

int ct_ref_attention_backward(const ct_attention_desc *d, double *dx, double *dw, const double *dy,
                              const double *x, const double *w)
{
    size_t T = d->T, N = d->N, E = d->E, H = d->H, D = E / H;
    fwd f = { NULL, NULL, NULL };
    double *dout = malloc(T * N * E * sizeof(double));
    double *dqkv = calloc(3 * T * N * E, sizeof(double)), *dp = malloc(T * sizeof(double));
    int st = forward(d, &f, x, w);
    if (!st && (!dout || !dqkv || !dp))
        st = CT_ERR_NO_MEMORY;
    if (st)
        goto done;
    double scale = 1.0 / sqrt((double)D);
    linear_back(dout, dw + 3 * E * E + 3 * E, dw + 4 * E * E + 3 * E, dy, f.o, w + 3 * E * E + 3 * E,
                T * N, E, E);
    for (size_t n = 0; n < N; n++)
        for (size_t h = 0; h < H; h++)
            for (size_t i = 0; i < T; i++) {
                const double *row = f.p + ((n * H + h) * T + i) * T;
                const double *g = dout + (i * N + n) * E + h * D;
                size_t L = keys(d, i);
                double dot = 0;
                for (size_t j = 0; j < L; j++) {
                    const double *v = f.qkv + (j * N + n) * 3 * E + 2 * E + h * D;
                    double *dv = dqkv + (j * N + n) * 3 * E + 2 * E + h * D;
                    dp[j] = 0;
                    for (size_t e = 0; e < D; e++) {
                        dp[j] += g[e] * v[e];
                        dv[e] += row[j] * g[e];
                    }
                    dot += dp[j] * row[j];
                }
                const double *q = f.qkv + (i * N + n) * 3 * E + h * D;
                double *dq = dqkv + (i * N + n) * 3 * E + h * D;
                for (size_t j = 0; j < L; j++) {
                    double ds = row[j] * (dp[j] - dot) * scale;
                    const double *k = f.qkv + (j * N + n) * 3 * E + E + h * D;
                    double *dk = dqkv + (j * N + n) * 3 * E + E + h * D;
                    for (size_t e = 0; e < D; e++) {
                        dq[e] += ds * k[e];
                        dk[e] += ds * q[e];
                    }
                }
            }
    linear_back(dx, dw, dw + 3 * E * E, dqkv, x, w, T * N, E, 3 * E);
done:
    fwd_free(&f);
    free(dout);
    free(dqkv);
    free(dp);
    return st;
}
