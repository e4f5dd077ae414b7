/*
 * test_gemm_cl - cltrain's own OpenCL SGEMM (src/ops/gemm_cl.c,
 * cl_kernels/gemm.cl, gemm_reg.cl) against a double-precision host product:
 * every transposition, every tile set, without and with split-K (2, 3 and 7
 * slices, and the plan's own), shapes that are not multiples of any tile,
 * offsets and padded leading dimensions, alpha and beta (beta = 0 over a C
 * of NaNs: C must not be read), and guard values around C that must stay
 * untouched. Split runs must give the same bits twice (fixed order).
 *
 * Tolerance: the kernel sums each element's products with fma in float, a
 * slice at a time, then adds the slices in float: at most k + s roundings
 * in a row, each of relative size u = 2^-24, then one for alpha and one for
 * beta (the float16 tiles' NT sums: 16 interleaved sums of k / 16 terms,
 * 4 pairwise additions, then the k mod 16 tail: fewer roundings in a row).
 * So |c - exact| <= (k + s + 2) u (|alpha| sum_k |a_ik b_kj| +
 * |beta c_ij|) (Higham, Accuracy and Stability, 3.1-3.5, first order); the
 * reference in double adds error far below that.
 *
 * With --precision bf16|fp16 the kernels are the 16-bit variants, which
 * round each operand to the format (to nearest even) and sum in float: the
 * reference rounds the operands the same way, and as a product of two
 * rounded operands is exact in float (8 + 8 or 11 + 11 significant bits),
 * the bound above holds unchanged, over the rounded operands' products. An
 * operand left unrounded is off by up to 2^-9 (bf16) or 2^-12 (fp16)
 * relative: far outside it.
 *
 * With --precision, operands in the 16-bit activation storage too (the
 * storage variants, ct_gemm_cl_epi.s16: each of A, B and C in 16 bits or
 * float, every tile set and transposition, with and without split-K): the
 * stored operands are exact in the format, so the bound above holds for the
 * sum; a 16-bit C adds its store's rounding, u |c| + s (u 2^-8 bf16, 2^-11
 * fp16; s 2^-25, fp16's subnormal half step), and reads the old C in it.
 *
 *   test_gemm_cl [--precision bf16|fp16]
 *                             the checks
 *   test_gemm_cl --small [--tiles reg|vec|small] [--build-options OPTS]
 *                             the small shapes only (for Oclgrind); with
 *                             --tiles those tiles only (the products and
 *                             the epilogues)
 *   test_gemm_cl --bench [NAME] [--build-options OPTS]
 *                             GFLOP/s of ct_gemm_cl against CLBlastSgemm
 *                             over the shapes the zoo's models run (those
 *                             whose name holds NAME)
 */
#include <clblast_c.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cl/runtime.h"
#include "core/half.h"
#include "core/util.h"
#include "ops/dense.h"
#include "ops/gemm_cl.h"
#include "tcheck.h"

static uint64_t rng = 7;
/* --tiles reg|vec|small: those tiles only (their Oclgrind runs); -1 all */
static int only_tiles = -1;
/* --precision: ct_precision of the products (the operands the reference rounds) */
static int prec = CT_PRECISION_FP32;

/* x rounded as the 16-bit kernels round an operand (common.cl's ct_op16):
 * bf16 to nearest even on the float's bits, NaN kept; fp16 to nearest even
 * at its quantum (2^-24 below 2^-14, its subnormals), infinity from 65520
 * (the tie above 65504 rounds to the even infinity) */
static double op16(float x)
{
    if (prec == CT_PRECISION_FP32 || isnan(x))
        return x;
    if (prec == CT_PRECISION_BF16) {
        uint32_t u;
        memcpy(&u, &x, sizeof u);
        u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
        float r;
        memcpy(&r, &u, sizeof r);
        return r;
    }
    double ax = fabs((double)x);
    if (ax >= 65520.0)
        return copysign(INFINITY, x);
    int e;
    frexp(ax, &e); /* ax in [2^(e-1), 2^e) */
    double q = e - 1 < -14 ? 0x1p-24 : ldexp(1.0, e - 1 - 10);
    return copysign(nearbyint(ax / q) * q, x);
}
static float frand(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(rng >> 40) / (double)(1ull << 24)) * 2.0f - 1.0f;
}

#define GUARD 1234.5f

/* a plan's tiles, for messages and the bench table */
static const char *tiles_str(ct_gemm_cl_tiles t)
{
    return t == CT_GEMM_CL_BIG ? "big" : t == CT_GEMM_CL_SMALL ? "small" : t == CT_GEMM_CL_HUGE ? "huge"
           : t == CT_GEMM_CL_VEC ? "vec" : "reg";
}

/* One product with a given plan; 1 when it matches. */
static int one(ct_context *ctx, ct_gemm_cl_plan plan, int ta, int tb, size_t m, size_t n, size_t k,
               float alpha, float beta, int pad)
{
    size_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    size_t lda = ac + (pad ? 3 : 0), ldb = bc + (pad ? 5 : 0), ldc = n + (pad ? 2 : 0);
    size_t aoff = pad ? 7 : 0, boff = pad ? 1 : 0, coff = pad ? 11 : 0;
    size_t na = aoff + ar * lda + 1, nb = boff + br * ldb + 1, nc = coff + m * ldc + 4;
    float *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b), *c = malloc(nc * sizeof *c);
    float *got = malloc(nc * sizeof *c), *got2 = malloc(nc * sizeof *c);
    for (size_t i = 0; i < na; i++)
        a[i] = frand();
    for (size_t i = 0; i < nb; i++)
        b[i] = frand();
    for (size_t i = 0; i < nc; i++)
        c[i] = GUARD;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++)
            c[coff + i * ldc + j] = beta == 0.0f ? NAN : frand();
    size_t s = plan.splits;
    cl_mem ma = NULL, mb = NULL, mc = NULL;
    int ok = !ct_buffer_create(ctx, na * sizeof *a, &ma) && !ct_buffer_create(ctx, nb * sizeof *b, &mb) &&
             !ct_buffer_create(ctx, nc * sizeof *c, &mc) && !ct_buffer_write(ctx, ma, 0, na * sizeof *a, a) &&
             !ct_buffer_write(ctx, mb, 0, nb * sizeof *b, b);
    for (int rep = 0; rep < (s > 1 ? 2 : 1) && ok; rep++) {
        float *dst = rep ? got2 : got;
        int st = ct_buffer_write(ctx, mc, 0, nc * sizeof *c, c);
        if (!st)
            st = ct_gemm_cl_run(ctx, plan, ta, tb, m, n, k, alpha, ma, aoff, lda, mb, boff, ldb, beta,
                                mc, coff, ldc);
        if (!st)
            st = ct_buffer_read(ctx, mc, 0, nc * sizeof *c, dst);
        CHECK(st == CT_OK, "%c%c %zux%zux%zu: %s", ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k,
              ct_context_last_error(ctx));
        ok = st == CT_OK;
    }
    if (ok && s > 1 && memcmp(got, got2, nc * sizeof *c)) {
        CHECK(0, "%c%c %zux%zux%zu split %zu: two runs differ in their bits", ta ? 'T' : 'N',
              tb ? 'T' : 'N', m, n, k, s);
        ok = 0;
    }
    for (size_t i = 0; ok && i < nc; i++) {
        int inside = i >= coff && (i - coff) / ldc < m && (i - coff) % ldc < n;
        double want = GUARD, tol = 0;
        if (inside) {
            size_t r = (i - coff) / ldc, col = (i - coff) % ldc;
            double sum = 0, abs = 0;
            for (size_t p = 0; p < k; p++) {
                double x = op16(a[aoff + (ta ? p * lda + r : r * lda + p)]);
                double y = op16(b[boff + (tb ? col * ldb + p : p * ldb + col)]);
                sum += x * y;
                abs += fabs(x * y);
            }
            want = alpha * sum + (beta == 0.0f ? 0.0 : (double)beta * c[i]);
            double bound = fabs(alpha) * abs + (beta == 0.0f ? 0.0 : fabs((double)beta * c[i]));
            tol = (double)(k + s + 2) * 0x1p-24 * bound + 1e-30;
        }
        if (!(fabs((double)got[i] - want) <= tol)) {
            CHECK(0, "%s tiles %c%c m=%zu n=%zu k=%zu split %zu alpha %g beta %g pad %d: element %zu "
                  "(%s) is %.9g, want %.9g (tolerance %.3g)",
                  tiles_str(plan.tiles),
                  ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, s, alpha, beta, pad, i,
                  inside ? "inside C" : "a guard outside C", got[i], want, tol);
            ok = 0;
        }
    }
    ct_buffer_release(&ma);
    ct_buffer_release(&mb);
    ct_buffer_release(&mc);
    free(a), free(b), free(c), free(got), free(got2);
    return ok;
}

static int checks(ct_context *ctx, int small)
{
    /* none a multiple of 16 or 32 (but 64 for a full-tile case) */
    static const size_t shapes[][3] = {
        { 1, 1, 1 },   { 7, 5, 3 },    { 17, 33, 19 }, { 65, 63, 47 }, { 64, 64, 64 },
        { 13, 150, 531 }, { 100, 37, 700 }, { 3, 2, 1000 },  { 70, 130, 17 }, { 131, 259, 45 },
    };
    static const size_t splits[] = { 1, 2, 3, 7, 0 }; /* 0: the plan's own */
    int cases = 0, passed = 0;
    /* big, small, huge and both register tiles (the register tiles run on
     * every device) */
    static const ct_gemm_cl_tiles tile_sets[5] = { CT_GEMM_CL_BIG, CT_GEMM_CL_SMALL, CT_GEMM_CL_HUGE,
                                                   CT_GEMM_CL_REG, CT_GEMM_CL_VEC };
    for (int ts = 0; ts < 5; ts++)
        for (int t = 0; t < 4; t++)
            for (size_t i = 0; i < CT_ARRAY_LEN(shapes); i++)
                for (size_t si = 0; si < CT_ARRAY_LEN(splits); si++) {
                    size_t m = shapes[i][0], n = shapes[i][1], k = shapes[i][2];
                    if (small && (m * n * k > 20000 || si == 1 || si == 3 || si == 4))
                        continue;
                    if (only_tiles >= 0 && tile_sets[ts] != (ct_gemm_cl_tiles)only_tiles)
                        continue;
                    /* without the huge tiles the big ones would run again */
                    if (tile_sets[ts] == CT_GEMM_CL_HUGE && !ct_gemm_cl_has_huge(ctx))
                        continue;
                    ct_gemm_cl_plan plan = { tile_sets[ts], splits[si] };
                    if (!splits[si])
                        plan = ct_gemm_cl_plan_for(ctx, m, n, k, t >> 1, t & 1);
                    if (plan.splits > 1 && k < 2 * plan.splits)
                        continue;
                    int v = (int)(i + si + (size_t)t);
                    float alpha = v % 3 == 0 ? 1.0f : v % 3 == 1 ? -0.75f : 2.0f;
                    float beta = v % 2 ? 0.0f : v % 4 == 0 ? 1.0f : 0.5f;
                    cases++;
                    passed += one(ctx, plan, t >> 1, t & 1, m, n, k, alpha, beta, v & 1);
                }
    if (small) {
        printf("ct_gemm_cl: %d of %d cases match the double-precision product\n", passed, cases);
        return passed == cases;
    }
    /* k = 0: C = beta C */
    cases += 2;
    passed += one(ctx, (ct_gemm_cl_plan){ CT_GEMM_CL_SMALL, 1 }, 0, 0, 5, 9, 0, 1.0f, 0.5f, 1);
    passed += one(ctx, (ct_gemm_cl_plan){ CT_GEMM_CL_SMALL, 1 }, 1, 1, 5, 9, 0, 1.0f, 0.0f, 0);
    /* a split whose workspace grows after a smaller one */
    cases++;
    passed += one(ctx, (ct_gemm_cl_plan){ CT_GEMM_CL_SMALL, 5 }, 0, 1, 150, 301, 99, 1.0f, 0.0f, 1);
    printf("ct_gemm_cl: %d of %d cases match the double-precision product\n", passed, cases);
    return passed == cases;
}

/* n values to a device buffer in 16-bit storage f (1 bf16, 2 fp16) */
static int put16(ct_context *ctx, int f, const float *v, size_t n, cl_mem *out)
{
    uint16_t *h = malloc(n * sizeof *h);
    if (!h)
        return CT_ERR_NO_MEMORY;
    for (size_t i = 0; i < n; i++)
        h[i] = f == 1 ? ct_bf16_from_f32(v[i]) : ct_fp16_from_f32(v[i]);
    int st = ct_buffer_create(ctx, n * sizeof *h, out);
    if (!st)
        st = ct_buffer_write(ctx, *out, 0, n * sizeof *h, h);
    free(h);
    return st;
}

/* One product with the operands in s16 (CT_S16_A | _B | _C) in 16 bits,
 * against the double product of the rounded operands (bounds in the
 * header). Offsets and padded leading dimensions in each operand's own
 * elements; guards around C stay untouched. */
static int storage_one(ct_context *ctx, ct_gemm_cl_plan plan, int ta, int tb, size_t m, size_t n, size_t k,
                       int s16, float beta)
{
    const int f = prec;
    size_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    size_t lda = ac + 3, ldb = bc + 1, ldc = n + 2, aoff = 5, boff = 3, coff = 7;
    size_t na = aoff + ar * lda, nb = boff + br * ldb, nc = coff + m * ldc + 3;
    float *v[3] = { malloc(na * sizeof(float)), malloc(nb * sizeof(float)), malloc(nc * sizeof(float)) };
    float *got = malloc(nc * sizeof(float));
    uint16_t *got16 = malloc(nc * sizeof *got16);
    size_t cnt[3] = { na, nb, nc };
    int ok = v[0] && v[1] && v[2] && got && got16;
    for (int o = 0; o < 3 && ok; o++)
        for (size_t i = 0; i < cnt[o]; i++) {
            float x = o == 2 && beta == 0.0f ? NAN : frand();
            /* each value as the reference sees it: exact in its storage */
            v[o][i] = s16 & (1 << o) ? ct_round_to(f, x) : x;
        }
    cl_mem mem[3] = { NULL, NULL, NULL };
    for (int o = 0; o < 3 && ok; o++)
        ok = !(s16 & (1 << o) ? put16(ctx, f, v[o], cnt[o], &mem[o])
                              : ct_buffer_create(ctx, cnt[o] * sizeof(float), &mem[o]) ||
                                    ct_buffer_write(ctx, mem[o], 0, cnt[o] * sizeof(float), v[o]));
    ct_gemm_cl_epi epi = { NULL, 0, 0, s16 };
    int st = ok ? ct_gemm_cl_run_epi(ctx, plan, &epi, ta, tb, m, n, k, 1.0f, mem[0], aoff, lda, mem[1], boff, ldb,
                                     beta, mem[2], coff, ldc)
                : CT_ERR_NO_MEMORY;
    if (!st)
        st = s16 & CT_S16_C ? ct_buffer_read(ctx, mem[2], 0, nc * sizeof *got16, got16)
                            : ct_buffer_read(ctx, mem[2], 0, nc * sizeof(float), got);
    CHECK(st == CT_OK, "16-bit operands %d, %c%c %zux%zux%zu: %s", s16, ta ? 'T' : 'N', tb ? 'T' : 'N', m, n,
          k, ct_context_last_error(ctx));
    ok = ok && st == CT_OK;
    const double u = f == 1 ? 0x1p-8 : 0x1p-11, sub = f == 1 ? 0.0 : 0x1p-25;
    for (size_t i = 0; ok && i < nc; i++) {
        double g = s16 & CT_S16_C ? (f == 1 ? ct_f32_from_bf16(got16[i]) : ct_f32_from_fp16(got16[i])) : got[i];
        int inside = i >= coff && (i - coff) / ldc < m && (i - coff) % ldc < n;
        double want = v[2][i], tol = 0;
        if (inside) {
            size_t r = (i - coff) / ldc, col = (i - coff) % ldc;
            double sum = 0, abs = 0;
            for (size_t p = 0; p < k; p++) {
                double x = op16(v[0][aoff + (ta ? p * lda + r : r * lda + p)]);
                double y = op16(v[1][boff + (tb ? col * ldb + p : p * ldb + col)]);
                sum += x * y;
                abs += fabs(x * y);
            }
            double old = beta == 0.0f ? 0.0 : (double)beta * v[2][i];
            want = sum + old;
            tol = (double)(k + plan.splits + 2) * 0x1p-24 * (abs + fabs(old)) + 1e-30;
            if (s16 & CT_S16_C)
                tol = tol * (1 + u) + u * fabs(want) + sub;
        }
        if (!(fabs(g - want) <= tol) && !(isnan(want) && isnan(g) && !inside)) {
            CHECK(0, "%s tiles, 16-bit operands %d, %c%c m=%zu n=%zu k=%zu split %zu beta %g: element %zu (%s) "
                  "is %.9g, want %.9g (tolerance %.3g)", tiles_str(plan.tiles), s16, ta ? 'T' : 'N',
                  tb ? 'T' : 'N', m, n, k, plan.splits, beta, i, inside ? "inside C" : "a guard outside C", g,
                  want, tol);
            ok = 0;
        }
    }
    for (int o = 0; o < 3; o++) {
        ct_buffer_release(&mem[o]);
        free(v[o]);
    }
    free(got), free(got16);
    return ok;
}

/* Every tile set, transposition and storage combination, unsplit and in 3
 * slices, over shapes that are no multiple of a tile (--small, for
 * Oclgrind: the first, 7 x 5 x 3) */
static int storage(ct_context *ctx, int small)
{
    static const size_t shapes[][3] = { { 7, 5, 3 }, { 37, 70, 29 }, { 13, 40, 300 } };
    static const ct_gemm_cl_tiles tile_sets[5] = { CT_GEMM_CL_BIG, CT_GEMM_CL_SMALL, CT_GEMM_CL_HUGE,
                                                   CT_GEMM_CL_REG, CT_GEMM_CL_VEC };
    if (ct_context_set_act16(ctx, prec))
        return 0;
    int cases = 0, passed = 0;
    for (int ts = 0; ts < 5; ts++) {
        if ((only_tiles >= 0 && tile_sets[ts] != (ct_gemm_cl_tiles)only_tiles) ||
            (tile_sets[ts] == CT_GEMM_CL_HUGE && !ct_gemm_cl_has_huge(ctx)))
            continue;
        for (int t = 0; t < 4; t++)
            for (int s16 = 1; s16 < 8; s16++)
                for (size_t i = 0; i < (small ? 1 : CT_ARRAY_LEN(shapes)); i++) {
                    size_t sp = (size_t)(s16 + t + (int)i) % 2 ? 3 : 1;
                    float beta = (s16 + (int)i) % 3 == 0 ? 0.0f : (s16 + t) % 2 ? 1.0f : 0.5f;
                    cases++;
                    passed += storage_one(ctx, (ct_gemm_cl_plan){ tile_sets[ts], sp }, t >> 1, t & 1,
                                          shapes[i][0], shapes[i][1], shapes[i][2], s16, beta);
                }
    }
    ct_context_set_act16(ctx, 0);
    printf("storage: %d of %d cases with 16-bit operands match the double-precision product\n", passed, cases);
    return passed == cases;
}

/* With 16-bit operands: each tile set's rounding, element by element, as
 * C = A . [1] (k = 1: C holds the rounded operand times 1, exactly):
 * zeros, both formats' ties, fp16's subnormal range and its edge at 2^-14,
 * its overflow to infinity from 65520, float's largest, infinities, NaN
 * and values over every exponent from 2^-30 to 2^40. Bit for bit (NaN for
 * NaN) against op16. */
static int rounding(ct_context *ctx)
{
    float v[512];
    size_t nv = 0;
    static const float fixed[] = { 0.0f, -0.0f, 1.0f, 0x1p-25f, 0x3p-25f, 0x1p-24f, -0x5p-26f, 0x1p-14f,
                                   0x1p-14f - 0x1p-26f, 0x1p-14f - 0x1p-25f, 0x1.002p0f, 0x1.006p0f,
                                   0x1.01p0f, 0x1.03p0f, 0x1.0101p0f, 65504.0f, 65519.99f, 65520.0f,
                                   -65520.0f, 1e10f, 3.4028235e38f, INFINITY, -INFINITY, NAN };
    for (size_t i = 0; i < CT_ARRAY_LEN(fixed); i++)
        v[nv++] = fixed[i];
    while (nv < CT_ARRAY_LEN(v))
        v[nv] = ldexpf(frand(), (int)(nv % 71) - 30), nv++;
    cl_mem ma = NULL, mb = NULL, mc = NULL;
    float one_f = 1.0f, got[CT_ARRAY_LEN(v)];
    int ok = !ct_buffer_create(ctx, sizeof v, &ma) && !ct_buffer_create(ctx, sizeof one_f, &mb) &&
             !ct_buffer_create(ctx, sizeof v, &mc) && !ct_buffer_write(ctx, ma, 0, sizeof v, v) &&
             !ct_buffer_write(ctx, mb, 0, sizeof one_f, &one_f);
    static const ct_gemm_cl_tiles sets[5] = { CT_GEMM_CL_BIG, CT_GEMM_CL_SMALL, CT_GEMM_CL_HUGE, CT_GEMM_CL_REG,
                                              CT_GEMM_CL_VEC };
    for (int ts = 0; ts < 5 && ok; ts++) {
        if ((only_tiles >= 0 && sets[ts] != (ct_gemm_cl_tiles)only_tiles) ||
            (sets[ts] == CT_GEMM_CL_HUGE && !ct_gemm_cl_has_huge(ctx)))
            continue;
        /* A as (m, 1) and as A^T (1, m): both loads of each tile set */
        for (int ta = 0; ta < 2 && ok; ta++) {
            int st = ct_gemm_cl_run(ctx, (ct_gemm_cl_plan){ sets[ts], 1 }, ta, 0, nv, 1, 1, 1.0f, ma, 0,
                                    ta ? nv : 1, mb, 0, 1, 0.0f, mc, 0, 1);
            if (!st)
                st = ct_buffer_read(ctx, mc, 0, sizeof got, got);
            CHECK(st == CT_OK, "rounding: %s", ct_context_last_error(ctx));
            ok = st == CT_OK;
            for (size_t i = 0; ok && i < nv; i++) {
                float want = (float)op16(v[i]) + 0.0f; /* a sum from +0: -0 gives +0 */
                if (!(isnan(want) ? isnan(got[i]) : memcmp(&want, &got[i], sizeof want) == 0)) {
                    CHECK(0, "%s tiles (A%s): %a rounds to %a, want %a", tiles_str(sets[ts]), ta ? "^T" : "",
                          (double)v[i], (double)got[i], (double)want);
                    ok = 0;
                }
            }
        }
    }
    ct_buffer_release(&ma), ct_buffer_release(&mb), ct_buffer_release(&mc);
    return ok;
}

/* ---- --bench: GFLOP/s against CLBlast ---- */

typedef struct shape {
    const char *what;
    size_t m, n, k;
    int ta, tb;
} shape;

/* One product by ct_gemm_cl (which = 0) or CLBlastSgemm (1), finished. */
static int run_one(ct_context *ctx, int which, const shape *sh, cl_mem a, cl_mem b, cl_mem c)
{
    size_t lda = sh->ta ? sh->m : sh->k, ldb = sh->tb ? sh->k : sh->n;
    cl_command_queue q = ctx->queue;
    int st;
    if (which)
        st = CLBlastSgemm(CLBlastLayoutRowMajor, sh->ta ? CLBlastTransposeYes : CLBlastTransposeNo,
                          sh->tb ? CLBlastTransposeYes : CLBlastTransposeNo, sh->m, sh->n, sh->k, 1.0f,
                          a, 0, lda, b, 0, ldb, 0.0f, c, 0, sh->n, &q, NULL);
    else
        st = ct_gemm_cl(ctx, sh->ta, sh->tb, sh->m, sh->n, sh->k, 1.0f, a, 0, lda, b, 0, ldb, 0.0f,
                        c, 0, sh->n);
    if (st || clFinish(q) != CL_SUCCESS) {
        fprintf(stderr, "%s: %s failed: %d %s\n", sh->what, which ? "CLBlast" : "ct_gemm_cl", st,
                ct_context_last_error(ctx));
        return 0;
    }
    return 1;
}

/* Seconds per product of each (best[0]: ct_gemm_cl, best[1]: CLBlast):
 * after a first run of each (kernels compile), 5 alternating rounds of at
 * least 0.1 s each, the best round's mean (the machine is shared). */
static int time_both(ct_context *ctx, const shape *sh, cl_mem a, cl_mem b, cl_mem c, double best[2])
{
    best[0] = best[1] = 1e30;
    if (!run_one(ctx, 0, sh, a, b, c) || !run_one(ctx, 1, sh, a, b, c))
        return 0;
    for (int round = 0; round < 10; round++) {
        int which = round & 1, reps = 0;
        double t0 = ct_now(), t = 0;
        do {
            if (!run_one(ctx, which, sh, a, b, c))
                return 0;
            reps++;
            t = ct_now() - t0;
        } while (t < 0.1);
        best[which] = t / reps < best[which] ? t / reps : best[which];
    }
    return 1;
}

static int bench(ct_context *ctx, const char *only)
{
    static const shape shapes[] = {
        /* the zoo's cnn (28x28, conv 32 -> 64 at 14x14, dense 3136 -> 128), batch 64 */
        { "cnn conv2 fwd nb=64", 64, 64 * 196, 288, 0, 0 },
        { "cnn conv2 dW nb=64", 64, 288, 64 * 196, 0, 1 },
        { "cnn conv2 dX nb=64", 288, 64 * 196, 64, 1, 0 },
        { "cnn dense fwd nb=64", 64, 128, 3136, 0, 1 },
        { "cnn dense dW nb=64", 128, 3136, 64, 1, 0 },
        { "cnn dense dX nb=64", 64, 3136, 128, 0, 0 },
        /* resnet56 (32x32), batch 128: stages of 16, 32, 64 channels */
        { "r56 s1 fwd nb=128", 16, 128 * 1024, 144, 0, 0 },
        { "r56 s1 dW nb=128", 16, 144, 128 * 1024, 0, 1 },
        { "r56 s1 dX nb=128", 144, 128 * 1024, 16, 1, 0 },
        { "r56 s2 fwd nb=128", 32, 128 * 256, 288, 0, 0 },
        { "r56 s2 dW nb=128", 32, 288, 128 * 256, 0, 1 },
        { "r56 s3 fwd nb=128", 64, 128 * 64, 576, 0, 0 },
        { "r56 s3 dW nb=128", 64, 576, 128 * 64, 0, 1 },
        { "r56 s3 dX nb=128", 576, 128 * 64, 64, 1, 0 },
        { "r56 s1 dW nb=32", 16, 144, 32 * 1024, 0, 1 },
        /* mlp 784 -> 256 -> ..., batch 64 and 256 */
        { "mlp fc1 fwd nb=64", 64, 256, 784, 0, 1 },
        { "mlp fc1 dW nb=64", 256, 784, 64, 1, 0 },
        { "mlp fc1 dX nb=64", 64, 784, 256, 0, 0 },
        { "mlp fc1 fwd nb=256", 256, 256, 784, 0, 1 },
        { "mlp fc1 dW nb=256", 256, 784, 256, 1, 0 },
        { "square 1024", 1024, 1024, 1024, 0, 0 },
        { "square 1024 NT", 1024, 1024, 1024, 0, 1 },
    };
    printf("%-22s %6s %7s %6s %2s %6s %5s %10s %10s %7s\n", "shape", "m", "n", "k", "op", "tiles",
           "split", "ours GF/s", "CLBlast", "ratio");
    for (size_t i = 0; i < CT_ARRAY_LEN(shapes); i++) {
        const shape *sh = &shapes[i];
        if (only && !strstr(sh->what, only))
            continue;
        size_t na = sh->m * sh->k, nb = sh->k * sh->n, nc = sh->m * sh->n;
        float *h = malloc((na > nb ? na : nb) * sizeof *h);
        cl_mem a = NULL, b = NULL, c = NULL;
        for (size_t j = 0; j < (na > nb ? na : nb); j++)
            h[j] = frand();
        if (ct_buffer_create(ctx, na * 4, &a) || ct_buffer_create(ctx, nb * 4, &b) ||
            ct_buffer_create(ctx, nc * 4, &c) || ct_buffer_write(ctx, a, 0, na * 4, h) ||
            ct_buffer_write(ctx, b, 0, nb * 4, h)) {
            fprintf(stderr, "buffers: %s\n", ct_context_last_error(ctx));
            return 0;
        }
        ct_gemm_cl_plan plan = ct_gemm_cl_plan_for(ctx, sh->m, sh->n, sh->k, sh->ta, sh->tb);
        double t[2];
        if (!time_both(ctx, sh, a, b, c, t))
            return 0;
        double ours = t[0], theirs = t[1];
        double flop = 2.0 * (double)sh->m * (double)sh->n * (double)sh->k * 1e-9;
        printf("%-22s %6zu %7zu %6zu %c%c %6s %5zu %10.1f %10.1f %7.2f %s\n", sh->what, sh->m, sh->n,
               sh->k, sh->ta ? 'T' : 'N', sh->tb ? 'T' : 'N', tiles_str(plan.tiles),
               plan.splits, flop / ours, flop / theirs, theirs / ours,
               ct_gemm_cl_choose(ctx, sh->m, sh->n, sh->k, sh->ta, sh->tb) ? "chosen" : "");
        fflush(stdout);
        ct_buffer_release(&a);
        ct_buffer_release(&b);
        ct_buffer_release(&c);
        free(h);
    }
    return 1;
}

/* The epilogue (bias per column, then an activation) must give the bits of
 * the plain product followed by the bias_act_fwd_f32 pass, with and without
 * k-slices, over a C of NaNs (beta = 0 must not read it). */
static int epilogue(ct_context *ctx, size_t m, size_t n, size_t k, size_t splits, int act)
{
    size_t na = m * k, nb = n * k, nc = m * n;
    float *h = malloc((na + nb + n + 2 * nc) * sizeof *h);
    float *ha = h, *hb = ha + na, *hbias = hb + nb, *got = hbias + n, *want = got + nc;
    for (size_t i = 0; i < na + nb + n; i++)
        h[i] = frand();
    cl_mem a = NULL, b = NULL, bias = NULL, c1 = NULL, c2 = NULL;
    int ok = !ct_buffer_create(ctx, na * 4, &a) && !ct_buffer_create(ctx, nb * 4, &b) &&
             !ct_buffer_create(ctx, n * 4, &bias) && !ct_buffer_create(ctx, nc * 4, &c1) &&
             !ct_buffer_create(ctx, nc * 4, &c2) && !ct_buffer_write(ctx, a, 0, na * 4, ha) &&
             !ct_buffer_write(ctx, b, 0, nb * 4, hb) && !ct_buffer_write(ctx, bias, 0, n * 4, hbias) &&
             !ct_fill(ctx, (ct_buf){ c1, 0 }, nc, NAN) && !ct_fill(ctx, (ct_buf){ c2, 0 }, nc, NAN);
    ct_gemm_cl_plan plan = ct_gemm_cl_plan_for(ctx, m, n, k, 0, 1);
    plan.splits = splits;
    if (only_tiles >= 0)
        plan.tiles = (ct_gemm_cl_tiles)only_tiles;
    else if (act == 3)
        plan.tiles = CT_GEMM_CL_HUGE; /* the sigmoid's cases: the huge tiles' epilogue */
    ct_gemm_cl_epi epi = { bias, 0, act, 0 };
    /* y (m, n) = act(x (m, k) . w^T (k, n) + bias), as a dense layer */
    ok = ok && !ct_gemm_cl_run_epi(ctx, plan, &epi, 0, 1, m, n, k, 1.0f, a, 0, k, b, 0, k, 0.0f, c1, 0, n) &&
         !ct_gemm_cl_run(ctx, plan, 0, 1, m, n, k, 1.0f, a, 0, k, b, 0, k, 0.0f, c2, 0, n) &&
         !ct_bias_act_forward(ctx, (ct_buf){ c2, 0 }, (ct_buf){ c2, 0 }, (ct_buf){ bias, 0 }, (int)m, (int)n, 1,
                              (ct_act)act) &&
         !ct_buffer_read(ctx, c1, 0, nc * 4, got) && !ct_buffer_read(ctx, c2, 0, nc * 4, want);
    CHECK(ok, "epilogue %zux%zux%zu: %s", m, n, k, ct_context_last_error(ctx));
    for (size_t i = 0; ok && i < nc; i++)
        if (memcmp(&got[i], &want[i], 4)) {
            CHECK(0, "epilogue %zux%zux%zu, %zu slices, act %d: element %zu is %.9g, the product then "
                  "bias_act_fwd_f32 gives %.9g", m, n, k, splits, act, i, got[i], want[i]);
            ok = 0;
        }
    ct_buffer_release(&a), ct_buffer_release(&b), ct_buffer_release(&bias);
    ct_buffer_release(&c1), ct_buffer_release(&c2);
    free(h);
    return ok;
}

/* ct_gemm_batched2 over n1 x n2 products laid out as attention's heads:
 * operands side by side in the rows (head h at column h w, sample i at i H
 * w of a leading dimension N H w + pad) or C blocks one past the other;
 * against the double-precision product with test one's tolerance (s = 1,
 * beta = 0: C is written, never read). 1 when it matches. */
static int batched2(ct_context *ctx, int ta, int tb, size_t m, size_t n, size_t k, size_t n1, size_t n2,
                    int c_stacked)
{
    size_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    size_t lda = n1 * n2 * ac + 3, ldb = n1 * n2 * bc + 1;
    size_t as[2] = { n2 * ac, ac }, bs[2] = { n2 * bc, bc };
    size_t ldc = c_stacked ? n : n1 * n2 * n + 2;
    size_t cs[2] = { c_stacked ? n2 * m * n : n2 * n, c_stacked ? m * n : n };
    size_t na = ar * lda, nb = br * ldb, nc = c_stacked ? n1 * n2 * m * n : m * ldc;
    float *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b), *got = malloc(nc * sizeof *got);
    for (size_t i = 0; i < na; i++)
        a[i] = frand();
    for (size_t i = 0; i < nb; i++)
        b[i] = frand();
    for (size_t i = 0; i < nc; i++)
        got[i] = NAN;
    cl_mem ma = NULL, mb = NULL, mc = NULL;
    int st = ct_buffer_create(ctx, na * sizeof *a, &ma) || ct_buffer_create(ctx, nb * sizeof *b, &mb) ||
             ct_buffer_create(ctx, nc * sizeof *got, &mc) || ct_buffer_write(ctx, ma, 0, na * sizeof *a, a) ||
             ct_buffer_write(ctx, mb, 0, nb * sizeof *b, b) ||
             ct_buffer_write(ctx, mc, 0, nc * sizeof *got, got);
    if (!st)
        st = ct_gemm_batched2(ctx, ta, tb, m, n, k, 0.5f, ma, 0, lda, as, mb, 0, ldb, bs, 0.0f, mc, 0, ldc, cs,
                              n1, n2);
    if (!st)
        st = ct_buffer_read(ctx, mc, 0, nc * sizeof *got, got);
    int ok = st == CT_OK;
    CHECK(ok, "batched2 %zux%zu of %zux%zux%zu: %s", n1, n2, m, n, k, ct_context_last_error(ctx));
    for (size_t i1 = 0; ok && i1 < n1; i1++)
        for (size_t i2 = 0; ok && i2 < n2; i2++)
            for (size_t r = 0; ok && r < m; r++)
                for (size_t col = 0; ok && col < n; col++) {
                    const float *pa = a + i1 * as[0] + i2 * as[1], *pb = b + i1 * bs[0] + i2 * bs[1];
                    double sum = 0, abs = 0;
                    for (size_t p = 0; p < k; p++) {
                        double x = op16(pa[ta ? p * lda + r : r * lda + p]);
                        double y = op16(pb[tb ? col * ldb + p : p * ldb + col]);
                        sum += x * y;
                        abs += fabs(x * y);
                    }
                    double v = got[i1 * cs[0] + i2 * cs[1] + r * ldc + col];
                    double tol = (double)(k + 3) * 0x1p-24 * 0.5 * abs + 1e-30;
                    if (!(fabs(v - 0.5 * sum) <= tol)) {
                        CHECK(0, "batched2 %c%c %zux%zu of %zux%zux%zu%s: product (%zu, %zu) element (%zu, %zu) "
                              "is %.9g, want %.9g", ta ? 'T' : 'N', tb ? 'T' : 'N', n1, n2, m, n, k,
                              c_stacked ? ", C stacked" : "", i1, i2, r, col, v, 0.5 * sum);
                        ok = 0;
                    }
                }
    ct_buffer_release(&ma), ct_buffer_release(&mb), ct_buffer_release(&mc);
    free(a), free(b), free(got);
    return ok;
}

/* Overlapping C blocks are refused, naming the function. */
static void batched2_overlap(ct_context *ctx)
{
    cl_mem m = NULL;
    size_t as[2] = { 0, 0 }, cs[2] = { 8, 3 }; /* 4 x 4 blocks 3 apart in rows of 4 */
    int st = ct_buffer_create(ctx, 4096 * sizeof(float), &m);
    if (!st)
        st = ct_gemm_batched2(ctx, 0, 0, 4, 4, 4, 1.0f, m, 0, 4, as, m, 0, 4, as, 0.0f, m, 0, 4, cs, 2, 2);
    CHECK(st == CT_ERR_INVALID_ARG && strstr(ct_context_last_error(ctx), "overlap"),
          "batched2 with overlapping C blocks: status %d (%s)", st, ct_context_last_error(ctx));
    ct_buffer_release(&m);
}

int main(int argc, char **argv)
{
    ct_context_options o;
    ct_context_defaults(&o);
    o.lazy_kernels = 1;
    int small = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--small"))
            small = 1;
        else if (!strcmp(argv[i], "--tiles") && i + 1 < argc &&
                 (!strcmp(argv[i + 1], "reg") || !strcmp(argv[i + 1], "vec") || !strcmp(argv[i + 1], "small")))
            only_tiles = !strcmp(argv[i + 1], "reg")   ? CT_GEMM_CL_REG
                         : !strcmp(argv[i + 1], "vec") ? CT_GEMM_CL_VEC
                                                       : CT_GEMM_CL_SMALL,
            i++;
        else if (!strcmp(argv[i], "--build-options") && i + 1 < argc)
            o.build_options = argv[++i];
        else if (!strcmp(argv[i], "--precision") && i + 1 < argc &&
                 (!strcmp(argv[i + 1], "bf16") || !strcmp(argv[i + 1], "fp16")))
            prec = !strcmp(argv[++i], "bf16") ? CT_PRECISION_BF16 : CT_PRECISION_FP16;
    }
    ct_context *ctx = NULL;
    if (ct_context_create(&o, &ctx)) {
        fprintf(stderr, "%s\n", ct_last_error());
        return 1;
    }
    printf("device: %s (%u compute units)\n", ctx->dev.name, ctx->dev.compute_units);
    /* 16-bit products: the GPU class (its device GEMM path) */
    if (prec != CT_PRECISION_FP32 && (ct_context_set_kernels(ctx, CT_KERNELS_GPU) ||
                                      ct_context_set_precision(ctx, (ct_precision)prec))) {
        fprintf(stderr, "--precision %s: %s\n", ct_precision_str((ct_precision)prec), ct_context_last_error(ctx));
        ct_context_free(&ctx);
        return 1;
    }
    if (prec != CT_PRECISION_FP32)
        printf("products on %s operands\n", ct_precision_str((ct_precision)prec));
    if (argc > 1 && !strcmp(argv[1], "--bench")) {
        int ok = bench(ctx, argc > 2 && argv[2][0] != '-' ? argv[2] : NULL);
        ct_context_free(&ctx);
        return ok ? 0 : 1;
    }
    checks(ctx, small);
    if (prec != CT_PRECISION_FP32) {
        printf("rounding: %s\n", rounding(ctx) ? "every tile set rounds each operand as the reference"
                                                 : "FAILED");
        storage(ctx, small);
    }
    /* relu, sigmoid, gelu and none; shapes not multiples of the tiles */
    static const size_t eshape[][3] = { { 37, 70, 29 }, { 5, 129, 300 }, { 64, 33, 1000 } };
    static const int eact[4] = { 1, 3, 5, 0 };
    int ecases = 0, epassed = 0;
    for (size_t i = 0; i < (small ? 1 : 3); i++)
        for (size_t sp = 1; sp <= 3; sp += 2)
            for (int j = 0; j < 4; j++, ecases++)
                epassed += epilogue(ctx, eshape[i][0], eshape[i][1], eshape[i][2], sp, eact[j]);
    printf("epilogue: %d of %d cases give the bits of the product and a bias_act pass\n", epassed, ecases);
    /* two-level batches on the GPU class: one launch of the own kernel, and
     * ct_gemm_batched's strided runs (CLTRAIN_GPU_GEMM=clblast) */
    static const size_t bshape[][5] = { { 37, 37, 12, 3, 4 }, { 20, 12, 37, 4, 3 }, { 70, 5, 33, 2, 1 } };
    int bcases = 0, bpassed = 0;
    if (only_tiles < 0 && ct_context_set_kernels(ctx, CT_KERNELS_GPU) == CT_OK) {
        for (int way = 0; way < 2; way++) {
            setenv("CLTRAIN_GPU_GEMM", way ? "clblast" : "own", 1);
            for (size_t i = 0; i < (small ? 1 : 3); i++)
                for (int t = 0; t < 4; t++, bcases++)
                    bpassed += batched2(ctx, t >> 1, t & 1, bshape[i][0], bshape[i][1], bshape[i][2],
                                        bshape[i][3], bshape[i][4], (int)(i + (size_t)t) % 2);
        }
        unsetenv("CLTRAIN_GPU_GEMM");
        batched2_overlap(ctx);
    }
    printf("batched2: %d of %d cases match the double-precision products\n", bpassed, bcases);
    ct_context_free(&ctx);
    return tcheck_done("test_gemm_cl");
}
