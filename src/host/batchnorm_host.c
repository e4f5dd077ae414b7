/*
 * batchnorm_host.c - batch norm on the host for the CPU class (with the
 * host GEMM path, on CPUs with AVX-512): one work item per channel on the
 * context's thread pool, the same passes and per-element arithmetic as the
 * CPU-class kernels (cl_kernels/batchnorm.cl), sums in 4 x 16 float lanes
 * per row of HW elements, rows added in double, in a fixed order (the bits
 * do not depend on the thread count). On pocl the kernels ran between the
 * host-side convolutions with a queue drain and a hand-over of the cores
 * each time; ResNet-56's batch norms took 20% of its step on two threads.
 */
#include "host/batchnorm_host.h"

#include <math.h>
#include <string.h>

#include "host/host_work.h"
#include "host/hostmap.h"
#ifdef CT_HOST_X86
#include "host/vmath512.h"

typedef struct hbn {
    size_t N, C, HW;
    float eps, momentum;
    int relu, train;
    const float *x, *gamma, *beta;
    float *y;
    /* forward, training: the saved statistics and running ones (may be NULL) */
    float *save_mean, *save_invstd, *rmean, *rvar;
    /* forward, evaluation, and backward: mean and invstd (train) or running var */
    const float *mean, *stat;
    /* backward */
    const float *dy;
    float *dx, *dgamma, *dbeta;
} hbn;

/* 16 float lanes -> their sum in double (fixed order) */
static CT_AVX512 inline double lanes_sum(__m512 v)
{
    __m512d a = _mm512_add_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(v)),
                              _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(
                                  _mm512_castps_pd(v), 1))));
    return _mm512_reduce_add_pd(a);
}

/* sum of row[0..n) and, with dev, of (row - mu)^2 */
static CT_AVX512 double row_sum(const float *row, size_t n, int dev, float mu)
{
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, m = _mm512_set1_ps(mu);
    size_t j = 0;
#define RS_TERM(P, K)                                                                             \
    (dev ? _mm512_mul_ps(_mm512_sub_ps(P, m), _mm512_sub_ps(P, m)) : P)
    for (; j + 64 <= n; j += 64) {
        __m512 a = _mm512_loadu_ps(row + j), b = _mm512_loadu_ps(row + j + 16);
        __m512 c = _mm512_loadu_ps(row + j + 32), d = _mm512_loadu_ps(row + j + 48);
        s0 = _mm512_add_ps(s0, RS_TERM(a, 0));
        s1 = _mm512_add_ps(s1, RS_TERM(b, 1));
        s2 = _mm512_add_ps(s2, RS_TERM(c, 2));
        s3 = _mm512_add_ps(s3, RS_TERM(d, 3));
    }
    for (; j < n; j += 16) {
        __mmask16 t = ct_tail16(n - j);
        __m512 a = _mm512_maskz_loadu_ps(t, row + j);
        s0 = _mm512_mask_add_ps(s0, t, s0, RS_TERM(a, 0));
    }
#undef RS_TERM
    return lanes_sum(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

static CT_AVX512 void normalize_rows(const hbn *b, size_t c, float mu, float is)
{
    __m512 g = _mm512_set1_ps(b->gamma[c]), be = _mm512_set1_ps(b->beta[c]);
    __m512 m = _mm512_set1_ps(mu), s = _mm512_set1_ps(is), z = _mm512_setzero_ps();
    for (size_t n = 0; n < b->N; n++) {
        size_t o = (n * b->C + c) * b->HW;
        for (size_t j = 0; j < b->HW; j += 16) {
            __mmask16 t = ct_tail16(b->HW - j);
            __m512 v = _mm512_maskz_loadu_ps(t, b->x + o + j);
            __m512 r = _mm512_fmadd_ps(g, _mm512_mul_ps(_mm512_sub_ps(v, m), s), be);
            _mm512_mask_storeu_ps(b->y + o + j, t, b->relu ? _mm512_max_ps(r, z) : r);
        }
    }
}

static CT_AVX512 void forward_train_item(void *arg, size_t c, int thread)
{
    (void)thread;
    const hbn *b = arg;
    double s = 0;
    for (size_t n = 0; n < b->N; n++)
        s += row_sum(b->x + (n * b->C + c) * b->HW, b->HW, 0, 0.0f);
    size_t m = b->N * b->HW;
    float mu = (float)(s / (double)m);
    double q = 0;
    for (size_t n = 0; n < b->N; n++)
        q += row_sum(b->x + (n * b->C + c) * b->HW, b->HW, 1, mu);
    float var = (float)(q / (double)m);
    float is = 1.0f / sqrtf(var + b->eps);
    b->save_mean[c] = mu;
    b->save_invstd[c] = is;
    if (b->rmean) {
        b->rmean[c] = (1.0f - b->momentum) * b->rmean[c] + b->momentum * mu;
        b->rvar[c] = (1.0f - b->momentum) * b->rvar[c] +
                     b->momentum * (var * ((float)m / (float)(m - 1)));
    }
    normalize_rows(b, c, mu, is);
}

static void forward_eval_item(void *arg, size_t c, int thread)
{
    (void)thread;
    const hbn *b = arg;
    normalize_rows(b, c, b->mean[c], 1.0f / sqrtf(b->stat[c] + b->eps));
}

/* g (dy) masked by the forward's ReLU: its pre-ReLU value gamma xh + beta,
 * recomputed with normalize_rows's operations, is > 0 (max(r, 0) > 0
 * exactly when r > 0, NaN included: both false) */
static CT_AVX512 inline __m512 relu_masked(const hbn *b, __m512 g, __m512 xh, __m512 vg, __m512 vb)
{
    if (!b->relu)
        return g;
    __mmask16 on = _mm512_cmp_ps_mask(_mm512_fmadd_ps(vg, xh, vb), _mm512_setzero_ps(), _CMP_GT_OQ);
    return _mm512_maskz_mov_ps(on, g);
}

static CT_AVX512 void backward_item(void *arg, size_t c, int thread)
{
    (void)thread;
    const hbn *b = arg;
    float mu = b->mean[c];
    float is = b->train ? b->stat[c] : 1.0f / sqrtf(b->stat[c] + b->eps);
    __m512 m = _mm512_set1_ps(mu), s = _mm512_set1_ps(is), z = _mm512_setzero_ps();
    __m512 vg = _mm512_set1_ps(b->gamma[c]), vb = b->relu ? _mm512_set1_ps(b->beta[c]) : z;
    double sg = 0, sgx = 0;
    for (size_t n = 0; n < b->N; n++) {
        size_t o = (n * b->C + c) * b->HW;
        __m512 a0 = z, a1 = z;
        for (size_t j = 0; j < b->HW; j += 16) {
            __mmask16 t = ct_tail16(b->HW - j);
            __m512 xh = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(t, b->x + o + j), m), s);
            __m512 g = relu_masked(b, _mm512_maskz_loadu_ps(t, b->dy + o + j), xh, vg, vb);
            a0 = _mm512_add_ps(a0, g);
            a1 = _mm512_fmadd_ps(g, xh, a1);
        }
        sg += lanes_sum(a0);
        sgx += lanes_sum(a1);
    }
    b->dbeta[c] += (float)sg;
    b->dgamma[c] += (float)sgx;
    size_t cnt = b->N * b->HW;
    float gi = b->gamma[c] * is, mg = (float)sg / (float)cnt, mgx = (float)sgx / (float)cnt;
    __m512 vgi = _mm512_set1_ps(gi), vmg = _mm512_set1_ps(mg), vmgx = _mm512_set1_ps(mgx);
    for (size_t n = 0; n < b->N; n++) {
        size_t o = (n * b->C + c) * b->HW;
        for (size_t j = 0; j < b->HW; j += 16) {
            __mmask16 t = ct_tail16(b->HW - j);
            __m512 xh = b->train || b->relu
                            ? _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(t, b->x + o + j), m), s)
                            : z;
            __m512 g = relu_masked(b, _mm512_maskz_loadu_ps(t, b->dy + o + j), xh, vg, vb);
            __m512 d;
            if (b->train)
                d = _mm512_mul_ps(vgi, _mm512_sub_ps(_mm512_sub_ps(g, vmg), _mm512_mul_ps(xh, vmgx)));
            else
                d = _mm512_mul_ps(vgi, g);
            _mm512_mask_storeu_ps(b->dx + o + j, t, d);
        }
    }
}
#endif /* CT_HOST_X86 */

int ct_batchnorm_host_ok(const ct_context *ctx)
{
    return ctx->cls.host_pool && ct_host_avx512();
}

int ct_batchnorm_host_forward(ct_context *ctx, ct_buf y, ct_buf save_mean, ct_buf save_invstd,
                              ct_buf running_mean, ct_buf running_var, ct_buf x, ct_buf gamma,
                              ct_buf beta, size_t N, size_t C, size_t HW, float momentum, float eps,
                              int train, int relu)
{
#ifdef CT_HOST_X86
    size_t nx = N * C * HW;
    ct_hmap_range r[8] = {
        { x.mem, x.off, nx, 0, NULL },
        { y.mem, y.off, nx, 1, NULL },
        { gamma.mem, gamma.off, C, 0, NULL },
        { beta.mem, beta.off, C, 0, NULL },
        { train ? save_mean.mem : NULL, save_mean.off, C, 1, NULL },
        { train ? save_invstd.mem : NULL, save_invstd.off, C, 1, NULL },
        { running_mean.mem, running_mean.off, C, train, NULL },
        { running_var.mem, running_var.off, C, train, NULL },
    };
    ct_pool *pool;
    ct_hmap hm;
    int st = ct_host_begin(ctx, r, 8, &hm, &pool, "batch norm forward");
    if (st)
        return st;
    hbn b;
    memset(&b, 0, sizeof b);
    b.N = N, b.C = C, b.HW = HW, b.eps = eps, b.momentum = momentum, b.relu = relu;
    b.x = r[0].host, b.y = r[1].host, b.gamma = r[2].host, b.beta = r[3].host;
    b.save_mean = r[4].host, b.save_invstd = r[5].host, b.rmean = r[6].host, b.rvar = r[7].host;
    b.mean = r[6].host, b.stat = r[7].host;
    ct_pool_run(pool, C, train ? forward_train_item : forward_eval_item, &b);
    return ct_hmap_unmap(ctx, &hm, CT_OK, "batch norm forward");
#else
    (void)y, (void)save_mean, (void)save_invstd, (void)running_mean, (void)running_var, (void)x;
    (void)gamma, (void)beta, (void)N, (void)C, (void)HW, (void)momentum, (void)eps, (void)train;
    (void)relu;
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "batch norm host path: not built for this CPU");
#endif
}

int ct_batchnorm_host_backward(ct_context *ctx, ct_buf dx, ct_buf dgamma, ct_buf dbeta, ct_buf dy,
                               ct_buf x, ct_buf gamma, ct_buf beta, ct_buf mean, ct_buf stat,
                               size_t N, size_t C, size_t HW, float eps, int train, int relu)
{
#ifdef CT_HOST_X86
    size_t nx = N * C * HW;
    ct_hmap_range r[9] = {
        { dy.mem, dy.off, nx, 0, NULL },
        { x.mem, x.off, nx, 0, NULL },
        { relu ? beta.mem : NULL, beta.off, C, 0, NULL },
        { gamma.mem, gamma.off, C, 0, NULL },
        { mean.mem, mean.off, C, 0, NULL },
        { stat.mem, stat.off, C, 0, NULL },
        { dx.mem, dx.off, nx, 1, NULL },
        { dgamma.mem, dgamma.off, C, 1, NULL },
        { dbeta.mem, dbeta.off, C, 1, NULL },
    };
    ct_pool *pool;
    ct_hmap hm;
    int st = ct_host_begin(ctx, r, 9, &hm, &pool, "batch norm backward");
    if (st)
        return st;
    hbn b;
    memset(&b, 0, sizeof b);
    b.N = N, b.C = C, b.HW = HW, b.eps = eps, b.relu = relu, b.train = train;
    b.dy = r[0].host, b.x = r[1].host, b.beta = r[2].host, b.gamma = r[3].host;
    b.mean = r[4].host, b.stat = r[5].host, b.dx = r[6].host, b.dgamma = r[7].host;
    b.dbeta = r[8].host;
    ct_pool_run(pool, C, backward_item, &b);
    return ct_hmap_unmap(ctx, &hm, CT_OK, "batch norm backward");
#else
    (void)dx, (void)dgamma, (void)dbeta, (void)dy, (void)x, (void)beta, (void)gamma, (void)mean;
    (void)stat, (void)N, (void)C, (void)HW, (void)eps, (void)train, (void)relu;
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "batch norm host path: not built for this CPU");
#endif
}
