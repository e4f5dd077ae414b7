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

/* ---- what 16-bit operands add (ct_ref_attention_bound16) ---- */

typedef struct rnd {
    double u, s; /* relative and absolute (subnormal) rounding error */
} rnd;

static double perr(const rnd *r, double a, double ea, double b, double eb)
{
    return ct_ref_perr16(r->u, r->s, a, ea, b, eb);
}

/* e, the bound of v, after v is stored in 16 bits (stored), else e */
static double st16(const rnd *r, int stored, double v, double e)
{
    return stored ? e + r->u * (fabs(v) + e) + r->s : e;
}

/* e (R, out) += the bound of x (R, in) W^T, x within ex (NULL: exact), W exact */
static void linear_err(const rnd *r, double *e, const double *x, const double *ex, const double *W, size_t R,
                       size_t in, size_t out)
{
    for (size_t i = 0; i < R; i++)
        for (size_t j = 0; j < out; j++) {
            double s = 0;
            for (size_t k = 0; k < in; k++)
                s += perr(r, x[i * in + k], ex ? ex[i * in + k] : 0, W[j * in + k], 0);
            e[i * out + j] += s;
        }
}

/* edx (R, in) = the bound of dy W (dy within edy, NULL: exact); edW (out, in)
 * += that of dy^T x (x within ex, NULL: exact); edb (out) += sum of edy
 * (float32 column sums of the device's dy) */
static void linear_back_err(const rnd *r, double *edx, double *edW, double *edb, const double *dy, const double *edy,
                            const double *x, const double *ex, const double *W, size_t R, size_t in, size_t out)
{
    for (size_t j = 0; j < out; j++)
        for (size_t i = 0; i < in; i++) {
            double s = 0;
            for (size_t q = 0; q < R; q++)
                s += perr(r, dy[q * out + j], edy ? edy[q * out + j] : 0, x[q * in + i], ex ? ex[q * in + i] : 0);
            edW[j * in + i] += s;
        }
    for (size_t q = 0; edy && q < R; q++)
        for (size_t j = 0; j < out; j++)
            edb[j] += edy[q * out + j];
    for (size_t q = 0; edx && q < R; q++)
        for (size_t i = 0; i < in; i++) {
            double s = 0;
            for (size_t j = 0; j < out; j++)
                s += perr(r, dy[q * out + j], edy ? edy[q * out + j] : 0, W[j * in + i], 0);
            edx[q * in + i] = s;
        }
}

int ct_ref_attention_bound16(const ct_attention_desc *d, double u, double s, int stored, double *ey,
                             double *edx, double *edw, const double *dy, const double *x, const double *w)
{
    size_t T = d->T, N = d->N, E = d->E, H = d->H, D = E / H, TN = T * N;
    const rnd r = { u, s };
    fwd f = { NULL, NULL, NULL };
    double *eqkv = calloc(3 * TN * E, sizeof(double)), *ep = calloc(N * H * T * T, sizeof(double));
    double *eo = calloc(TN * E, sizeof(double)), *dout = malloc(TN * E * sizeof(double));
    double *edout = calloc(TN * E, sizeof(double)), *dqkv = calloc(3 * TN * E, sizeof(double));
    double *edqkv = calloc(3 * TN * E, sizeof(double)), *dp = malloc(T * sizeof(double));
    double *edp = calloc(T, sizeof(double)), *eds = calloc(T, sizeof(double)), *ds = malloc(T * sizeof(double));
    int st = forward(d, &f, x, w);
    if (!st && (!eqkv || !ep || !eo || !dout || !edout || !dqkv || !edqkv || !dp || !edp || !eds || !ds))
        st = CT_ERR_NO_MEMORY;
    if (st)
        goto done;
    double scale = 1.0 / sqrt((double)D);
    const double *w_out = w + 3 * E * E + 3 * E;
    double *dw_out = edw + 3 * E * E + 3 * E;
    for (size_t i = 0; i < ct_attention_params(d); i++)
        edw[i] = 0;
    /* forward: qkv, then per (sample, head) scores, softmax, context */
    linear_err(&r, eqkv, x, NULL, w, TN, E, 3 * E);
    for (size_t i = 0; i < 3 * TN * E; i++)
        eqkv[i] = st16(&r, stored, f.qkv[i], eqkv[i]);
    for (size_t n = 0; n < N; n++)
        for (size_t h = 0; h < H; h++)
            for (size_t i = 0; i < T; i++) {
                const double *row = f.p + ((n * H + h) * T + i) * T;
                double *erow = ep + ((n * H + h) * T + i) * T, emax = 0;
                size_t qo = (i * N + n) * 3 * E + h * D;
                for (size_t j = 0; j < keys(d, i); j++) {
                    size_t ko = (j * N + n) * 3 * E + E + h * D;
                    double e = 0, sc = 0;
                    for (size_t k = 0; k < D; k++) {
                        e += perr(&r, f.qkv[qo + k], eqkv[qo + k], f.qkv[ko + k], eqkv[ko + k]);
                        sc += f.qkv[qo + k] * f.qkv[ko + k];
                    }
                    erow[j] = st16(&r, stored, scale * sc, scale * e);
                    emax = fmax(emax, erow[j]);
                }
                /* scores within e_j: each probability within a factor
                 * exp(+-(e_i + max e)) of the exact one */
                for (size_t j = 0; j < keys(d, i); j++)
                    erow[j] = st16(&r, stored, row[j], row[j] * expm1(erow[j] + emax));
                for (size_t k = 0; k < D; k++) {
                    double e = 0;
                    for (size_t j = 0; j < keys(d, i); j++) {
                        size_t vo = (j * N + n) * 3 * E + 2 * E + h * D + k;
                        e += perr(&r, row[j], erow[j], f.qkv[vo], eqkv[vo]);
                    }
                    size_t oo = (i * N + n) * E + h * D + k;
                    eo[oo] = st16(&r, stored, f.o[oo], e);
                }
            }
    if (ey) {
        for (size_t i = 0; i < TN * E; i++)
            ey[i] = 0;
        linear_err(&r, ey, f.o, eo, w_out, TN, E, E);
    }
    /* backward: do = dy W_out (and dW_out from o), then per head dP, dv, the
     * softmax's backward (float32, no rounding), dq and dk, then dx, dW_in */
    for (size_t q = 0; q < TN; q++) /* dout's exact values */
        for (size_t i = 0; i < E; i++) {
            double a = 0;
            for (size_t j = 0; j < E; j++)
                a += dy[q * E + j] * w_out[j * E + i];
            dout[q * E + i] = a;
        }
    linear_back_err(&r, edout, dw_out, dw_out + E * E, dy, NULL, f.o, eo, w_out, TN, E, E);
    for (size_t i = 0; i < TN * E; i++)
        edout[i] = st16(&r, stored, dout[i], edout[i]);
    for (size_t n = 0; n < N; n++)
        for (size_t h = 0; h < H; h++)
            for (size_t i = 0; i < T; i++) {
                const double *row = f.p + ((n * H + h) * T + i) * T, *erow = ep + ((n * H + h) * T + i) * T;
                size_t go = (i * N + n) * E + h * D, L = keys(d, i);
                double dot = 0, edot = 0;
                for (size_t j = 0; j < L; j++) {
                    size_t vo = (j * N + n) * 3 * E + 2 * E + h * D;
                    dp[j] = edp[j] = 0;
                    for (size_t k = 0; k < D; k++) {
                        dp[j] += dout[go + k] * f.qkv[vo + k];
                        edp[j] += perr(&r, dout[go + k], edout[go + k], f.qkv[vo + k], eqkv[vo + k]);
                        edqkv[vo + k] += perr(&r, row[j], erow[j], dout[go + k], edout[go + k]);
                    }
                    edp[j] = st16(&r, stored, dp[j], edp[j]);
                    dot += dp[j] * row[j];
                    edot += edp[j] * row[j] + fabs(dp[j]) * erow[j] + edp[j] * erow[j];
                }
                for (size_t j = 0; j < L; j++) {
                    ds[j] = row[j] * (dp[j] - dot);
                    eds[j] = st16(&r, stored, ds[j],
                                  erow[j] * fabs(dp[j] - dot) + (row[j] + erow[j]) * (edp[j] + edot));
                }
                size_t qo = (i * N + n) * 3 * E + h * D;
                for (size_t j = 0; j < L; j++) {
                    size_t ko = (j * N + n) * 3 * E + E + h * D;
                    for (size_t k = 0; k < D; k++) {
                        edqkv[qo + k] += scale * perr(&r, ds[j], eds[j], f.qkv[ko + k], eqkv[ko + k]);
                        edqkv[ko + k] += scale * perr(&r, ds[j], eds[j], f.qkv[qo + k], eqkv[qo + k]);
                        dqkv[qo + k] += scale * ds[j] * f.qkv[ko + k];
                        dqkv[ko + k] += scale * ds[j] * f.qkv[qo + k];
                    }
                }
                for (size_t j = 0; j < L; j++) {
                    size_t vo = (j * N + n) * 3 * E + 2 * E + h * D;
                    for (size_t k = 0; k < D; k++)
                        dqkv[vo + k] += row[j] * dout[go + k];
                }
            }
    for (size_t i = 0; i < 3 * TN * E; i++)
        edqkv[i] = st16(&r, stored, dqkv[i], edqkv[i]);
    linear_back_err(&r, edx, edw, edw + 3 * E * E, dqkv, edqkv, x, NULL, w, TN, E, 3 * E);
done:
    fwd_free(&f);
    free(eqkv);
    free(ep);
    free(eo);
    free(dout);
    free(edout);
    free(dqkv);
    free(edqkv);
    free(dp);
    free(edp);
    free(eds);
    free(ds);
    return st;
}
