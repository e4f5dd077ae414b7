/*
 * harness.c - the op-check harness: RNG, case-scoped buffers with guard
 * bands and NaN canaries, comparisons, finite differences, benchmarks, and
 * ct_selftest_run over the list in check.h.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "core/half.h"

/* Bit patterns: outputs start as OUT_NAN, output guards hold GUARD_BITS
 * and must survive; input guards are NaN so out-of-bounds reads poison the
 * result. */
#define OUT_NAN 0x7fc0beefu
#define GUARD_BITS 0x7fc0deadu
#define IN_GUARD_NAN 0x7fc0f00du

typedef struct dev_rec {
    cl_mem mem;
    size_t n;
    int act16;  /* elements in the 16-bit storage format (1 bf16, 2 fp16), else float */
} dev_rec;

struct ct_check {
    ct_context *ctx;
    ct_selftest_options opt;
    uint64_t rng;
    ct_selftest_result res;
    char case_desc[256];
    int planted;       /* the planted corruption was applied in this op */
    void **host;
    size_t nhost, caphost;
    dev_rec *dev;
    size_t ndev, capdev;
};

static float bits_f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t f_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* ---- randomness: splitmix64 ---- */

static uint64_t next64(ct_check *c)
{
    uint64_t z = (c->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint32_t ck_u32(ct_check *c)
{
    return (uint32_t)(next64(c) >> 32);
}

double ck_uniform(ct_check *c, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(next64(c) >> 11) * (1.0 / 9007199254740992.0));
}

int ck_int(ct_check *c, int lo, int hi)
{
    if (hi <= lo)
        return lo;
    return lo + (int)(next64(c) % (uint64_t)(hi - lo + 1));
}

int ck_dim(ct_check *c, int hi)
{
    static const int awkward[] = { 3, 7, 13, 17, 31, 33, 63, 65, 127, 129, 255, 257 };
    if (hi <= 1)
        return 1;
    switch (ck_int(c, 0, 9)) {
    case 0: return 1;
    case 1: return hi;
    case 2: {
        int v = awkward[ck_int(c, 0, (int)CT_ARRAY_LEN(awkward) - 1)];
        return v <= hi ? v : ck_int(c, 1, hi);
    }
    default: return ck_int(c, 1, hi);
    }
}

void ck_fill(ct_check *c, double *x, size_t n, double lo, double hi)
{
    for (size_t i = 0; i < n; i++)
        x[i] = ck_uniform(c, lo, hi);
}

void ck_round_f32(double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (double)(float)x[i];
}

/* ---- failures ---- */

static void failf(ct_check *c, const char *fmt, ...) CT_PRINTF(2, 3);
static void failf(ct_check *c, const char *fmt, ...)
{
    if (c->res.passed) {
        char msg[700];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(c->res.message, sizeof c->res.message, "%s [case %s]", msg, c->case_desc);
    }
    c->res.passed = 0;
}

int ck_failed(const ct_check *c)
{
    return !c->res.passed;
}

ct_context *ck_ctx(ct_check *c)
{
    return c->ctx;
}

ct_kernels ck_use_class(ct_check *c, ct_kernels k)
{
    ct_kernels old = ct_context_kernels(c->ctx);
    int st = ct_context_set_kernels(c->ctx, k);
    if (st)
        failf(c, "switching to the %s class failed: %s", ct_kernels_str(k),
              ct_context_last_error(c->ctx));
    return old;
}

int ck_iterations(const ct_check *c)
{
    return c->opt.iterations;
}

int ck_small(const ct_check *c)
{
    return c->opt.small;
}

int ck_finite_diff(const ct_check *c)
{
    return c->opt.finite_diff;
}

int ck_benchmarking(const ct_check *c)
{
    return c->opt.bench;
}

int ck_status(ct_check *c, int status, const char *what)
{
    if (status)
        failf(c, "%s failed: %s (%s)", what, ct_status_str(status), ct_context_last_error(c->ctx));
    return status;
}

/* ---- case scope ---- */

void ck_case(ct_check *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->case_desc, sizeof c->case_desc, fmt, ap);
    va_end(ap);
    c->res.cases++;
}

void ck_case_end(ct_check *c)
{
    for (size_t i = 0; i < c->nhost; i++)
        free(c->host[i]);
    c->nhost = 0;
    /* the queue may still use the buffers: release after it drains */
    if (c->ndev)
        ct_context_finish(c->ctx);
    for (size_t i = 0; i < c->ndev; i++)
        clReleaseMemObject(c->dev[i].mem);
    c->ndev = 0;
}

static int track(void ***list, size_t *n, size_t *cap, size_t elem, void *item)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 32;
        void *grown = realloc(*list, ncap * elem);
        if (!grown)
            return -1;
        *list = grown;
        *cap = ncap;
    }
    memcpy((char *)*list + *n * elem, item, elem);
    (*n)++;
    return 0;
}

double *ck_host(ct_check *c, size_t n)
{
    static double dummy[16];
    double *p = calloc(n ? n : 1, sizeof *p);
    if (!p || track((void ***)&c->host, &c->nhost, &c->caphost, sizeof(void *), &p)) {
        free(p);
        failf(c, "out of host memory (%zu doubles)", n);
        return dummy;
    }
    return p;
}

/* The 16-bit pattern for float bits u in format f (1 bf16, 2 fp16): its
 * value rounded, or for the NaN canaries a quiet NaN whose payload keeps
 * u's low bits (the canaries differ there only) */
static uint16_t half_bits(int f, uint32_t u)
{
    if (!isnan(bits_f(u)))
        return f == 1 ? ct_bf16_from_f32(bits_f(u)) : ct_fp16_from_f32(bits_f(u));
    return f == 1 ? (uint16_t)(0x7fc0u | (u & 0x3fu)) : (uint16_t)(0x7e00u | (u & 0x1ffu));
}

static ct_buf dev_make(ct_check *c, size_t n, const double *x, uint32_t region_bits, uint32_t guard_bits,
                       int act16)
{
    ct_buf b = { NULL, CK_GUARD };
    size_t total = n + 2 * CK_GUARD, es = act16 ? 2 : 4;
    void *h = malloc(total * es);
    if (!h) {
        failf(c, "out of host memory (%zu elements)", total);
        return b;
    }
    float *hf = h;
    uint16_t *h16 = h;
    for (size_t i = 0; i < total; i++) {
        int guard = i < CK_GUARD || i >= CK_GUARD + n;
        float v = guard ? bits_f(guard_bits) : x ? (float)x[i - CK_GUARD] : bits_f(region_bits);
        if (!act16)
            hf[i] = v;
        else if (guard || !x)
            h16[i] = half_bits(act16, guard ? guard_bits : region_bits);
        else
            h16[i] = act16 == 1 ? ct_bf16_from_f32(v) : ct_fp16_from_f32(v);
    }
    cl_mem m = NULL;
    int st = ct_buffer_create(c->ctx, total * es, &m);
    if (!st)
        st = ct_buffer_write(c->ctx, m, 0, total * es, h);
    free(h);
    dev_rec r = { m, n, act16 };
    if (st || track((void ***)&c->dev, &c->ndev, &c->capdev, sizeof r, &r)) {
        ck_status(c, st ? st : CT_ERR_NO_MEMORY, "allocating a device buffer");
        if (m)
            clReleaseMemObject(m);
        return b;
    }
    b.mem = m;
    return b;
}

ct_buf ck_dev_in(ct_check *c, const double *x, size_t n)
{
    return dev_make(c, n, x, 0, IN_GUARD_NAN, 0);
}

ct_buf ck_dev_out(ct_check *c, size_t n)
{
    return dev_make(c, n, NULL, OUT_NAN, GUARD_BITS, 0);
}

ct_buf ck_dev_const(ct_check *c, size_t n, double value)
{
    ct_buf b = dev_make(c, n, NULL, f_bits((float)value), GUARD_BITS, 0);
    return b;
}

ct_buf ck_dev_inout(ct_check *c, const double *x, size_t n)
{
    return dev_make(c, n, x, 0, GUARD_BITS, 0);
}

int ck_act16(const ct_check *c)
{
    return c->ctx->act16;
}

static int use_act16(ct_check *c, int f)
{
    int had = c->ctx->act16;
    ck_status(c, ct_context_set_act16(c->ctx, f), "switching the activation storage");
    return had;
}

void ck_act16_end(ct_check *c, const ck_act16_state *s)
{
    use_act16(c, s->had);
    ck_use_class(c, s->cls);
}

int ck_act16_begin(ct_check *c, ck_act16_state *s)
{
    int f = (int)ct_context_precision(c->ctx);
    if (!f || ck_failed(c))
        return 0;
    ck_case_end(c);
    s->cls = ck_use_class(c, CT_KERNELS_GPU);
    if (c->ctx->cls.gemm == CT_GEMM_HOST) { /* (the storage needs the device's products) */
        ck_use_class(c, s->cls);
        return 0;
    }
    s->had = use_act16(c, f);
    if (!ck_failed(c))
        return 1;
    ck_act16_end(c, s);
    return 0;
}

void ck_round_act(const ct_check *c, double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (double)ct_round_to(c->ctx->act16, (float)x[i]);
}

ct_buf ck_act_in(ct_check *c, const double *x, size_t n)
{
    return dev_make(c, n, x, 0, IN_GUARD_NAN, c->ctx->act16);
}

ct_buf ck_act_out(ct_check *c, size_t n)
{
    return dev_make(c, n, NULL, OUT_NAN, GUARD_BITS, c->ctx->act16);
}

ct_buf ck_act_inout(ct_check *c, const double *x, size_t n)
{
    return dev_make(c, n, x, 0, GUARD_BITS, c->ctx->act16);
}

double *ck_abs(ct_check *c, const double *x, size_t n)
{
    if (!x)
        return NULL;
    double *a = ck_host(c, n);
    if (!ck_failed(c))
        for (size_t i = 0; i < n; i++)
            a[i] = fabs(x[i]);
    return a;
}

/* ---- comparison ---- */

int ck_expect(ct_check *c, const char *what, ct_buf got, size_t n, const double *ref, double atol,
              double rtol)
{
    if (!got.mem)
        return 0;
    c->res.comparisons++;
    const dev_rec *rec = NULL;
    for (size_t i = 0; i < c->ndev; i++)
        if (c->dev[i].mem == got.mem)
            rec = &c->dev[i];
    int guarded = rec && got.off == CK_GUARD && rec->n == n, act16 = rec ? rec->act16 : 0;
    size_t first = guarded ? 0 : got.off, total = guarded ? n + 2 * CK_GUARD : n, es = act16 ? 2 : 4;
    float *h = malloc(total * sizeof *h);
    uint16_t *h16 = act16 ? malloc(total * sizeof *h16) : NULL;
    if (!h || (act16 && !h16)) {
        failf(c, "out of host memory");
        free(h);
        free(h16);
        return 0;
    }
    int st = ct_buffer_read(c->ctx, got.mem, first * es, total * es, act16 ? (void *)h16 : (void *)h);
    if (st) {
        ck_status(c, st, what);
        free(h);
        free(h16);
        return 0;
    }
    /* 16-bit elements widened to float, canaries to their float patterns
     * so the guard and never-written tests below read them as in float */
    for (size_t i = 0; act16 && i < total; i++)
        h[i] = h16[i] == half_bits(act16, GUARD_BITS) ? bits_f(GUARD_BITS)
               : h16[i] == half_bits(act16, OUT_NAN) ? bits_f(OUT_NAN)
               : act16 == 1                          ? ct_f32_from_bf16(h16[i])
                                                     : ct_f32_from_fp16(h16[i]);
    free(h16);
    float *v = guarded ? h + CK_GUARD : h;
    if (c->opt.plant_bug && !c->planted && n > 0) {
        size_t k = ck_u32(c) % n;
        v[k] += 1.0f + 0.5f * fabsf(v[k]);
        c->planted = 1;
    }
    int ok = 1;
    if (guarded) {
        for (size_t i = 0; i < CK_GUARD && ok; i++) {
            if (f_bits(h[i]) != GUARD_BITS) {
                failf(c, "%s: wrote before its output: guard element -%zu changed", what, CK_GUARD - i);
                ok = 0;
            } else if (f_bits(h[total - 1 - i]) != GUARD_BITS) {
                failf(c, "%s: wrote past its output: guard element %zu after the end changed", what,
                      CK_GUARD - 1 - i);
                ok = 0;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        double g = v[i], r = ref[i];
        double tol = atol + rtol * fabs(r);
        double err = fabs(g - r);
        /* equal values match, infinities too (their err and tol are NaN) */
        int bad = isnan(r) ? !isnan(g) : (isnan(g) || (g != r && !(err <= tol)));
        if (g != r && !isnan(err) && !isnan(r)) {
            if (err > c->res.max_abs_err)
                c->res.max_abs_err = err;
            if (err / tol > c->res.max_rel_err)
                c->res.max_rel_err = err / tol;
        }
        if (bad && ok) {
            if (isnan(g) && f_bits(v[i]) == OUT_NAN)
                failf(c, "%s: element %zu of %zu was never written (NaN canary intact), "
                      "expected %.8g", what, i, n, r);
            else
                failf(c, "%s: element %zu of %zu is %.8g, expected %.8g (|diff| %.3g > "
                      "atol %.3g + rtol %.3g * |expected|)", what, i, n, g, r, err, atol, rtol);
            ok = 0;
        }
        if (bad)
            c->res.max_rel_err = INFINITY;
    }
    free(h);
    return ok;
}

double ck_amax(const double *x, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fabs(x[i]) > m ? fabs(x[i]) : m;
    return m;
}

double ck_sum_atol(size_t terms, const double *abs_ref, size_t n)
{
    return (double)(terms + 2) * 0x1p-24 * ck_amax(abs_ref, n);
}

double ck_prec_u(ct_precision p)
{
    return p == CT_PRECISION_BF16 ? 0x1p-8 : p == CT_PRECISION_FP16 ? 0x1p-11 : 0.0;
}

double ck_prec_sub(ct_precision p)
{
    return p == CT_PRECISION_FP16 ? 0x1p-25 : 0.0;
}

double ck_prec_extra(ct_precision p, size_t terms, double sum_max, double operand_max)
{
    return 2.03 * ck_prec_u(p) * sum_max + (double)terms * 2.0 * ck_prec_sub(p) * operand_max;
}

double ck_prod_atol(ct_check *c, size_t terms, const double *abs_ref, size_t n)
{
    double m = ck_amax(abs_ref, n);
    return (double)(terms + 2) * 0x1p-24 * m + ck_prec_extra(ct_context_precision(c->ctx), terms, m, 1.0);
}

double ck_dot(const double *y, const double *w, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += y[i] * w[i];
    return s;
}

/*
 * Central differences in double with h = 1e-6 max(1, |x|): truncation error
 * O(h^2) ~ 1e-12 and cancellation error ~ 1e-16 |L| / h ~ 1e-10 |L|; the
 * tolerance 1e-5 + 1e-4 |g| is far above both and far below what a real
 * bug (a wrong factor, index or sign) produces.
 */
int ck_gradcheck(ct_check *c, const char *what, ck_loss_fn loss, void *user, double *x, size_t n,
                 const double *analytic, size_t max_points)
{
    if (!c->opt.finite_diff || n == 0)
        return 1;
    c->res.comparisons++;
    size_t points = n < max_points ? n : max_points;
    for (size_t p = 0; p < points; p++) {
        size_t i = points == n ? p : ck_u32(c) % n;
        double save = x[i];
        double h = 1e-6 * (fabs(save) > 1 ? fabs(save) : 1);
        x[i] = save + h;
        double lp = loss(user);
        x[i] = save - h;
        double lm = loss(user);
        x[i] = save;
        double num = (lp - lm) / (2 * h);
        double err = fabs(num - analytic[i]), tol = 1e-5 + 1e-4 * fabs(num);
        if (!(err <= tol)) {
            failf(c, "%s: reference gradient element %zu of %zu is %.10g, finite differences "
                  "give %.10g", what, i, n, analytic[i], num);
            return 0;
        }
    }
    return 1;
}

/* ---- benchmarks ---- */

void ck_bench(ct_check *c, const char *shape, double flops, double bytes, ck_run_fn run, void *user)
{
    double t[25];
    int reps = 0;
    for (int w = 0; w < 2; w++)
        if (run(user) || ct_context_finish(c->ctx)) {
            ck_status(c, CT_ERR_INTERNAL, "benchmark run");
            return;
        }
    double start = ct_now();
    while (reps < (int)CT_ARRAY_LEN(t) && (reps < 5 || ct_now() - start < 1.0)) {
        double t0 = ct_now();
        if (run(user) || ct_context_finish(c->ctx)) {
            ck_status(c, CT_ERR_INTERNAL, "benchmark run");
            return;
        }
        t[reps++] = ct_now() - t0;
    }
    double med = ct_median(t, (size_t)reps);
    c->res.bench_ms = med * 1e3;
    c->res.gflops = flops / med * 1e-9;
    c->res.gbytes = bytes / med * 1e-9;
    snprintf(c->res.bench_shape, sizeof c->res.bench_shape, "%s", shape);
}

/* ---- the run ---- */

void ct_selftest_defaults(ct_selftest_options *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->iterations = 8;
    o->finite_diff = 1;
}

static const char *const op_names[] = {
#define CT_X(name) #name,
    CT_CHECKS(CT_X)
#undef CT_X
    NULL
};

const char *const *ct_selftest_ops(void)
{
    return op_names;
}

typedef void (*check_fn)(ct_check *c);
static const check_fn op_checks[] = {
#define CT_X(name) ct_check_##name,
    CT_CHECKS(CT_X)
#undef CT_X
};

int ct_selftest_run(ct_context *ctx, const ct_selftest_options *options,
                    ct_selftest_report_fn report, void *user)
{
    CT_VALIDATE(ctx, ctx);
    ct_check c;
    memset(&c, 0, sizeof c);
    c.ctx = ctx;
    if (options)
        c.opt = *options;
    else
        ct_selftest_defaults(&c.opt);
    if (c.opt.iterations < 1)
        c.opt.iterations = 1;
    /* the checks start from float32 storage (they switch to 16 bits for
     * their reruns: ck_act16_begin), whatever a trainer verifying its
     * model's ops has set */
    ct_precision had = ct_context_precision(ctx);
    int had16 = ctx->act16, pst = ct_context_set_act16(ctx, CT_PRECISION_FP32);
    if (pst || (pst = ct_context_set_precision(ctx, (ct_precision)c.opt.precision))) {
        ct_context_set_act16(ctx, had16);
        return pst;
    }
    int all_ok = 1, ran = 0, exact = 0;
    const char *filter = c.opt.filter && *c.opt.filter ? c.opt.filter : NULL;
    for (size_t i = 0; filter && op_names[i]; i++)
        exact |= !strcmp(op_names[i], filter);
    for (size_t i = 0; op_names[i]; i++) {
        /* a family's own name picks it alone: "pool" is not "seqpool" */
        if (filter && (exact ? strcmp(op_names[i], filter) != 0 : !strstr(op_names[i], filter)))
            continue;
        memset(&c.res, 0, sizeof c.res);
        c.res.op = op_names[i];
        c.res.passed = 1;
        c.planted = 0;
        c.case_desc[0] = '\0';
        /* each op has its own stream, so filtering does not change its cases */
        c.rng = c.opt.seed * 0x9e3779b97f4a7c15ull;
        for (const char *p = op_names[i]; *p; p++)
            c.rng = (c.rng ^ (unsigned char)*p) * 0x100000001b3ull;
        op_checks[i](&c);
        ck_case_end(&c);
        if (c.res.comparisons == 0 && c.res.passed) {
            c.res.passed = 0;
            snprintf(c.res.message, sizeof c.res.message, "the check compared nothing");
        }
        all_ok &= c.res.passed;
        ran++;
        if (report)
            report(user, &c.res);
    }
    free(c.host);
    free(c.dev);
    ct_context_set_precision(ctx, had);
    ct_context_set_act16(ctx, had16);
    if (!ran)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "selftest: no op matches '%s'",
                       c.opt.filter ? c.opt.filter : "");
    return all_ok ? CT_OK : ct_fail(ctx, CT_ERR_CORRUPT, "selftest: some ops computed wrong numbers");
}
