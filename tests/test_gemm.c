/*
 * test_gemm - ct_gemm against cblas_sgemm, on both paths (CLBlast and the
 * host BLAS on mapped buffers), for every transpose and sizes 1, 7, 33 and
 * 1000 in each of m, n, k (the device path with CLBlast's kernels and with
 * cltrain's own, CLTRAIN_GPU_GEMM), with offsets, padded leading dimensions, operands
 * sharing one buffer, k = 0 and invalid arguments; and ct_gemm_batched:
 * products at scattered offsets of shared buffers, interleaved as the
 * heads of attention are, against cblas_sgemm each. On the host path, the
 * AVX-512 GEMM's blocking (where the CPU has it): tiles cut by m, n and k at
 * every edge, several slices of k, several blocks of columns, beta = 0 over
 * a C of NaNs (C must not be read), and the same bits from 1, 2 and 3
 * threads.
 *
 * Tolerance: both sides sum k float products in different orders; each
 * result's rounding error is bounded by about k * 2^-24 * sum_k |a_ik b_kj|
 * (Higham, Accuracy and Stability, 3.5), so we allow 2k * 2^-24 times that
 * sum (computed with cblas on |A| and |B|) plus 1e-30 for exact zeros.
 */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cl/runtime.h"
#include "tcheck.h"

static uint64_t rng = 42;
static float frand(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(rng >> 40) / (double)(1ull << 24)) * 2.0f - 1.0f;
}

typedef struct mat {
    size_t rows, cols, ld, off;
} mat;

/* beta = 0 cases start with NaN inside C (set for the host GEMM's cases) */
static int nan_c;
/* added to every operand's offset (the rebasing cases) */
static size_t far_off;

static mat make(size_t rows, size_t cols, int pad)
{
    mat m = { rows, cols, cols + (pad ? 3 : 0), (pad ? 5 : 0) + far_off };
    return m;
}

static size_t span(mat m)
{
    return m.off + m.rows * m.ld;
}

static int one(ct_context *ctx, int ta, int tb, size_t m, size_t n, size_t k, float alpha,
               float beta, int pad, int shared)
{
    mat A = make(ta ? k : m, ta ? m : k, pad), B = make(tb ? n : k, tb ? k : n, pad), C = make(m, n, pad);
    size_t na = span(A) + 1, nb = span(B) + 1, nc = span(C); /* +1: k = 0 leaves A or B empty */
    if (shared) { /* A and C in one buffer: C after A */
        C.off = na + 7;
        nc = span(C);
    }
    float *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b), *c = malloc(nc * sizeof *c);
    float *want = malloc(nc * sizeof *c), *bound = calloc(nc, sizeof *c);
    float *aa = malloc(na * sizeof *a), *ab = malloc(nb * sizeof *b);
    for (size_t i = 0; i < na; i++)
        a[i] = frand(), aa[i] = fabsf(a[i]);
    for (size_t i = 0; i < nb; i++)
        b[i] = frand(), ab[i] = fabsf(b[i]);
    for (size_t i = 0; i < nc; i++)
        c[i] = frand();
    if (shared)
        memcpy(c, a, na * sizeof *a);
    if (nan_c && beta == 0.0f)
        for (size_t r = 0; r < m; r++)
            for (size_t j = 0; j < n; j++)
                c[C.off + r * C.ld + j] = NAN;
    memcpy(want, c, nc * sizeof *c);
    const float *asrc = shared ? c : a;
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (int)m, (int)n, (int)k, alpha, asrc + A.off, (int)A.ld, b + B.off, (int)B.ld, beta,
                want + C.off, (int)C.ld);
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (int)m, (int)n, (int)k, fabsf(alpha), aa + A.off, (int)A.ld, ab + B.off, (int)B.ld,
                0.0f, bound + C.off, (int)C.ld);

    cl_mem ma = NULL, mb = NULL, mc = NULL;
    int ok = 1;
    if (ct_buffer_create(ctx, na * sizeof *a, &ma) || ct_buffer_create(ctx, nb * sizeof *b, &mb) ||
        ct_buffer_create(ctx, nc * sizeof *c, &mc) ||
        ct_buffer_write(ctx, ma, 0, na * sizeof *a, a) || ct_buffer_write(ctx, mb, 0, nb * sizeof *b, b) ||
        ct_buffer_write(ctx, mc, 0, nc * sizeof *c, c)) {
        CHECK(0, "buffers: %s", ct_context_last_error(ctx));
        ok = 0;
    }
    if (ok) {
        int st = ct_gemm(ctx, ta, tb, m, n, k, alpha, shared ? mc : ma, A.off, A.ld, mb, B.off, B.ld,
                         beta, mc, C.off, C.ld);
        CHECK(st == CT_OK, "ct_gemm %c%c %zux%zux%zu: %s", ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k,
              ct_context_last_error(ctx));
        ok = st == CT_OK && ct_buffer_read(ctx, mc, 0, nc * sizeof *c, c) == CT_OK;
    }
    for (size_t i = 0; ok && i < nc; i++) {
        /* elements outside C (padding, A's copy) must be untouched */
        size_t r = (i - C.off) / C.ld, col = (i - C.off) % C.ld;
        int inside = i >= C.off && r < m && col < n;
        double tol = inside ? 2.0 * (double)(k + 1) * 5.96e-8 * ((double)bound[i] + fabs(beta * want[i])) + 1e-30 : 0;
        if (!(fabs((double)c[i] - (double)want[i]) <= tol)) {
            CHECK(0, "%s %c%c m=%zu n=%zu k=%zu pad=%d shared=%d: element %zu (%s) is %.9g, cblas "
                  "gives %.9g (tolerance %.3g)", ct_gemm_path_str(ct_gemm_get_path(ctx)),
                  ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, pad, shared, i,
                  inside ? "inside C" : "outside C", c[i], want[i], tol);
            ok = 0;
        }
    }
    ct_buffer_release(&ma);
    ct_buffer_release(&mb);
    ct_buffer_release(&mc);
    free(a), free(b), free(c), free(want), free(bound), free(aa), free(ab);
    return ok;
}

/* count products of one shape: A_b, B_b interleaved in one buffer each
 * (head-like: offsets b * width, leading dimension count * width), C_b in
 * blocks with a gap between them that must stay untouched */
static int batched(ct_context *ctx, int ta, int tb, size_t m, size_t n, size_t k, size_t count, float beta)
{
    size_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    size_t lda = count * ac, ldb = count * bc, ldc = n + 2, cblock = m * ldc + 3;
    size_t na = ar * lda, nb = br * ldb, nc = count * cblock;
    size_t *ao = malloc(3 * count * sizeof *ao), *bo = ao + count, *co = ao + 2 * count;
    float *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b), *c = malloc(nc * sizeof *c);
    float *want = malloc(nc * sizeof *c), *bound = calloc(nc, sizeof *c);
    float *aa = malloc(na * sizeof *a), *ab = malloc(nb * sizeof *b);
    for (size_t i = 0; i < na; i++)
        a[i] = frand(), aa[i] = fabsf(a[i]);
    for (size_t i = 0; i < nb; i++)
        b[i] = frand(), ab[i] = fabsf(b[i]);
    for (size_t i = 0; i < nc; i++)
        c[i] = want[i] = frand();
    na += far_off, nb += far_off, nc += far_off;
    a = realloc(a, na * sizeof *a), b = realloc(b, nb * sizeof *b), c = realloc(c, nc * sizeof *c);
    want = realloc(want, nc * sizeof *c), bound = realloc(bound, nc * sizeof *c);
    aa = realloc(aa, na * sizeof *a), ab = realloc(ab, nb * sizeof *b);
    for (size_t i = na - far_off; i < na; i++)
        a[i] = frand(), aa[i] = fabsf(a[i]);
    for (size_t i = nb - far_off; i < nb; i++)
        b[i] = frand(), ab[i] = fabsf(b[i]);
    for (size_t i = nc - far_off; i < nc; i++)
        c[i] = want[i] = frand(), bound[i] = 0;
    for (size_t i = 0; i < count; i++) {
        /* C in reverse order (strided, with a negative stride) or, from
         * the fourth product on, in order (one run of equal strides) */
        ao[i] = far_off + i * ac, bo[i] = far_off + i * bc;
        co[i] = far_off + (i < 3 ? count - 1 - i : i) * cblock;
        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m,
                    (int)n, (int)k, 0.5f, a + ao[i], (int)lda, b + bo[i], (int)ldb, beta, want + co[i], (int)ldc);
        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m,
                    (int)n, (int)k, 0.5f, aa + ao[i], (int)lda, ab + bo[i], (int)ldb, 0.0f, bound + co[i], (int)ldc);
    }
    cl_mem ma = NULL, mb = NULL, mc = NULL;
    int ok = !ct_buffer_create(ctx, na * sizeof *a, &ma) && !ct_buffer_create(ctx, nb * sizeof *b, &mb) &&
             !ct_buffer_create(ctx, nc * sizeof *c, &mc) && !ct_buffer_write(ctx, ma, 0, na * sizeof *a, a) &&
             !ct_buffer_write(ctx, mb, 0, nb * sizeof *b, b) && !ct_buffer_write(ctx, mc, 0, nc * sizeof *c, c);
    CHECK(ok, "buffers: %s", ct_context_last_error(ctx));
    if (ok) {
        int st = ct_gemm_batched(ctx, ta, tb, m, n, k, 0.5f, ma, ao, lda, mb, bo, ldb, beta, mc, co, ldc, count);
        CHECK(st == CT_OK, "ct_gemm_batched %c%c %zu of %zux%zux%zu: %s", ta ? 'T' : 'N', tb ? 'T' : 'N', count,
              m, n, k, ct_context_last_error(ctx));
        ok = st == CT_OK && ct_buffer_read(ctx, mc, 0, nc * sizeof *c, c) == CT_OK;
    }
    for (size_t i = 0; ok && i < nc; i++) {
        size_t at = (i - far_off) % cblock, r = at / ldc, col = at % ldc;
        int inside = i >= far_off && r < m && col < n;
        double tol = inside ? 2.0 * (double)(k + 1) * 5.96e-8 * ((double)bound[i] + fabs(beta * want[i])) + 1e-30 : 0;
        if (!(fabs((double)c[i] - (double)want[i]) <= tol)) {
            CHECK(0, "%s batched %c%c %zu of m=%zu n=%zu k=%zu: element %zu (%s) is %.9g, cblas gives %.9g",
                  ct_gemm_path_str(ct_gemm_get_path(ctx)), ta ? 'T' : 'N', tb ? 'T' : 'N', count, m, n, k, i,
                  inside ? "inside a C" : "between them", c[i], want[i]);
            ok = 0;
        }
    }
    ct_buffer_release(&ma);
    ct_buffer_release(&mb);
    ct_buffer_release(&mc);
    free(ao), free(a), free(b), free(c), free(want), free(bound), free(aa), free(ab);
    return ok;
}

/* One product on a context of `threads` host threads (CLTRAIN_THREADS),
 * into out (m x n); 0 when it could not run. */
static int product_on(int threads, int ta, int tb, size_t m, size_t n, size_t k, const float *a,
                      const float *b, float *out)
{
    char v[8];
    snprintf(v, sizeof v, "%d", threads);
    const char *old = getenv("CLTRAIN_THREADS");
    char *saved = old ? strdup(old) : NULL;
    setenv("CLTRAIN_THREADS", v, 1);
    ct_context_options o;
    ct_context_defaults(&o);
    o.lazy_kernels = 1;
    ct_context *ctx = NULL;
    cl_mem ma = NULL, mb = NULL, mc = NULL;
    int ok = ct_context_create(&o, &ctx) == CT_OK && ct_gemm_set_path(ctx, CT_GEMM_HOST) == CT_OK &&
             !ct_buffer_create(ctx, m * k * sizeof *a, &ma) && !ct_buffer_create(ctx, k * n * sizeof *b, &mb) &&
             !ct_buffer_create(ctx, m * n * sizeof *out, &mc) &&
             !ct_buffer_write(ctx, ma, 0, m * k * sizeof *a, a) && !ct_buffer_write(ctx, mb, 0, k * n * sizeof *b, b) &&
             !ct_gemm(ctx, ta, tb, m, n, k, 1.0f, ma, 0, ta ? m : k, mb, 0, tb ? k : n, 0.0f, mc, 0, n) &&
             !ct_buffer_read(ctx, mc, 0, m * n * sizeof *out, out);
    CHECK(ok, "%d threads: %s", threads, ctx ? ct_context_last_error(ctx) : ct_last_error());
    ct_buffer_release(&ma);
    ct_buffer_release(&mb);
    ct_buffer_release(&mc);
    ct_context_free(&ctx);
    if (saved)
        setenv("CLTRAIN_THREADS", saved, 1);
    else
        unsetenv("CLTRAIN_THREADS");
    free(saved);
    return ok;
}

/* The host path's product of one shape gives the same bits on 1, 2 and 3
 * threads. */
static int threads_agree(int ta, int tb, size_t m, size_t n, size_t k)
{
    float *a = malloc(m * k * sizeof *a), *b = malloc(k * n * sizeof *b);
    float *c[3] = { malloc(m * n * sizeof *a), malloc(m * n * sizeof *a), malloc(m * n * sizeof *a) };
    for (size_t i = 0; i < m * k; i++)
        a[i] = frand();
    for (size_t i = 0; i < k * n; i++)
        b[i] = frand();
    int ok = 1;
    for (int t = 0; t < 3 && ok; t++)
        ok = product_on(t + 1, ta, tb, m, n, k, a, b, c[t]);
    for (int t = 1; t < 3 && ok; t++)
        if (memcmp(c[0], c[t], m * n * sizeof *a)) {
            CHECK(0, "host %c%c %zux%zux%zu: %d threads differ from 1 in their bits", ta ? 'T' : 'N',
                  tb ? 'T' : 'N', m, n, k, t + 1);
            ok = 0;
        }
    free(a), free(b), free(c[0]), free(c[1]), free(c[2]);
    return ok;
}

static void errors(ct_context *ctx)
{
    cl_mem m = NULL;
    ct_buffer_create(ctx, 64 * sizeof(float), &m);
    int st = ct_gemm(ctx, 0, 0, 4, 4, 4, 1, m, 0, 3, m, 0, 4, 0, m, 32, 4);
    CHECK(st == CT_ERR_INVALID_ARG && strstr(ct_context_last_error(ctx), "leading dimension of A"),
          "small lda: %d %s", st, ct_context_last_error(ctx));
    st = ct_gemm(ctx, 0, 0, 8, 8, 8, 1, m, 0, 8, m, 0, 8, 0, m, 32, 8);
    CHECK(st == CT_ERR_INVALID_ARG && strstr(ct_context_last_error(ctx), "reaches element"),
          "out of range: %d %s", st, ct_context_last_error(ctx));
    st = ct_gemm(ctx, 0, 0, 4, 4, 4, 1, NULL, 0, 4, m, 0, 4, 0, m, 32, 4);
    CHECK(st == CT_ERR_INVALID_ARG, "NULL A: %d", st);
    ct_buffer_release(&m);
}

/* CLBlast's kernels index with int: operands reaching past element 2^31 - 1
 * are rebased on sub-buffers. The same code runs here with the limit
 * lowered to 2^16 elements (buffers of a few MiB instead of 8 GiB): every
 * operand starts past it, products and batches must match cblas, and a
 * matrix that spans more than the limit by itself is refused by name. */
static void far_offsets(ct_context *ctx)
{
    ctx->gemm_index_limit = 1u << 16;
    far_off = 100000;
    /* CLBlast (rebased), then cltrain's own kernel (ulong offsets) */
    static const char *const kernels[2] = { "clblast", "own" };
    for (int kk = 0; kk < 2; kk++) {
        setenv("CLTRAIN_GPU_GEMM", kernels[kk], 1);
        int cases = 0, passed = 0;
        for (int t = 0; t < 4; t++, cases += 3) {
            passed += one(ctx, t & 1, t >> 1, 33, 65, 17, 0.75f, t & 1 ? 0.5f : 0.0f, t >> 1, 0);
            passed += one(ctx, t & 1, t >> 1, 7, 1, 129, 1.0f, 0.0f, 1, 0);
            passed += batched(ctx, t & 1, t >> 1, 16, 16, 8, 12, 0.5f);
        }
        printf("clblast path (%s kernel), offsets past the index limit: %d of %d cases match cblas_sgemm\n",
               kernels[kk], passed, cases);
    }
    setenv("CLTRAIN_GPU_GEMM", "clblast", 1);
    far_off = 0;
    cl_mem m = NULL;
    ct_buffer_create(ctx, (300 * 300 + 64) * sizeof(float), &m);
    int st = ct_gemm(ctx, 0, 0, 300, 300, 4, 1, m, 0, 4, m, 0, 300, 0, m, 64, 300);
    CHECK(st == CT_ERR_INVALID_ARG && strstr(ct_context_last_error(ctx), "more than the 65536"),
          "a C of 90000 elements over a limit of 65536: %d %s", st, ct_context_last_error(ctx));
    ct_buffer_release(&m);
    unsetenv("CLTRAIN_GPU_GEMM");
    ctx->gemm_index_limit = 0;
}

int main(int argc, char **argv)
{
    ct_context_options o;
    ct_context_defaults(&o);
    o.lazy_kernels = 1;
    ct_context *ctx = NULL;
    if (ct_context_create(&o, &ctx)) {
        fprintf(stderr, "%s\n", ct_last_error());
        return 1;
    }
    /* the device path twice: CLBlast's kernels, then cltrain's own */
    const ct_gemm_path paths[3] = { CT_GEMM_HOST, CT_GEMM_CLBLAST, CT_GEMM_CLBLAST };
    const char *const gpu_gemm[3] = { NULL, "clblast", "own" };
    const size_t sizes[4] = { 1, 7, 33, 1000 };
    for (int p = 0; p < 3; p++) {
        if (argc > 1 && strcmp(argv[1], ct_gemm_path_str(paths[p])))
            continue;
        if (gpu_gemm[p]) {
            setenv("CLTRAIN_GPU_GEMM", gpu_gemm[p], 1);
            printf("device path, %s kernels:\n", gpu_gemm[p]);
        }
        if (ct_gemm_set_path(ctx, paths[p])) {
            printf("skipping the %s path: %s\n", ct_gemm_path_str(paths[p]), ct_context_last_error(ctx));
            continue;
        }
        int cases = 0, passed = 0;
        for (int t = 0; t < 4; t++)
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++)
                    for (int l = 0; l < 4; l++) {
                        size_t m = sizes[i], n = sizes[j], k = sizes[l];
                        if (m * n * k > 40000000 && t != 0 && t != 3)
                            continue; /* the 1000^3 product only as NN and TT */
                        int pad = (i + j + l + t) & 1;
                        cases++;
                        passed += one(ctx, t & 1, t >> 1, m, n, k, 0.75f, (i + l) & 1 ? 0.5f : 0.0f,
                                      pad, 0);
                    }
        cases += 4;
        passed += one(ctx, 0, 1, 33, 7, 65, 1.0f, 1.0f, 1, 1);   /* A and C share a buffer */
        passed += one(ctx, 1, 0, 7, 33, 17, -2.0f, 0.0f, 0, 1);
        passed += one(ctx, 0, 0, 7, 5, 0, 1.0f, 0.5f, 1, 0);     /* k = 0: C = beta C */
        passed += one(ctx, 0, 0, 7, 5, 0, 1.0f, 0.0f, 0, 0);
        printf("%s path: %d of %d cases match cblas_sgemm\n", ct_gemm_path_str(paths[p]), passed, cases);
        if (paths[p] == CT_GEMM_HOST) {
            /* the AVX-512 GEMM's edges: tiles of 12 x 32, slices of up to
             * 1024 of k, blocks of 4096 columns */
            static const size_t shapes[][3] = { { 257, 65, 19 },   { 300, 100, 1500 }, { 263, 4133, 40 },
                                                { 515, 97, 2100 }, { 256, 64, 16 },    { 1031, 161, 17 } };
            int hcases = 0, hpassed = 0;
            nan_c = 1;
            for (int t = 0; t < 4; t++)
                for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++, hcases++)
                    hpassed += one(ctx, t & 1, t >> 1, shapes[i][0], shapes[i][1], shapes[i][2],
                                   i & 1 ? -0.5f : 1.0f, (i + (size_t)t) & 1 ? 0.0f : 0.25f,
                                   (int)(i + (size_t)t) & 1, 0);
            nan_c = 0;
            printf("host path, blocked shapes: %d of %d cases match cblas_sgemm\n", hpassed, hcases);
            int dcases = 0, dpassed = 0;
            for (int t = 0; t < 4; t++, dcases++)
                dpassed += threads_agree(t & 1, t >> 1, 517, 300, 1100);
            printf("host path: %d of %d shapes give the same bits on 1, 2 and 3 threads\n", dpassed, dcases);
        }
        int bcases = 0, bpassed = 0;
        for (int t = 0; t < 4; t++) {
            bcases += 3;
            bpassed += batched(ctx, t & 1, t >> 1, 16, 16, 8, 12, 0.0f);   /* attention's shapes */
            bpassed += batched(ctx, t & 1, t >> 1, 7, 33, 5, 3, 0.5f);
            bpassed += batched(ctx, t & 1, t >> 1, 1, 1, 1, 1, 0.0f);
        }
        printf("%s path: %d of %d batched cases match cblas_sgemm\n", ct_gemm_path_str(paths[p]), bpassed, bcases);
        errors(ctx);
        if (p == 2)
            far_offsets(ctx);
        unsetenv("CLTRAIN_GPU_GEMM");
    }
    ct_context_free(&ctx);
    return tcheck_done("test_gemm");
}
