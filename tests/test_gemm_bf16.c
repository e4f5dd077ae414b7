/*
 * test_gemm_bf16 - ct_gemm with bf16 and fp16 operands
 * (ct_context_set_precision) on the host path: every transposition, sizes that cut the 12 x 32 tiles,
 * odd and even k (the pairs' zero padding), k past one slice of 1024,
 * alpha and beta, with AVX512_BF16's dot products (CLTRAIN_HOST_ISA=avx512bf16:
 * wherever the CPU has them, even where they do not pay) and without
 * (CLTRAIN_HOST_ISA=avx512: rounded panels through the float32 FMAs), on
 * AMX tiles where the CPU has them and Linux grants them (the default
 * there: 32 x 32 tiles, pair rows padded to whole tiles of 16 pairs, so
 * every size here cuts them too; said and skipped elsewhere), and fp16
 * (F16C's rounding to IEEE half, the float32 FMAs).
 *
 * What bf16 products are: each operand rounded to bf16 (8 significant
 * bits, to nearest even), each product exact in float32, the sums float32
 * (fp16: 11 bits, and below 2^-14 half's subnormals, absolute steps of
 * 2^-24, so each operand is off by at most 2^-25 more).
 * So, with A', B' the rounded operands and S = sum_k |a'_ik b'_kj| exact:
 *   |C - alpha A'B' - beta C0| <= (k + 2) 2^-24 (|alpha| S + |beta C0|)
 * (float32 sums in any order, Higham 3.5; +2 for alpha, beta and the
 * store), far tighter than the bf16 rounding itself. The test also holds
 * the result to the float32 product of the unrounded operands within the
 * bf16 bound: each operand off by at most u = 2^-8 relative (8 significant
 * bits), each product by 2u + u^2, and S itself off by as much from the
 * unrounded sum, so 2.03 u S + the float32 bound; and it checks that the rounding
 * did happen: somewhere the result differs from the unrounded product by
 * more than the float32 bound (else bf16 silently ran as float32).
 * Devices without a host GEMM on AVX-512 refuse bf16 by name (checked too).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cl/runtime.h"
#include "host/host_work.h"
#include "tcheck.h"
#include "tround16.h"

static uint64_t rng = 7;
static float frand(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(rng >> 40) / (double)(1ull << 24)) * 2.0f - 1.0f;
}

static int half; /* the operands' format: fp16, else bf16 */

static double bf16(float x)
{
    return tround16(x, half);
}

/* element (i, j) of op(X) for X stored rows x cols row-major */
static float at(const float *x, int t, size_t cols_stored, size_t i, size_t j)
{
    return t ? x[j * cols_stored + i] : x[i * cols_stored + j];
}

static int one(ct_context *ctx, int ta, int tb, size_t m, size_t n, size_t k, float alpha, float beta, int *rounded)
{
    float *a = malloc(m * k * sizeof *a), *b = malloc(k * n * sizeof *b), *c = malloc(m * n * sizeof *c);
    float *c0 = malloc(m * n * sizeof *c0);
    cl_mem ma = NULL, mb = NULL, mc = NULL;
    int ok = a && b && c && c0;
    for (size_t i = 0; ok && i < m * k; i++)
        a[i] = frand();
    for (size_t i = 0; ok && i < k * n; i++)
        b[i] = frand();
    for (size_t i = 0; ok && i < m * n; i++)
        c0[i] = frand();
    size_t lda = ta ? m : k, ldb = tb ? k : n;
    ok = ok && !ct_buffer_create(ctx, m * k * 4, &ma) && !ct_buffer_create(ctx, k * n * 4, &mb) &&
         !ct_buffer_create(ctx, m * n * 4, &mc) && !ct_buffer_write(ctx, ma, 0, m * k * 4, a) &&
         !ct_buffer_write(ctx, mb, 0, k * n * 4, b) && !ct_buffer_write(ctx, mc, 0, m * n * 4, c0) &&
         !ct_gemm(ctx, ta, tb, m, n, k, alpha, ma, 0, lda, mb, 0, ldb, beta, mc, 0, n) &&
         !ct_buffer_read(ctx, mc, 0, m * n * 4, c);
    CHECK(ok, "%c%c %zux%zux%zu: %s", ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, ct_context_last_error(ctx));
    int good = ok;
    for (size_t i = 0; ok && i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double r = 0, e = 0, s = 0;
            for (size_t q = 0; q < k; q++) {
                float x = at(a, ta, ta ? m : k, i, q), y = at(b, tb, tb ? k : n, q, j);
                r += bf16(x) * bf16(y);
                e += (double)x * y;
                s += fabs(bf16(x) * bf16(y));
            }
            double cb = beta * (double)c0[i * n + j], f32 = (double)(k + 2) * 0x1p-24 * (fabs(alpha) * s + fabs(cb));
            double want = alpha * r + cb, got = c[i * n + j];
            if (fabs(got - want) > f32 + 1e-30) {
                if (good)
                    CHECK(0, "%c%c %zux%zux%zu (%zu, %zu): %.9g, bf16 products give %.9g (bound %.3g)",
                          ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, i, j, got, want, f32);
                good = 0;
            }
            double exact = alpha * e + cb, u = half ? 0x1p-11 : 0x1p-8;
            /* fp16's subnormals: each operand off by up to 2^-25 absolute, |other| <= 1 */
            double sub = half ? 2.0 * (double)k * 0x1p-25 * fabs(alpha) : 0;
            if (fabs(got - exact) > 2.03 * u * fabs(alpha) * s + sub + f32 + 1e-30 && good) {
                CHECK(0, "%c%c %zux%zux%zu (%zu, %zu): %.9g is beyond the 16-bit bound %.3g of the float product %.9g",
                      ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, i, j, got, 2.03 * u * fabs(alpha) * s + sub + f32, exact);
                good = 0;
            }
            if (fabs(got - exact) > f32)
                *rounded = 1;
        }
    ct_buffer_release(&ma);
    ct_buffer_release(&mb);
    ct_buffer_release(&mc);
    free(a), free(b), free(c), free(c0);
    return good;
}

int main(void)
{
    ct_context_options o;
    ct_context_defaults(&o);
    o.lazy_kernels = 1;
    ct_context *ctx = NULL;
    if (ct_context_create(&o, &ctx) != CT_OK) {
        printf("no OpenCL device: %s\n", ct_last_error());
        return 77;
    }
    int host = ct_gemm_set_path(ctx, CT_GEMM_HOST) == CT_OK;
    int st = host ? ct_context_set_precision(ctx, CT_PRECISION_BF16) : CT_ERR_UNSUPPORTED;
    if (st != CT_OK) {
        /* refused by name where it cannot run */
        CHECK(st == CT_ERR_UNSUPPORTED && strstr(ct_context_last_error(ctx), "bf16"), "bf16 refused with: %s",
              ct_context_last_error(ctx));
        printf("bf16 products need the host GEMM on an AVX-512 CPU: %s\n", ct_context_last_error(ctx));
        ct_context_free(&ctx);
        return tcheck_failures ? 1 : 77;
    }
    CHECK(ct_context_precision(ctx) == CT_PRECISION_BF16, "the precision did not stick");
    static const size_t dims[][3] = { { 1, 1, 1 }, { 13, 33, 7 }, { 300, 70, 33 }, { 256, 64, 16 },
                                      { 40, 100, 1030 }, { 257, 65, 2 }, { 24, 64, 1 } };
    static const char *const isas[] = { "avx512bf16", "avx512", NULL };
    for (int isa = 0; isa < 3; isa++) {
        /* 0: the dot products wherever the CPU has them (the default takes
         * them only where they pay: host_work.h); 1: rounded panels; 2: the
         * default, AMX where it is granted */
        if (isas[isa])
            setenv("CLTRAIN_HOST_ISA", isas[isa], 1);
        else
            unsetenv("CLTRAIN_HOST_ISA");
        if (isa == 2 && !ct_host_amx()) {
            printf("bf16 products on AMX tiles: not on this CPU (or not granted by the kernel); skipped\n");
            continue;
        }
        int rounded = 0, cases = 0, passed = 0;
        for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
            for (int t = 0; t < 4; t++) {
                float alpha = t == 3 ? 0.5f : 1.0f, beta = t == 2 ? 0.75f : 0.0f;
                passed += one(ctx, t & 1, t >> 1, dims[d][0], dims[d][1], dims[d][2], alpha, beta, &rounded);
                cases++;
            }
        static const char *const what[] = {
            "CLTRAIN_HOST_ISA=avx512bf16 (AVX512_BF16's dot products where the CPU has them)",
            "CLTRAIN_HOST_ISA=avx512 (rounded panels, float32 FMAs)", "AMX tiles (TDPBF16PS)"
        };
        CHECK(rounded, "%s: no result differs from the float32 product: the operands were not rounded", what[isa]);
        printf("bf16 products, %s: %d of %d cases within their bounds\n", what[isa], passed, cases);
    }
    unsetenv("CLTRAIN_HOST_ISA");
    half = 1;
    CHECK(ct_context_set_precision(ctx, CT_PRECISION_FP16) == CT_OK, "fp16: %s", ct_context_last_error(ctx));
    int rounded = 0, cases = 0, passed = 0;
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
        for (int t = 0; t < 4; t++) {
            passed += one(ctx, t & 1, t >> 1, dims[d][0], dims[d][1], dims[d][2], t == 3 ? 0.5f : 1.0f,
                          t == 2 ? 0.75f : 0.0f, &rounded);
            cases++;
        }
    CHECK(rounded, "fp16: no result differs from the float32 product: the operands were not rounded");
    printf("fp16 products: %d of %d cases within their bounds\n", passed, cases);
    CHECK(ct_context_set_precision(ctx, CT_PRECISION_FP32) == CT_OK, "back to fp32");
    ct_context_free(&ctx);
    return tcheck_done("test_gemm_bf16");
}
