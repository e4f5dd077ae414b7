/*
 * dropout.c - dropout launchers (cl_kernels/dropout.cl), and in the CPU
 * class with the host GEMM path the same mask applied on the host: Philox
 * per block of four elements (src/core/philox.c, bit-identical to the
 * kernels'), chunks of elements on the context's thread pool. pocl ran the
 * kernel at about 75 ns per block (a dropout of 64 x 3136 elements, 200K
 * elements: 3.8 ms each way on one core).
 */
#include "ops/dropout.h"

#include <math.h>

#include "core/philox.h"
#include "host/host_work.h"
#include "host/hostmap.h"

#ifdef CT_HOST_X86
#include <immintrin.h>
#endif

#define CHUNK 16384 /* elements per host work item (a multiple of 4) */

typedef struct hdrop {
    float *out;
    const float *in;
    size_t n, first;
    float p, scale;
    uint32_t key[2], seed_hi, stream;
    uint32_t keep_from; /* u01(w) >= p  <=>  (w >> 8) >= keep_from */
    int avx512;
} hdrop;

#ifdef CT_HOST_X86
/* 16 lanes of (hi, lo) = a * m, 32 x 32 -> 64 bits */
static CT_AVX512 inline void mulhilo16(__m512i a, __m512i m, __m512i *hi, __m512i *lo)
{
    __m512i pe = _mm512_mul_epu32(a, m), po = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);
    *hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(pe, 32), po);
    *lo = _mm512_mask_blend_epi32(0xAAAA, pe, _mm512_slli_epi64(po, 32));
}

/* Elements i .. i + 63 (i + first a multiple of 4): 16 Philox blocks at
 * once, the four words' keep bits interleaved into element order. */
static CT_AVX512 void drop64(const hdrop *d, size_t i)
{
    uint32_t b0 = (uint32_t)((d->first + i) / 4);
    __m512i c0 = _mm512_add_epi32(_mm512_set1_epi32((int)b0),
                                  _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                                    14, 15));
    __m512i c1 = _mm512_set1_epi32(1), c2 = _mm512_set1_epi32((int)d->seed_hi);
    __m512i c3 = _mm512_set1_epi32((int)d->stream);
    __m512i m0 = _mm512_set1_epi32((int)0xD2511F53u), m1 = _mm512_set1_epi32((int)0xCD9E8D57u);
    uint32_t k0 = d->key[0], k1 = d->key[1];
    for (int r = 0; r < 10; r++) {
        __m512i hi0, lo0, hi1, lo1;
        mulhilo16(c0, m0, &hi0, &lo0);
        mulhilo16(c2, m1, &hi1, &lo1);
        c0 = _mm512_xor_si512(_mm512_xor_si512(hi1, c1), _mm512_set1_epi32((int)k0));
        c1 = lo1;
        c2 = _mm512_xor_si512(_mm512_xor_si512(hi0, c3), _mm512_set1_epi32((int)k1));
        c3 = lo0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    __m512i t = _mm512_set1_epi32((int)d->keep_from);
    uint64_t w0 = _mm512_cmpge_epu32_mask(_mm512_srli_epi32(c0, 8), t);
    uint64_t w1 = _mm512_cmpge_epu32_mask(_mm512_srli_epi32(c1, 8), t);
    uint64_t w2 = _mm512_cmpge_epu32_mask(_mm512_srli_epi32(c2, 8), t);
    uint64_t w3 = _mm512_cmpge_epu32_mask(_mm512_srli_epi32(c3, 8), t);
    uint64_t keep = _pdep_u64(w0, 0x1111111111111111ull) | _pdep_u64(w1, 0x2222222222222222ull) |
                    _pdep_u64(w2, 0x4444444444444444ull) | _pdep_u64(w3, 0x8888888888888888ull);
    __m512 s = _mm512_set1_ps(d->scale);
    for (int q = 0; q < 4; q++) {
        __m512 v = _mm512_loadu_ps(d->in + i + 16 * q);
        _mm512_storeu_ps(d->out + i + 16 * q,
                         _mm512_maskz_mul_ps((__mmask16)(keep >> (16 * q)), v, s));
    }
}
#endif

static void drop_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const hdrop *d = arg;
    size_t i0 = item * CHUNK, i1 = i0 + CHUNK < d->n ? i0 + CHUNK : d->n;
#ifdef CT_HOST_X86
    if (d->avx512 && d->first % 4 == 0)
        for (; i0 + 64 <= i1; i0 += 64)
            drop64(d, i0);
#endif
    uint32_t w[4] = { 0, 0, 0, 0 };
    size_t have = (size_t)-1;
    for (size_t i = i0; i < i1; i++) {
        size_t j = d->first + i;
        if (j / 4 != have) {
            have = j / 4;
            uint32_t ctr[4] = { (uint32_t)have, 1u, d->seed_hi, d->stream };
            ct_philox4x32(ctr, d->key, w);
        }
        d->out[i] = ct_philox_u01(w[j % 4]) >= d->p ? d->in[i] * d->scale : 0.0f;
    }
}

static int host_apply(ct_context *ctx, const char *who, ct_buf out, ct_buf in, size_t n,
                      size_t first, float p, uint64_t seed, uint32_t stream)
{
    ct_hmap_range r[2] = {
        { in.mem, in.off, n, 0, NULL },
        { out.mem, out.off, n, 1, NULL },
    };
    ct_pool *pool;
    ct_hmap hm;
    int st = ct_host_begin(ctx, r, 2, &hm, &pool, who);
    if (st)
        return st;
    /* u01(w) = (w >> 8) 2^-24 exactly, so u01(w) >= p is (w >> 8) >= ceil(p 2^24) */
    double t = ceil((double)p * 16777216.0);
    hdrop d = { r[1].host, r[0].host, n, first, p, ct_dropout_scale(p),
                { (uint32_t)seed, 0x5eedu }, (uint32_t)(seed >> 32), stream,
                (uint32_t)(t > 16777216.0 ? 16777216.0 : t), ct_host_avx512() };
    ct_pool_run(pool, (n + CHUNK - 1) / CHUNK, drop_item, &d);
    return ct_hmap_unmap(ctx, &hm, CT_OK, who);
}

float ct_dropout_scale(float p)
{
    return p >= 1.0f ? 0.0f : 1.0f / (1.0f - p);
}

static int launch(ct_context *ctx, const char *who, const char *kernel, ct_buf out, ct_buf in,
                  size_t n, size_t first, float p, uint64_t seed, uint32_t stream)
{
    if (n > UINT32_MAX - 3 || first > UINT32_MAX - 3 - n)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: elements %zu .. %zu; the counters index at "
                       "most 2^32 - 4. HINT: split the tensor", who, first, first + n);
    if (!(p >= 0.0f && p <= 1.0f))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: drop probability %g is outside [0, 1]", who,
                       (double)p);
    if (n && (!out.mem || !in.mem))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: a NULL buffer", who);
    if (!n)
        return CT_OK;
    if (ctx->cls.host_pool && !ctx->act16)
        return host_apply(ctx, who, out, in, n, first, p, seed, stream);
    cl_uint nn = (cl_uint)n, at = (cl_uint)first, lo = (cl_uint)seed, hi = (cl_uint)(seed >> 32), st = stream;
    cl_float pp = p, scale = ct_dropout_scale(p);
    size_t g[1] = { (n + 3) / 4 }, es = ct_act_size(ctx); /* a work-item per Philox block of four */
    ct_launch_bytes(ctx, n * es, n * es);
    return CT_RUN(ctx, ct_program_store(ctx, CT_PROG_dropout), kernel, 1, g, NULL, CT_BUF(out), CT_BUF(in), CT_ARG(nn), CT_ARG(at),
                  CT_ARG(pp), CT_ARG(scale), CT_ARG(lo), CT_ARG(hi), CT_ARG(st));
}

int ct_dropout_forward(ct_context *ctx, ct_buf y, ct_buf x, size_t n, float p, uint64_t seed,
                       uint32_t stream)
{
    return launch(ctx, "ct_dropout_forward", "dropout_fwd_f32", y, x, n, 0, p, seed, stream);
}

int ct_dropout_backward(ct_context *ctx, ct_buf dx, ct_buf dy, size_t n, float p, uint64_t seed,
                        uint32_t stream)
{
    return launch(ctx, "ct_dropout_backward", "dropout_bwd_f32", dx, dy, n, 0, p, seed, stream);
}

int ct_dropout_forward_at(ct_context *ctx, ct_buf y, ct_buf x, size_t n, size_t first, float p,
                          uint64_t seed, uint32_t stream)
{
    return launch(ctx, "ct_dropout_forward", "dropout_fwd_f32", y, x, n, first, p, seed, stream);
}

int ct_dropout_backward_at(ct_context *ctx, ct_buf dx, ct_buf dy, size_t n, size_t first, float p,
                           uint64_t seed, uint32_t stream)
{
    return launch(ctx, "ct_dropout_backward", "dropout_bwd_f32", dx, dy, n, first, p, seed, stream);
}
