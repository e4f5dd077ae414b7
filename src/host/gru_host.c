/*
 * gru_host.c - the GRU's step kernels on the host (gru_host.h): one pool
 * item per batch row, 16 units per AVX-512 vector, masked at the row's
 * end; each expression in the kernel's order.
 */
#include "host/gru_host.h"

#include "host/host_work.h"

int ct_gru_host_ok(const ct_context *ctx)
{
    return ctx->cls.host_pool && ct_host_avx512();
}

#ifdef CT_HOST_X86
#include "host/vmath512.h"

typedef struct hg {
    size_t H;
    int has_prev;
    float *gates, *ghn, *h, *dgi, *dgh, *dhp;
    const float *gh, *bi, *bh, *hp, *dh;
} hg;

static CT_AVX512 void fwd_item(void *arg, size_t n, int thread)
{
    (void)thread;
    const hg *g = arg;
    size_t H = g->H;
    float *gr = g->gates + n * 3 * H;
    const __m512 one = _mm512_set1_ps(1.0f);
    for (size_t j = 0; j < H; j += 16) {
        __mmask16 t = ct_tail16(H - j);
        size_t k = n * H + j;
        __m512 hr = _mm512_maskz_loadu_ps(t, g->bh + j), hz = _mm512_maskz_loadu_ps(t, g->bh + H + j);
        __m512 hn = _mm512_maskz_loadu_ps(t, g->bh + 2 * H + j), hp = _mm512_setzero_ps();
        if (g->has_prev) {
            const float *ghr = g->gh + n * 3 * H + j;
            hr = _mm512_add_ps(hr, _mm512_maskz_loadu_ps(t, ghr));
            hz = _mm512_add_ps(hz, _mm512_maskz_loadu_ps(t, ghr + H));
            hn = _mm512_add_ps(hn, _mm512_maskz_loadu_ps(t, ghr + 2 * H));
            hp = _mm512_maskz_loadu_ps(t, g->hp + k);
        }
        __m512 ir = _mm512_add_ps(_mm512_maskz_loadu_ps(t, gr + j), _mm512_maskz_loadu_ps(t, g->bi + j));
        __m512 iz = _mm512_add_ps(_mm512_maskz_loadu_ps(t, gr + H + j),
                                  _mm512_maskz_loadu_ps(t, g->bi + H + j));
        __m512 in = _mm512_add_ps(_mm512_maskz_loadu_ps(t, gr + 2 * H + j),
                                  _mm512_maskz_loadu_ps(t, g->bi + 2 * H + j));
        __m512 r = ct_v_sigmoid(_mm512_add_ps(ir, hr)), z = ct_v_sigmoid(_mm512_add_ps(iz, hz));
        __m512 nv = ct_v_tanh(_mm512_add_ps(in, _mm512_mul_ps(r, hn)));
        _mm512_mask_storeu_ps(gr + j, t, r);
        _mm512_mask_storeu_ps(gr + H + j, t, z);
        _mm512_mask_storeu_ps(gr + 2 * H + j, t, nv);
        _mm512_mask_storeu_ps(g->ghn + k, t, hn);
        _mm512_mask_storeu_ps(g->h + k, t, _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(one, z), nv),
                                                         _mm512_mul_ps(z, hp)));
    }
}

static CT_AVX512 void bwd_item(void *arg, size_t n, int thread)
{
    (void)thread;
    const hg *g = arg;
    size_t H = g->H;
    const float *gr = g->gates + n * 3 * H;
    float *di = g->dgi + n * 3 * H, *dg = g->dgh + n * 3 * H;
    const __m512 one = _mm512_set1_ps(1.0f);
    for (size_t j = 0; j < H; j += 16) {
        __mmask16 t = ct_tail16(H - j);
        size_t k = n * H + j;
        __m512 r = _mm512_maskz_loadu_ps(t, gr + j), z = _mm512_maskz_loadu_ps(t, gr + H + j);
        __m512 nv = _mm512_maskz_loadu_ps(t, gr + 2 * H + j);
        __m512 hp = g->has_prev ? _mm512_maskz_loadu_ps(t, g->hp + k) : _mm512_setzero_ps();
        __m512 d = _mm512_maskz_loadu_ps(t, g->dh + k);
        __m512 an = _mm512_mul_ps(_mm512_mul_ps(d, _mm512_sub_ps(one, z)),
                                  _mm512_sub_ps(one, _mm512_mul_ps(nv, nv)));
        __m512 ar = _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(an, _mm512_maskz_loadu_ps(t, g->ghn + k)), r),
                                  _mm512_sub_ps(one, r));
        __m512 az = _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(d, _mm512_sub_ps(hp, nv)), z),
                                  _mm512_sub_ps(one, z));
        _mm512_mask_storeu_ps(di + j, t, ar);
        _mm512_mask_storeu_ps(di + H + j, t, az);
        _mm512_mask_storeu_ps(di + 2 * H + j, t, an);
        _mm512_mask_storeu_ps(dg + j, t, ar);
        _mm512_mask_storeu_ps(dg + H + j, t, az);
        _mm512_mask_storeu_ps(dg + 2 * H + j, t, _mm512_mul_ps(an, r));
        if (g->has_prev)
            _mm512_mask_storeu_ps(g->dhp + k, t, _mm512_add_ps(_mm512_maskz_loadu_ps(t, g->dhp + k),
                                                               _mm512_mul_ps(d, z)));
    }
}

/* maps r[0..n), runs fn over the N rows with the pointers `bind` sets */
static int run(ct_context *ctx, ct_hmap_range *r, int n, size_t N, ct_pool_fn fn, hg *g,
               void (*bind)(hg *g, const ct_hmap_range *r), const char *what)
{
    ct_pool *pool;
    ct_hmap hm;
    int st = ct_host_begin(ctx, r, n, &hm, &pool, what);
    if (st)
        return st;
    bind(g, r);
    ct_pool_run(pool, N, fn, g);
    return ct_hmap_unmap(ctx, &hm, CT_OK, what);
}

static void bind_fwd(hg *g, const ct_hmap_range *r)
{
    g->gates = r[0].host, g->gh = r[1].host, g->bi = r[2].host, g->bh = r[3].host;
    g->hp = r[4].host, g->ghn = r[5].host, g->h = r[6].host;
}

static void bind_bwd(hg *g, const ct_hmap_range *r)
{
    g->dgi = r[0].host, g->dgh = r[1].host, g->gates = r[2].host, g->ghn = r[3].host;
    g->hp = r[4].host, g->dh = r[5].host, g->dhp = r[6].host;
}

int ct_gru_host_fwd(ct_context *ctx, ct_buf gates, ct_buf gh, ct_buf bih, ct_buf bhh, ct_buf h_prev,
                    ct_buf ghn, ct_buf h, size_t N, size_t H, int has_prev)
{
    size_t nh = N * H;
    ct_hmap_range r[7] = { { gates.mem, gates.off, 3 * nh, 1, NULL },
                           { has_prev ? gh.mem : NULL, gh.off, 3 * nh, 0, NULL },
                           { bih.mem, bih.off, 3 * H, 0, NULL }, { bhh.mem, bhh.off, 3 * H, 0, NULL },
                           { has_prev ? h_prev.mem : NULL, h_prev.off, nh, 0, NULL },
                           { ghn.mem, ghn.off, nh, 1, NULL }, { h.mem, h.off, nh, 1, NULL } };
    hg g = { H, has_prev, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL };
    return run(ctx, r, 7, N, fwd_item, &g, bind_fwd, "gru step (host)");
}

int ct_gru_host_bwd(ct_context *ctx, ct_buf dgi, ct_buf dgh, ct_buf gates, ct_buf ghn, ct_buf h_prev,
                    ct_buf dh, ct_buf dh_prev, size_t N, size_t H, int has_prev)
{
    size_t nh = N * H;
    ct_hmap_range r[7] = { { dgi.mem, dgi.off, 3 * nh, 1, NULL }, { dgh.mem, dgh.off, 3 * nh, 1, NULL },
                           { gates.mem, gates.off, 3 * nh, 0, NULL }, { ghn.mem, ghn.off, nh, 0, NULL },
                           { has_prev ? h_prev.mem : NULL, h_prev.off, nh, 0, NULL },
                           { dh.mem, dh.off, nh, 0, NULL },
                           { has_prev ? dh_prev.mem : NULL, dh_prev.off, nh, 1, NULL } };
    hg g = { H, has_prev, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL };
    return run(ctx, r, 7, N, bwd_item, &g, bind_bwd, "gru step backward (host)");
}
#else
int ct_gru_host_fwd(ct_context *ctx, ct_buf gates, ct_buf gh, ct_buf bih, ct_buf bhh, ct_buf h_prev,
                    ct_buf ghn, ct_buf h, size_t N, size_t H, int has_prev)
{
    (void)gates, (void)gh, (void)bih, (void)bhh, (void)h_prev, (void)ghn, (void)h, (void)N, (void)H;
    (void)has_prev;
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "gru host path: not built for this CPU");
}

int ct_gru_host_bwd(ct_context *ctx, ct_buf dgi, ct_buf dgh, ct_buf gates, ct_buf ghn, ct_buf h_prev,
                    ct_buf dh, ct_buf dh_prev, size_t N, size_t H, int has_prev)
{
    (void)dgi, (void)dgh, (void)gates, (void)ghn, (void)h_prev, (void)dh, (void)dh_prev, (void)N, (void)H;
    (void)has_prev;
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "gru host path: not built for this CPU");
}
#endif
