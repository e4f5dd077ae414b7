/*
 * gemm512.c - row-major SGEMM on host memory with AVX-512 (gemm512.h).
 *
 * Tiles of MR x NR = 12 x 32 sums: per k, two vectors of packed B and twelve
 * broadcasts of packed A, 24 FMAs into 24 registers. k runs in equal slices
 * of at most KC: the B panel a tile reads (kc x NR, up to 128 KiB) and the
 * work item's A block (MP panels of MR rows x kc, up to 192 KiB) stay in L2
 * while the item's tiles walk down its rows. Each slice's sums are added to
 * C in slice order; deeper slices mean fewer passes over C, which is what
 * they were measured to save (docs/BENCHMARKS.md).
 */
#include "host/gemm512.h"

int ct_gemm512(ct_context *ctx, ct_host_work *hw, int ta, int tb, size_t m, size_t n, size_t k,
               float alpha, const float *a, size_t lda, const float *b, size_t ldb, float beta,
               float *c, size_t ldc)
{
    size_t na, nb;
    float *pa, *pb;
    ct_gemm512_pack_size(m, n, k, &na, &nb);
    int st;
    if ((st = ct_host_work_big(ctx, hw, CT_HOST_BIG_GEMM_A, na, &pa)) ||
        (st = ct_host_work_big(ctx, hw, CT_HOST_BIG_GEMM_B, nb, &pb)))
        return st;
    ct_gemm512_run(hw->pool, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pa, pb);
    return CT_OK;
}

#ifdef CT_HOST_X86
#include "host/vmath512.h"

#define MR 12
#define NR 32
#define KC 1024
#define NC 4096
#define MP 4 /* panels of MR rows per work item */
#define NP 8 /* panels of NR columns per work item */
#define PACK_PANELS 4
/* products below which waking the pool's threads costs more than it saves */
#define SERIAL_FMAS (1 << 20)

static size_t ceil_div(size_t a, size_t b)
{
    return (a + b - 1) / b;
}

void ct_gemm512_pack_size(size_t m, size_t n, size_t k, size_t *na, size_t *nb)
{
    size_t kc = ceil_div(k, ceil_div(k, KC)), nc = n < NC ? n : NC;
    *na = ceil_div(m, MR) * MR * kc;
    *nb = ceil_div(nc, NR) * NR * kc;
}

typedef struct gemm {
    int ta, tb;
    size_t m, n, k, lda, ldb, ldc;
    float alpha, beta;
    const float *a, *b;
    float *c, *pa, *pb;
    /* the slice: columns [j0, j0 + nc), k values [p0, p0 + kc) */
    size_t j0, nc, p0, kc;
    size_t a_panels, b_panels, a_items, b_items, m_items, n_items;
} gemm;

/* r[0..16) transposed in place: the off-diagonal halves of blocks of
 * b = 8, 4, 2, 1 rows swapped in turn. */
static CT_AVX512 void tr16(__m512 *r)
{
    for (int b = 8; b; b >>= 1) {
        int lo[16], hi[16];
        for (int l = 0; l < 16; l++) {
            lo[l] = l & b ? 16 + l - b : l;
            hi[l] = l & b ? 16 + l : l + b;
        }
        __m512i il = _mm512_loadu_si512(lo), ih = _mm512_loadu_si512(hi);
        for (int i = 0; i < 16; i++) {
            if (i & b)
                continue;
            __m512 x = r[i], y = r[i + b];
            r[i] = _mm512_permutex2var_ps(x, il, y);
            r[i + b] = _mm512_permutex2var_ps(x, ih, y);
        }
    }
}

/* The rows x kc block at s (row stride ld, kc along the rows) transposed
 * into d: kc rows of w lanes, d's rows dst floats apart; lanes past rows
 * zero; rows <= w <= 16. */
static CT_AVX512 void pack_t(const float *s, size_t ld, size_t rows, size_t kc, float *d,
                             size_t dst, size_t w)
{
    __mmask16 wm = ct_tail16(w);
    for (size_t q0 = 0; q0 < kc; q0 += 16) {
        size_t nq = kc - q0 < 16 ? kc - q0 : 16;
        __mmask16 qm = ct_tail16(nq);
        __m512 r[16];
        for (size_t i = 0; i < 16; i++)
            r[i] = i < rows ? _mm512_maskz_loadu_ps(qm, s + i * ld + q0) : _mm512_setzero_ps();
        tr16(r);
        for (size_t q = 0; q < nq; q++)
            _mm512_mask_storeu_ps(d + (q0 + q) * dst, wm, r[q]);
    }
}

/* A panel ip: rows [ip MR, +MR) of op(A) over the slice's k, as kc rows of
 * MR (zero past m). */
static CT_AVX512 void pack_a(const gemm *g, size_t ip)
{
    size_t i0 = ip * MR, rows = g->m - i0 < MR ? g->m - i0 : MR, kc = g->kc;
    float *d = g->pa + ip * MR * kc;
    if (g->ta) {
        const float *s = g->a + g->p0 * g->lda + i0;
        __mmask16 mk = ct_tail16(rows);
        for (size_t q = 0; q < kc; q++, s += g->lda, d += MR) {
            __m512 v = _mm512_maskz_loadu_ps(mk, s);
            _mm512_mask_storeu_ps(d, 0x0fff, v);
        }
        return;
    }
    pack_t(g->a + i0 * g->lda + g->p0, g->lda, rows, kc, d, MR, MR);
}

/* B panel jp: columns [j0 + jp NR, +NR) of op(B) over the slice's k, as kc
 * rows of NR (zero past the slice's columns). */
static CT_AVX512 void pack_b(const gemm *g, size_t jp)
{
    size_t j0 = g->j0 + jp * NR, cols = g->nc - jp * NR < NR ? g->nc - jp * NR : NR, kc = g->kc;
    float *d = g->pb + jp * NR * kc;
    if (!g->tb) {
        const float *s = g->b + g->p0 * g->ldb + j0;
        __mmask16 m0 = ct_tail16(cols), m1 = cols > 16 ? ct_tail16(cols - 16) : 0;
        for (size_t q = 0; q < kc; q++, s += g->ldb, d += NR) {
            _mm512_store_ps(d, _mm512_maskz_loadu_ps(m0, s));
            _mm512_store_ps(d + 16, _mm512_maskz_loadu_ps(m1, s + 16));
        }
        return;
    }
    /* NR = 32: two halves of 16 columns, each a transpose into rows of NR */
    for (size_t h = 0; h < NR; h += 16) {
        size_t rows = cols > h ? (cols - h < 16 ? cols - h : 16) : 0;
        if (!rows) {
            for (size_t q = 0; q < kc; q++)
                _mm512_store_ps(d + q * NR + h, _mm512_setzero_ps());
            continue;
        }
        pack_t(g->b + (j0 + h) * g->ldb + g->p0, g->ldb, rows, kc, d + h, NR, 16);
    }
}

static void pack_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const gemm *g = arg;
    if (item < g->b_items) {
        size_t e = (item + 1) * PACK_PANELS;
        for (size_t jp = item * PACK_PANELS; jp < e && jp < g->b_panels; jp++)
            pack_b(g, jp);
        return;
    }
    item -= g->b_items;
    /* A only when transposed (tile_rows reads an untransposed A in place;
     * reading A^T in place, a line per product, measured 1.2x slower) */
    size_t e = (item + 1) * PACK_PANELS;
    for (size_t ip = item * PACK_PANELS; ip < e && ip < g->a_panels; ip++)
        pack_a(g, ip);
}

#define DECL(R) __m512 s##R##a = _mm512_setzero_ps(), s##R##b = _mm512_setzero_ps()
#define FMA(R)                                                                                    \
    do {                                                                                          \
        __m512 av = _mm512_set1_ps(pa[R]);                                                        \
        s##R##a = _mm512_fmadd_ps(av, b0, s##R##a);                                               \
        s##R##b = _mm512_fmadd_ps(av, b1, s##R##b);                                               \
    } while (0)
#define STORE(R)                                                                                  \
    do {                                                                                          \
        _mm512_store_ps(t + (R) * NR, s##R##a);                                                   \
        _mm512_store_ps(t + (R) * NR + 16, s##R##b);                                              \
    } while (0)
#define R12(M)                                                                                    \
    M(0);                                                                                         \
    M(1);                                                                                         \
    M(2);                                                                                         \
    M(3);                                                                                         \
    M(4);                                                                                         \
    M(5);                                                                                         \
    M(6);                                                                                         \
    M(7);                                                                                         \
    M(8);                                                                                         \
    M(9);                                                                                         \
    M(10);                                                                                        \
    M(11)

/* The MR x NR sums of kc products of panels pa and pb, into t (MR rows of
 * NR, 64-byte aligned). */
static CT_AVX512 void tile(size_t kc, const float *pa, const float *pb, float *t)
{
    R12(DECL);
    for (size_t q = 0; q < kc; q++, pa += MR, pb += NR) {
        __m512 b0 = _mm512_load_ps(pb), b1 = _mm512_load_ps(pb + 16);
        R12(FMA);
    }
    R12(STORE);
}

/* The same sums with A read in place: op(A) = A row-major (not
 * transposed), rows MR rows from a (row stride lda) over the slice's k,
 * each product's A value broadcast from its row. Packing A transposed it
 * through 16 x 16 blocks, a pass over all of A per slice that cost as
 * much as a third of the product where n is small (8192 x 192 x 768: A is
 * 6.3 M floats, each used 192 times). The item's rows stay in L1/L2
 * across its column panels as the packed block did. Rows past m (the last
 * panel) read row rows - 1 again; add_tile drops them. */
static CT_AVX512 void tile_rows(size_t kc, const float *a, size_t lda, size_t rows, const float *pb,
                                float *t)
{
    const float *pa0 = a, *pa1 = a + (rows > 1 ? 1 : rows - 1) * lda, *pa2 = a + (rows > 2 ? 2 : rows - 1) * lda;
    const float *pa3 = a + (rows > 3 ? 3 : rows - 1) * lda, *pa4 = a + (rows > 4 ? 4 : rows - 1) * lda;
    const float *pa5 = a + (rows > 5 ? 5 : rows - 1) * lda, *pa6 = a + (rows > 6 ? 6 : rows - 1) * lda;
    const float *pa7 = a + (rows > 7 ? 7 : rows - 1) * lda, *pa8 = a + (rows > 8 ? 8 : rows - 1) * lda;
    const float *pa9 = a + (rows > 9 ? 9 : rows - 1) * lda, *pa10 = a + (rows > 10 ? 10 : rows - 1) * lda;
    const float *pa11 = a + (rows > 11 ? 11 : rows - 1) * lda;
    R12(DECL);
#define FMAD(R)                                                                                   \
    do {                                                                                          \
        __m512 av = _mm512_set1_ps(pa##R[q]);                                                     \
        s##R##a = _mm512_fmadd_ps(av, b0, s##R##a);                                               \
        s##R##b = _mm512_fmadd_ps(av, b1, s##R##b);                                               \
    } while (0)
    for (size_t q = 0; q < kc; q++, pb += NR) {
        __m512 b0 = _mm512_load_ps(pb), b1 = _mm512_load_ps(pb + 16);
        R12(FMAD);
    }
#undef FMAD
    R12(STORE);
}

/* C's rows x cols block at c from the sums t: C = alpha t + beta C on the
 * first slice (beta = 0: C not read), C += alpha t on the others. */
static CT_AVX512 void add_tile(const gemm *g, const float *t, float *c, size_t rows, size_t cols)
{
    __mmask16 m0 = ct_tail16(cols), m1 = cols > 16 ? ct_tail16(cols - 16) : 0;
    __m512 al = _mm512_set1_ps(g->alpha), be = _mm512_set1_ps(g->p0 ? 1.0f : g->beta);
    int read = g->p0 || g->beta != 0.0f;
    for (size_t r = 0; r < rows; r++, t += NR, c += g->ldc) {
        __m512 v0 = _mm512_mul_ps(al, _mm512_load_ps(t));
        __m512 v1 = _mm512_mul_ps(al, _mm512_load_ps(t + 16));
        if (read) {
            v0 = _mm512_fmadd_ps(be, _mm512_maskz_loadu_ps(m0, c), v0);
            v1 = _mm512_fmadd_ps(be, _mm512_maskz_loadu_ps(m1, c + 16), v1);
        }
        _mm512_mask_storeu_ps(c, m0, v0);
        _mm512_mask_storeu_ps(c + 16, m1, v1);
    }
}

static CT_AVX512 void compute_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const gemm *g = arg;
    size_t ib = item / g->n_items, jb = item % g->n_items;
    size_t ip0 = ib * MP, ip1 = ip0 + MP < g->a_panels ? ip0 + MP : g->a_panels;
    size_t jp0 = jb * NP, jp1 = jp0 + NP < g->b_panels ? jp0 + NP : g->b_panels;
    _Alignas(64) float t[MR * NR];
    for (size_t jp = jp0; jp < jp1; jp++) {
        const float *pb = g->pb + jp * NR * g->kc;
        size_t col = g->j0 + jp * NR, cols = g->nc - jp * NR < NR ? g->nc - jp * NR : NR;
        for (size_t ip = ip0; ip < ip1; ip++) {
            size_t row = ip * MR, rows = g->m - row < MR ? g->m - row : MR;
            float *cr = g->c + row * g->ldc + col;
            for (size_t r = 0; r < rows; r++) {
                _mm_prefetch((const char *)(cr + r * g->ldc), _MM_HINT_T0);
                _mm_prefetch((const char *)(cr + r * g->ldc + 16), _MM_HINT_T0);
            }
            if (g->ta)
                tile(g->kc, g->pa + ip * MR * g->kc, pb, t);
            else
                tile_rows(g->kc, g->a + row * g->lda + g->p0, g->lda, rows, pb, t);
            add_tile(g, t, cr, rows, cols);
        }
    }
}

/* The items on the pool, or on this thread without one. */
static void run(ct_pool *pool, size_t items, ct_pool_fn fn, void *arg)
{
    if (pool) {
        ct_pool_run(pool, items, fn, arg);
        return;
    }
    for (size_t i = 0; i < items; i++)
        fn(arg, i, 0);
}

void ct_gemm512_run(ct_pool *pool, int ta, int tb, size_t m, size_t n, size_t k, float alpha,
                    const float *a, size_t lda, const float *b, size_t ldb, float beta, float *c,
                    size_t ldc, float *pa, float *pb)
{
    gemm g = { .ta = ta, .tb = tb, .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc,
               .alpha = alpha, .beta = beta, .a = a, .b = b, .c = c, .pa = pa, .pb = pb };
    g.a_panels = ceil_div(m, MR);
    g.a_items = ceil_div(g.a_panels, PACK_PANELS);
    g.m_items = ceil_div(g.a_panels, MP);
    size_t kc = ceil_div(k, ceil_div(k, KC)); /* equal slices of at most KC */
    int serial = (double)m * (double)n * (double)k < SERIAL_FMAS;
    for (g.j0 = 0; g.j0 < n; g.j0 += NC) {
        g.nc = n - g.j0 < NC ? n - g.j0 : NC;
        g.b_panels = ceil_div(g.nc, NR);
        g.b_items = ceil_div(g.b_panels, PACK_PANELS);
        g.n_items = ceil_div(g.b_panels, NP);
        for (g.p0 = 0; g.p0 < k; g.p0 += g.kc) {
            g.kc = k - g.p0 < kc ? k - g.p0 : kc;
            run(serial ? NULL : pool, g.b_items + (ta ? g.a_items : 0), pack_item, &g);
            run(serial ? NULL : pool, g.m_items * g.n_items, compute_item, &g);
        }
    }
}

#else /* not x86: never called (ct_host_avx512() is 0) */

void ct_gemm512_pack_size(size_t m, size_t n, size_t k, size_t *na, size_t *nb)
{
    (void)m, (void)n, (void)k;
    *na = *nb = 0;
}

void ct_gemm512_run(ct_pool *pool, int ta, int tb, size_t m, size_t n, size_t k, float alpha,
                    const float *a, size_t lda, const float *b, size_t ldb, float beta, float *c,
                    size_t ldc, float *pa, float *pb)
{
    (void)pool, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda;
    (void)b, (void)ldb, (void)beta, (void)c, (void)ldc, (void)pa, (void)pb;
}

#endif
