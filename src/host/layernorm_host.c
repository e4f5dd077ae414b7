/*
 * layernorm_host.c - layer normalization on the host pool for the CPU
 * class (layernorm_host.h), AVX-512 CPUs.
 *
 * The kernels' meanings (cl_kernels/layernorm.cl): per row the mean, then
 * the biased variance as a second pass over (x - mean)^2, rstd =
 * 1 / sqrt(var + eps), y = (x - mean) rstd w + b; backward dx = rstd (g -
 * mean(g) - xhat mean(g xhat)) with g = dy w, and the column sums dw +=
 * sum_r dy xhat, db += sum_r dy.
 *
 * Why: as pocl kernels a work-item walked a row, so 16 neighbouring
 * work-items read 16 rows F floats apart (gathers), and each kernel between
 * two host GEMMs drained the queue and handed the cores to pocl's workers
 * and back. The gpt's nine layer norms took 68 of its 594 ms per step at
 * batch 64 (8,192 rows of 192).
 *
 * Order (the bits do not depend on the thread count): a row's sums run in
 * 16 lanes, the lanes added in a fixed order; the column sums of the
 * backward run over the row slices of ct_layernorm_workspace_size's
 * plan (the shape alone decides them), each slice's rows in order into
 * its own partials, and the calling thread adds the slices in order.
 * Against the kernels only the order of the row sums changes, within the
 * tolerances of src/check/layernorm.c (each is a float sum of F terms
 * either way, errors bounded by (F - 1) u sum|terms|).
 */
#include "host/layernorm_host.h"

#include <math.h>

#include "host/host_work.h"
#include "host/hostmap.h"
#ifdef CT_HOST_X86
#include "host/vmath512.h"
#endif

/* floats per pool item in the forward and dx passes: runs of whole rows */
#define LNH_ITEM 8192u

typedef struct lnh {
    size_t R, F, rows; /* rows per item (forward); slice length (backward) */
    size_t S;          /* backward: slices */
    float eps;
    int acc;
    const float *x, *w, *b, *dy, *mean, *rstd;
    float *y, *mu_out, *rstd_out, *dx, *part; /* part (2, S, F) */
} lnh;

#ifdef CT_HOST_X86
/* the 16 lanes' sum, in a fixed order */
static CT_AVX512 inline float lanes16(__m512 v)
{
    return _mm512_reduce_add_ps(v);
}

/* sum of row[0..F), or with dev of (row - mu)^2 */
static CT_AVX512 inline float row_sum(const float *row, size_t F, int dev, float mu)
{
    const __m512 vm = _mm512_set1_ps(mu);
    __m512 s0 = _mm512_setzero_ps(), s1 = s0;
    size_t f = 0;
    for (; f + 32 <= F; f += 32) {
        __m512 a = _mm512_loadu_ps(row + f), c = _mm512_loadu_ps(row + f + 16);
        if (dev) {
            a = _mm512_sub_ps(a, vm);
            c = _mm512_sub_ps(c, vm);
            s0 = _mm512_fmadd_ps(a, a, s0);
            s1 = _mm512_fmadd_ps(c, c, s1);
        } else {
            s0 = _mm512_add_ps(s0, a);
            s1 = _mm512_add_ps(s1, c);
        }
    }
    for (; f < F; f += 16) {
        __mmask16 t = ct_tail16(F - f);
        __m512 a = _mm512_maskz_loadu_ps(t, row + f);
        if (dev) {
            a = _mm512_maskz_sub_ps(t, a, vm);
            s0 = _mm512_fmadd_ps(a, a, s0);
        } else {
            s0 = _mm512_add_ps(s0, a);
        }
    }
    return lanes16(_mm512_add_ps(s0, s1));
}

static CT_AVX512 void fwd_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const lnh *h = arg;
    size_t F = h->F, r0 = item * h->rows, r1 = r0 + h->rows < h->R ? r0 + h->rows : h->R;
    for (size_t r = r0; r < r1; r++) {
        const float *xr = h->x + r * F;
        float *yr = h->y + r * F;
        float mu = row_sum(xr, F, 0, 0.0f) / (float)F;
        float is = 1.0f / sqrtf(row_sum(xr, F, 1, mu) / (float)F + h->eps);
        const __m512 vm = _mm512_set1_ps(mu), vs = _mm512_set1_ps(is);
        for (size_t f = 0; f < F; f += 16) {
            __mmask16 t = ct_tail16(F - f);
            __m512 xh = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(t, xr + f), vm), vs);
            __m512 v = _mm512_fmadd_ps(xh, _mm512_maskz_loadu_ps(t, h->w + f), _mm512_maskz_loadu_ps(t, h->b + f));
            _mm512_mask_storeu_ps(yr + f, t, v);
        }
        h->mu_out[r] = mu;
        h->rstd_out[r] = is;
    }
}

/* One slice of rows: dx for each row, and the slice's column sums of
 * dy xhat and dy into part[s] (rows in order, a column per lane). */
static CT_AVX512 void bwd_item(void *arg, size_t s, int thread)
{
    (void)thread;
    const lnh *h = arg;
    size_t F = h->F, r0 = s * h->rows, r1 = r0 + h->rows < h->R ? r0 + h->rows : h->R;
    float *pw = h->part + s * F, *pb = h->part + (h->S + s) * F;
    for (size_t f = 0; f < F; f += 16) {
        __mmask16 t = ct_tail16(F - f);
        _mm512_mask_storeu_ps(pw + f, t, _mm512_setzero_ps());
        _mm512_mask_storeu_ps(pb + f, t, _mm512_setzero_ps());
    }
    const float invF = 1.0f / (float)F;
    for (size_t r = r0; r < r1; r++) {
        const float *xr = h->x + r * F, *dyr = h->dy + r * F;
        const __m512 vm = _mm512_set1_ps(h->mean[r]), vs = _mm512_set1_ps(h->rstd[r]);
        __m512 sg = _mm512_setzero_ps(), sgx = sg;
        for (size_t f = 0; f < F; f += 16) {
            __mmask16 t = ct_tail16(F - f);
            __m512 d = _mm512_maskz_loadu_ps(t, dyr + f);
            __m512 xh = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(t, xr + f), vm), vs);
            __m512 g = _mm512_mul_ps(d, _mm512_maskz_loadu_ps(t, h->w + f));
            sg = _mm512_add_ps(sg, g);
            sgx = _mm512_fmadd_ps(g, xh, sgx);
            _mm512_mask_storeu_ps(pw + f, t, _mm512_fmadd_ps(d, xh, _mm512_maskz_loadu_ps(t, pw + f)));
            _mm512_mask_storeu_ps(pb + f, t, _mm512_add_ps(d, _mm512_maskz_loadu_ps(t, pb + f)));
        }
        if (!h->dx)
            continue;
        const __m512 mg = _mm512_set1_ps(lanes16(sg) * invF), mgx = _mm512_set1_ps(lanes16(sgx) * invF);
        float *dxr = h->dx + r * F;
        for (size_t f = 0; f < F; f += 16) {
            __mmask16 t = ct_tail16(F - f);
            __m512 xh = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(t, xr + f), vm), vs);
            __m512 g = _mm512_mul_ps(_mm512_maskz_loadu_ps(t, dyr + f), _mm512_maskz_loadu_ps(t, h->w + f));
            __m512 v = _mm512_mul_ps(vs, _mm512_sub_ps(_mm512_sub_ps(g, mg), _mm512_mul_ps(xh, mgx)));
            if (h->acc)
                v = _mm512_add_ps(_mm512_maskz_loadu_ps(t, dxr + f), v);
            _mm512_mask_storeu_ps(dxr + f, t, v);
        }
    }
}
#endif /* CT_HOST_X86 */

int ct_layernorm_host_ok(const ct_context *ctx, size_t R, size_t F)
{
    return ctx->cls.host_pool && ct_host_avx512() && R * F >= CT_LAYERNORM_HOST_MIN;
}

int ct_layernorm_host_forward(ct_context *ctx, ct_buf y, ct_buf mean, ct_buf rstd, ct_buf x, ct_buf w,
                              ct_buf b, size_t R, size_t F, float eps)
{
    const char *what = "layer norm forward (host)";
    ct_hmap_range r[6] = { { x.mem, x.off, R * F, 0, NULL }, { w.mem, w.off, F, 0, NULL },
                           { b.mem, b.off, F, 0, NULL }, { y.mem, y.off, R * F, 1, NULL },
                           { mean.mem, mean.off, R, 1, NULL }, { rstd.mem, rstd.off, R, 1, NULL } };
    ct_pool *pool;
    ct_hmap hm;
    int st = ct_host_begin(ctx, r, 6, &hm, &pool, what);
    if (st)
        return st;
    size_t rows = F >= LNH_ITEM ? 1 : LNH_ITEM / F;
    lnh h = { .R = R, .F = F, .rows = rows, .eps = eps, .x = r[0].host, .w = r[1].host, .b = r[2].host,
              .y = r[3].host, .mu_out = r[4].host, .rstd_out = r[5].host };
#ifdef CT_HOST_X86
    ct_pool_run(pool, (R + rows - 1) / rows, fwd_item, &h);
#else
    (void)pool, (void)h;
    st = ct_fail(ctx, CT_ERR_UNSUPPORTED, "%s: not built for this CPU", what);
#endif
    return ct_hmap_unmap(ctx, &hm, st, what);
}

int ct_layernorm_host_backward(ct_context *ctx, ct_buf dx, int dx_acc, ct_buf dw, ct_buf db, ct_buf dy,
                               ct_buf x, ct_buf w, ct_buf mean, ct_buf rstd, size_t R, size_t F)
{
    const char *what = "layer norm backward (host)";
    size_t S, L;
    ct_layernorm_slices(R, F, &S, &L);
    ct_host_work *hw;
    float *part;
    int st = ct_host_work_get(ctx, 16, 16, 1, &hw);
    if (st || (st = ct_host_work_big(ctx, hw, CT_HOST_BIG_ROWS, 2 * S * F, &part)))
        return st;
    ct_hmap_range r[8] = { { dy.mem, dy.off, R * F, 0, NULL }, { x.mem, x.off, R * F, 0, NULL },
                           { w.mem, w.off, F, 0, NULL }, { mean.mem, mean.off, R, 0, NULL },
                           { rstd.mem, rstd.off, R, 0, NULL }, { dx.mem, dx.off, R * F, 1, NULL },
                           { dw.mem, dw.off, F, 1, NULL }, { db.mem, db.off, F, 1, NULL } };
    ct_pool *pool;
    ct_hmap hm;
    if ((st = ct_host_begin(ctx, r, 8, &hm, &pool, what)))
        return st;
    lnh h = { .R = R, .F = F, .rows = L, .S = S, .acc = dx_acc != 0, .dy = r[0].host, .x = r[1].host,
              .w = r[2].host, .mean = r[3].host, .rstd = r[4].host, .dx = r[5].host, .part = part };
#ifdef CT_HOST_X86
    ct_pool_run(pool, S, bwd_item, &h);
    /* the slices in order: the kernels' second stage */
    float *gw = r[6].host, *gb = r[7].host;
    for (size_t f = 0; f < F; f++) {
        float sw = 0.0f, sb = 0.0f;
        for (size_t s = 0; s < S; s++) {
            sw += part[s * F + f];
            sb += part[(S + s) * F + f];
        }
        gw[f] += sw;
        gb[f] += sb;
    }
#else
    (void)pool, (void)h;
    st = ct_fail(ctx, CT_ERR_UNSUPPORTED, "%s: not built for this CPU", what);
#endif
    return ct_hmap_unmap(ctx, &hm, st, what);
}
