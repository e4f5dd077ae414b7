/*
 * optim_host.c - the SGD and Adam steps on the host pool (optim_host.h).
 *
 * The same update rules as cl_kernels/optim.cl, term by term and in the
 * same order, with no contraction into fused multiply-adds: the AVX-512
 * loops use separate multiplies and adds, and sqrt and division are IEEE
 * (correctly rounded, where OpenCL allows 3 and 2.5 ulp), so the host
 * results are within the kernels' stated tolerances of the reference and
 * the same whatever the thread count (every element is independent).
 *
 * Items are OPT_CHUNK elements; the loops are memory-bound (SGD with
 * momentum streams p, g and b in and p and b out: 20 bytes per parameter).
 */
#include "host/optim_host.h"

#include <math.h>
#include <string.h>

#include "host/host_work.h"

#ifdef CT_HOST_X86
#include <immintrin.h>
#endif

#define OPT_CHUNK 65536u

typedef struct opt_args {
    int adam;
    size_t n;
    float *p, *b, *v;  /* params, momentum (SGD) or m (Adam), v (Adam) */
    float *g;          /* written only with zero */
    int zero;          /* then g = 0 after its use */
    /* SGD */
    float lr, wd, mu, omd;
    int nesterov;
    /* Adam */
    float decay, l2, b1, omb1, b2, omb2, step_size, bc2_sqrt, eps;
    int first;
} opt_args;

static void sgd_range(const opt_args *a, size_t lo, size_t hi)
{
    float *p = a->p, *b = a->b;
    const float *g = a->g;
    for (size_t i = lo; i < hi; i++) {
        float w = p[i], gi = g[i];
        if (a->wd != 0.0f)
            gi = gi + a->wd * w;
        if (a->mu != 0.0f) {
            float m = a->first ? gi : a->mu * b[i] + a->omd * gi;
            b[i] = m;
            gi = a->nesterov ? gi + a->mu * m : m;
        }
        p[i] = w - a->lr * gi;
    }
}

static void adam_range(const opt_args *a, size_t lo, size_t hi)
{
    float *p = a->p, *m = a->b, *v = a->v;
    const float *g = a->g;
    for (size_t i = lo; i < hi; i++) {
        float w = p[i], gi = g[i];
        if (a->decay != 1.0f)
            w = w * a->decay;
        if (a->l2 != 0.0f)
            gi = gi + a->l2 * w;
        float mi = a->first ? a->omb1 * gi : a->b1 * m[i] + a->omb1 * gi;
        float vi = a->first ? a->omb2 * gi * gi : a->b2 * v[i] + a->omb2 * gi * gi;
        m[i] = mi;
        v[i] = vi;
        float denom = sqrtf(vi) / a->bc2_sqrt + a->eps;
        p[i] = w - a->step_size * (mi / denom);
    }
}

static void opt_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const opt_args *a = arg;
    size_t lo = item * OPT_CHUNK, hi = lo + OPT_CHUNK < a->n ? lo + OPT_CHUNK : a->n;
    if (a->adam)
        adam_range(a, lo, hi);
    else
        sgd_range(a, lo, hi);
    if (a->zero)
        memset(a->g + lo, 0, (hi - lo) * sizeof(float));
}

#ifdef CT_HOST_X86
#define V512 __m512
#define MUL _mm512_mul_ps
#define ADD _mm512_add_ps
#define SUB _mm512_sub_ps

static CT_AVX512 void sgd512(const opt_args *a, size_t lo, size_t hi)
{
    float *p = a->p, *b = a->b;
    const float *g = a->g;
    const V512 lr = _mm512_set1_ps(a->lr), wd = _mm512_set1_ps(a->wd), mu = _mm512_set1_ps(a->mu);
    const V512 omd = _mm512_set1_ps(a->omd);
    const int has_wd = a->wd != 0.0f, has_mu = a->mu != 0.0f, first = a->first, nest = a->nesterov;
    size_t i = lo;
    for (; i + 16 <= hi; i += 16) {
        V512 w = _mm512_loadu_ps(p + i), gi = _mm512_loadu_ps(g + i);
        if (has_wd)
            gi = ADD(gi, MUL(wd, w));
        if (has_mu) {
            V512 m = first ? gi : ADD(MUL(mu, _mm512_loadu_ps(b + i)), MUL(omd, gi));
            _mm512_storeu_ps(b + i, m);
            gi = nest ? ADD(gi, MUL(mu, m)) : m;
        }
        _mm512_storeu_ps(p + i, SUB(w, MUL(lr, gi)));
        if (a->zero) /* the line is in cache: this costs its write-back only */
            _mm512_storeu_ps(a->g + i, _mm512_setzero_ps());
    }
    sgd_range(a, i, hi);
    if (a->zero)
        memset(a->g + i, 0, (hi - i) * sizeof(float));
}

static CT_AVX512 void adam512(const opt_args *a, size_t lo, size_t hi)
{
    float *p = a->p, *m = a->b, *v = a->v;
    const float *g = a->g;
    const V512 decay = _mm512_set1_ps(a->decay), l2 = _mm512_set1_ps(a->l2);
    const V512 b1 = _mm512_set1_ps(a->b1), omb1 = _mm512_set1_ps(a->omb1);
    const V512 b2 = _mm512_set1_ps(a->b2), omb2 = _mm512_set1_ps(a->omb2);
    const V512 ss = _mm512_set1_ps(a->step_size), bc2 = _mm512_set1_ps(a->bc2_sqrt);
    const V512 eps = _mm512_set1_ps(a->eps);
    const int has_decay = a->decay != 1.0f, has_l2 = a->l2 != 0.0f, first = a->first;
    size_t i = lo;
    for (; i + 16 <= hi; i += 16) {
        V512 w = _mm512_loadu_ps(p + i), gi = _mm512_loadu_ps(g + i);
        if (has_decay)
            w = MUL(w, decay);
        if (has_l2)
            gi = ADD(gi, MUL(l2, w));
        V512 g1 = MUL(omb1, gi), g2 = MUL(MUL(omb2, gi), gi);
        V512 mi = first ? g1 : ADD(MUL(b1, _mm512_loadu_ps(m + i)), g1);
        V512 vi = first ? g2 : ADD(MUL(b2, _mm512_loadu_ps(v + i)), g2);
        _mm512_storeu_ps(m + i, mi);
        _mm512_storeu_ps(v + i, vi);
        V512 denom = ADD(_mm512_div_ps(_mm512_sqrt_ps(vi), bc2), eps);
        _mm512_storeu_ps(p + i, SUB(w, MUL(ss, _mm512_div_ps(mi, denom))));
        if (a->zero)
            _mm512_storeu_ps(a->g + i, _mm512_setzero_ps());
    }
    adam_range(a, i, hi);
    if (a->zero)
        memset(a->g + i, 0, (hi - i) * sizeof(float));
}

static CT_AVX512 void opt_item512(void *arg, size_t item, int thread)
{
    (void)thread;
    const opt_args *a = arg;
    size_t lo = item * OPT_CHUNK, hi = lo + OPT_CHUNK < a->n ? lo + OPT_CHUNK : a->n;
    if (a->adam)
        adam512(a, lo, hi);
    else
        sgd512(a, lo, hi);
}
#endif

int ct_optim_host_ok(const ct_context *ctx, size_t n)
{
    return ctx->cls.host_pool && n >= CT_OPTIM_HOST_MIN;
}

/* Maps p, g and the state (one or two ranges), runs a's items. */
static int run(ct_context *ctx, opt_args *a, ct_buf p, ct_buf g, ct_buf b, ct_buf v, const char *what)
{
    size_t n = a->n;
    ct_hmap_range r[4] = { { p.mem, p.off, n, 1, NULL }, { g.mem, g.off, n, a->zero, NULL },
                           { b.mem, b.off, n, 1, NULL }, { v.mem, v.off, n, 1, NULL } };
    int nr = v.mem ? 4 : b.mem ? 3 : 2;
    ct_pool *pool;
    ct_hmap hm;
    int st = ct_host_begin(ctx, r, nr, &hm, &pool, what);
    if (st)
        return st;
    a->p = r[0].host;
    a->g = r[1].host;
    a->b = nr > 2 ? r[2].host : NULL;
    a->v = nr > 3 ? r[3].host : NULL;
    size_t items = (n + OPT_CHUNK - 1) / OPT_CHUNK;
#ifdef CT_HOST_X86
    ct_pool_run(pool, items, ct_host_avx512() ? opt_item512 : opt_item, a);
#else
    ct_pool_run(pool, items, opt_item, a);
#endif
    return ct_hmap_unmap(ctx, &hm, CT_OK, what);
}

int ct_host_sgd_step(ct_context *ctx, ct_buf p, ct_buf g, ct_buf b, size_t n, float lr, float wd,
                     float mu, float one_minus_damp, int nesterov, int first, int zero)
{
    opt_args a = { .n = n, .lr = lr, .wd = wd, .mu = mu, .omd = one_minus_damp,
                   .nesterov = nesterov, .first = first, .zero = zero };
    ct_buf none = { NULL, 0 };
    return run(ctx, &a, p, g, mu != 0.0f ? b : none, none, "sgd step (host)");
}

int ct_host_adam_step(ct_context *ctx, ct_buf p, ct_buf g, ct_buf m, ct_buf v, size_t n, float decay,
                      float l2, float beta1, float one_minus_beta1, float beta2, float one_minus_beta2,
                      float step_size, float bc2_sqrt, float eps, int first, int zero)
{
    opt_args a = { .adam = 1, .n = n, .decay = decay, .l2 = l2, .b1 = beta1, .omb1 = one_minus_beta1,
                   .b2 = beta2, .omb2 = one_minus_beta2, .step_size = step_size,
                   .bc2_sqrt = bc2_sqrt, .eps = eps, .first = first, .zero = zero };
    return run(ctx, &a, p, g, m, v, "adam step (host)");
}
