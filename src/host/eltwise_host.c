/*
 * eltwise_host.c - element-wise ops on the host pool (eltwise_host.h):
 * flat ops in items of EW_CHUNK elements, the shortcut per image. The loops
 * are plain C, compiled once more for AVX-512 where the CPU has it; being
 * exact, both give the same bits. GELU runs on AVX-512 only, with
 * vmath512.h's erfc and exp.
 */
#include "host/eltwise_host.h"

#include "host/host_work.h"
#ifdef CT_HOST_X86
#include "host/vmath512.h"
#endif

/* elements per pool item: 64 KiB of each operand */
#define EW_CHUNK 16384u

enum { EW_ADD, EW_ADD_BWD, EW_ACC, EW_COPY, EW_FILL, EW_RELU, EW_LEAKY, EW_DRELU, EW_DLEAKY,
       EW_SC_FWD, EW_SC_BWD, EW_GELU, EW_DGELU /* AVX-512 only */ };

typedef struct ew {
    int op, which;
    size_t n;
    float v;
    float *y, *y2;        /* written */
    const float *a, *b;   /* read */
    /* the shortcut: per image */
    size_t c, h, w, co, oh, ow, s;
} ew;

static inline __attribute__((always_inline)) void ew_flat(const ew *e, size_t lo, size_t hi)
{
    float *y = e->y, *y2 = e->y2; /* y may be a (in place) */
    const float *a = e->a, *b = e->b;
    switch (e->op) {
    case EW_ADD:
        for (size_t i = lo; i < hi; i++)
            y[i] = a[i] + b[i];
        break;
    case EW_ADD_BWD:
        if (e->which & 1)
            for (size_t i = lo; i < hi; i++)
                y[i] = a[i];
        if (e->which & 2)
            for (size_t i = lo; i < hi; i++)
                y2[i] = a[i];
        break;
    case EW_ACC:
        for (size_t i = lo; i < hi; i++)
            y[i] += a[i];
        break;
    case EW_COPY:
        for (size_t i = lo; i < hi; i++)
            y[i] = a[i];
        break;
    case EW_FILL:
        for (size_t i = lo; i < hi; i++)
            y[i] = e->v;
        break;
    case EW_RELU:
        for (size_t i = lo; i < hi; i++)
            y[i] = a[i] > 0.0f ? a[i] : 0.0f;
        break;
    case EW_LEAKY:
        for (size_t i = lo; i < hi; i++)
            y[i] = a[i] > 0.0f ? a[i] : CT_LEAKY_SLOPE * a[i];
        break;
    case EW_DRELU: /* a: dy, b: x */
        for (size_t i = lo; i < hi; i++)
            y[i] = a[i] * (b[i] > 0.0f ? 1.0f : 0.0f);
        break;
    case EW_DLEAKY:
        for (size_t i = lo; i < hi; i++)
            y[i] = a[i] * (b[i] > 0.0f ? 1.0f : CT_LEAKY_SLOPE);
        break;
    default:
        break;
    }
}

/* image `img` of the shortcut: forward y (co, oh, ow) from x (c, h, w);
 * backward dx (c, h, w) from dy (co, oh, ow) */
static inline __attribute__((always_inline)) void ew_shortcut(const ew *e, size_t img)
{
    size_t s = e->s, W = e->w, OW = e->ow;
    if (e->op == EW_SC_FWD) {
        const float *x = e->a + img * e->c * e->h * W;
        float *y = e->y + img * e->co * e->oh * OW;
        for (size_t ch = 0; ch < e->co; ch++)
            for (size_t oy = 0; oy < e->oh; oy++) {
                float *yr = y + (ch * e->oh + oy) * OW;
                if (ch >= e->c) {
                    for (size_t ox = 0; ox < OW; ox++)
                        yr[ox] = 0.0f;
                    continue;
                }
                const float *xr = x + (ch * e->h + oy * s) * W;
                for (size_t ox = 0; ox < OW; ox++)
                    yr[ox] = xr[ox * s];
            }
        return;
    }
    const float *dy = e->a + img * e->co * e->oh * OW;
    float *dx = e->y + img * e->c * e->h * W;
    for (size_t ch = 0; ch < e->c; ch++)
        for (size_t iy = 0; iy < e->h; iy++) {
            float *dr = dx + (ch * e->h + iy) * W;
            for (size_t ix = 0; ix < W; ix++)
                dr[ix] = 0.0f;
            if (iy % s)
                continue;
            const float *gr = dy + (ch * e->oh + iy / s) * OW;
            for (size_t ox = 0; ox < OW; ox++)
                dr[ox * s] = gr[ox];
        }
}

static void ew_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const ew *e = arg;
    if (e->op == EW_SC_FWD || e->op == EW_SC_BWD) {
        ew_shortcut(e, item);
        return;
    }
    size_t lo = item * EW_CHUNK, hi = lo + EW_CHUNK < e->n ? lo + EW_CHUNK : e->n;
    ew_flat(e, lo, hi);
}

#ifdef CT_HOST_X86
/* GELU, y = x/2 (1 + erf(x / sqrt 2)), and its gradient dx = dy (ncdf2 / 2 +
 * x exp(-x^2 / 2) / sqrt(2 pi)) over [lo, hi), as act.cl computes them but
 * with vmath512.h's erfc and exp (not exact: within a few ulp of it) */
static CT_AVX512 void ew_gelu512(const ew *e, size_t lo, size_t hi)
{
    const __m512 half = _mm512_set1_ps(0.5f), c = _mm512_set1_ps(0.39894228040143268f);
    for (size_t i = lo; i < hi; i += 16) {
        __mmask16 m = ct_tail16(hi - i);
        __m512 x = _mm512_maskz_loadu_ps(m, (e->op == EW_GELU ? e->a : e->b) + i);
        __m512 cdf2 = ct_v_ncdf2(x), r;
        if (e->op == EW_GELU) {
            r = _mm512_mul_ps(_mm512_mul_ps(half, x), cdf2);
        } else {
            __m512 pdf = _mm512_mul_ps(c, ct_v_exp(_mm512_mul_ps(_mm512_mul_ps(x, x), _mm512_set1_ps(-0.5f))));
            r = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, e->a + i), _mm512_fmadd_ps(x, pdf, _mm512_mul_ps(half, cdf2)));
        }
        _mm512_mask_storeu_ps(e->y + i, m, r);
    }
}

static CT_AVX512 void ew_item512(void *arg, size_t item, int thread)
{
    (void)thread;
    const ew *e = arg;
    if (e->op == EW_SC_FWD || e->op == EW_SC_BWD) {
        ew_shortcut(e, item);
        return;
    }
    if (e->op == EW_GELU || e->op == EW_DGELU) {
        size_t lo = item * EW_CHUNK, hi = lo + EW_CHUNK < e->n ? lo + EW_CHUNK : e->n;
        ew_gelu512(e, lo, hi);
        return;
    }
    size_t lo = item * EW_CHUNK, hi = lo + EW_CHUNK < e->n ? lo + EW_CHUNK : e->n;
    ew_flat(e, lo, hi);
}
#endif

int ct_eltwise_host_ok(const ct_context *ctx, size_t n)
{
    return ctx->cls.host_pool && n >= CT_ELTWISE_HOST_MIN;
}

int ct_eltwise_host_act(ct_act act)
{
    return act == CT_ACT_NONE || act == CT_ACT_RELU || act == CT_ACT_LEAKY_RELU ||
           (act == CT_ACT_GELU && ct_host_avx512());
}

/* Maps r[0..nr) (r[0], r[1]: written as flagged), runs `items` items of e
 * with e->y, e->y2, e->a, e->b taken from r[0..3] (NULL where absent). */
static int run(ct_context *ctx, ew *e, ct_hmap_range *r, int nr, size_t items, const char *what)
{
    ct_pool *pool;
    ct_hmap hm;
    int st = ct_host_begin(ctx, r, nr, &hm, &pool, what);
    if (st)
        return st;
    e->y = r[0].host;
    e->y2 = nr > 1 ? r[1].host : NULL;
    e->a = nr > 2 ? r[2].host : NULL;
    e->b = nr > 3 ? r[3].host : NULL;
#ifdef CT_HOST_X86
    ct_pool_run(pool, items, ct_host_avx512() ? ew_item512 : ew_item, e);
#else
    ct_pool_run(pool, items, ew_item, e);
#endif
    return ct_hmap_unmap(ctx, &hm, CT_OK, what);
}

static size_t chunks(size_t n)
{
    return (n + EW_CHUNK - 1) / EW_CHUNK;
}

int ct_host_add(ct_context *ctx, ct_buf y, ct_buf a, ct_buf b, size_t n)
{
    ct_hmap_range r[4] = { { y.mem, y.off, n, 1, NULL }, { NULL, 0, 0, 0, NULL },
                           { a.mem, a.off, n, 0, NULL }, { b.mem, b.off, n, 0, NULL } };
    ew e = { .op = EW_ADD, .n = n };
    return run(ctx, &e, r, 4, chunks(n), "add (host)");
}

int ct_host_add_backward(ct_context *ctx, ct_buf da, ct_buf db, ct_buf dy, size_t n, int which)
{
    ct_hmap_range r[3] = { { which & 1 ? da.mem : NULL, da.off, n, 1, NULL },
                           { which & 2 ? db.mem : NULL, db.off, n, 1, NULL },
                           { dy.mem, dy.off, n, 0, NULL } };
    ew e = { .op = EW_ADD_BWD, .n = n, .which = which };
    return run(ctx, &e, r, 3, chunks(n), "add backward (host)");
}

int ct_host_accumulate(ct_context *ctx, ct_buf dst, ct_buf src, size_t n)
{
    ct_hmap_range r[3] = { { dst.mem, dst.off, n, 1, NULL }, { NULL, 0, 0, 0, NULL },
                           { src.mem, src.off, n, 0, NULL } };
    ew e = { .op = EW_ACC, .n = n };
    return run(ctx, &e, r, 3, chunks(n), "accumulate (host)");
}

int ct_host_copy(ct_context *ctx, ct_buf dst, ct_buf src, size_t n)
{
    ct_hmap_range r[3] = { { dst.mem, dst.off, n, 1, NULL }, { NULL, 0, 0, 0, NULL },
                           { src.mem, src.off, n, 0, NULL } };
    ew e = { .op = EW_COPY, .n = n };
    return run(ctx, &e, r, 3, chunks(n), "copy (host)");
}

int ct_host_fill(ct_context *ctx, ct_buf x, size_t n, float value)
{
    ct_hmap_range r[1] = { { x.mem, x.off, n, 1, NULL } };
    ew e = { .op = EW_FILL, .n = n, .v = value };
    return run(ctx, &e, r, 1, chunks(n), "fill (host)");
}

int ct_host_act_forward(ct_context *ctx, ct_act act, ct_buf y, ct_buf x, size_t n)
{
    if (act == CT_ACT_NONE)
        return x.mem == y.mem && x.off == y.off ? CT_OK : ct_host_copy(ctx, y, x, n);
    ct_hmap_range r[3] = { { y.mem, y.off, n, 1, NULL }, { NULL, 0, 0, 0, NULL },
                           { x.mem, x.off, n, 0, NULL } };
    ew e = { .op = act == CT_ACT_RELU ? EW_RELU : act == CT_ACT_GELU ? EW_GELU : EW_LEAKY, .n = n };
    return run(ctx, &e, r, 3, chunks(n), "activation (host)");
}

int ct_host_act_backward(ct_context *ctx, ct_act act, ct_buf dx, ct_buf dy, ct_buf x, size_t n)
{
    if (act == CT_ACT_NONE)
        return dx.mem == dy.mem && dx.off == dy.off ? CT_OK : ct_host_copy(ctx, dx, dy, n);
    ct_hmap_range r[4] = { { dx.mem, dx.off, n, 1, NULL }, { NULL, 0, 0, 0, NULL },
                           { dy.mem, dy.off, n, 0, NULL }, { x.mem, x.off, n, 0, NULL } };
    ew e = { .op = act == CT_ACT_RELU ? EW_DRELU : act == CT_ACT_GELU ? EW_DGELU : EW_DLEAKY, .n = n };
    return run(ctx, &e, r, 4, chunks(n), "activation backward (host)");
}

/* forward: out = y (n, co, oh, ow) from in = x (n, c, h, w); backward:
 * out = dx (n, c, h, w) from in = dy (n, co, oh, ow); an item per image */
static int shortcut(ct_context *ctx, int fwd, ct_buf out, ct_buf in, int n, int c, int h, int w,
                    int stride, int co, int oh, int ow)
{
    size_t nx = (size_t)n * c * h * w, ny = (size_t)n * co * oh * ow;
    ct_hmap_range r[3] = { { out.mem, out.off, fwd ? ny : nx, 1, NULL }, { NULL, 0, 0, 0, NULL },
                           { in.mem, in.off, fwd ? nx : ny, 0, NULL } };
    ew e = { .op = fwd ? EW_SC_FWD : EW_SC_BWD, .c = (size_t)c, .h = (size_t)h, .w = (size_t)w,
             .co = (size_t)co, .oh = (size_t)oh, .ow = (size_t)ow, .s = (size_t)stride };
    return run(ctx, &e, r, 3, (size_t)n, fwd ? "option-A shortcut (host)" : "option-A shortcut backward (host)");
}

int ct_host_shortcut_a_forward(ct_context *ctx, ct_buf y, ct_buf x, int n, int c, int h, int w,
                               int stride, int co, int oh, int ow)
{
    return shortcut(ctx, 1, y, x, n, c, h, w, stride, co, oh, ow);
}

int ct_host_shortcut_a_backward(ct_context *ctx, ct_buf dx, ct_buf dy, int n, int c, int h, int w,
                                int stride, int co, int oh, int ow)
{
    return shortcut(ctx, 0, dx, dy, n, c, h, w, stride, co, oh, ow);
}
