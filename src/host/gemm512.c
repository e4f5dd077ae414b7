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
 *
 * bf16 operands (CT_GEMM512_BF16_*): with AVX512_BF16's dot products (where
 * they pay, host_work.h) the panels are packed straight from the operands
 * as pairs of k values (kp = ceil(kc / 2) rows of bf16 pairs, a pair per
 * 32-bit lane, rounded to nearest even, an odd kc's last pair padded with a
 * zero; no float32 panel) and a tile is 24 vdpbf16ps per k pair (each lane
 * two products added in float32), the 12 broadcasts being pairs of A;
 * without, the panels are packed as above, rounded in place (bf16, or fp16
 * through F16C) and run through the float32 tiles. Either way every product is exact (a bf16 product fits
 * a float32) and the sums are float32: products of bf16 operands,
 * accumulated in float32, as PyTorch's bf16 autocast computes them. A is
 * always packed then (in place, it would be rounded at every use).
 *
 * AMX (CT_GEMM512_BF16_AMX, where ct_host_amx() says so): B packed as the
 * dot products' pair panels, A as AMX_MR rows of pairs (each row its k
 * pairs), both padded with zero pairs to whole tiles of 16 pairs; a tile
 * of AMX_MR x NR sums is four 16 x 16 accumulator tiles, fed per 16 pairs
 * by two A tiles, two B tiles and four TDPBF16PS (docs/GEMM.md).
 */
#include "host/gemm512.h"

#include <string.h>

int ct_gemm512_vec_mode(const ct_context *ctx)
{
    if (ctx->precision == CT_PRECISION_FP16)
        return CT_GEMM512_FP16_ROUND;
    if (ctx->precision != CT_PRECISION_BF16)
        return CT_GEMM512_F32;
    return ct_host_avx512_bf16() ? CT_GEMM512_BF16_DOT : CT_GEMM512_BF16_ROUND;
}

int ct_gemm512_mode(const ct_context *ctx)
{
    return ctx->precision == CT_PRECISION_BF16 && ct_host_amx() ? CT_GEMM512_BF16_AMX : ct_gemm512_vec_mode(ctx);
}

int ct_gemm512(ct_context *ctx, ct_host_work *hw, int ta, int tb, size_t m, size_t n, size_t k,
               float alpha, const float *a, size_t lda, const float *b, size_t ldb, float beta,
               float *c, size_t ldc)
{
    size_t na, nb;
    float *pa, *pb;
    int mode = ct_gemm512_mode(ctx);
    ct_gemm512_pack_size(m, n, k, mode, &na, &nb);
    int st;
    if ((st = ct_host_work_big(ctx, hw, CT_HOST_BIG_GEMM_A, na, &pa)) ||
        (st = ct_host_work_big(ctx, hw, CT_HOST_BIG_GEMM_B, nb, &pb)))
        return st;
    ct_gemm512_run(hw->pool, mode, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pa, pb);
    return CT_OK;
}

#ifdef CT_HOST_X86
#include "host/amx.h"
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

/* AMX (CT_GEMM512_BF16_AMX): tiles of AMX_MR x NR sums, four 16 x 16
 * accumulator tiles; a slice's kc k values are amx_kp(kc) pair rows,
 * whole tiles of 16 pairs (zero pairs past kc) */
#define AMX_MR 32

static size_t amx_kp(size_t kc)
{
    return ceil_div(kc, 32) * 16;
}

/* Floats (or, with the dot products, 32-bit bf16 pairs) of the packed
 * panels: float32 panels of kc rows, or pair panels of ceil(kc / 2) rows
 * (the pairs are packed straight from the operands, no float32 panel). */
void ct_gemm512_pack_size(size_t m, size_t n, size_t k, int mode, size_t *na, size_t *nb)
{
    size_t kc = ceil_div(k, ceil_div(k, KC)), nc = n < NC ? n : NC;
    if (mode == CT_GEMM512_BF16_AMX) { /* pair rows padded to whole tiles of 16 */
        *na = ceil_div(m, AMX_MR) * AMX_MR * amx_kp(kc);
        *nb = ceil_div(nc, NR) * NR * amx_kp(kc);
        return;
    }
    size_t rows = mode == CT_GEMM512_BF16_DOT ? (kc + 1) / 2 : kc;
    *na = ceil_div(m, MR) * MR * rows;
    *nb = ceil_div(nc, NR) * NR * rows;
}

typedef struct gemm {
    int ta, tb, mode;
    size_t m, n, k, lda, ldb, ldc;
    float alpha, beta;
    const float *a, *b;
    float *c, *pa, *pb; /* the float32 panels (NULL with the dot products) */
    uint32_t *qa, *qb;  /* CT_GEMM512_BF16_DOT: the panels as bf16 pairs (else NULL) */
    /* the slice: columns [j0, j0 + nc), k values [p0, p0 + kc) */
    size_t j0, nc, p0, kc;
    size_t a_panels, b_panels, a_items, b_items, m_items, n_items;
} gemm;

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
        ct_tr16(r);
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

/* After packing a float32 panel p (of width w): the rounding modes' rounding */
static void to_16bit(const gemm *g, float *p, size_t w)
{
    if (g->mode == CT_GEMM512_BF16_ROUND || g->mode == CT_GEMM512_FP16_ROUND)
        ct_round16_copy(p, p, g->kc * w, g->mode == CT_GEMM512_FP16_ROUND);
}

/* Pairs straight from the operand, in one pass (CT_GEMM512_BF16_DOT).
 * k-major source (element (q, c) at s[q ld + c]: A^T, B): pair row r of
 * lanes c < w holds rows 2r and 2r + 1 of the w columns, converted and
 * interleaved; dst rows `width` lanes apart. */
static CT_AVX512BF16 void pairs_kmajor(const float *s, size_t ld, size_t kc, size_t w, uint32_t *d, size_t width)
{
    for (size_t r = 0; 2 * r < kc; r++, d += width)
        for (size_t h = 0; h < width; h += 16) { /* lanes past the w columns: zero */
            __mmask16 m = h < w ? ct_tail16(w - h < 16 ? w - h : 16) : 0;
            __mmask16 sm = ct_tail16(width - h < 16 ? width - h : 16);
            __m512 lo = _mm512_maskz_loadu_ps(m, s + 2 * r * ld + h);
            __m512 hi = 2 * r + 1 < kc ? _mm512_maskz_loadu_ps(m, s + (2 * r + 1) * ld + h) : _mm512_setzero_ps();
            _mm512_mask_storeu_epi32(d + h, sm, ct_v_bf16_pairs(lo, hi));
        }
}

/* Row-major source with k contiguous (element (row, q) at s[row ld + q]:
 * A, B^T), rows <= 16: 32 k values of a row are 16 pairs as they lie, so a
 * block of them is converted whole and 16 x 16 pairs transposed (ct_tr16 on
 * their bits) into pair rows of `width` lanes (lanes past rows zero). */
static CT_AVX512BF16 void pairs_rows(const float *s, size_t ld, size_t rows, size_t kc, uint32_t *d, size_t width)
{
    __mmask16 wm = ct_tail16(width < 16 ? width : 16);
    for (size_t q0 = 0; q0 < kc; q0 += 32) {
        size_t nq = kc - q0 < 32 ? kc - q0 : 32, np = (nq + 1) / 2;
        __mmask16 m0 = ct_tail16(nq < 16 ? nq : 16), m1 = nq > 16 ? ct_tail16(nq - 16) : 0;
        __m512 r[16];
        for (size_t i = 0; i < 16; i++) {
            if (i >= rows) {
                r[i] = _mm512_setzero_ps();
                continue;
            }
            __m512 a = _mm512_maskz_loadu_ps(m0, s + i * ld + q0), b = _mm512_maskz_loadu_ps(m1, s + i * ld + q0 + 16);
            r[i] = _mm512_castsi512_ps((__m512i)_mm512_cvtne2ps_pbh(b, a));
        }
        ct_tr16(r);
        for (size_t p = 0; p < np; p++)
            _mm512_mask_storeu_epi32(d + (q0 / 2 + p) * width, wm, _mm512_castps_si512(r[p]));
    }
}

/* A panel ip (MR rows) or B panel jp (NR columns) as pairs, from the operand */
static void pairs_a(const gemm *g, size_t ip, size_t kp)
{
    size_t i0 = ip * MR, rows = g->m - i0 < MR ? g->m - i0 : MR;
    uint32_t *d = g->qa + ip * MR * kp;
    if (g->ta)
        pairs_kmajor(g->a + g->p0 * g->lda + i0, g->lda, g->kc, rows, d, MR);
    else
        pairs_rows(g->a + i0 * g->lda + g->p0, g->lda, rows, g->kc, d, MR);
}

static CT_AVX512 void pairs_b(const gemm *g, size_t jp, size_t kp)
{
    size_t j0 = g->j0 + jp * NR, cols = g->nc - jp * NR < NR ? g->nc - jp * NR : NR;
    uint32_t *d = g->qb + jp * NR * kp;
    if (!g->tb) {
        pairs_kmajor(g->b + g->p0 * g->ldb + j0, g->ldb, g->kc, cols, d, NR);
        return;
    }
    for (size_t h = 0; h < NR; h += 16) { /* two halves of 16 columns */
        size_t rows = cols > h ? (cols - h < 16 ? cols - h : 16) : 0;
        if (rows)
            pairs_rows(g->b + (j0 + h) * g->ldb + g->p0, g->ldb, rows, g->kc, d + h, NR);
        else
            for (size_t q = 0; q < kp; q++)
                _mm512_storeu_si512(d + q * NR + h, _mm512_setzero_si512());
    }
}

static void pack_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const gemm *g = arg;
    size_t kp = (g->kc + 1) / 2;
    int dot = g->mode == CT_GEMM512_BF16_DOT;
    if (item < g->b_items) {
        size_t e = (item + 1) * PACK_PANELS;
        for (size_t jp = item * PACK_PANELS; jp < e && jp < g->b_panels; jp++) {
            if (dot) {
                pairs_b(g, jp, kp);
                continue;
            }
            pack_b(g, jp);
            to_16bit(g, g->pb + jp * NR * g->kc, NR);
        }
        return;
    }
    item -= g->b_items;
    /* A only when transposed (tile_rows reads an untransposed A in place;
     * reading A^T in place, a line per product, measured 1.2x slower) */
    size_t e = (item + 1) * PACK_PANELS;
    for (size_t ip = item * PACK_PANELS; ip < e && ip < g->a_panels; ip++) {
        if (dot) {
            pairs_a(g, ip, kp);
            continue;
        }
        pack_a(g, ip);
        to_16bit(g, g->pa + ip * MR * g->kc, MR);
    }
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

#define DOTD(R) __m512 s##R##a = _mm512_setzero_ps(), s##R##b = _mm512_setzero_ps()
#define DOT(R)                                                                                    \
    do {                                                                                          \
        __m512bh av = (__m512bh)_mm512_set1_epi32((int)qa[R]);                                    \
        s##R##a = _mm512_dpbf16_ps(s##R##a, av, b0);                                              \
        s##R##b = _mm512_dpbf16_ps(s##R##b, av, b1);                                              \
    } while (0)

/* The MR x NR sums of the kp k pairs of bf16 pair panels qa and qb, into t */
static CT_AVX512BF16 void tile_bf16(size_t kp, const uint32_t *qa, const uint32_t *qb, float *t)
{
    R12(DOTD);
    for (size_t q = 0; q < kp; q++, qa += MR, qb += NR) {
        __m512bh b0 = (__m512bh)_mm512_loadu_si512(qb), b1 = (__m512bh)_mm512_loadu_si512(qb + 16);
        R12(DOT);
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
        size_t col = g->j0 + jp * NR, cols = g->nc - jp * NR < NR ? g->nc - jp * NR : NR;
        for (size_t ip = ip0; ip < ip1; ip++) {
            size_t row = ip * MR, rows = g->m - row < MR ? g->m - row : MR;
            float *cr = g->c + row * g->ldc + col;
            for (size_t r = 0; r < rows; r++) {
                _mm_prefetch((const char *)(cr + r * g->ldc), _MM_HINT_T0);
                _mm_prefetch((const char *)(cr + r * g->ldc + 16), _MM_HINT_T0);
            }
            if (g->mode == CT_GEMM512_BF16_DOT) {
                size_t kp = (g->kc + 1) / 2;
                tile_bf16(kp, g->qa + ip * MR * kp, g->qb + jp * NR * kp, t);
            } else if (g->ta || g->mode != CT_GEMM512_F32) {
                tile(g->kc, g->pa + ip * MR * g->kc, g->pb + jp * NR * g->kc, t);
            } else {
                tile_rows(g->kc, g->a + row * g->lda + g->p0, g->lda, rows, g->pb + jp * NR * g->kc, t);
            }
            add_tile(g, t, cr, rows, cols);
        }
    }
}

/* AMX. A panel ip: AMX_MR rows of op(A), each its kp pairs in a row
 * (the A tiles' layout: 16 rows of 16 pairs, the row stride kp pairs),
 * rows past m and pairs past the slice zero. Untransposed A converts
 * row by row (a row's k values are its pairs as they lie); A^T by 16 x 16
 * blocks of pairs (made as pairs_kmajor makes them, a vector per k pair,
 * lanes the rows) transposed in registers. */
static CT_AVX512BF16 void amx_pairs_a(const gemm *g, size_t ip, size_t kp)
{
    size_t i0 = ip * AMX_MR, rows = g->m - i0 < AMX_MR ? g->m - i0 : AMX_MR, kc = g->kc;
    uint32_t *d = g->qa + ip * AMX_MR * kp;
    if (!g->ta) {
        for (size_t i = 0; i < AMX_MR; i++, d += kp) {
            const float *s = i < rows ? g->a + (i0 + i) * g->lda + g->p0 : g->a;
            for (size_t q0 = 0; q0 < 2 * kp; q0 += 32) {
                size_t nq = i < rows && q0 < kc ? (kc - q0 < 32 ? kc - q0 : 32) : 0;
                __mmask16 m0 = ct_tail16(nq < 16 ? nq : 16), m1 = nq > 16 ? ct_tail16(nq - 16) : 0;
                __m512 lo = _mm512_maskz_loadu_ps(m0, s + q0), hi = _mm512_maskz_loadu_ps(m1, s + q0 + 16);
                _mm512_storeu_si512(d + q0 / 2, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
            }
        }
        return;
    }
    for (size_t h = 0; h < AMX_MR; h += 16, d += 16 * kp) {
        size_t w = rows > h ? (rows - h < 16 ? rows - h : 16) : 0;
        __mmask16 wm = ct_tail16(w);
        const float *s = w ? g->a + g->p0 * g->lda + i0 + h : g->a;
        for (size_t p0 = 0; p0 < kp; p0 += 16) {
            __m512 r[16]; /* r[q]: pair p0 + q of the 16 rows, then (ct_tr16) row i's 16 pairs */
            for (size_t q = 0; q < 16; q++) {
                size_t k0 = 2 * (p0 + q);
                __m512 lo = k0 < kc ? _mm512_maskz_loadu_ps(wm, s + k0 * g->lda) : _mm512_setzero_ps();
                __m512 hi = k0 + 1 < kc ? _mm512_maskz_loadu_ps(wm, s + (k0 + 1) * g->lda) : _mm512_setzero_ps();
                r[q] = _mm512_castsi512_ps(ct_v_bf16_pairs(lo, hi));
            }
            ct_tr16(r);
            for (size_t i = 0; i < 16; i++)
                _mm512_storeu_ps((float *)(d + i * kp + p0), r[i]);
        }
    }
}

/* A B panel as pairs_b makes it, its pair rows past the slice zero (up to
 * amx_kp) */
static CT_AVX512 void amx_pairs_b(const gemm *g, size_t jp, size_t kp)
{
    size_t kp0 = (g->kc + 1) / 2;
    pairs_b(g, jp, kp);
    uint32_t *d = g->qb + jp * NR * kp;
    for (size_t q = kp0; q < kp; q++) {
        _mm512_storeu_si512(d + q * NR, _mm512_setzero_si512());
        _mm512_storeu_si512(d + q * NR + 16, _mm512_setzero_si512());
    }
}

static void amx_pack_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const gemm *g = arg;
    size_t kp = amx_kp(g->kc);
    if (item < g->b_items) {
        size_t e = (item + 1) * PACK_PANELS;
        for (size_t jp = item * PACK_PANELS; jp < e && jp < g->b_panels; jp++)
            amx_pairs_b(g, jp, kp);
        return;
    }
    item -= g->b_items;
    size_t e = (item + 1) * PACK_PANELS;
    for (size_t ip = item * PACK_PANELS; ip < e && ip < g->a_panels; ip++)
        amx_pairs_a(g, ip, kp);
}

/* The AMX_MR x NR sums of the kp pairs of A panel qa (row stride kp) and B
 * panel qb (pair rows of NR) into t (AMX_MR rows of NR): per 16 pairs, two
 * A tiles, two B tiles and four TDPBF16PS (each sum of a lane adds 32
 * products in float32; AMX treats bf16 subnormals as zero). */
static CT_AMX void amx_tile(size_t kp, const uint32_t *qa, const uint32_t *qb, float *t)
{
    size_t sa = kp * sizeof(uint32_t), sb = NR * sizeof(uint32_t), st = NR * sizeof(float);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (size_t q = 0; q < kp; q += 16) {
        _tile_loadd(4, qa + q, sa);
        _tile_loadd(5, qa + 16 * kp + q, sa);
        _tile_loadd(6, qb + q * NR, sb);
        _tile_loadd(7, qb + q * NR + 16, sb);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, t, st);
    _tile_stored(1, t + 16, st);
    _tile_stored(2, t + 16 * NR, st);
    _tile_stored(3, t + 16 * NR + 16, st);
    __asm__ volatile("" ::: "memory"); /* the tile instructions' asm names no memory */
}

static CT_AMX void amx_compute_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const gemm *g = arg;
    size_t kp = amx_kp(g->kc);
    size_t ib = item / g->n_items, jb = item % g->n_items;
    size_t ip0 = ib * MP, ip1 = ip0 + MP < g->a_panels ? ip0 + MP : g->a_panels;
    size_t jp0 = jb * NP, jp1 = jp0 + NP < g->b_panels ? jp0 + NP : g->b_panels;
    _Alignas(64) float t[AMX_MR * NR];
    /* tiles 0-3 the sums (16 rows of 16 floats), 4-5 two A tiles (16 rows
     * of 16 pairs), 6-7 two B tiles (16 pair rows of 16 columns) */
    _Alignas(64) ct_amx_config cfg;
    ct_amx_config_full(&cfg);
    _tile_loadconfig(&cfg);
    __asm__ volatile("" ::: "memory"); /* the panels were written before */
    for (size_t jp = jp0; jp < jp1; jp++) {
        size_t col = g->j0 + jp * NR, cols = g->nc - jp * NR < NR ? g->nc - jp * NR : NR;
        for (size_t ip = ip0; ip < ip1; ip++) {
            size_t row = ip * AMX_MR, rows = g->m - row < AMX_MR ? g->m - row : AMX_MR;
            amx_tile(kp, g->qa + ip * AMX_MR * kp, g->qb + jp * NR * kp, t);
            add_tile(g, t, g->c + row * g->ldc + col, rows, cols);
        }
    }
    _tile_release();
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

void ct_gemm512_run(ct_pool *pool, int mode, int ta, int tb, size_t m, size_t n, size_t k, float alpha,
                    const float *a, size_t lda, const float *b, size_t ldb, float beta, float *c,
                    size_t ldc, float *pa, float *pb)
{
    gemm g = { .ta = ta, .tb = tb, .mode = mode, .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc,
               .alpha = alpha, .beta = beta, .a = a, .b = b, .c = c, .pa = pa, .pb = pb };
    int amx = mode == CT_GEMM512_BF16_AMX;
    if (mode == CT_GEMM512_BF16_DOT || amx) {
        g.qa = (uint32_t *)(void *)pa, g.qb = (uint32_t *)(void *)pb;
        g.pa = g.pb = NULL;
    }
    g.a_panels = ceil_div(m, amx ? AMX_MR : MR);
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
            run(serial ? NULL : pool, g.b_items + (ta || mode != CT_GEMM512_F32 ? g.a_items : 0),
                amx ? amx_pack_item : pack_item, &g);
            run(serial ? NULL : pool, g.m_items * g.n_items, amx ? amx_compute_item : compute_item, &g);
        }
    }
}

#else /* not x86: never called (ct_host_avx512() is 0) */

void ct_gemm512_pack_size(size_t m, size_t n, size_t k, int mode, size_t *na, size_t *nb)
{
    (void)m, (void)n, (void)k, (void)mode;
    *na = *nb = 0;
}

void ct_gemm512_run(ct_pool *pool, int mode, int ta, int tb, size_t m, size_t n, size_t k, float alpha,
                    const float *a, size_t lda, const float *b, size_t ldb, float beta, float *c,
                    size_t ldc, float *pa, float *pb)
{
    (void)pool, (void)mode, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda;
    (void)b, (void)ldb, (void)beta, (void)c, (void)ldc, (void)pa, (void)pb;
}

#endif
