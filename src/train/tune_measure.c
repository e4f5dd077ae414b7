/*
 * tune_measure.c - one GEMM shape run by one candidate, checked and timed
 * (tune_measure.h).
 *
 * The check: A and B hold uniform values in [-1, 1), C starts from random
 * values and has guard floats on both sides. Each candidate runs once with
 * beta 0 and once with beta 0.5 (the two ways products write C); every
 * entry of C must be finite, the guards unchanged, and sampled entries
 * within tol = 8 u k s + 4 u |ref| of a float64 reference, where u = 2^-24
 * and s = sqrt(sum_k (a b)^2 / k), the terms' root mean square. A float32
 * dot product of length k in any order (tiles, k-slices) carries rounding
 * errors of about sqrt(k) u s per partial sum added, so well under k u s;
 * 8 k u s leaves that margin eightfold. A term dropped, doubled or read
 * from the wrong place moves an entry by about s, which exceeds the
 * tolerance while 8 k u < 1 (k below two million).
 *
 * An implicit-GEMM convolution's product is checked the same way on its
 * own tensors (x, w, dy in NCHW), each sampled output entry's reference
 * summed over the taps, channels or positions its product sums over; the
 * weight gradient accumulates into what its buffer held (beta 1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "ops/tune_file.h"
#include "ops/conv_igemm.h"
#include "train/tune_measure.h"

#define GUARD 64          /* floats either side of C */
#define GUARD_VALUE 1234.5f
#define SAMPLES 192
#define ALPHA 1.0f

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static float unit(uint64_t *s)
{
    return (float)((double)(mix(s) >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}

void tm_free(tm_bufs *b)
{
    ct_buffer_release(&b->a);
    ct_buffer_release(&b->b);
    ct_buffer_release(&b->c);
    ct_buffer_release(&b->d);
    free(b->hd);
    free(b->ha);
    free(b->hb);
    free(b->hc0);
    free(b->hc);
    free(b->samples);
    free(b->ref0);
    memset(b, 0, sizeof *b);
}

/* op(A)[i][p] and op(B)[p][j] */
static double a_at(const tm_shape *s, const tm_bufs *b, size_t i, size_t p)
{
    return s->ta ? b->ha[p * b->lda + i] : b->ha[i * b->lda + p];
}

static double b_at(const tm_shape *s, const tm_bufs *b, size_t p, size_t j)
{
    return s->tb ? b->hb[j * b->ldb + p] : b->hb[p * b->ldb + j];
}

enum { G_N, G_CI, G_H, G_W, G_CO, G_KH, G_KW, G_SH, G_SW, G_PH, G_PW, G_DH, G_DW, G_OH, G_OW };

static ct_conv2d_desc conv_desc(const tm_shape *s)
{
    const int *g = s->geom;
    return (ct_conv2d_desc){ g[G_N], g[G_CI], g[G_H], g[G_W], g[G_CO], g[G_KH], g[G_KW],
                             g[G_SH], g[G_SW], g[G_PH], g[G_PW], g[G_DH], g[G_DW] };
}

/* The sum one output entry of a convolution's product adds up (its terms'
 * count in *k, their sum of squares in *sq) */
static double conv_entry(const tm_shape *s, const tm_bufs *b, size_t idx, double *sq, size_t *k)
{
    const int *g = s->geom;
    size_t N = g[G_N], CI = g[G_CI], H = g[G_H], W = g[G_W], CO = g[G_CO], KH = g[G_KH], KW = g[G_KW],
           OH = g[G_OH], OW = g[G_OW];
    const float *x = b->ha, *w = b->hb, *dy = b->hd;
    double acc = 0;
    *sq = 0;
    *k = 0;
#define X(n, ci, ih, iw) ((ih) < 0 || (ih) >= (long)H || (iw) < 0 || (iw) >= (long)W \
                              ? 0.0 : (double)x[(((n) * CI + (ci)) * H + (size_t)(ih)) * W + (size_t)(iw)])
    if (s->conv == 1) { /* y (n, co, oh, ow) */
        size_t ow = idx % OW, oh = idx / OW % OH, co = idx / (OW * OH) % CO, n = idx / (OW * OH * CO);
        for (size_t ci = 0; ci < CI; ci++)
            for (size_t kh = 0; kh < KH; kh++)
                for (size_t kw = 0; kw < KW; kw++) {
                    long ih = (long)(oh * g[G_SH] + kh * g[G_DH]) - g[G_PH];
                    long iw = (long)(ow * g[G_SW] + kw * g[G_DW]) - g[G_PW];
                    double t = X(n, ci, ih, iw) * w[((co * CI + ci) * KH + kh) * KW + kw];
                    acc += t, *sq += t * t, ++*k;
                }
    } else if (s->conv == 2) { /* dx (n, ci, ih, iw) */
        size_t iw = idx % W, ih = idx / W % H, ci = idx / (W * H) % CI, n = idx / (W * H * CI);
        for (size_t co = 0; co < CO; co++)
            for (size_t kh = 0; kh < KH; kh++)
                for (size_t kw = 0; kw < KW; kw++) {
                    long ph = (long)ih + g[G_PH] - (long)(kh * g[G_DH]), pw = (long)iw + g[G_PW] - (long)(kw * g[G_DW]);
                    ++*k;
                    if (ph < 0 || pw < 0 || ph % g[G_SH] || pw % g[G_SW] || ph / g[G_SH] >= (long)OH ||
                        pw / g[G_SW] >= (long)OW)
                        continue;
                    double t = (double)w[((co * CI + ci) * KH + kh) * KW + kw] *
                               dy[((n * CO + co) * OH + (size_t)(ph / g[G_SH])) * OW + (size_t)(pw / g[G_SW])];
                    acc += t, *sq += t * t;
                }
    } else { /* dw (co, ci, kh, kw) */
        size_t kw = idx % KW, kh = idx / KW % KH, ci = idx / (KW * KH) % CI, co = idx / (KW * KH * CI);
        for (size_t n = 0; n < N; n++)
            for (size_t oh = 0; oh < OH; oh++)
                for (size_t ow = 0; ow < OW; ow++) {
                    long ih = (long)(oh * g[G_SH] + kh * g[G_DH]) - g[G_PH];
                    long iw = (long)(ow * g[G_SW] + kw * g[G_DW]) - g[G_PW];
                    double t = X(n, ci, ih, iw) * dy[((n * CO + co) * OH + oh) * OW + ow];
                    acc += t, *sq += t * t, ++*k;
                }
    }
#undef X
    return acc;
}

static int conv_alloc(ct_context *ctx, const tm_shape *s, uint64_t seed, tm_bufs *b)
{
    const int *g = s->geom;
    for (int i = 0; i < 15; i++)
        if (g[i] < (i == G_PH || i == G_PW ? 0 : 1))
            return ct_fail(ctx, CT_ERR_INVALID_ARG, "tune: a convolution with geometry field %d = %d", i, g[i]);
    /* the geometry must give the product's shape (a table's entry may come from anywhere) */
    ct_conv2d_desc d = conv_desc(s);
    int oh = 0, ow = 0;
    size_t nx = (size_t)g[G_N] * g[G_CI] * g[G_H] * g[G_W], nw = (size_t)g[G_CO] * g[G_CI] * g[G_KH] * g[G_KW],
           ny = (size_t)g[G_N] * g[G_CO] * g[G_OH] * g[G_OW];
    size_t taps = (size_t)g[G_KH] * g[G_KW], pos = (size_t)g[G_N] * g[G_OH] * g[G_OW];
    size_t want[3][3] = { { (size_t)g[G_CO], pos, g[G_CI] * taps },
                          { (size_t)g[G_CI], nx / g[G_CI], g[G_CO] * taps },
                          { (size_t)g[G_CO], g[G_CI] * taps, pos } };
    if (ct_conv2d_out_shape(NULL, &d, &oh, &ow) || oh != g[G_OH] || ow != g[G_OW] || s->conv < 1 || s->conv > 3 ||
        want[s->conv - 1][0] != s->m || want[s->conv - 1][1] != s->n || want[s->conv - 1][2] != s->k ||
        nx > (1u << 28) || nw > (1u << 28) || ny > (1u << 28))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "tune: a convolution's geometry does not give its %zux%zux%zu "
                       "product (or is over 2^28 elements)", s->m, s->n, s->k);
    size_t nout = s->conv == 1 ? ny : s->conv == 2 ? nx : nw;
    b->c_off = GUARD;
    b->nc = nout + 2 * GUARD;
    b->ha = malloc(nx * sizeof(float));
    b->hb = malloc(nw * sizeof(float));
    b->hd = malloc(ny * sizeof(float));
    b->hc0 = malloc(b->nc * sizeof(float));
    b->hc = malloc(b->nc * sizeof(float));
    b->samples = malloc(SAMPLES * sizeof *b->samples);
    b->ref0 = malloc(4 * SAMPLES * sizeof *b->ref0);
    if (!b->ha || !b->hb || !b->hd || !b->hc0 || !b->hc || !b->samples || !b->ref0) {
        tm_free(b);
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "tune: out of host memory for a convolution");
    }
    b->ref5 = b->ref0 + SAMPLES, b->tol0 = b->ref0 + 2 * SAMPLES, b->tol5 = b->ref0 + 3 * SAMPLES;
    uint64_t r = seed;
    for (size_t i = 0; i < nx; i++)
        b->ha[i] = unit(&r);
    for (size_t i = 0; i < nw; i++)
        b->hb[i] = unit(&r);
    for (size_t i = 0; i < ny; i++)
        b->hd[i] = unit(&r);
    for (size_t i = 0; i < b->nc; i++)
        b->hc0[i] = i < GUARD || i >= GUARD + nout ? GUARD_VALUE : unit(&r);
    b->nsamples = nout < SAMPLES ? nout : SAMPLES;
    const double u = 1.0 / 16777216.0;
    for (size_t q = 0; q < b->nsamples; q++) {
        b->samples[q] = nout <= SAMPLES ? q : q == 0 ? 0 : q == 1 ? nout - 1 : (size_t)(mix(&r) % nout);
        double sq;
        size_t k;
        double acc = conv_entry(s, b, b->samples[q], &sq, &k);
        double rms = k ? sqrt(sq / (double)k) : 0;
        double c0 = s->conv == 3 ? b->hc0[GUARD + b->samples[q]] : 0.0; /* dw accumulates */
        b->ref0[q] = acc + c0;
        b->tol0[q] = 8.0 * u * (double)k * rms + 4.0 * u * (fabs(acc) + fabs(c0)) + 1e-30;
    }
    int st;
    if ((st = ct_buffer_create(ctx, nx * sizeof(float), &b->a)) ||
        (st = ct_buffer_create(ctx, nw * sizeof(float), &b->b)) ||
        (st = ct_buffer_create(ctx, ny * sizeof(float), &b->d)) ||
        (st = ct_buffer_create(ctx, b->nc * sizeof(float), &b->c)) ||
        (st = ct_buffer_write(ctx, b->a, 0, nx * sizeof(float), b->ha)) ||
        (st = ct_buffer_write(ctx, b->b, 0, nw * sizeof(float), b->hb)) ||
        (st = ct_buffer_write(ctx, b->d, 0, ny * sizeof(float), b->hd))) {
        tm_free(b);
        return st;
    }
    return CT_OK;
}

int tm_alloc(ct_context *ctx, const tm_shape *s, uint64_t seed, tm_bufs *b)
{
    memset(b, 0, sizeof *b);
    if (s->conv)
        return conv_alloc(ctx, s, seed, b);
    if (s->m * s->k > (1u << 28) || s->k * s->n > (1u << 28) || s->m * s->n > (1u << 28) || !s->m || !s->n ||
        !s->k || s->m > 0x7fffffff || s->n > 0x7fffffff || s->k > 0x7fffffff)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "tune: a %zux%zux%zu product is over 2^28 elements an operand, "
                       "too large to tune", s->m, s->n, s->k);
    size_t na = s->m * s->k, nb = s->k * s->n;
    b->lda = s->ta ? s->m : s->k;
    b->ldb = s->tb ? s->k : s->n;
    b->ldc = s->n;
    b->c_off = GUARD;
    b->nc = s->m * s->n + 2 * GUARD;
    b->ha = malloc(na * sizeof(float));
    b->hb = malloc(nb * sizeof(float));
    b->hc0 = malloc(b->nc * sizeof(float));
    b->hc = malloc(b->nc * sizeof(float));
    b->samples = malloc(SAMPLES * sizeof *b->samples);
    b->ref0 = malloc(4 * SAMPLES * sizeof *b->ref0);
    if (!b->ha || !b->hb || !b->hc0 || !b->hc || !b->samples || !b->ref0) {
        tm_free(b);
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "tune: out of host memory for a %zu x %zu x %zu product", s->m,
                       s->n, s->k);
    }
    b->ref5 = b->ref0 + SAMPLES, b->tol0 = b->ref0 + 2 * SAMPLES, b->tol5 = b->ref0 + 3 * SAMPLES;
    uint64_t r = seed;
    for (size_t i = 0; i < na; i++)
        b->ha[i] = unit(&r);
    for (size_t i = 0; i < nb; i++)
        b->hb[i] = unit(&r);
    for (size_t i = 0; i < b->nc; i++)
        b->hc0[i] = i < GUARD || i >= GUARD + s->m * s->n ? GUARD_VALUE : unit(&r);
    /* the corners, then random entries */
    size_t mn = s->m * s->n;
    b->nsamples = mn < SAMPLES ? mn : SAMPLES;
    for (size_t q = 0; q < b->nsamples; q++)
        b->samples[q] = mn <= SAMPLES ? q : q == 0 ? 0 : q == 1 ? mn - 1 : (size_t)(mix(&r) % mn);
    const double u = 1.0 / 16777216.0;
    for (size_t q = 0; q < b->nsamples; q++) {
        size_t i = b->samples[q] / s->n, j = b->samples[q] % s->n;
        double acc = 0, sq = 0;
        for (size_t p = 0; p < s->k; p++) {
            double t = a_at(s, b, i, p) * b_at(s, b, p, j);
            acc += t;
            sq += t * t;
        }
        double rms = s->k ? sqrt(sq / (double)s->k) : 0;
        double c0 = b->hc0[GUARD + b->samples[q]];
        b->ref0[q] = ALPHA * acc;
        b->ref5[q] = ALPHA * acc + 0.5 * c0;
        b->tol0[q] = 8.0 * u * (double)s->k * rms + 4.0 * u * fabs(b->ref0[q]) + 1e-30;
        b->tol5[q] = b->tol0[q] + 4.0 * u * fabs(0.5 * c0);
    }
    int st;
    if ((st = ct_buffer_create(ctx, na * sizeof(float), &b->a)) ||
        (st = ct_buffer_create(ctx, nb * sizeof(float), &b->b)) ||
        (st = ct_buffer_create(ctx, b->nc * sizeof(float), &b->c)) ||
        (st = ct_buffer_write(ctx, b->a, 0, na * sizeof(float), b->ha)) ||
        (st = ct_buffer_write(ctx, b->b, 0, nb * sizeof(float), b->hb))) {
        tm_free(b);
        return st;
    }
    return CT_OK;
}

/* One product with the choice in force; CT_OK or the failure's status */
static int run(ct_context *ctx, const tm_shape *s, tm_bufs *b, const tm_choice *c, float beta)
{
    ctx->gemm_force.pick = c->pick;
    ctx->gemm_force.tiles = c->tiles;
    ctx->gemm_force.splits = c->splits;
    int st;
    if (s->conv) {
        ct_conv2d_desc d = conv_desc(s);
        ct_buf x = { b->a, 0 }, w = { b->b, 0 }, dy = { b->d, 0 }, out = { b->c, b->c_off }, none = { NULL, 0 };
        st = s->conv == 1 ? ct_conv2d_igemm_forward(ctx, &d, s->geom[G_OH], s->geom[G_OW], out, x, w, none)
             : ct_conv2d_igemm_backward(ctx, &d, s->geom[G_OH], s->geom[G_OW], s->conv == 2 ? out : none,
                                        s->conv == 3 ? out : none, dy, x, w);
    } else {
        st = ct_gemm(ctx, s->ta, s->tb, s->m, s->n, s->k, ALPHA, b->a, 0, b->lda, b->b, 0, b->ldb, beta, b->c,
                     b->c_off, b->ldc);
    }
    memset(&ctx->gemm_force, 0, sizeof ctx->gemm_force);
    return st;
}

/* Runs once with beta and checks C; *ok = 0 with why on a wrong result */
static int check_once(ct_context *ctx, const tm_shape *s, tm_bufs *b, const tm_choice *c, float beta, int *ok,
                      char *why, size_t cap)
{
    int st;
    if ((st = ct_buffer_write(ctx, b->c, 0, b->nc * sizeof(float), b->hc0)))
        return st;
    if ((st = run(ctx, s, b, c, beta)) || (st = ct_context_finish(ctx))) {
        *ok = 0;
        snprintf(why, cap, "it failed to run: %s", ct_last_error());
        return CT_OK;
    }
    if ((st = ct_buffer_read(ctx, b->c, 0, b->nc * sizeof(float), b->hc)))
        return st;
    size_t mn = b->nc - 2 * GUARD;
    for (size_t i = 0; i < b->nc; i++) {
        int guard = i < GUARD || i >= GUARD + mn;
        if (guard ? b->hc[i] != GUARD_VALUE : !isfinite(b->hc[i])) {
            *ok = 0;
            if (guard)
                snprintf(why, cap, "it wrote outside C, %s (beta %g)", i < GUARD ? "before it" : "after it",
                         (double)beta);
            else
                snprintf(why, cap, "C[%zu] is %g (beta %g)", i - GUARD, (double)b->hc[i], (double)beta);
            return CT_OK;
        }
    }
    const double *ref = beta != 0.0f ? b->ref5 : b->ref0, *tol = beta != 0.0f ? b->tol5 : b->tol0;
    for (size_t q = 0; q < b->nsamples; q++) {
        double got = b->hc[GUARD + b->samples[q]];
        if (fabs(got - ref[q]) > tol[q]) {
            *ok = 0;
            snprintf(why, cap, "%s[%zu] is %.9g, the float64 reference %.9g (tolerance %.3g, beta %g)",
                     s->conv == 1 ? "y" : s->conv == 2 ? "dx" : s->conv == 3 ? "dw" : "C", b->samples[q], got,
                     ref[q], tol[q], s->conv == 3 ? 1.0 : (double)beta);
            return CT_OK;
        }
    }
    return CT_OK;
}

/* Seconds for n runs back to back and one wait for them */
static int timed(ct_context *ctx, const tm_shape *s, tm_bufs *b, const tm_choice *c, long n, double *sec)
{
    double t0 = ct_now();
    int st = CT_OK;
    for (long i = 0; i < n && !st; i++)
        st = run(ctx, s, b, c, 0.0f);
    if (!st)
        st = ct_context_finish(ctx);
    *sec = ct_now() - t0;
    return st;
}

int tm_measure(ct_context *ctx, const tm_shape *s, tm_bufs *b, const tm_choice *c, double min_seconds,
               double cutoff_ms, double *ms, int *ok, char *why, size_t cap)
{
    *ok = 1;
    *ms = 0;
    if (cap)
        why[0] = '\0';
    int st;
    if ((st = check_once(ctx, s, b, c, 0.0f, ok, why, cap)) || !*ok ||
        (!s->conv && ((st = check_once(ctx, s, b, c, 0.5f, ok, why, cap)) || !*ok)))
        return st;
    /* Timed by slope: R runs then 2R runs, each ended by one wait, the
     * difference over R per run, so the cost of waiting for the queue
     * (milliseconds on some drivers, more than a small product) cancels.
     * One and three runs first size R; three pairs, the median kept. */
    double t1, t3;
    if ((st = timed(ctx, s, b, c, 1, &t1)))
        goto refused;
    if (cutoff_ms > 0 && 1e3 * t1 > cutoff_ms) { /* far slower than the best: no more time on it */
        *ms = 1e3 * t1;
        return CT_OK;
    }
    if ((st = timed(ctx, s, b, c, 3, &t3)))
        goto refused;
    double one = (t3 - t1) / 2.0;
    if (one < 1e-7)
        one = t3 / 3.0 > 1e-7 ? t3 / 3.0 : 1e-7;
    long reps = (long)(min_seconds / 9.0 / one);
    reps = reps < 1 ? 1 : reps > 1000 ? 1000 : reps;
    double t[3];
    for (int r = 0; r < 3; r++) {
        double ta, tb;
        if ((st = timed(ctx, s, b, c, reps, &ta)) || (st = timed(ctx, s, b, c, 2 * reps, &tb)))
            goto refused;
        t[r] = tb > ta ? (tb - ta) / (double)reps : tb / (double)(2 * reps);
    }
    *ms = 1e3 * ct_median(t, 3);
    return CT_OK;
refused:
    *ok = 0;
    snprintf(why, cap, "it failed to run: %s", ct_last_error());
    return CT_OK;
}
