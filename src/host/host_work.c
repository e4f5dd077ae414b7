/*
 * host_work.c - the per-context thread pool and scratch of host_work.h.
 */
#include "host/host_work.h"

#include <stdlib.h>
#include <string.h>

#include "cltrain/gemm.h"
#include "core/blasctl.h"

static void host_work_free(void *state)
{
    ct_host_work *hw = state;
    ct_pool_free(&hw->pool);
    for (int t = 0; t < hw->threads && hw->scratch; t++)
        free(hw->scratch[t]);
    free(hw->scratch);
    free(hw->scratch_n);
    free(hw->cached);
    free(hw->wpack);
    free(hw->toff);
    for (int k = 0; k < CT_HOST_BIG_SLOTS; k++)
        free(hw->big[k]);
    free(hw);
}

/* the context frees it with itself */
static const ct_ext_kind host_work_kind = { "host thread pool and scratch", host_work_free };

static size_t round_up(size_t a, size_t m)
{
    return (a + m - 1) / m * m;
}

int ct_host_work_get(ct_context *ctx, size_t per_thread, size_t wpack_n, size_t taps,
                     ct_host_work **out)
{
    ct_host_work *hw = ct_context_ext(ctx, &host_work_kind);
    if (!hw) {
        hw = calloc(1, sizeof *hw);
        if (!hw)
            return ct_fail(ctx, CT_ERR_NO_MEMORY, "conv2d host path: out of host memory");
        int threads = ctx->dev.compute_units ? (int)ctx->dev.compute_units : 1;
        const char *env = getenv("CLTRAIN_THREADS");
        if (env && *env) {
            char *end;
            long v = strtol(env, &end, 10);
            if (*end || v < 1 || v > 256) {
                host_work_free(hw);
                return ct_fail(ctx, CT_ERR_INVALID_ARG, "CLTRAIN_THREADS='%s': expected a thread "
                               "count from 1 to 256", env);
            }
            threads = (int)v;
        }
        threads = threads > 256 ? 256 : threads;
        hw->scratch = calloc((size_t)threads, sizeof *hw->scratch);
        hw->scratch_n = calloc((size_t)threads, sizeof *hw->scratch_n);
        hw->cached = calloc((size_t)threads, sizeof *hw->cached);
        if (!hw->scratch || !hw->scratch_n || !hw->cached) {
            host_work_free(hw);
            return ct_fail(ctx, CT_ERR_NO_MEMORY, "conv2d host path: out of host memory");
        }
        hw->threads = threads;
        int err = ct_pool_create(threads, &hw->pool);
        if (err) {
            host_work_free(hw);
            return ct_fail(ctx, CT_ERR_NO_MEMORY, "conv2d host path: could not start %d threads "
                           "(error %d). HINT: set CLTRAIN_CONV=im2col to use the OpenCL kernels",
                           threads, err);
        }
        int st = ct_context_ext_set(ctx, &host_work_kind, hw);
        if (st) {
            host_work_free(hw);
            return st;
        }
    }
    per_thread = round_up(per_thread, 16);
    for (int t = 0; t < hw->threads; t++) {
        if (hw->scratch_n[t] >= per_thread)
            continue;
        free(hw->scratch[t]);
        hw->scratch[t] = aligned_alloc(64, per_thread * sizeof(float));
        hw->scratch_n[t] = hw->scratch[t] ? per_thread : 0;
        if (!hw->scratch[t])
            return ct_fail(ctx, CT_ERR_NO_MEMORY, "conv2d host path: out of host memory for "
                           "%zu floats of scratch", per_thread);
    }
    if (hw->wpack_n < wpack_n) {
        free(hw->wpack);
        hw->wpack = aligned_alloc(64, round_up(wpack_n, 16) * sizeof(float));
        hw->wpack_n = hw->wpack ? wpack_n : 0;
        if (!hw->wpack)
            return ct_fail(ctx, CT_ERR_NO_MEMORY, "conv2d host path: out of host memory for "
                           "%zu packed weights", wpack_n);
    }
    if (hw->toff_n < taps) {
        free(hw->toff);
        hw->toff = malloc(taps * sizeof *hw->toff);
        hw->toff_n = hw->toff ? taps : 0;
        if (!hw->toff)
            return ct_fail(ctx, CT_ERR_NO_MEMORY, "conv2d host path: out of host memory");
    }
    for (int t = 0; t < hw->threads; t++)
        hw->cached[t] = -1;
    *out = hw;
    return CT_OK;
}

int ct_host_work_big(ct_context *ctx, ct_host_work *hw, int slot, size_t n, float **out)
{
    if (hw->big_n[slot] < n) {
        free(hw->big[slot]);
        hw->big[slot] = aligned_alloc(64, round_up(n, 16) * sizeof(float));
        hw->big_n[slot] = hw->big[slot] ? n : 0;
        if (!hw->big[slot])
            return ct_fail(ctx, CT_ERR_NO_MEMORY, "conv2d host path: out of host memory for "
                           "%zu floats", n);
    }
    *out = hw->big[slot];
    return CT_OK;
}

int ct_host_work_threads(const ct_context *ctx)
{
    const ct_host_work *hw = ct_context_ext(ctx, &host_work_kind);
    return hw ? hw->threads : (int)ctx->dev.compute_units;
}

#ifdef CT_HOST_X86
int ct_host_avx2_fma(void)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

int ct_host_avx512(void)
{
    const char *isa = getenv("CLTRAIN_HOST_ISA");
    if (isa && !strcmp(isa, "avx2"))
        return 0;
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("bmi2") && ct_host_avx2_fma();
}

int ct_host_avx512_bf16(void)
{
    const char *isa = getenv("CLTRAIN_HOST_ISA");
    if (isa && !strcmp(isa, "avx512"))
        return 0;
    if (!ct_host_avx512() || !__builtin_cpu_supports("avx512bf16"))
        return 0;
    return (isa && !strcmp(isa, "avx512bf16")) || ct_host_bf16_dot_speed() >= CT_BF16_DOT_PAYS;
}
#else
int ct_host_avx2_fma(void)
{
    return 0;
}

int ct_host_avx512_bf16(void)
{
    return 0;
}

int ct_host_avx512(void)
{
    return 0;
}
#endif

/* OpenBLAS's own name for the kernels it chose (core/blasctl.h) */
const char *ct_host_blas_core(void)
{
    const char *name = ct_blas_core_name();
    return name ? name : "unknown";
}

int ct_host_begin(ct_context *ctx, ct_hmap_range *r, int n, ct_hmap *hm, ct_pool **pool,
                  const char *what)
{
    ct_host_work *hw;
    int st = ct_host_work_get(ctx, 16, 16, 1, &hw);
    if (st)
        return st;
    *pool = hw->pool;
    return ct_hmap_map(ctx, r, n, hm, what);
}
