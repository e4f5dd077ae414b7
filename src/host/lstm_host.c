/*
 * lstm_host.c - the LSTM's element-wise parts on the host (lstm_host.h):
 * one pool item per batch row (steps) or per 16 columns (bias sums), 16
 * units per AVX-512 vector, masked at the row's end.
 */
#include "host/lstm_host.h"

#include <string.h>

#include "host/host_work.h"

#ifdef CT_HOST_X86
#include "host/vmath512.h"

typedef struct hl {
    size_t N, H, G, rows;
    int has_prev;
    float *gates, *c, *h, *dgates, *dc, *db1, *db2;
    const float *cp, *cc, *dh, *b1, *b2;
} hl;

static CT_AVX512 void bias_item(void *arg, size_t r, int thread)
{
    (void)thread;
    const hl *l = arg;
    float *g = l->gates + r * l->G;
    for (size_t j = 0; j < l->G; j += 16) {
        __mmask16 t = ct_tail16(l->G - j);
        _mm512_mask_storeu_ps(g + j, t, _mm512_add_ps(_mm512_maskz_loadu_ps(t, l->b1 + j),
                                                      _mm512_maskz_loadu_ps(t, l->b2 + j)));
    }
}

static CT_AVX512 void fwd_item(void *arg, size_t n, int thread)
{
    (void)thread;
    const hl *l = arg;
    size_t H = l->H;
    float *gr = l->gates + n * 4 * H;
    for (size_t j = 0; j < H; j += 16) {
        __mmask16 t = ct_tail16(H - j);
        __m512 i = ct_v_sigmoid(_mm512_maskz_loadu_ps(t, gr + j));
        __m512 f = ct_v_sigmoid(_mm512_maskz_loadu_ps(t, gr + H + j));
        __m512 g = ct_v_tanh(_mm512_maskz_loadu_ps(t, gr + 2 * H + j));
        __m512 o = ct_v_sigmoid(_mm512_maskz_loadu_ps(t, gr + 3 * H + j));
        _mm512_mask_storeu_ps(gr + j, t, i);
        _mm512_mask_storeu_ps(gr + H + j, t, f);
        _mm512_mask_storeu_ps(gr + 2 * H + j, t, g);
        _mm512_mask_storeu_ps(gr + 3 * H + j, t, o);
        size_t k = n * H + j;
        __m512 cp = l->has_prev ? _mm512_maskz_loadu_ps(t, l->cp + k) : _mm512_setzero_ps();
        /* f cp + i g, as the kernel writes it (two products, one sum) */
        __m512 ct = _mm512_add_ps(_mm512_mul_ps(f, cp), _mm512_mul_ps(i, g));
        _mm512_mask_storeu_ps(l->c + k, t, ct);
        _mm512_mask_storeu_ps(l->h + k, t, _mm512_mul_ps(o, ct_v_tanh(ct)));
    }
}

static CT_AVX512 void bwd_item(void *arg, size_t n, int thread)
{
    (void)thread;
    const hl *l = arg;
    size_t H = l->H;
    const float *gr = l->gates + n * 4 * H;
    float *dr = l->dgates + n * 4 * H;
    const __m512 one = _mm512_set1_ps(1.0f);
    for (size_t j = 0; j < H; j += 16) {
        __mmask16 t = ct_tail16(H - j);
        size_t k = n * H + j;
        __m512 i = _mm512_maskz_loadu_ps(t, gr + j), f = _mm512_maskz_loadu_ps(t, gr + H + j);
        __m512 g = _mm512_maskz_loadu_ps(t, gr + 2 * H + j), o = _mm512_maskz_loadu_ps(t, gr + 3 * H + j);
        __m512 tc = ct_v_tanh(_mm512_maskz_loadu_ps(t, l->cc + k));
        __m512 cp = l->has_prev ? _mm512_maskz_loadu_ps(t, l->cp + k) : _mm512_setzero_ps();
        __m512 dhv = _mm512_maskz_loadu_ps(t, l->dh + k);
        __m512 dct = _mm512_add_ps(_mm512_maskz_loadu_ps(t, l->dc + k),
                                   _mm512_mul_ps(_mm512_mul_ps(dhv, o),
                                                 _mm512_sub_ps(one, _mm512_mul_ps(tc, tc))));
        _mm512_mask_storeu_ps(dr + j, t, _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(dct, g), i),
                                                       _mm512_sub_ps(one, i)));
        _mm512_mask_storeu_ps(dr + H + j, t, _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(dct, cp), f),
                                                           _mm512_sub_ps(one, f)));
        _mm512_mask_storeu_ps(dr + 2 * H + j, t, _mm512_mul_ps(_mm512_mul_ps(dct, i),
                                                               _mm512_sub_ps(one, _mm512_mul_ps(g, g))));
        _mm512_mask_storeu_ps(dr + 3 * H + j, t, _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(dhv, tc), o),
                                                               _mm512_sub_ps(one, o)));
        _mm512_mask_storeu_ps(l->dc + k, t, _mm512_mul_ps(dct, f));
    }
}

/* item: columns 16 item .. 16 item + 15, summed down the rows in order */
static CT_AVX512 void dbias_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const hl *l = arg;
    size_t j = item * 16;
    __mmask16 t = ct_tail16(l->G - j);
    __m512 s = _mm512_setzero_ps();
    for (size_t r = 0; r < l->rows; r++)
        s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(t, l->dgates + r * l->G + j));
    _mm512_mask_storeu_ps(l->db1 + j, t, _mm512_add_ps(_mm512_maskz_loadu_ps(t, l->db1 + j), s));
    _mm512_mask_storeu_ps(l->db2 + j, t, _mm512_add_ps(_mm512_maskz_loadu_ps(t, l->db2 + j), s));
}

static int run(ct_context *ctx, ct_hmap_range *r, int n, size_t items, ct_pool_fn fn, hl *l,
               const char *what)
{
    ct_pool *pool;
    ct_hmap hm;
    int st = ct_host_begin(ctx, r, n, &hm, &pool, what);
    if (st)
        return st;
    l->gates = r[0].host;
    l->c = n > 1 ? r[1].host : NULL;
    l->h = n > 2 ? r[2].host : NULL;
    l->dgates = n > 3 ? r[3].host : NULL;
    l->dc = n > 4 ? r[4].host : NULL;
    l->db1 = n > 5 ? r[5].host : NULL;
    l->db2 = n > 6 ? r[6].host : NULL;
    l->cp = n > 7 ? r[7].host : NULL;
    l->cc = n > 8 ? r[8].host : NULL;
    l->dh = n > 9 ? r[9].host : NULL;
    ct_pool_run(pool, items, fn, l);
    return ct_hmap_unmap(ctx, &hm, CT_OK, what);
}
#endif /* CT_HOST_X86 */

int ct_lstm_host_ok(const ct_context *ctx)
{
    return ctx->cls.host_pool && ct_host_avx512();
}

#ifdef CT_HOST_X86
#define NOBUF { NULL, 0, 0, 0, NULL }

int ct_lstm_host_bias(ct_context *ctx, ct_buf gates, ct_buf bih, ct_buf bhh, size_t rows, size_t G)
{
    ct_hmap_range r[3] = { { gates.mem, gates.off, rows * G, 1, NULL }, { bih.mem, bih.off, G, 0, NULL },
                           { bhh.mem, bhh.off, G, 0, NULL } };
    hl l;
    memset(&l, 0, sizeof l);
    l.G = G;
    ct_pool *pool;
    ct_hmap hm;
    int st = ct_host_begin(ctx, r, 3, &hm, &pool, "lstm bias (host)");
    if (st)
        return st;
    l.gates = r[0].host, l.b1 = r[1].host, l.b2 = r[2].host;
    ct_pool_run(pool, rows, bias_item, &l);
    return ct_hmap_unmap(ctx, &hm, CT_OK, "lstm bias (host)");
}

int ct_lstm_host_fwd(ct_context *ctx, ct_buf gates, ct_buf c_prev, ct_buf c, ct_buf h, size_t N,
                     size_t H, int has_prev)
{
    size_t nh = N * H;
    ct_hmap_range r[8] = { { gates.mem, gates.off, 4 * nh, 1, NULL }, { c.mem, c.off, nh, 1, NULL },
                           { h.mem, h.off, nh, 1, NULL }, NOBUF, NOBUF, NOBUF, NOBUF,
                           { has_prev ? c_prev.mem : NULL, c_prev.off, nh, 0, NULL } };
    hl l;
    memset(&l, 0, sizeof l);
    l.N = N, l.H = H, l.has_prev = has_prev;
    return run(ctx, r, 8, N, fwd_item, &l, "lstm step (host)");
}

int ct_lstm_host_bwd(ct_context *ctx, ct_buf dgates, ct_buf gates, ct_buf c, ct_buf c_prev, ct_buf dh,
                     ct_buf dc, size_t N, size_t H, int has_prev)
{
    size_t nh = N * H;
    ct_hmap_range r[10] = { { gates.mem, gates.off, 4 * nh, 0, NULL }, NOBUF, NOBUF,
                            { dgates.mem, dgates.off, 4 * nh, 1, NULL }, { dc.mem, dc.off, nh, 1, NULL },
                            NOBUF, NOBUF, { has_prev ? c_prev.mem : NULL, c_prev.off, nh, 0, NULL },
                            { c.mem, c.off, nh, 0, NULL }, { dh.mem, dh.off, nh, 0, NULL } };
    hl l;
    memset(&l, 0, sizeof l);
    l.N = N, l.H = H, l.has_prev = has_prev;
    return run(ctx, r, 10, N, bwd_item, &l, "lstm step backward (host)");
}

int ct_lstm_host_dbias(ct_context *ctx, ct_buf dbih, ct_buf dbhh, ct_buf dgates, size_t rows, size_t G)
{
    ct_hmap_range r[7] = { { dgates.mem, dgates.off, rows * G, 0, NULL }, NOBUF, NOBUF,
                           { dgates.mem, dgates.off, rows * G, 0, NULL }, NOBUF,
                           { dbih.mem, dbih.off, G, 1, NULL }, { dbhh.mem, dbhh.off, G, 1, NULL } };
    hl l;
    memset(&l, 0, sizeof l);
    l.G = G, l.rows = rows;
    return run(ctx, r, 7, (G + 15) / 16, dbias_item, &l, "lstm bias gradient (host)");
}
#else
int ct_lstm_host_bias(ct_context *ctx, ct_buf gates, ct_buf bih, ct_buf bhh, size_t rows, size_t G)
{
    (void)gates, (void)bih, (void)bhh, (void)rows, (void)G;
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "lstm host path: not built for this CPU");
}

int ct_lstm_host_fwd(ct_context *ctx, ct_buf gates, ct_buf c_prev, ct_buf c, ct_buf h, size_t N,
                     size_t H, int has_prev)
{
    (void)gates, (void)c_prev, (void)c, (void)h, (void)N, (void)H, (void)has_prev;
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "lstm host path: not built for this CPU");
}

int ct_lstm_host_bwd(ct_context *ctx, ct_buf dgates, ct_buf gates, ct_buf c, ct_buf c_prev, ct_buf dh,
                     ct_buf dc, size_t N, size_t H, int has_prev)
{
    (void)dgates, (void)gates, (void)c, (void)c_prev, (void)dh, (void)dc, (void)N, (void)H;
    (void)has_prev;
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "lstm host path: not built for this CPU");
}

int ct_lstm_host_dbias(ct_context *ctx, ct_buf dbih, ct_buf dbhh, ct_buf dgates, size_t rows, size_t G)
{
    (void)dbih, (void)dbhh, (void)dgates, (void)rows, (void)G;
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "lstm host path: not built for this CPU");
}
#endif
